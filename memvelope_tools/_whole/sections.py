"""What the commands take from the whole export beside its nodes, each in one call: the inventory's
sections, the files the spec does not convert, the check against the manifest."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._sources import Input
from .assets import Asset
from .conversations import read_conversations
from .export import READERS, export_inputs, finish, sections
from .files import Listing, list_export, unconverted_in, verify_in
from .projects import Project

if TYPE_CHECKING:
    from .._convert.sources import ZipLimits

__all__ = ["inventory_sections", "read_whole", "unconverted_files", "verify_manifest"]


def read_whole(
    inputs: Sequence[Path], listing: Listing, progress: bool | None
) -> tuple[list[Asset], list[Project], str | None]:
    """The files and the projects of an export, and its provider, its conversations read once (only
    those that name a file or a project are parsed)."""
    readers = [new() for new in READERS]
    provider = read_conversations(inputs, listing, readers, progress)
    return (*finish(inputs, listing, readers, provider), provider)


def inventory_sections(
    *paths: str | os.PathLike[str] | Input, verify: bool = False, progress: bool | None = None
) -> dict[str, Any]:
    """The sections ``memvelope inventory`` reports about an export's files, projects and download.

    Parameters
    ----------
    *paths
        The export, as ``convert`` takes it: its zip, its folder, or its files (or one resolved input).
    verify
        Also check the download against its ``export_manifest.json``.
    progress
        Show a progress bar while the conversations are read (None: when stderr is a terminal).

    Returns
    -------
    dict
        ``assets``: ``{total, present, missing}``, counting each file once however many messages name it
        (by its id; a file without one, per message); ``projects``: one dict per project or custom GPT
        (``provider``, ``project_id``, ``kind``, ``name``, ``conversations``, ``docs``: how many documents,
        or None); ``unconverted``: the files the spec does not convert
        (:func:`memvelope_tools._whole.files.unconverted_files`); ``verify``: what
        :func:`memvelope_tools._whole.files.verify_manifest` found, or None without ``verify``.

    Raises
    ------
    InputError
        When the export cannot be read or is not an export.
    FormatError
        With ``verify``, when the manifest is not shaped as a manifest.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> inventory_sections(mv.sample_path("claude"))["assets"]
    {'total': 4, 'present': 3, 'missing': 1}
    """
    inputs = export_inputs(paths, "inventory")
    listing = list_export(inputs)
    assets, projects, _ = read_whole(inputs, listing, progress)
    return sections(inputs, listing, assets, projects, verify=verify)


def unconverted_files(*paths: str | os.PathLike[str] | Input, limits: ZipLimits | None = None) -> list[dict[str, Any]]:
    """The files of an export the spec does not convert: every file but the conversation parts.

    Parameters
    ----------
    *paths
        The export, as ``convert`` takes it: its zip, its folder, or its files.
    limits
        The limits its zips are read within, as ``convert`` was given them (the defaults when None).

    Returns
    -------
    list of dict
        One per file, in name order: ``name`` (its path inside the export), ``size`` (bytes), ``what`` (what
        it is, in words, or None when unknown) and ``asset`` (True for an uploaded or generated file).

    Raises
    ------
    InputError
        When the export cannot be read or holds no conversation part.

    Examples
    --------
    >>> [f["name"] for f in unconverted_files("chatgpt-export.zip")]  # doctest: +SKIP
    ['chat.html', 'group_chats.json', 'user.json']
    """
    inputs = export_inputs(paths, "unconverted_files()")
    return unconverted_in(inputs, list_export(inputs), limits)


def verify_manifest(*paths: str | os.PathLike[str] | Input) -> dict[str, Any]:
    """Check the download against its ``export_manifest.json``: is every file it lists there, with the
    size it gives?

    Parameters
    ----------
    *paths
        The export, as ``convert`` takes it: its zip, its folder, or its files.

    Returns
    -------
    dict
        ``manifest``: the manifest's path inside the export (None when the export has none: nothing is
        checked); ``checked``: how many files it lists; ``missing``: ``{"path", "size_bytes"}`` of each listed
        file the download does not hold; ``size_mismatch``: ``{"path", "expected", "actual"}`` of each whose
        size differs (sizes as the zip's listing or the folder gives them). Files named only under
        ``logical_files`` are checked for presence.

    Raises
    ------
    InputError
        When the export cannot be read, or its manifest is not valid JSON.
    FormatError
        When the manifest is not an object, or a listed file has no path (``bad-shape``).

    Examples
    --------
    >>> verify_manifest("chatgpt-export.zip")["missing"]  # doctest: +SKIP
    [{'path': 'conversations-005.json', 'size_bytes': 48213}]
    """
    inputs = export_inputs(paths, "verify_manifest()")
    return verify_in(inputs, list_export(inputs))
