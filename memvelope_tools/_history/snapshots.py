"""Snapshots: an export read as tables, with its conversations' keys and its date (given, from the file
name, or its newest timestamp)."""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from .._frames.documents import read_documents
from .._read import Source
from .._sources import explained, labels_of, resolve_one
from .._workers.threads import run_on_threads
from ..errors import OutputError
from .dates import newest_in, snapshot_date
from .keys import conversation_keys


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
    ``dated=False`` leaves its date unread (None). ``named`` is the path whose file name may give the
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
            snapshot_date(source, date, label, functools.partial(newest_in, convs, msgs)) if dated else (None, "")
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
