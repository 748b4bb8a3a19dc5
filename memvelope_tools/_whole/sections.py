"""What the commands and writers take from the whole export, each in one call: the inventory's sections,
the files the spec does not convert, the check against the manifest, and the ``assets`` and ``projects``
tables a Parquet dataset of an export holds (the conversations read once for both)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._sources import Input, resolve, resolve_one
from ..errors import InputError
from .assets import ASSET_CATEGORIES, ASSET_COLUMNS, Asset, AssetReading
from .conversations import read_conversations
from .files import Listing, list_export, unconverted_in, verify_in
from .projects import PROJECT_CATEGORIES, PROJECT_COLUMNS, Project, ProjectReading
from .table import arrow_table

if TYPE_CHECKING:
    import pyarrow as pa

    from .._convert.sources import ZipLimits

__all__ = [
    "assets_table",
    "export_inputs",
    "inventory_sections",
    "projects_table",
    "read_whole",
    "unconverted_files",
    "verify_manifest",
    "whole_tables",
]


def export_inputs(paths: Sequence[Any], caller: str) -> tuple[Path, ...]:
    """The files and folders of one export (paths, as ``convert`` takes them, or one resolved input),
    each checked once; InputError for a wrong one, or for an export given as bytes."""
    if len(paths) == 1 and isinstance(paths[0], Input):
        export = paths[0]
    else:
        [export] = resolve(list(paths), "export", list_means="parts", caller=caller)
    found = export.files()
    if found is None:
        raise InputError(
            f"{caller} reads an export's files on disk: give its zip, folder or files", reason="bad-source"
        )
    return tuple(found)


def assets_table(rows: Sequence[Asset]) -> pa.Table:
    """``rows`` as an Arrow table of the assets' columns (``kind`` dictionary-encoded)."""
    return arrow_table(rows, ASSET_COLUMNS, ASSET_CATEGORIES)


def projects_table(rows: Sequence[Project]) -> pa.Table:
    """``rows`` as an Arrow table of the projects' columns."""
    return arrow_table(rows, PROJECT_COLUMNS, PROJECT_CATEGORIES)


def read_whole(
    inputs: Sequence[Path], listing: Listing, progress: bool | None
) -> tuple[list[Asset], list[Project], str | None]:
    """The files and the projects of an export, and its provider, its conversations read once."""
    assets, projects = AssetReading(), ProjectReading()
    provider = read_conversations(inputs, listing, [assets, projects], progress)
    return assets.finish(inputs, listing, provider), projects.finish(inputs), provider


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
    held: dict[tuple[Any, ...], bool] = {}
    for row in assets:
        key = (row.provider, row.pointer) if row.pointer else (row.provider, row.conversation_id, row.node_id, row.name)
        held[key] = held.get(key, False) or bool(row.present)
    present = sum(held.values())
    return {
        "assets": {"total": len(held), "present": present, "missing": len(held) - present},
        "projects": [
            {
                "provider": p.provider,
                "project_id": p.project_id,
                "kind": p.kind,
                "name": p.name,
                "conversations": p.conversations,
                "docs": None if p.docs is None else len(p.docs),
            }
            for p in projects
        ],
        "unconverted": unconverted_in(inputs, listing),
        "verify": verify_in(inputs, listing) if verify else None,
    }


def whole_tables(sources: Any, labels: Sequence[str]) -> dict[str, pa.Table]:
    """The ``assets`` and ``projects`` tables of the exports among ``sources`` (what ``to_parquet`` takes;
    ``labels``: each one's label), a ``source`` column first; empty when none is an export on disk.

    Parameters
    ----------
    sources
        One source or a list of them: only exports given by path (or resolved inputs) are read.
    labels
        One label per source, in order (the ``source`` of the other tables).

    Returns
    -------
    dict of str to pyarrow.Table
        ``assets`` and ``projects``, when some source is an export.

    Raises
    ------
    InputError
        When an export cannot be read.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> sorted(whole_tables(mv.sample_path("claude"), ["claude-export.zip"]))
    ['assets', 'projects']
    """
    import pyarrow as pa

    items = list(sources) if isinstance(sources, list | tuple) else [sources]
    parts: dict[str, list[pa.Table]] = {"assets": [], "projects": []}
    for item, label in zip(items, labels, strict=True):
        if not isinstance(item, str | os.PathLike | Input):
            continue
        found = item if isinstance(item, Input) else resolve_one(item, "any", label=label)
        if found.kind != "export" or found.files() is None:
            continue
        inputs = export_inputs([found], "to_parquet()")
        assets, projects, _ = read_whole(inputs, list_export(inputs), False)
        for name, table in (("assets", assets_table(assets)), ("projects", projects_table(projects))):
            column = pa.array([label] * table.num_rows, pa.string())
            parts[name].append(table.add_column(0, "source", column))
    if not parts["assets"]:
        return {}
    return {name: pa.concat_tables(tables) for name, tables in parts.items()}


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
