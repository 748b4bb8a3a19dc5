"""Your history across exports: what changed between two exports of one account, and the merged history of many.

An export is a full snapshot of an account. Between two of them conversations are added, grow, are
edited (an edited prompt or a regenerated reply moves the active path) or disappear (deleted or
archived upstream). :func:`diff` compares two snapshots; :func:`history` merges several into one
history that keeps every conversation and message ever seen. Envelopes are read, never changed: the
history is a layer above them.

Matching rules (this module owns them):

* **Conversations** match by provider and id. A conversation whose id is null, or occurs more than
  once in its export, matches by ``created_at`` and title when it has a ``created_at`` and that pair
  is unique among its export's id-less conversations; otherwise it matches only an identical
  conversation (same id, title, ``created_at`` and messages). :func:`diff` reports such a
  conversation without a counterpart as ``unmatched`` rather than ``new`` or ``missing``: a renamed
  or edited one cannot be told from a new one. The ``matched_by`` column says which rule matched
  (``id``, ``created_at+title``, ``content``).
* **Messages** compare by role, text and timestamp, never by their positional ``m1``, ``m2`` ids.
  In a history, a message is the same message when it has the same role, text and timestamp at the
  same position of the same conversation.
* **Snapshot date**: given explicitly, else read from the download's file name (ChatGPT
  ``<hash>-YYYY-MM-DD-HH-MM-SS.zip``, Claude ``data-YYYY-MM-DD-HH-MM-SS[-batch-NNNN].zip``, or the
  folder they unpack to; the time is taken as UTC), else the newest timestamp inside the export.
  The ``date_source`` column says which rule gave it: ``given``, ``file name``, ``newest timestamp``.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ._frames.columns import (
    CONVERSATION_COLUMNS,
    MESSAGE_COLUMNS,
    MS,
    NULLABLE_INT,
    STRING,
    TIMESTAMP,
    arrow_schema,
    to_pandas,
)
from ._frames.documents import envelope_tables
from ._history_files import (
    CONVERSATION_HISTORY_COLUMNS,
    HISTORY_STATUSES,
    MESSAGE_HISTORY_COLUMNS,
    SNAPSHOT_COLUMNS,
    is_history_folder,
    read_tables,
)
from ._read import Source
from ._sources import explained, labels_of, resolve_one
from ._spec import ROLES
from .errors import FormatError

__all__ = [
    "CONVERSATION_HISTORY_COLUMNS",
    "DATE_SOURCES",
    "DIFF_COLUMNS",
    "DIFF_STATUSES",
    "HISTORY_STATUSES",
    "MESSAGE_HISTORY_COLUMNS",
    "SNAPSHOT_COLUMNS",
    "History",
    "Snapshot",
    "date_from_name",
    "diff",
    "history",
    "is_history_folder",
    "message_status",
    "read_folder_tables",
    "read_history",
    "read_snapshot",
]

#: What :func:`diff` says of a conversation.
DIFF_STATUSES = ("new", "missing", "unchanged", "grown", "edited", "unmatched")
#: Which rule gave a snapshot its date.
DATE_SOURCES = ("given", "file name", "newest timestamp")

DIFF_COLUMNS: dict[str, Any] = {
    "provider": STRING,
    "id": STRING,
    "title": STRING,
    "status": pd.CategoricalDtype(list(DIFF_STATUSES)),
    "messages_before": NULLABLE_INT,
    "messages_after": NULLABLE_INT,
    "first_difference": NULLABLE_INT,
    "matched_by": STRING,
    "created_at": TIMESTAMP,
    "updated_at": TIMESTAMP,
    "last_ts": TIMESTAMP,
}
_NAME = re.compile(
    r"^(?:data|[0-9a-f]{16,})-(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})(?:-batch-\d+)?(?: \(\d+\))?(?:\.zip)?$",
    re.IGNORECASE,
)
NO_TS = np.iinfo(np.int64).min
_CHUNK = 1 << 18  # message pairs compared at a time
_TEXT_BYTES = 8 << 20  # bytes of text taken for comparing at a time


# ---- snapshots -----------------------------------------------------------------------------------


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
    for (convs, msgs), source, label, date in zip(tables, named, labels, dates, strict=True):
        providers = convs.column("provider").unique().to_pylist()
        provider = str(providers[0]) if providers else ""
        keys, matched_by = conversation_keys(convs, msgs)
        when, rule = (
            snapshot_date(source, date, label, functools.partial(newest_in, convs, msgs)) if dated else (pd.NaT, "")
        )
        snaps.append(Snapshot(label, provider, convs, msgs, keys, matched_by, when, rule))
    return snaps


def _tables(
    inputs: list[tuple[Source, str]], workers: int | None, progress: bool | None
) -> list[tuple[pa.Table, pa.Table]]:
    """The envelope tables of each ``(source, label)``. An export path is converted streaming to a
    temporary envelope file first (two exports at the same time), which the frames then read a
    batch at a time, so memory stays near the tables' size."""
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
            convs, msgs = envelope_tables(source, sources=[label], progress=progress)
            assert msgs is not None
            out.append((convs, msgs))
        return out


