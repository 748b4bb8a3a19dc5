"""The merged history of several dated exports of one account."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pandas as pd
import pyarrow as pa

from .._frames.folders import assemble, empty_table
from .._read import Source
from .folder import frames_of, snapshots_table
from .merge import Held, Merge
from .snapshots import read_snapshots


def history(
    exports: Sequence[Source],
    dates: Sequence[Any] | None = None,
    *,
    tz: str | None = None,
    workers: int | None = 1,
    progress: bool | None = None,
) -> dict[str, pd.DataFrame]:
    """The merged history of several dated exports of one account: every conversation and message ever seen.

    Parameters
    ----------
    exports
        The exports (or envelopes), each anything :func:`memvelope_tools.load` takes, in any order:
        they are merged oldest first.
    dates
        One date per export (anything :class:`pandas.Timestamp` takes; a date without a zone is
        UTC; None for an export whose date comes from its file name or its newest timestamp).
    tz
        Show timestamps in this time zone (the instants are unchanged).
    workers
        Worker processes that convert an export, as :func:`diff` takes them.
    progress
        Show progress bars on long work (None: when the output is a terminal).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``snapshots`` (:data:`SNAPSHOT_COLUMNS`: each export's ``source``, ``provider``, ``date``,
        ``date_source``, counts, and how many conversations were ``new``, ``grown``, ``edited``,
        ``unchanged`` against the history before it and ``missing`` from the previous export);
        ``conversations`` and ``messages``: the usual frames' columns (from the newest export holding
        each) plus ``conversation_key``, ``first_seen``, ``last_seen`` (snapshot dates) and
        ``status``: ``current`` (in the provider's newest export), ``deleted-upstream`` (its
        conversation is not) or, for a message, ``edited-away`` (an edit took it off the active path;
        ``last_seen`` is the last snapshot that held it). Conversations come in the newest export's
        order, then the ones that vanished (the latest to go first); ``conv_index`` is a
        conversation's row in that order and ``source`` the export that last held it, for its
        messages too, so ``(source, conv_index)`` names one conversation as in the usual frames.
        Messages come by conversation, then position, then ``first_seen``.

    Raises
    ------
    memvelope_tools.errors.MemvelopeError
        When an input is not an export or envelope, or a date cannot be found or read.
    ValueError
        When ``dates`` does not have one entry per export.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> h = mv.history(["data-2025-01-05-10-00-00-batch-0000.zip", "data-2025-06-01-09-30-00-batch-0000.zip"])
    ... # doctest: +SKIP
    >>> h["messages"].query("status == 'edited-away'")  # doctest: +SKIP
    """
    inputs = list(exports)
    given = list(dates) if dates is not None else [None] * len(inputs)
    if len(given) != len(inputs):
        raise ValueError(f"dates= has {len(given)} entries for {len(inputs)} exports")
    labels = _labels(inputs)
    snaps = read_snapshots(inputs, labels, given, workers=workers, progress=progress)
    snaps.sort(key=lambda s: s.date)
    held = Held.empty()
    parts: list[pa.Table] = []
    for snap in snaps:
        merge = Merge(held, snap.label, on_new=parts.append, whole=True)
        merge.add(snap.convs, snap.msgs)
        held = merge.finish(snap.provider, snap.date, snap.date_source).held
    found = pa.concat_tables(parts) if parts else empty_table("part")
    messages = assemble(held.convs, held.state, found, source="history")
    tables = {"snapshots": snapshots_table(held.snapshots), "conversations": held.convs, "messages": messages}
    return frames_of(tables, tz)


def _labels(inputs: list[Any]) -> list[str]:
    """Each export's label: its file or folder name, the path as given when another export has the same
    name (the same path given twice is one file), ``doc0``, ``doc1``, ... for what is not a path."""
    paths = [os.path.normpath(os.fspath(x)) if isinstance(x, str | os.PathLike) else None for x in inputs]
    names = {p: os.path.basename(p) for p in paths if p is not None}
    repeated = Counter(names.values())
    return [f"doc{i}" if p is None else (p if repeated[names[p]] > 1 else names[p]) for i, p in enumerate(paths)]
