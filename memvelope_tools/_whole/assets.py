"""The files people uploaded to a conversation or the provider made in one, and whether the download
still holds them.

Where they are named:

* ChatGPT: a message's content parts, as asset pointers (``image_asset_pointer``, ``audio_asset_pointer``,
  the audio and video frames of ``real_time_user_audio_video_asset_pointer``; ``found_in`` ``content``);
  its ``metadata.attachments`` (name, MIME type, size; ``attachments``), merged with the pointer of the
  same file in the same message; ``library_files.json`` (``library``), which also names files no message
  points to; and the files of the download no conversation names (``download``). Every node of a
  conversation is read, abandoned branches too: a file sent in several messages has a row for each.
* Claude: a message's ``attachments`` (the text extracted from each upload) and ``files`` (``files_v2``
  when present; ``files``).

The kinds of file (:data:`ASSET_KINDS`):

``image``
    A picture the user sent.
``generated_image``
    A picture the provider made (DALL-E, image generation): its pointer carries DALL-E's or the image
    generator's metadata, a tool or the assistant sent it, it lies in ``dalle-generations/``, or the
    library marks it generated.
``audio``
    A voice recording, of either side of a voice conversation.
``video``
    A video, or the frames of one (ChatGPT's real-time video).
``file``
    Any other file: a document, a PDF, a spreadsheet.

Whether the download holds a ChatGPT file (``present``, ``member``): a file named by its id
(``file-<id>-<name>``, ``file_<id>-<uuid>.<ext>``, ``file_<id>.dat``) at any depth; a DALL-E image under
``dalle-generations/`` by its id, or, when that folder names its files by a uuid only, by the one file of
that folder of the image's size no id claims. Only the download's listing is read, never a file's bytes.
A Claude download holds no uploaded file: a ``files`` entry is never present; an attachment is present as
its extracted text, in the conversations file (``member``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .._convert.timestamps import render_timestamp
from .._providers import files as known
from .conversations import read_conversations
from .files import Listed, Listing, children, side_files

__all__ = ["ASSET_CATEGORIES", "ASSET_COLUMNS", "ASSET_KINDS", "Asset", "AssetReading", "read_assets"]

#: Every kind of file, in the order they are listed (see the module docstring).
ASSET_KINDS: Final = ("image", "generated_image", "audio", "video", "file")

#: The columns of :func:`memvelope_tools.assets_frame`, in order, and their kind of value
#: (:mod:`memvelope_tools._whole.table`).
ASSET_COLUMNS: Final = {
    "provider": "string",
    "conversation_id": "string",
    "conversation_title": "string",
    "node_id": "string",
    "role": "string",
    "ts": "timestamp",
    "kind": "category",
    "name": "string",
    "mime": "string",
    "size_bytes": "int",
    "pointer": "string",
    "member": "string",
    "present": "bool",
    "found_in": "string",
}
#: The words of each category column.
ASSET_CATEGORIES: Final = {"kind": ASSET_KINDS}

# Where an element may name a file: a pointer, an attachment, a Claude file.
_MARKS: Final = re.compile(rb'asset_pointer"|"attachments"|"files(?:_v2)?"')
_VIDEO_KEYS: Final = frozenset({"frames_asset_pointers", "video_container_asset_pointer"})
_MAKERS: Final = frozenset({"tool", "assistant"})
_DEPTH: Final = 4  # how deep pointers are looked for inside one content part


@dataclass(slots=True)
class Asset:
    """One file named in an export (the columns of :func:`memvelope_tools.assets_frame`)."""

    provider: str
    kind: str
    found_in: str
    conversation_id: str | None = None
    conversation_title: str | None = None
    node_id: str | None = None
    role: str | None = None
    ts: str | None = None
    name: str | None = None
    mime: str | None = None
    size_bytes: int | None = None
    pointer: str | None = None
    member: str | None = None
    present: bool | None = None


def _text(value: object) -> str | None:
    return value if type(value) is str and value else None


def _size(value: object) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _kind_of_mime(mime: str | None) -> str:
    top = (mime or "").split("/", 1)[0]
    return {"image": "image", "audio": "audio", "video": "video"}.get(top, "file")


class AssetReading:
    """Reads the files named in conversations (a reader of the one pass over the export), then, with the
    download's listing and side files, tells whether it holds each."""

    marks = _MARKS

    def __init__(self) -> None:
        self.rows: list[Asset] = []

    def take(self, conversation: dict[str, Any], provider: str, part: str) -> None:
        """Add the files one conversation names."""
        if provider == "chatgpt":
            self._chatgpt(conversation)
        else:
            self._claude(conversation, part)

    def extend(self, later: AssetReading) -> None:
        """Add the files the conversations after these name."""
        self.rows += later.rows

    # ---- ChatGPT ----

    def _chatgpt(self, conversation: dict[str, Any]) -> None:
        mapping = conversation.get("mapping")
        if type(mapping) is not dict:
            return
        for node_id, node in mapping.items():
            message = node.get("message") if type(node) is dict else None
            if type(message) is not dict:
                continue
            content = message.get("content")
            parts = content.get("parts") if type(content) is dict else None
            pointed = [part for part in parts if type(part) is dict] if type(parts) is list else []
            metadata = message.get("metadata")
            attachments = metadata.get("attachments") if type(metadata) is dict else None
            if pointed or (type(attachments) is list and attachments):
                self._message(conversation, node_id, message, pointed, attachments)

    def _message(
        self, conversation: dict[str, Any], node_id: str, message: dict[str, Any], parts: list[Any], attachments: Any
    ) -> None:
        """The files one ChatGPT message names: the pointers of its object ``parts``, then its
        ``attachments`` (merged with the pointer of the same file)."""
        author = message.get("author")
        role = _text(author.get("role")) if type(author) is dict else None
        title = conversation.get("title")
        where = {
            "conversation_id": _text(conversation.get("conversation_id")) or _text(conversation.get("id")),
            "conversation_title": title if type(title) is str else None,
            "node_id": node_id,
            "role": role,
            "ts": render_timestamp(message.get("create_time")) or render_timestamp(conversation.get("create_time")),
        }
        here: dict[str, Asset] = {}
        for part in parts:
            for obj, key in _pointers(part, None, 0):
                pointer = known.pointer_id(obj["asset_pointer"])
                if pointer not in here:
                    here[pointer] = self._add(_pointed(obj, key, role), where, pointer)
        for attached in attachments if type(attachments) is list else ():
            if type(attached) is not dict:
                continue
            named = _text(attached.get("id"))
            name, mime, size = _text(attached.get("name")), _text(attached.get("mime_type")), attached.get("size")
            row = here.get(named) if named is not None else None
            if row is not None:
                row.name = row.name or name
                row.mime = row.mime or mime
                row.size_bytes = row.size_bytes if row.size_bytes is not None else _size(size)
                continue
            kind = _kind_of_mime(mime)
            if kind == "image" and role in _MAKERS:
                kind = "generated_image"
            row = self._add(Asset("chatgpt", kind, "attachments", name=name, mime=mime), where, named)
            row.size_bytes = _size(size)
            if named is not None:
                here[named] = row

    def _add(self, row: Asset, where: dict[str, Any], pointer: str | None = None) -> Asset:
        for key, value in where.items():
            setattr(row, key, value)
        row.pointer = pointer if pointer is not None else row.pointer
        self.rows.append(row)
        return row

    # ---- Claude ----

    def _claude(self, conversation: dict[str, Any], part: str) -> None:
        messages = conversation.get("chat_messages")
        cid = _text(conversation.get("uuid"))
        title = conversation.get("name") if type(conversation.get("name")) is str else None
        for message in messages if type(messages) is list else ():
            if type(message) is not dict:
                continue
            where = {
                "conversation_id": cid,
                "conversation_title": title,
                "node_id": _text(message.get("uuid")),
                "role": _text(message.get("sender")),
                "ts": render_timestamp(message.get("created_at")),
            }
            attachments = message.get("attachments")
            for attached in attachments if type(attachments) is list else ():
                if type(attached) is not dict:
                    continue
                mime = _text(attached.get("file_type"))
                held = type(attached.get("extracted_content")) is str and bool(attached["extracted_content"])
                row = Asset("claude", _kind_of_mime(mime), "attachments", name=_text(attached.get("file_name")))
                row.mime, row.size_bytes, row.present = mime, _size(attached.get("file_size")), held
                row.member = part if held else None
                self._add(row, where)
            files = message.get("files_v2") if message.get("files_v2") else message.get("files")
            for named in files if type(files) is list else ():
                if type(named) is not dict:
                    continue
                kind = "image" if named.get("file_kind") == "image" else "file"
                row = Asset("claude", kind, "files", name=_text(named.get("file_name")), present=False)
                self._add(row, where, _text(named.get("file_uuid")))

    # ---- the download ----

    def finish(self, inputs: Sequence[Path], listing: Listing, provider: str | None) -> list[Asset]:
        """The rows, each ChatGPT one told whether the download holds it (its names, library and listing
        read), then the library's files and the download's files that no conversation names."""
        if provider != "chatgpt" and not any(row.provider == "chatgpt" for row in self.rows):
            return self.rows
        names = _asset_names(inputs)
        library = _library(inputs)
        by_id: dict[str, Listed] = {}
        for listed in listing.files:
            if (found := known.asset_id(listed.name)) is not None:
                by_id.setdefault(found, listed)
        rows = [row for row in self.rows if row.provider == "chatgpt" and row.pointer is not None]
        pointers = {row.pointer for row in rows}
        for file_id, record in library.items():
            if file_id not in pointers:
                self.rows.append(_from_library(file_id, record))
        for row in rows:
            if (entry := library.get(row.pointer or "")) is not None:
                row.name = row.name or _text(entry.get("file_name"))
                row.mime = row.mime or _text(entry.get("mime_type"))
                if row.size_bytes is None:
                    row.size_bytes = _size(entry.get("file_size_bytes"))
        claimed: set[str] = set()
        unclaimed = self._place(by_id, claimed, names)
        _place_by_size(unclaimed, claimed, [f for f in listing.files if known.in_dalle_folder(f.name)])
        for listed in listing.files:
            if listed.name not in claimed and known.is_asset(listed.name):
                self.rows.append(_from_download(listed, names))
        return self.rows

    def _place(self, by_id: dict[str, Listed], claimed: set[str], names: dict[str, str]) -> list[Asset]:
        """Mark the ChatGPT rows the download holds by their id; return the generated images it does not."""
        unclaimed: list[Asset] = []
        for row in self.rows:
            if row.provider != "chatgpt" or row.found_in == "download":
                continue
            held = by_id.get(row.pointer) if row.pointer is not None else None
            if row.pointer is not None and row.name is None:
                row.name = names.get(row.pointer)
            if held is None:
                row.present = False
                if row.kind == "generated_image" and row.size_bytes is not None:
                    unclaimed.append(row)
                continue
            row.present, row.member = True, held.name
            claimed.add(held.name)
            if row.size_bytes is None:
                row.size_bytes = held.size
            if known.in_dalle_folder(held.name) and row.kind == "image":
                row.kind = "generated_image"
        return unclaimed