def convert_all(jobs: list[tuple[list[Path], Path]], workers: int | None, progress: bool | None) -> None:
    """Convert each export (its parts) to its envelope file, two at a time; the first error is raised."""
    from ._convert.pipeline import convert_stream

    def convert(paths: list[Path], envelope: Path, bar: bool | None) -> None:
        # A temporary file of this call's: written through, never synced to disk as an output is.
        with explained(paths), open(envelope, "wb") as sink:
            convert_stream(paths, None, stdout=sink, workers=workers, progress=bar)

    if len(jobs) < 2:
        for paths, envelope in jobs:
            convert(paths, envelope, progress)
        return
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="memvelope-history") as pool:
        # One bar at a time on the terminal: the first conversion's.
        futures = [
            pool.submit(convert, paths, envelope, progress if n == 0 else False)
            for n, (paths, envelope) in enumerate(jobs)
        ]
        try:
            for future in futures:
                future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def snapshot_date(source: Any, date: Any, label: str, newest: Any) -> tuple[pd.Timestamp, str]:
    """An export's snapshot date and the rule that gave it (see the module's rules): ``date`` when
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


def newest_in(convs: pa.Table, msgs: pa.Table) -> Any:
    """The newest timestamp of a snapshot's tables (its conversations' times and its messages'), None if none."""
    newest = [
        pc.max(table.column(name)).as_py()
        for table, name in ((convs, "created_at"), (convs, "updated_at"), (msgs, "ts"))
        if table.num_rows
    ]
    found = [t for t in newest if t is not None]
    return max(found) if found else None


