"""A history folder that grows: the merged history of every export added to it, as a Parquet dataset.

The folder holds ``conversations.parquet`` and ``messages.parquet`` (the columns of
:func:`memvelope_tools.to_parquet`'s files, so every reader of those reads it, plus
``conversation_key``, ``first_seen``, ``last_seen`` and ``status`` as
:func:`memvelope_tools.history` gives them) and ``snapshots.parquet`` (one row per export added).
Adding an export reads that export and the folder's whole history, merges them and writes the files
again in full: memory and time grow with the history, not with what the export changed. Adding the
folder's newest export again (same date and provider) compares the merged tables with the files and
writes only those that differ, so adding the same export again changes no file. The new files are
written in full beside the old ones first and then renamed over them, so an add that is interrupted
while writing leaves the folder as it was. An add that changes the messages also brings the search
index kept beside them up to date (the one :func:`memvelope_tools.search` keeps beside a Parquet
folder), indexing only the messages the history gained, so the first search is quick.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from ._atomic import atomic_outputs, check_output_folder, output_folder
from ._history import (
    FILES,
    History,
    is_history_folder,
    message_status,
    read_folder_tables,
    read_snapshot,
)
from ._parquet import schema_metadata, write_table
from ._read import Source
from ._sources import labels_of
from ._tags import ENVELOPE_TAG
from .errors import FormatError, OutputError, SearchIndexError

__all__ = ["FILES", "add_export", "add_to_history", "is_history_folder", "message_status"]


def add_to_history(
    export: Source,
    folder: str | os.PathLike[str],
    *,
    date: Any = None,
    workers: int | None = 1,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Add one export (or envelope) to the history folder ``folder`` (created if missing).

    Parameters
    ----------
    export
        Anything :func:`memvelope_tools.load` takes. Its date is ``date``, else the one in its file
        name, else its newest timestamp (see :mod:`memvelope_tools._history`).
    folder
        The history folder.
    date
        The export's date, when given.
    workers
        Worker processes that convert an export, as :func:`memvelope_tools.diff` takes them.
    progress
        Show progress bars on long work (None: when the output is a terminal).

    Returns
    -------
    dict
        The export's snapshot row (``source``, ``provider``, ``date``, ``date_source``, counts and
        what changed) and ``added``: False when the folder already held this very export, in which
        case no file was written.

    Raises
    ------
    memvelope_tools.errors.FormatError
        When the export cannot be read, is older than the folder's newest export of its provider,
        or the folder is not a history folder.
    memvelope_tools.errors.OutputError
        When the folder cannot be written.

    Warns
    -----
    UserWarning
        When the history was added but its search index could not be written (search builds it).

    Examples
    --------
    >>> from memvelope_tools._history_folder import add_to_history
    >>> add_to_history("data-2025-06-01-09-30-00-batch-0000.zip", "my-history/")  # doctest: +SKIP
    """
    return add_export(export, folder, date=date, workers=workers, progress=progress)


def add_export(
    export: Source,
    folder: str | os.PathLike[str],
    *,
    date: Any = None,
    named: Source | None = None,
    workers: int | None = 1,
    progress: bool | None = None,
) -> dict[str, Any]:
    """:func:`add_to_history`, the export's label and date read from the name of ``named`` when given
    (an envelope converted from a download names the download)."""
    base = Path(folder)
    check_output_folder(base)
    existing = read_folder_tables(base) if base.is_dir() else None
    if existing is None and base.is_dir() and (base / "conversations.parquet").exists():
        raise FormatError(
            "this folder holds Parquet files but no snapshots.parquet: not a history folder",
            reason="bad-source",
            source=str(base),
        )
    [label] = labels_of([export if named is None else named])
    snap = read_snapshot(export, label=label, date=date, named=named, workers=workers, progress=progress)
    state = History.from_tables(existing) if existing is not None else History.empty()
    newest = state.latest().get(snap.provider)
    if newest is not None and snap.date.value // 1_000_000 < newest:
        shown = pd.Timestamp(newest, unit="ms", tz="UTC").isoformat()
        raise FormatError(
            f"this export is dated {snap.date.isoformat()}, before the folder's newest {snap.provider} export "
            f"({shown}); add exports oldest first",
            reason="bad-source",
            source=label,
        )
    merged = state.merge(snap)
    row = dict(merged.snapshots[-1])
    previous = dict(state.snapshots[-1]) if state.snapshots else None
    del snap, state
    if previous is None or (previous["date"], previous["provider"]) != (row["date"], row["provider"]):
        existing = None  # only the folder's newest export again is compared with the folder's files
    tables = merged.tables()
    snapshots = merged.snapshots
    del merged  # the tables are a sorted copy: hold one history at a time
    if previous is not None and existing is not None and _same_tables(existing, tables):
        return {**previous, "added": False}
    changed = _replace(base, tables, existing, snapshots, progress)
    del existing, tables  # the index reads the files back: hold one history at a time
    if "messages" in changed or "conversations" in changed:
        _index(base)
    return {**row, "added": True}


def _index(base: Path) -> None:
    """Bring the search index kept beside the folder's files up to date with them."""
    from ._search import update_folder_index

    try:
        update_folder_index(base)
    except (OSError, SearchIndexError) as exc:
        failure = (exc.strerror or str(exc)) if isinstance(exc, OSError) else exc.msg
        warnings.warn(f"cannot write the search index of {base} ({failure}); search will build it", stacklevel=3)


def _same_tables(existing: dict[str, pa.Table], tables: dict[str, pa.Table]) -> bool:
    """True when merging the folder's newest export again changed none of its conversations and messages."""
    return all(tables[name].equals(existing[name]) for name in ("conversations", "messages"))


def _replace(
    base: Path,
    tables: dict[str, pa.Table],
    existing: dict[str, pa.Table] | None,
    snapshots: list[dict[str, Any]],
    progress: bool | None,
) -> list[str]:
    """Write the changed files (every file when ``existing`` is None) beside the old ones, then rename
    them over the old ones; the names of the files replaced."""
    out = output_folder(base)
    described = [{"source": s["source"], "format": ENVELOPE_TAG, "provider": s["provider"]} for s in snapshots]
    meta = schema_metadata(described)
    changed = [name for name in FILES if existing is None or not tables[name].equals(existing[name])]
    try:
        with atomic_outputs(out, [f"{name}.parquet" for name in changed]) as open_file:
            for name in changed:
                file = f"{name}.parquet"
                write_table(tables[name].replace_schema_metadata(meta), open_file(file), file, progress)
    except OSError as exc:
        raise OutputError(
            f"cannot write the history: {exc.strerror or exc}", reason="output", source=str(base)
        ) from exc
    return changed
