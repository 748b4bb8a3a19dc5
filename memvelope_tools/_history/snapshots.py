"""Snapshots: an export read as tables, with its conversations' keys and its date (given, from the file
name, or its newest timestamp)."""

from __future__ import annotations

import functools
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._frames.documents import read_documents
from .._read import Source
from .._sources import explained, labels_of, resolve_one
from .._workers.threads import run_on_threads
from ..errors import FormatError, OutputError
from .keys import conversation_keys

#: Which rule gave a snapshot its date.
DATE_SOURCES = ("given", "file name", "newest timestamp")
_NAME = re.compile(
    r"^(?:data|[0-9a-f]{16,})-(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})(?:-batch-\d+)?(?: \(\d+\))?(?:\.zip)?$",
    re.IGNORECASE,
)


@dataclass
class Snapshot:
    """One export as tables, with each conversation's matching key and the snapshot's date."""

    label: str
    provider: str
    convs: pa.Table
    msgs: pa.Table
    keys: np.ndarray
    matched_by: np.ndarray
    date: Any
    date_source: str

    @property
    def starts(self) -> np.ndarray:
        counts: np.ndarray = self.convs.column("n_messages").to_numpy()
        starts: np.ndarray = np.cumsum(counts) - counts
        return starts


def date_from_name(path: str | os.PathLike[str]) -> pd.Timestamp | None:
    """The download time in an export's file name (or of the folder holding its part), as UTC; None if none.

    Parameters
    ----------
    path
        The export's zip, its unpacked folder or a ``conversations*.json`` part inside that folder.

    Returns
    -------
    pandas.Timestamp or None
        The time, or None when no name on the path follows the ChatGPT or Claude pattern.

    Raises
    ------
    None

    Examples
    --------
    >>> date_from_name("data-2025-01-31-08-15-00-batch-0000.zip")
    Timestamp('2025-01-31 08:15:00+0000', tz='UTC')
    >>> date_from_name("export.zip") is None
    True
    """
    p = Path(os.fspath(path))
    for name in (p.name, p.parent.name):
        found = _NAME.match(name)
        if found:
            try:
                year, month, day, hour, minute, second = (int(g) for g in found.groups())
                stamp = datetime(year, month, day, hour, minute, second)
            except ValueError:
                return None
            return pd.Timestamp(stamp, tz="UTC").as_unit("ms")
    return None


def read_snapshot(
    source: Source,
    *,
    label: str | None = None,
    date: Any = None,
    dated: bool = True,
    named: Source | None = None,
    workers: int | None = 1,
    progress: bool | None = None,
) -> Snapshot:
    """One export or envelope as a :class:`Snapshot` (read through the frames' door, never changed);
    ``dated=False`` leaves its date unread (NaT). ``named`` is the path whose file name may give the
    date and the label (default: ``source``; for an envelope converted from a download, the download).
    ``workers`` are the worker processes that convert an export given as a path (see
    :func:`memvelope_tools._convert.convert_stream`)."""
    if label is None:
        [label] = labels_of([source if named is None else named])
    [snap] = read_snapshots([source], [label], [date], dated=dated, names=[named], workers=workers, progress=progress)
    return snap


def read_snapshots(
    sources: Sequence[Source],
    labels: Sequence[str],
    dates: Sequence[Any],
    *,
    dated: bool = True,
    names: Sequence[Source | None] | None = None,
    workers: int | None = 1,
    progress: bool | None = None,
) -> list[Snapshot]:
    """:func:`read_snapshot` of each source, in order (``names``: each one's ``named``); the exports
    among them are converted two at a time, so that one's conversion keeps the cores busy while the
    other's waits on a single step."""
    tables = _tables(list(zip(sources, labels, strict=True)), workers, progress)
    named = [s if n is None else n for s, n in zip(sources, names or [None] * len(sources), strict=True)]
    snaps = []
    for (convs, msgs, provider), source, label, date in zip(tables, named, labels, dates, strict=True):
        keys, matched_by = conversation_keys(convs, msgs)
        when, rule = (
            snapshot_date(source, date, label, functools.partial(newest_in, convs, msgs)) if dated else (pd.NaT, "")
        )
        snaps.append(Snapshot(label, provider, convs, msgs, keys, matched_by, when, rule))
    return snaps