def conversation_keys(convs: pa.Table, msgs: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """Each conversation's matching key and the rule that gave it (see the module's matching rules)."""
    providers = convs.column("provider").to_pylist()
    ids = convs.column("conversation_id").to_pylist()
    created = convs.column("created_at").cast(pa.int64()).to_pylist()
    titles = convs.column("title").to_pylist()
    id_count = Counter(i for i in ids if i is not None)
    pairs = [(c, t) if i is None or id_count[i] > 1 else None for i, c, t in zip(ids, created, titles, strict=True)]
    pair_count = Counter(p for p in pairs if p is not None and p[0] is not None)
    keys = np.empty(len(ids), dtype=object)
    rules = np.empty(len(ids), dtype=object)
    counts = convs.column("n_messages").to_numpy()
    starts = np.cumsum(counts) - counts
    seen: Counter[str] = Counter()
    for row, (provider, conv_id, pair) in enumerate(zip(providers, ids, pairs, strict=True)):
        if pair is None:
            keys[row], rules[row] = f"{provider}:id:{conv_id}", "id"
        elif pair[0] is not None and pair_count[pair] == 1:
            keys[row], rules[row] = f"{provider}:created:{pair[0]}:{pair[1]}", "created_at+title"
        else:
            part = msgs.slice(int(starts[row]), int(counts[row]))
            stamps = part.column("ts").cast(pa.int64()).to_pylist()
            body = [conv_id, pair[0], pair[1], part.column("role").cast(pa.string()).to_pylist(), stamps]
            body.append(part.column("text").to_pylist())
            digest = hashlib.blake2b(json.dumps(body).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
            seen[digest] += 1
            keys[row], rules[row] = f"{provider}:content:{digest}:{seen[digest]}", "content"
    return keys, rules


# ---- comparing message paths ---------------------------------------------------------------------


class _Comparable:
    """The columns a message compares by: role, timestamp, text (its chunks as they are, never joined
    whole: :meth:`texts` takes a few at a time)."""

    def __init__(self, msgs: pa.Table) -> None:
        roles = msgs.column("role").to_pandas()
        self.role = pd.Categorical(roles, categories=list(ROLES)).codes
        self.ts = msgs.column("ts").cast(pa.int64()).fill_null(NO_TS).to_numpy()
        text = msgs.column("text")
        self.chunks: list[pa.Array] = [chunk for chunk in text.chunks if len(chunk)]
        self.starts = np.cumsum([0] + [len(chunk) for chunk in self.chunks[:-1]]).astype(np.int64)
        self.size = pc.binary_length(text).fill_null(-1).to_numpy()

    def texts(self, rows: np.ndarray) -> pa.Array:
        """The texts of ``rows``, in their order (taking from a chunked column would join it whole each time)."""
        chunk = np.searchsorted(self.starts, rows, side="right") - 1
        order = np.argsort(chunk, kind="stable")
        bounds = np.searchsorted(chunk[order], np.arange(len(self.chunks) + 1))
        parts = [
            self.chunks[c].take(pa.array(rows[order[lo:hi]] - self.starts[c]))
            for c, (lo, hi) in enumerate(itertools.pairwise(bounds.tolist()))
            if hi > lo
        ]
        if not parts:
            return pa.array([], pa.string())
        back = np.empty_like(order)
        back[order] = np.arange(len(order))
        return pa.concat_arrays(parts).take(pa.array(back))


def _common_prefix(
    a: _Comparable,
    a_rows: np.ndarray,
    a_start: np.ndarray,
    a_len: np.ndarray,
    b: _Comparable,
    b_rows: np.ndarray,
    b_start: np.ndarray,
    b_len: np.ndarray,
) -> np.ndarray:
    """For each pair of paths, how many leading messages they share.

    Path ``i`` of side a is rows ``a_rows[a_start[i] : a_start[i] + a_len[i]]`` of ``a``; likewise b.
    """
    shared = np.minimum(a_len, b_len).astype(np.int64)
    out = shared.copy()
    ends = np.cumsum(shared)
    total = int(ends[-1]) if len(ends) else 0
    for lo in range(0, total, _CHUNK):
        flat = np.arange(lo, min(lo + _CHUNK, total), dtype=np.int64)
        pair = np.searchsorted(ends, flat, side="right")
        offset = flat - (ends[pair] - shared[pair])
        ai = a_rows[a_start[pair] + offset]
        bi = b_rows[b_start[pair] + offset]
        same = (a.role[ai] == b.role[bi]) & (a.ts[ai] == b.ts[bi]) & (a.size[ai] == b.size[bi])
        check = np.flatnonzero(same)
        # Texts are compared a few MB at a time: taking them copies them.
        cuts = np.searchsorted(np.cumsum(a.size[ai[check]]), np.arange(_TEXT_BYTES, a.size.sum() + 1, _TEXT_BYTES))
        for part in np.split(check, np.unique(cuts)):
            if part.size:
                texts = pc.equal(a.texts(ai[part]), b.texts(bi[part]))
                same[part] = pc.fill_null(texts, False).to_numpy(zero_copy_only=False)
        differ = np.flatnonzero(~same)
        if differ.size:
            np.minimum.at(out, pair[differ], offset[differ])
    result: np.ndarray = out
    return result


def pairs(start_a: np.ndarray, start_b: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs ``(start_a[i] + j, start_b[i] + j)`` for ``j < length[i]``, all ``i``."""
    length = length.astype(np.int64)
    base = np.repeat(np.cumsum(length) - length, length)
    offset = np.arange(int(length.sum()), dtype=np.int64) - base
    return np.repeat(start_a, length) + offset, np.repeat(start_b, length) + offset


def path_status(prefix: np.ndarray, before: np.ndarray, after: np.ndarray) -> np.ndarray:
    return np.where(
        (prefix == before) & (prefix == after),
        "unchanged",
        np.where(prefix == before, "grown", "edited"),
    )


# ---- diff ----------------------------------------------------------------------------------------


def diff(old: Source, new: Source, *, workers: int | None = 1, progress: bool | None = None) -> pd.DataFrame:
    """What changed between two exports (or envelopes) of one account: one row per conversation.

    Parameters
    ----------
    old, new
        The older and the newer export: anything :func:`memvelope_tools.load` takes (an export as
        downloaded, an envelope file, a parsed envelope).
    workers
        Worker processes that convert an export (1: none; None: one per core for an export of 32 MB
        or more, as ``memvelope convert`` does; a script that asks for them must guard its entry point
        with ``if __name__ == "__main__":``).
    progress
        Show progress bars on long work (None: when the output is a terminal).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`DIFF_COLUMNS`: ``provider``, ``id``, ``title``,
        ``status`` (``new``, ``missing``, ``unchanged``, ``grown``, ``edited``, ``unmatched``),
        ``messages_before``, ``messages_after`` (null where the conversation is absent),
        ``first_difference`` (index of the first message that differs, null when none does),
        ``matched_by``, ``created_at``, ``updated_at``, ``last_ts`` (``title`` and these from the
        newer export, from the older one for a conversation only it holds). Rows follow
        the newer export's order, then the conversations only the older one holds, in its order.

    Raises
    ------
    memvelope_tools.errors.MemvelopeError
        When either input is not an export or envelope.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> changes = mv.diff("old-export.zip", "new-export.zip")  # doctest: +SKIP
    >>> changes["status"].value_counts()  # doctest: +SKIP
    """
    a, b = read_snapshots([old, new], ["old", "new"], [None, None], dated=False, workers=workers, progress=progress)
    return diff_snapshots(a, b)


def diff_snapshots(a: Snapshot, b: Snapshot) -> pd.DataFrame:
    """:func:`diff` of two snapshots already read."""
    a_index = pd.Index(a.keys)
    match = a_index.get_indexer(b.keys) if len(b.keys) else np.empty(0, dtype=np.int64)
    found = np.flatnonzero(match >= 0)
    a_rows = match[found]
    a_len = a.convs.column("n_messages").to_numpy()
    b_len = b.convs.column("n_messages").to_numpy()
    prefix = _common_prefix(
        _Comparable(a.msgs),
        np.arange(a.msgs.num_rows),
        a.starts[a_rows],
        a_len[a_rows],
        _Comparable(b.msgs),
        np.arange(b.msgs.num_rows),
        b.starts[found],
        b_len[found],
    )
    status_b = np.empty(len(b.keys), dtype=object)
    first_b = np.full(len(b.keys), -1, dtype=np.int64)
    status_b[found] = path_status(prefix, a_len[a_rows], b_len[found])
    first_b[found] = np.where(status_b[found] == "unchanged", -1, prefix)
    a_ids = set(a.convs.column("conversation_id").drop_null().to_pylist())
    b_ids = set(b.convs.column("conversation_id").drop_null().to_pylist())
    b_id_list = b.convs.column("conversation_id").to_pylist()
    for row in np.flatnonzero(match < 0):
        by_id = b.matched_by[row] == "id" and b_id_list[row] not in a_ids
        status_b[row] = "new" if by_id else "unmatched"
    gone = np.ones(len(a.keys), dtype=bool)
    gone[a_rows] = False
    gone_rows = np.flatnonzero(gone)
    a_id_list = a.convs.column("conversation_id").to_pylist()
    status_a = [
        "missing" if a.matched_by[row] == "id" and a_id_list[row] not in b_ids else "unmatched" for row in gone_rows
    ]

    newer = b.convs.to_pandas(types_mapper={pa.string(): STRING}.get)
    older = a.convs.take(pa.array(gone_rows, pa.int64())).to_pandas(types_mapper={pa.string(): STRING}.get)
    before_b = np.full(len(b.keys), -1, dtype=np.int64)
    before_b[found] = a_len[a_rows]
    rows_b = pd.DataFrame(
        {
            "provider": newer["provider"],
            "id": newer["conversation_id"],
            "title": newer["title"],
            "status": status_b,
            "messages_before": _nullable(before_b),
            "messages_after": newer["n_messages"],
            "first_difference": _nullable(first_b),
            "matched_by": [rule if m >= 0 else None for m, rule in zip(match, b.matched_by, strict=True)],
            "created_at": newer["created_at"],
            "updated_at": newer["updated_at"],
            "last_ts": newer["last_ts"],
        }
    )
    rows_a = pd.DataFrame(
        {
            "provider": older["provider"],
            "id": older["conversation_id"],
            "title": older["title"],
            "status": status_a,
            "messages_before": older["n_messages"],
            "messages_after": pd.array([None] * len(older), dtype=NULLABLE_INT),
            "first_difference": pd.array([None] * len(older), dtype=NULLABLE_INT),
            "matched_by": pd.array([None] * len(older), dtype=STRING),
            "created_at": older["created_at"],
            "updated_at": older["updated_at"],
            "last_ts": older["last_ts"],
        }
    )
    frames = [f for f in (rows_b, rows_a) if len(f)]
    out = pd.concat(frames, ignore_index=True) if frames else rows_b
    return _conform(out, DIFF_COLUMNS)


def _nullable(values: np.ndarray) -> pd.arrays.IntegerArray:
    return pd.arrays.IntegerArray(values, values < 0)


def _conform(frame: pd.DataFrame, columns: dict[str, Any]) -> pd.DataFrame:
    out = frame.loc[:, list(columns)]
    for name, dtype in columns.items():
        if out[name].dtype != dtype:
            out[name] = out[name].astype(dtype)
    return out.reset_index(drop=True)


def status_counts(changes: pd.DataFrame) -> dict[str, int]:
    """How many conversations :func:`diff` gave each status, every status listed."""
    counts = changes["status"].value_counts()
    return {status: int(counts.get(status, 0)) for status in DIFF_STATUSES}


# ---- history -------------------------------------------------------------------------------------


@dataclass
class History:
    """A merged history as Arrow tables (the frames' columns, plus ``conversation_key``,
    ``first_seen``, ``last_seen``; messages also ``on_path``: on the last path seen of their
    conversation) and the snapshots merged so far."""

    convs: pa.Table
    msgs: pa.Table
    snapshots: list[dict[str, Any]]

    @classmethod
    def empty(cls) -> History:
        return cls(_empty(CONVERSATION_COLUMNS, False), _empty(MESSAGE_COLUMNS, True), [])

    def merge(self, snap: Snapshot) -> History:
        """This history with ``snap`` merged in as its newest snapshot."""
        date = pa.scalar(snap.date.to_pydatetime(), MS)
        n_msgs = snap.msgs.num_rows
        h_keys = self.msgs.column("conversation_key").to_numpy(zero_copy_only=False)
        on_path = self.msgs.column("on_path").to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(on_path)
        codes, uniques = pd.factorize(h_keys[rows])
        order = np.lexsort((self.msgs.column("position").to_numpy()[rows], codes))
        path_rows = rows[order]
        path_len = np.bincount(codes, minlength=len(uniques)).astype(np.int64)
        path_start = np.cumsum(path_len) - path_len

        path_of = pd.Index(uniques).get_indexer(pd.Index(snap.keys)) if len(snap.keys) else np.empty(0, dtype=np.int64)
        found = np.flatnonzero(path_of >= 0)
        s_len = snap.convs.column("n_messages").to_numpy()
        s_start = snap.starts
        prefix = _common_prefix(
            _Comparable(snap.msgs),
            np.arange(n_msgs),
            s_start[found],
            s_len[found],
            _Comparable(self.msgs),
            path_rows,
            path_start[path_of[found]],
            path_len[path_of[found]],
        )
        source_of = np.full(n_msgs, -1, dtype=np.int64)
        s_rows, h_slots = pairs(s_start[found], path_start[path_of[found]], prefix)
        source_of[s_rows] = path_rows[h_slots]
        self._rejoin(snap, source_of)

        known = pd.Index(self.convs.column("conversation_key").to_numpy(zero_copy_only=False))
        in_history = known.get_indexer(snap.keys) if len(snap.keys) else np.empty(0, dtype=np.int64)
        statuses = Counter(path_status(prefix, path_len[path_of[found]], s_len[found]).tolist())
        statuses["new"] = int((in_history < 0).sum())
        previous = [s for s in self.snapshots if s["provider"] == snap.provider]
        if previous:
            last = pa.scalar(previous[-1]["date"].to_pydatetime(), MS)
            was_there = pc.equal(self.convs.column("last_seen"), last).to_numpy(zero_copy_only=False)
            was_there &= self.convs.column("provider").to_numpy(zero_copy_only=False) == snap.provider
            still = np.zeros(self.convs.num_rows, dtype=bool)
            still[in_history[in_history >= 0]] = True
            statuses["missing"] = int((was_there & ~still).sum())

        first_seen = np.append(self.msgs.column("first_seen").cast(pa.int64()).to_numpy(), 0)
        s_first = np.where(source_of >= 0, first_seen[source_of], date.value)
        keep = np.ones(self.msgs.num_rows, dtype=bool)
        keep[source_of[source_of >= 0]] = False
        touched = pd.Series(h_keys).isin(snap.keys).to_numpy()
        kept = self.msgs.filter(pa.array(keep))
        kept_on_path = np.logical_and(on_path[keep], ~touched[keep])
        kept = kept.set_column(kept.schema.get_field_index("on_path"), "on_path", pa.array(kept_on_path))
        new_msgs = _with_extra(
            snap.msgs, np.repeat(snap.keys, s_len), s_first, date.value, MESSAGE_COLUMNS, on_path=True
        )
        msgs = pa.concat_tables([kept, new_msgs.cast(kept.schema)])

        c_first_all = np.append(self.convs.column("first_seen").cast(pa.int64()).to_numpy(), 0)
        c_first = np.where(in_history >= 0, c_first_all[in_history], date.value)
        c_keep = np.ones(self.convs.num_rows, dtype=bool)
        c_keep[in_history[in_history >= 0]] = False
        new_convs = _with_extra(snap.convs, snap.keys, c_first, date.value, CONVERSATION_COLUMNS, on_path=None)
        convs = pa.concat_tables([self.convs.filter(pa.array(c_keep)), new_convs.cast(self.convs.schema)])

        row = {
            "snapshot": len(self.snapshots),
            "source": snap.label,
            "provider": snap.provider,
            "date": snap.date,
            "date_source": snap.date_source,
            "conversations": snap.convs.num_rows,
            "messages": n_msgs,
        }
        row.update({status: int(statuses.get(status, 0)) for status in ("new", "grown", "edited", "unchanged")})
        row["missing"] = int(statuses.get("missing", 0))
        return History(convs, msgs, [*self.snapshots, row])

    def _rejoin(self, snap: Snapshot, source_of: np.ndarray) -> None:
        """Match the snapshot's messages past the shared beginning to earlier ones at the same place
        (a path that went back to an earlier branch), in place in ``source_of``."""
        known = set(self.msgs.column("conversation_key").to_pylist()) if self.msgs.num_rows else set()
        open_s = np.flatnonzero(source_of < 0)
        if not open_s.size or not known:
            return
        s_keys = np.repeat(snap.keys, snap.convs.column("n_messages").to_numpy())
        open_s = open_s[pd.Series(s_keys[open_s]).isin(known).to_numpy()]
        taken = np.zeros(self.msgs.num_rows, dtype=bool)
        taken[source_of[source_of >= 0]] = True
        h_keys = self.msgs.column("conversation_key").to_numpy(zero_copy_only=False)
        open_h = np.flatnonzero(~taken & pd.Series(h_keys).isin(set(s_keys[open_s])).to_numpy())
        if not open_s.size or not open_h.size:
            return

        def frame(table: pa.Table, rows: np.ndarray, keys: np.ndarray) -> pd.DataFrame:
            part = table.take(pa.array(rows, pa.int64()))
            return pd.DataFrame(
                {
                    "key": keys,
                    "position": part.column("position").to_numpy(),
                    "role": part.column("role").cast(pa.string()).to_pylist(),
                    "ts": part.column("ts").cast(pa.int64()).fill_null(NO_TS).to_numpy(),
                    "text": part.column("text").to_pylist(),
                    "row": rows,
                }
            )

        left = frame(snap.msgs, open_s, s_keys[open_s])
        right = frame(self.msgs, open_h, h_keys[open_h])
        on = ["key", "position", "role", "ts", "text"]
        right = right.drop_duplicates(on, keep="last")
        joined = left.merge(right, on=on, suffixes=("", "_h"))
        source_of[joined["row"].to_numpy()] = joined["row_h"].to_numpy()

    def tables(self) -> dict[str, pa.Table]:
        """The history as Arrow tables in the frames' order and schema: ``snapshots``,
        ``conversations``, ``messages`` (see :func:`history`)."""
        conv_status, msg_status = self._statuses()
        convs = self.convs.append_column("status", pa.array(conv_status, pa.string()))
        msgs = self.msgs.append_column("status", pa.array(msg_status, pa.string())).drop_columns(["on_path"])
        conv_order = conversation_order(convs)
        convs = convs.take(pa.array(conv_order, pa.int64()))
        convs = convs.set_column(
            convs.schema.get_field_index("conv_index"), "conv_index", pa.array(np.arange(convs.num_rows))
        )
        rank = pd.Index(convs.column("conversation_key").to_numpy(zero_copy_only=False)).get_indexer(
            msgs.column("conversation_key").to_numpy(zero_copy_only=False)
        )
        # A message is labelled as its conversation is, so (source, conv_index) names one conversation.
        msgs = msgs.set_column(msgs.schema.get_field_index("conv_index"), "conv_index", pa.array(rank, pa.int64()))
        msgs = msgs.set_column(
            msgs.schema.get_field_index("source"), "source", convs.column("source").take(pa.array(rank, pa.int64()))
        )
        msg_order = np.lexsort(
            (
                msgs.column("first_seen").cast(pa.int64()).to_numpy(),
                msgs.column("position").to_numpy(),
                rank,
            )
        )
        msgs = msgs.take(pa.array(msg_order, pa.int64()))
        snaps = _conform(pd.DataFrame(self.snapshots, columns=list(SNAPSHOT_COLUMNS)), SNAPSHOT_COLUMNS)
        return {
            "snapshots": pa.Table.from_pandas(snaps, preserve_index=False).cast(arrow_schema(SNAPSHOT_COLUMNS)),
            "conversations": convs.cast(arrow_schema(CONVERSATION_HISTORY_COLUMNS)),
            "messages": msgs.cast(arrow_schema(MESSAGE_HISTORY_COLUMNS)),
        }

    def frames(self, tz: str | None = None) -> dict[str, pd.DataFrame]:
        """The history as frames: ``snapshots``, ``conversations``, ``messages`` (see :func:`history`)."""
        return frames_of(self.tables(), tz)

    @classmethod
    def from_tables(cls, tables: dict[str, pa.Table]) -> History:
        """The history that :meth:`tables` gave ``tables`` (read back from a history folder)."""
        empty = cls.empty()
        convs = tables["conversations"].select(empty.convs.column_names).cast(empty.convs.schema)
        status = tables["messages"].column("status").cast(pa.string())
        msgs = tables["messages"].append_column("on_path", pc.not_equal(status, "edited-away"))
        msgs = msgs.select(empty.msgs.column_names).cast(empty.msgs.schema)
        snaps = [
            {str(k): v for k, v in row.items()}
            for row in to_pandas(tables["snapshots"], SNAPSHOT_COLUMNS, None).to_dict("records")
        ]
        return cls(convs, msgs, snaps)

    def latest(self) -> dict[str, int]:
        """Each provider's newest snapshot date (as epoch milliseconds)."""
        out: dict[str, int] = {}
        for snap in self.snapshots:
            value = int(snap["date"].value // 1_000_000)
            out[snap["provider"]] = max(out.get(snap["provider"], value), value)
        return out

    def _statuses(self) -> tuple[np.ndarray, np.ndarray]:
        latest = self.latest()
        c_prov = self.convs.column("provider").to_numpy(zero_copy_only=False)
        c_last = self.convs.column("last_seen").cast(pa.int64()).to_numpy()
        newest = np.array([latest.get(p, NO_TS) for p in c_prov], dtype=np.int64)
        current = c_last >= newest
        conv_status = np.where(current, "current", "deleted-upstream")
        keys = self.convs.column("conversation_key").to_numpy(zero_copy_only=False)
        conv_of = pd.Index(keys).get_indexer(self.msgs.column("conversation_key").to_numpy(zero_copy_only=False))
        on_path = self.msgs.column("on_path").to_numpy(zero_copy_only=False)
        msg_status = np.where(~on_path, "edited-away", conv_status[conv_of])
        return conv_status, msg_status


def frames_of(tables: dict[str, pa.Table], tz: str | None = None) -> dict[str, pd.DataFrame]:
    """History tables (see :meth:`History.tables`) as conforming frames, timestamps shown in ``tz``."""
    columns = {
        "snapshots": SNAPSHOT_COLUMNS,
        "conversations": CONVERSATION_HISTORY_COLUMNS,
        "messages": MESSAGE_HISTORY_COLUMNS,
    }
    return {name: to_pandas(tables[name], columns[name], tz) for name in columns if name in tables}


def _empty(columns: dict[str, Any], messages: bool) -> pa.Table:
    schema = arrow_schema(columns)
    for name in ("conversation_key", "first_seen", "last_seen"):
        schema = schema.append(pa.field(name, pa.string() if name == "conversation_key" else MS))
    if messages:
        schema = schema.append(pa.field("on_path", pa.bool_()))
    return schema.empty_table()


def _with_extra(
    table: pa.Table, keys: np.ndarray, first: np.ndarray, last: int, columns: dict[str, Any], *, on_path: bool | None
) -> pa.Table:
    out = table.select(list(columns))
    out = out.append_column("conversation_key", pa.array(keys, pa.string()))
    out = out.append_column("first_seen", pa.array(first.astype(np.int64), pa.int64()).cast(MS))
    out = out.append_column("last_seen", pa.array(np.full(table.num_rows, last, dtype=np.int64)).cast(MS))
    if on_path is not None:
        out = out.append_column("on_path", pa.array(np.full(table.num_rows, on_path)))
    return out


def conversation_order(convs: pa.Table) -> np.ndarray:
    """Current conversations in the newest export's order, then those that vanished, the latest to go first."""
    last = convs.column("last_seen").cast(pa.int64()).to_numpy()
    return np.lexsort((convs.column("conv_index").to_numpy(), -last))


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
    merged = History.empty()
    for snap in snaps:
        merged = merged.merge(snap)
    return merged.frames(tz)


def _labels(inputs: list[Any]) -> list[str]:
    """Each export's label: its file or folder name, the path as given when another export has the same
    name (the same path given twice is one file), ``doc0``, ``doc1``, ... for what is not a path."""
    paths = [os.path.normpath(os.fspath(x)) if isinstance(x, str | os.PathLike) else None for x in inputs]
    names = {p: os.path.basename(p) for p in paths if p is not None}
    repeated = Counter(names.values())
    return [f"doc{i}" if p is None else (p if repeated[names[p]] > 1 else names[p]) for i, p in enumerate(paths)]


# ---- a history folder's files, for the readers that meet one --------------------------------------


def message_status(hits: pd.DataFrame, folder: str | os.PathLike[str]) -> pd.DataFrame:
    """``hits`` (rows naming messages of the history folder by ``source``, ``conv_index``, ``position``,
    ``role`` and ``ts``, as search results do) with a ``status`` column: ``current``, ``edited-away`` or
    ``deleted-upstream``; null where two of its messages share all five (an edit that kept the role and
    timestamp)."""
    key = ["source", "conv_index", "position", "role", "ts"]
    tables = read_tables(Path(folder), [*key, "status"])
    if tables is None:
        raise FormatError("not a history folder (no snapshots.parquet)", reason="not-found", source=str(folder))
    stored = to_pandas(tables["messages"], {k: MESSAGE_HISTORY_COLUMNS[k] for k in [*key, "status"]}, None)
    stored = stored.drop_duplicates(key, keep=False)
    found = hits.loc[:, key].reset_index(drop=True).merge(stored, on=key, how="left", sort=False)
    status = found["status"].astype(MESSAGE_HISTORY_COLUMNS["status"])
    return hits.assign(status=status.to_numpy())


def read_history(folder: str | os.PathLike[str], *, tz: str | None = None) -> dict[str, pd.DataFrame]:
    """The history a history folder holds, as :func:`memvelope_tools.history` gives it.

    Parameters
    ----------
    folder
        A folder written by :func:`add_to_history` (``memvelope history add``).
    tz
        Show timestamps in this time zone (the instants are unchanged).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``snapshots``, ``conversations`` and ``messages``.

    Raises
    ------
    memvelope_tools.errors.FormatError
        When the folder is missing or is not a history folder.

    Examples
    --------
    >>> from memvelope_tools._history import read_history
    >>> read_history("my-history/")["snapshots"]  # doctest: +SKIP
    """
    tables = read_folder_tables(Path(folder))
    if tables is None:
        raise FormatError("not a history folder (no snapshots.parquet)", reason="not-found", source=str(folder))
    return frames_of(tables, tz)


def read_folder_tables(base: Path) -> dict[str, pa.Table] | None:
    """The tables of the history folder ``base`` (see :mod:`memvelope_tools._history_files`), None when
    it has no ``snapshots.parquet``."""
    return read_tables(base)