def _place_by_size(unclaimed: list[Asset], claimed: set[str], dalle: list[Listed]) -> None:
    """DALL-E images the download names by a uuid only: each is the one unclaimed file of its size in
    ``dalle-generations/``, when no other image looked for has that size."""
    by_size: dict[int, list[Listed]] = {}
    for listed in dalle:
        if listed.name not in claimed:
            by_size.setdefault(listed.size, []).append(listed)
    wanted: dict[int | None, int] = {}
    for row in unclaimed:
        wanted[row.size_bytes] = wanted.get(row.size_bytes, 0) + 1
    for row in unclaimed:
        found = by_size.get(row.size_bytes or -1, [])
        if len(found) == 1 and wanted[row.size_bytes] == 1:
            row.present, row.member = True, found[0].name
            claimed.add(found[0].name)


def _pointers(part: dict[str, Any], key: str | None, depth: int) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Each object of a content part holding an ``asset_pointer``, with the key it sits under."""
    if type(part.get("asset_pointer")) is str and part["asset_pointer"]:
        yield part, key
    if depth >= _DEPTH:
        return
    for name, value in part.items():
        if name == "metadata":
            continue
        if type(value) is dict:
            yield from _pointers(value, name, depth + 1)
        elif type(value) is list:
            for item in value:
                if type(item) is dict:
                    yield from _pointers(item, name, depth + 1)


def _pointed(obj: dict[str, Any], key: str | None, role: str | None) -> Asset:
    """The row of one asset pointer (``key``: what it sits under, ``role``: who sent the message)."""
    content_type: str = obj["content_type"] if type(obj.get("content_type")) is str else ""
    fmt = _text(obj.get("format"))
    mime = None
    if key in _VIDEO_KEYS or "video" in content_type:
        kind = "video"
    elif "audio" in content_type or key == "audio_asset_pointer":
        kind = "audio"
        mime = f"audio/{fmt}" if fmt else None
    elif "image" in content_type:
        meta = obj.get("metadata")
        made = type(meta) is dict and (type(meta.get("dalle")) is dict or type(meta.get("generation")) is dict)
        kind = "generated_image" if made or role in _MAKERS else "image"
    else:
        kind = "file"
    return Asset("chatgpt", kind, "content", mime=mime, size_bytes=_size(obj.get("size_bytes")))


def _asset_names(inputs: Sequence[Path]) -> dict[str, str]:
    """Original names by file id, from ``conversation_asset_file_names.json``."""
    found: dict[str, str] = {}
    for part in side_files(inputs, known.ASSET_NAMES):
        for key, value in children(part):
            if type(key) is str and type(value) is str and value:
                found.setdefault(known.asset_id(key) or key, value)
    return found


def _library(inputs: Sequence[Path]) -> dict[str, dict[str, Any]]:
    """The records of ``library_files.json``, by file id."""
    found: dict[str, dict[str, Any]] = {}
    for part in side_files(inputs, known.LIBRARY):
        for _, record in children(part):
            if type(record) is dict and (file_id := _text(record.get("file_id"))) is not None:
                found.setdefault(file_id, record)
    return found


def _from_library(file_id: str, record: dict[str, Any]) -> Asset:
    mime = _text(record.get("mime_type"))
    made = record.get("image_gen_generation_id") or record.get("library_artifact_type") == "image"
    kind = "generated_image" if made else _kind_of_mime(mime)
    row = Asset("chatgpt", kind, "library", name=_text(record.get("file_name")), mime=mime, pointer=file_id)
    row.conversation_id = _text(record.get("origination_thread_id"))
    row.node_id = _text(record.get("origination_message_id"))
    row.ts = render_timestamp(record.get("created_at"))
    row.size_bytes = _size(record.get("file_size_bytes"))
    return row


def _from_download(listed: Listed, names: dict[str, str]) -> Asset:
    pointer = known.asset_id(listed.name)
    name = names.get(pointer or "") or known.base_name(listed.name)
    kind = "generated_image" if known.in_dalle_folder(listed.name) else _kind_of_mime(_guess_mime(name))
    row = Asset("chatgpt", kind, "download", name=name, size_bytes=listed.size, pointer=pointer)
    row.member, row.present = listed.name, True
    return row


def _guess_mime(name: str) -> str | None:
    import mimetypes

    return mimetypes.guess_type(name, strict=False)[0]


# ---- reading ----------------------------------------------------------------------------------------


def read_assets(inputs: Sequence[Path], listing: Listing, progress: bool | None) -> tuple[list[Asset], str | None]:
    """The files an export names or holds, and its provider (one pass over its conversations)."""
    reading = AssetReading()
    provider = read_conversations(inputs, listing, [reading], progress)
    return reading.finish(inputs, listing, provider), provider