def _tables(
    inputs: list[tuple[Source, str]], workers: int | None, progress: bool | None
) -> list[tuple[pa.Table, pa.Table, str]]:
    """The envelope tables of each ``(source, label)``, and the provider its envelope names (even with no
    conversation). An export path is converted streaming to a temporary envelope file first (two exports
    at the same time), which the frames then read a batch at a time, so memory stays near the tables' size."""
    with tempfile.TemporaryDirectory(prefix="memvelope-history-") as tmp:
        readable: list[Source] = []
        jobs: list[tuple[list[Path], Path]] = []
        for n, (source, label) in enumerate(inputs):
            found = resolve_one(source, "any", label=label)
            paths = found.files()
            if paths is not None:
                envelope = Path(tmp) / f"export-{n}.mve.json"
                jobs.append((paths, envelope))
                readable.append(envelope)
            else:
                readable.append(source)
        convert_all(jobs, workers, progress)
        out = []
        for source, (_, label) in zip(readable, inputs, strict=True):
            read = read_documents(source, "envelope", sources=[label], progress=progress)
            assert read.messages is not None
            out.append((read.conversations, read.messages, str(read.records[0]["provider"])))
        return out


def convert_all(jobs: list[tuple[list[Path], Path]], workers: int | None, progress: bool | None) -> None:
    """Convert each export (its parts) to its envelope file, two at a time; the first error is raised."""
    from .._convert.pipeline import convert_stream

    def convert(paths: list[Path], envelope: Path, bar: bool | None) -> None:
        # A temporary file of this call's: written through, never synced to disk as an output is.
        try:
            with explained(paths), open(envelope, "wb") as sink:
                convert_stream(paths, None, stdout=sink, workers=workers, progress=bar)
        except (OSError, OutputError) as exc:
            cause = exc.__cause__ if isinstance(exc, OutputError) and exc.__cause__ is not None else exc
            failure = cause.strerror if isinstance(cause, OSError) and cause.strerror else cause
            raise OutputError(
                f"cannot write the export's conversion to a temporary file: {failure}",
                reason="output",
                source=os.fspath(envelope.parent),
            ) from None

    # One bar at a time on the terminal: the first conversion's.
    calls = [
        functools.partial(convert, paths, envelope, progress if n == 0 else False)
        for n, (paths, envelope) in enumerate(jobs)
    ]
    run_on_threads(calls, 2, name="memvelope-history")


def snapshot_date(source: Any, date: Any, label: str, newest: Any) -> tuple[pd.Timestamp, str]:
    """An export's snapshot date and the rule that gave it (see the package's rules): ``date`` when
    given, else the one in the file name of ``source``, else ``newest()``, its newest timestamp (None: none)."""
    if date is not None:
        try:
            stamp = pd.Timestamp(date)
        except (ValueError, TypeError):
            raise FormatError(f"not a date: {date!r}", reason="bad-timestamp", source=label) from None
        if pd.isna(stamp):
            raise FormatError(f"not a date: {date!r}", reason="bad-timestamp", source=label)
        stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
        return stamp.as_unit("ms"), "given"
    if isinstance(source, str | os.PathLike):
        named = date_from_name(source)
        if named is not None:
            return named, "file name"
    found = newest()
    if found is None:
        raise FormatError(
            "no date: the file name has none and the export holds no timestamp; give the date explicitly",
            reason="bad-timestamp",
            source=label,
        )
    return pd.Timestamp(found).tz_convert("UTC").as_unit("ms"), "newest timestamp"


def shown_date(stamp: pd.Timestamp) -> str:
    """A snapshot date as messages show it: ``2025-06-01 09:30 UTC``."""
    return f"{stamp.tz_convert('UTC'):%Y-%m-%d %H:%M} UTC"


def newest_in(convs: pa.Table, msgs: pa.Table) -> Any:
    """The newest timestamp of a snapshot's tables (its conversations' times and its messages'), None if none."""
    newest = [
        pc.max(table.column(name)).as_py()
        for table, name in ((convs, "created_at"), (convs, "updated_at"), (msgs, "ts"))
        if table.num_rows
    ]
    found = [t for t in newest if t is not None]
    return max(found) if found else None
