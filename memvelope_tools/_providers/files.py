"""What the files of a ChatGPT or Claude download are, told by their paths inside it.

A download holds more than its conversations. ChatGPT's:

* ``chat.html``, ``user.json``, ``user_settings.json``, ``message_feedback.json``, ``model_comparisons.json``,
  ``shared_conversations.json``, ``group_chats.json`` (:data:`SIDE_FILES` says what each is);
* ``export_manifest.json`` (:data:`MANIFEST`), in the sharded format: ``{version, manifest_file,
  export_files: [{path, size_bytes}], logical_files: {name: {files, sharded, ...}}}``;
* the uploaded and generated files. Older downloads name an upload ``file-<id>-<original name>`` (a
  ``file-service://file-<id>`` pointer in the conversation) or ``file_<id>-<uuid>.<ext>`` (a
  ``sediment://file_<id>`` pointer), at any depth (voice recordings under ``<conversation>/audio/``);
  DALL-E images sit under ``dalle-generations/``, named ``file-<id>-<uuid>.webp`` or, in later downloads,
  ``<uuid>.webp`` only. The sharded format names each ``<id>.dat`` (``file-<id>.dat``, ``file_<id>.dat``)
  and gives the original names in ``conversation_asset_file_names.json`` (:data:`ASSET_NAMES`,
  ``{"<id>.dat": "<original name>"}``); ``library_files.json`` (:data:`LIBRARY`) lists the files of
  ChatGPT's library (``file_id``, ``file_name``, ``mime_type``, ``origination_thread_id``, ...).

Claude's: ``users.json``, ``projects.json`` (:data:`CLAUDE_PROJECTS`), ``memories.json``; a large download
splits them into zips (``conversations-000.zip``, ``projects-000.zip``, ``users-000.zip``) beside a
``manifest.json``. Claude's downloads hold no uploaded file: a message's ``attachments`` carry the text
extracted from each, its ``files`` only names them.

This module imports nothing of the package.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Final

#: The sharded ChatGPT download's list of its files.
MANIFEST: Final = "export_manifest.json"
#: ChatGPT's original names of the ``.dat`` files.
ASSET_NAMES: Final = "conversation_asset_file_names.json"
#: ChatGPT's library of files.
LIBRARY: Final = "library_files.json"
#: Claude's projects.
CLAUDE_PROJECTS: Final = "projects.json"
#: The folder of ChatGPT's DALL-E images.
DALLE_FOLDER: Final = "dalle-generations"

#: The files of a download the spec does not convert, by base name: what each is.
SIDE_FILES: Final = {
    "chat.html": "the conversations as one web page",
    "user.json": "the account's details",
    "users.json": "the account's details",
    "user_settings.json": "the account's settings",
    "message_feedback.json": "the ratings given to answers",
    "model_comparisons.json": "answers the user compared side by side",
    "shared_conversations.json": "the conversations shared by link",
    "group_chats.json": "group chats (conversations with other people)",
    LIBRARY: "the files of ChatGPT's library",
    ASSET_NAMES: "the original names of the uploaded and generated files",
    MANIFEST: "the download's list of its files",
    "manifest.json": "the download's list of its files",
    CLAUDE_PROJECTS: "Claude's projects",
    "memories.json": "Claude's memory (memvelope memory reads it)",
}
#: Zips of a split Claude download, by the start of their names: what each holds.
SIDE_ZIPS: Final = {
    "projects": "Claude's projects, zipped",
    "users": "the account's details, zipped",
    "memories": "Claude's memory, zipped (memvelope memory reads it)",
}
#: What an uploaded or generated file is called in the lists.
ASSET_WHAT: Final = "an uploaded or generated file"

# An upload's or a generated file's id (file-<id> or file_<id>, letters and digits), alone or followed
# by a separator and more (its original name, a uuid, an extension).
_ASSET_ID: Final = re.compile(r"(file[-_][A-Za-z0-9]+)(?:[-_.].*)?", re.DOTALL)


def base_name(path: str) -> str:
    """The last part of ``path`` (``/`` or ``\\`` separated)."""
    return PurePosixPath(path.replace("\\", "/")).name


def asset_id(path: str) -> str | None:
    """The file id an uploaded or generated file's name starts with, else None.

    Parameters
    ----------
    path : str
        A file's path inside a download.

    Returns
    -------
    str or None
        ``file-<id>`` or ``file_<id>``.

    Examples
    --------
    >>> asset_id("file-AbC12-photo.png"), asset_id("x/audio/file_00ab-1f2e.wav"), asset_id("file_00ab.dat")
    ('file-AbC12', 'file_00ab', 'file_00ab')
    >>> asset_id("conversations-000.json") is None
    True
    """
    found = _ASSET_ID.fullmatch(base_name(path))
    return found.group(1) if found else None


def pointer_id(pointer: str) -> str:
    """The file id a ChatGPT asset pointer names.

    Parameters
    ----------
    pointer : str
        An ``asset_pointer`` (``file-service://file-<id>``, ``sediment://file_<id>``) or an attachment's id.

    Returns
    -------
    str
        The id, without the scheme.

    Examples
    --------
    >>> pointer_id("file-service://file-AbC12"), pointer_id("sediment://file_00ab"), pointer_id("file-x")
    ('file-AbC12', 'file_00ab', 'file-x')
    """
    return pointer.split("://", 1)[1] if "://" in pointer else pointer


def in_dalle_folder(path: str) -> bool:
    """Whether ``path`` lies in a ``dalle-generations`` folder (DALL-E's images)."""
    return DALLE_FOLDER in PurePosixPath(path.replace("\\", "/")).parts[:-1]


def is_asset(path: str) -> bool:
    """Whether the file at ``path`` in a ChatGPT download is an uploaded or generated file: named by its
    id, a ``.dat`` file, or in ``dalle-generations/``.

    Parameters
    ----------
    path : str
        A file's path inside a download.

    Returns
    -------
    bool
        True for an asset.

    Examples
    --------
    >>> is_asset("file-AbC12-photo.png"), is_asset("dalle-generations/1f2e.webp"), is_asset("user.json")
    (True, True, False)
    """
    return asset_id(path) is not None or path.lower().endswith(".dat") or in_dalle_folder(path)


def what_file(path: str) -> str | None:
    """What the file at ``path`` in a download is, in words, when known.

    Parameters
    ----------
    path : str
        A file's path inside a download.

    Returns
    -------
    str or None
        A short description, or None for a file the toolkit does not know.

    Examples
    --------
    >>> what_file("group_chats.json"), what_file("projects-000.zip"), what_file("notes.txt")
    ('group chats (conversations with other people)', "Claude's projects, zipped", None)
    """
    name = base_name(path)
    if name in SIDE_FILES:
        return SIDE_FILES[name]
    if name.endswith(".zip"):
        return next((what for start, what in SIDE_ZIPS.items() if name.startswith(start)), None)
    return ASSET_WHAT if is_asset(path) else None
