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
  same position of the same conversation; :class:`Merge` compares the three by a 64-bit hash of them
  (:func:`message_hashes`), so that a history kept in a folder needs
  only the hashes of the messages it holds, never their texts.
* **Snapshot date**: given explicitly, else read from the download's file name (ChatGPT
  ``<hash>-YYYY-MM-DD-HH-MM-SS.zip``, Claude ``data-YYYY-MM-DD-HH-MM-SS[-batch-NNNN].zip``, or the
  folder they unpack to; the time is taken as UTC), else the newest timestamp inside the export.
  The ``date_source`` column says which rule gave it: ``given``, ``file name``, ``newest timestamp``.
* **Provider**: a snapshot's provider is the one its envelope names (``meta.source_provider``), so an
  export holding no conversation (an envelope can) is its provider's newest like any other: every
  conversation seen before is ``deleted-upstream`` after it, in memory and in a history folder alike.
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
from collections.abc import Callable, Sequence
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
    MS,
    NULLABLE_INT,
    STRING,
    TIMESTAMP,
    conform,
    to_pandas,
)
from ._frames.documents import read_documents
from ._frames.folders import (
    CONVERSATION_HISTORY_COLUMNS,
    HISTORY_STATUSES,
    MESSAGE_HISTORY_COLUMNS,
    PART_COLUMNS,
    SNAPSHOT_COLUMNS,
    STATE_SCHEMA,
    assemble,
    empty_table,
    read_tables,
)
from ._frames.text import executor
from ._read import Source
from ._sources import explained, is_history_folder, labels_of, resolve_one
from ._spec import ROLES
from .errors import FormatError, OutputError

__all__ = [
    "CONVERSATION_HISTORY_COLUMNS",
    "DATE_SOURCES",
    "DIFF_COLUMNS",
    "DIFF_STATUSES",
    "HISTORY_STATUSES",
    "MESSAGE_HISTORY_COLUMNS",
    "SNAPSHOT_COLUMNS",
    "Held",
    "Merge",
    "Merged",
    "Snapshot",
    "Whole",
    "date_from_name",
    "diff",
    "history",
    "is_history_folder",
    "message_hashes",
    "message_status",
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
    from ._convert.pipeline import convert_stream

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


def id_key(provider: str, conv_id: str) -> str:
    """The matching key of a conversation matched by its id."""
    return f"{provider}:id:{conv_id}"


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
            keys[row], rules[row] = id_key(provider, conv_id), "id"
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


# ---- message hashes ------------------------------------------------------------------------------


_NULL_TEXT = np.uint64(0x5BD1E9955BD1E995)


def message_hashes(messages: pa.Table) -> np.ndarray:
    """A 64-bit hash of each message's role, timestamp and text, the three a message compares by
    (two messages that differ in one of them share a hash with a chance of 2**-64)."""
    chunks = [chunk for chunk in messages.column("text").cast(pa.string()).chunks if len(chunk)]
    if len(chunks) == 1 and len(chunks[0]) >= 2 * _HASHED_AT_ONCE:  # two threads: the hash lets go of the GIL
        half = len(chunks[0]) // 2
        chunks = [chunks[0].slice(0, half), chunks[0].slice(half)]
    parts = list(executor().map(_text_hashes, chunks))  # the frames' worker threads
    text_hash = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
    roles = pd.Categorical(messages.column("role").to_pandas(), categories=list(ROLES)).codes.astype(np.uint64)
    ts = messages.column("ts").cast(pa.int64()).fill_null(np.iinfo(np.int64).min).to_numpy().view(np.uint64)
    hashes: np.ndarray = text_hash ^ _mix(ts ^ (roles * np.uint64(0xC2B2AE3D27D4EB4F)))
    return hashes


_HASHED_AT_ONCE = 1 << 10


def _text_hashes(chunk: pa.StringArray) -> np.ndarray:
    digest = hashlib.sha256  # the fastest of hashlib's where the processor helps it
    offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset : chunk.offset + len(chunk) + 1]
    data = memoryview(chunk.buffers()[2] or b"")
    ends = offsets.tolist()
    joined = b"".join([digest(data[a:b]).digest()[:8] for a, b in itertools.pairwise(ends)])
    text = np.frombuffer(joined, dtype="<u8").copy()
    if chunk.null_count:
        text[pc.is_null(chunk).to_numpy(zero_copy_only=False)] ^= _NULL_TEXT
    return text


def _mix(x: np.ndarray) -> np.ndarray:
    """A 64-bit finaliser (splitmix64's): every input bit moves every output bit."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        mixed: np.ndarray = z ^ (z >> np.uint64(31))
    return mixed


# ---- comparing message paths ---------------------------------------------------------------------


class Comparable:
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


def common_prefix(
    a: Comparable,
    a_rows: np.ndarray,
    a_start: np.ndarray,
    a_len: np.ndarray,
    b: Comparable,
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
    prefix = common_prefix(
        Comparable(a.msgs),
        np.arange(a.msgs.num_rows),
        a.starts[a_rows],
        a_len[a_rows],
        Comparable(b.msgs),
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
    return conform(out, DIFF_COLUMNS)


def _nullable(values: np.ndarray) -> pd.arrays.IntegerArray:
    return pd.arrays.IntegerArray(values, values < 0)


def status_counts(changes: pd.DataFrame) -> dict[str, int]:
    """How many conversations :func:`diff` gave each status, every status listed."""
    counts = changes["status"].value_counts()
    return {status: int(counts.get(status, 0)) for status in DIFF_STATUSES}


# ---- history -------------------------------------------------------------------------------------


@dataclass
class Whole(Exception):
    """The export is to be merged whole: its conversations' keys depend on all of them."""


@dataclass
class Held:
    """A history as a merge takes and gives it: its snapshots' rows, its conversations
    (:data:`CONVERSATION_HISTORY_COLUMNS`, in the history's order) and its state (a row per message, see
    :mod:`memvelope_tools._frames.folders`); the messages themselves are kept elsewhere, in the state's order."""

    snapshots: list[dict[str, Any]]
    convs: pa.Table
    state: pa.Table

    @classmethod
    def empty(cls) -> Held:
        return cls([], empty_table("conversations"), empty_table("state"))


@dataclass
class Merged:
    """What a merge gives: the export's snapshot row, the history with it, and how many messages it saw first."""

    row: dict[str, Any]
    held: Held
    new: int


class Merge:
    """One export merged into a history, a batch of its conversations at a time (the module's rules):
    each conversation's messages are compared by hash with the path the history holds for it, and the
    messages seen for the first time are given to ``on_new`` (the columns of
    :data:`memvelope_tools._frames.folders.PART_COLUMNS`), to be kept after the history's in the state's order.

    Until the export is known to give every conversation an id of its own (no null or repeated id),
    batches are keyed by id and one that is not raises :class:`Whole`; with ``whole`` the export comes
    as one batch and the full rule applies."""

    def __init__(self, held: Held, label: str, *, on_new: Callable[[pa.Table], Any], whole: bool = False) -> None:
        self.held, self.label, self.whole, self.on_new = held, label, whole, on_new
        chunked = held.state.column("conversation_key").unify_dictionaries()
        if chunked.num_chunks:
            dictionary = chunked.chunk(0).dictionary.to_numpy(zero_copy_only=False)
            codes = np.concatenate([c.indices.to_numpy() for c in chunked.chunks]).astype(np.int64)
        else:
            dictionary, codes = np.zeros(0, dtype=object), np.zeros(0, dtype=np.int64)
        conv_keys = held.convs.column("conversation_key").to_numpy(zero_copy_only=False)
        known = pd.Index(dictionary)
        self.keys: list[Any] = [*dictionary.tolist(), *pd.Index(conv_keys).difference(known).tolist()]
        self.key_index = pd.Index(self.keys)
        n_keys = len(self.keys)
        self.codes = codes
        self.pos = held.state.column("position").to_numpy()
        self.hash = held.state.column("hash").to_numpy()
        self.first = held.state.column("first_seen").cast(pa.int64()).to_numpy()
        self.last = held.state.column("last_seen").cast(pa.int64()).fill_null(NO_TS).to_numpy().copy()
        self.conv_code = self.key_index.get_indexer(conv_keys)
        self.conv_last = np.full(n_keys, NO_TS, dtype=np.int64)
        self.conv_last[self.conv_code] = held.convs.column("last_seen").cast(pa.int64()).to_numpy()
        on_path = np.flatnonzero(self.last == NO_TS)
        self.path_rows = on_path[np.lexsort((self.pos[on_path], self.codes[on_path]))]
        self.path_len = np.bincount(self.codes[self.path_rows], minlength=n_keys).astype(np.int64)
        self.path_start = np.cumsum(self.path_len) - self.path_len
        self.code_rows = np.argsort(self.codes, kind="stable")
        self.code_len = np.bincount(self.codes, minlength=n_keys).astype(np.int64)
        self.code_start = np.cumsum(self.code_len) - self.code_len
        self.matched = np.zeros(len(self.codes), dtype=bool)
        self.new: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # codes, positions, hashes
        self.snap_convs: list[pa.Table] = []
        self.snap_codes: list[np.ndarray] = []
        self.statuses: Counter[str] = Counter()
        self.ids: set[str] = set()
        self.n_convs = self.n_msgs = 0
        self.newest_ts: Any = None

    def newest(self) -> Any:
        """The newest timestamp of the batches added (None: none)."""
        return self.newest_ts

    def add(self, convs: pa.Table, msgs: pa.Table) -> None:
        """Compare a batch of the export's conversations (whole, with their messages) with the history."""
        keys = self._keys(convs, msgs)
        found_ts = newest_in(convs, msgs)
        if found_ts is not None and (self.newest_ts is None or found_ts > self.newest_ts):
            self.newest_ts = found_ts
        hashes = message_hashes(msgs)
        s_len = convs.column("n_messages").to_numpy().astype(np.int64)
        s_start = np.cumsum(s_len) - s_len
        codes = self.key_index.get_indexer(keys) if len(keys) else np.zeros(0, dtype=np.int64)
        found = np.flatnonzero(codes >= 0)
        fc = codes[found]
        prefix = self._prefix(hashes, s_start[found], s_len[found], self.path_start[fc], self.path_len[fc])
        source_of = np.full(msgs.num_rows, -1, dtype=np.int64)
        s_rows, slots = pairs(s_start[found], self.path_start[fc], prefix)
        source_of[s_rows] = self.path_rows[slots]
        conv_of = np.repeat(np.arange(len(s_len)), s_len)
        h_rows, _ = pairs(self.code_start[fc], np.zeros(len(fc), dtype=np.int64), self.code_len[fc])
        h_rows = self.code_rows[h_rows]
        self._rejoin(msgs, hashes, codes[conv_of], source_of, h_rows)
        self.matched[source_of[source_of >= 0]] = True
        back = self.matched[h_rows]
        self.last[h_rows[back]] = NO_TS
        freeze = h_rows[~back & (self.last[h_rows] == NO_TS)]
        self.last[freeze] = self.conv_last[self.codes[freeze]]
        self.statuses.update(path_status(prefix, self.path_len[fc], s_len[found]).tolist())
        unknown = np.flatnonzero(codes < 0)
        self.statuses["new"] += len(unknown)
        codes[unknown] = np.arange(len(self.keys), len(self.keys) + len(unknown))
        self.keys += keys[unknown].tolist()
        new_rows = np.flatnonzero(source_of < 0)
        if len(new_rows):
            self.new.append((codes[conv_of[new_rows]], msgs.column("position").to_numpy()[new_rows], hashes[new_rows]))
            part = msgs.take(pa.array(new_rows)).select([c for c in PART_COLUMNS if c != "conversation_key"])
            self.on_new(part.append_column("conversation_key", pa.array(keys[conv_of[new_rows]], pa.string())))
        self.snap_convs.append(
            convs.select(list(CONVERSATION_COLUMNS)).append_column("conversation_key", pa.array(keys, pa.string()))
        )
        self.snap_codes.append(codes)
        self.n_convs += convs.num_rows
        self.n_msgs += msgs.num_rows

    def _keys(self, convs: pa.Table, msgs: pa.Table) -> np.ndarray:
        """The batch's conversation keys: ``provider:id:ID`` while every id so far is its own (else
        :class:`Whole`); the module's full rule for an export merged whole."""
        if self.whole:
            keys, _ = conversation_keys(convs, msgs)
            return keys
        ids = convs.column("conversation_id").to_pylist()
        if None in ids or len(set(ids)) < len(ids) or not self.ids.isdisjoint(ids):
            raise Whole
        self.ids.update(ids)
        providers = convs.column("provider").to_pylist()
        return np.array([id_key(p, i) for p, i in zip(providers, ids, strict=True)], dtype=object)

    def _prefix(
        self, hashes: np.ndarray, s_start: np.ndarray, s_len: np.ndarray, p_start: np.ndarray, p_len: np.ndarray
    ) -> np.ndarray:
        """How many leading messages each conversation shares with its path in the history."""
        shared = np.minimum(s_len, p_len)
        s_rows, slots = pairs(s_start, p_start, shared)
        differ = np.flatnonzero(hashes[s_rows] != self.hash[self.path_rows[slots]])
        out: np.ndarray = shared.copy()
        if differ.size:
            which = np.repeat(np.arange(len(shared)), shared)[differ]
            offset = differ - (np.cumsum(shared) - shared)[which]
            np.minimum.at(out, which, offset)
        return out

    def _rejoin(
        self, msgs: pa.Table, hashes: np.ndarray, codes: np.ndarray, source_of: np.ndarray, h_rows: np.ndarray
    ) -> None:
        """Match the batch's messages past the shared beginning to earlier ones of their conversation at
        the same place (a path that went back to an earlier branch), in place in ``source_of``."""
        open_s = np.flatnonzero((source_of < 0) & (codes >= 0))
        if not open_s.size or not h_rows.size:
            return
        free = h_rows[~np.isin(h_rows, source_of[source_of >= 0])]
        on = ["code", "position", "hash"]
        left = pd.DataFrame(
            {"code": codes[open_s], "position": msgs.column("position").to_numpy()[open_s], "hash": hashes[open_s]}
        ).assign(row=open_s)
        right = pd.DataFrame({"code": self.codes[free], "position": self.pos[free], "hash": self.hash[free]})
        right = right.assign(row_h=free).sort_values("row_h").drop_duplicates(on, keep="last")
        joined = left.merge(right, on=on)
        source_of[joined["row"].to_numpy()] = joined["row_h"].to_numpy()

    def finish(self, provider: str, when: pd.Timestamp, rule: str) -> Merged:
        """The history with the export merged in, as its snapshot ``when`` (given by ``rule``).

        Raises FormatError when ``when`` is before the history's newest snapshot of ``provider``."""
        held = self.held
        date = int(when.value // 1_000_000)
        newest = latest(held.snapshots).get(provider)
        if newest is not None and date < newest:
            shown = pd.Timestamp(newest, unit="ms", tz="UTC").isoformat()
            raise FormatError(
                f"this export is dated {when.isoformat()}, before the folder's newest {provider} export "
                f"({shown}); add exports oldest first",
                reason="bad-source",
                source=self.label,
            )
        snap_codes = np.concatenate([np.zeros(0, dtype=np.int64), *self.snap_codes])
        in_snap = np.zeros(len(self.keys), dtype=bool)
        in_snap[snap_codes] = True
        previous = [s for s in held.snapshots if s["provider"] == provider]
        if previous:
            last = int(previous[-1]["date"].value // 1_000_000)
            was_there = (self.conv_last[self.conv_code] == last) & (
                held.convs.column("provider").to_numpy(zero_copy_only=False) == provider
            )
            self.statuses["missing"] = int((was_there & ~in_snap[self.conv_code]).sum())
        row = {
            "snapshot": len(held.snapshots),
            "source": self.label,
            "provider": provider,
            "date": when,
            "date_source": rule,
            "conversations": self.n_convs,
            "messages": self.n_msgs,
            **{s: int(self.statuses.get(s, 0)) for s in ("new", "grown", "edited", "unchanged", "missing")},
        }
        snapshots = [*held.snapshots, row]
        convs = self._conversations(snap_codes, in_snap, date, snapshots)
        new_codes, new_pos, new_hash = (
            np.concatenate([np.zeros(0, dtype=d), *(n[k] for n in self.new)])
            for k, d in enumerate((np.int64, np.int64, np.uint64))
        )
        n_new = len(new_codes)
        last_seen = np.concatenate([self.last, np.full(n_new, NO_TS, dtype=np.int64)])
        first_seen = np.concatenate([self.first, np.full(n_new, date, dtype=np.int64)])
        state = pa.table(
            {
                "conversation_key": pa.DictionaryArray.from_arrays(
                    pa.array(np.concatenate([self.codes, new_codes]).astype(np.int32)), pa.array(self.keys, pa.string())
                ),
                "position": pa.array(np.concatenate([self.pos, new_pos])),
                "hash": pa.array(np.concatenate([self.hash, new_hash]), pa.uint64()),
                "first_seen": pa.array(first_seen).cast(MS),
                "last_seen": pa.array(last_seen, mask=last_seen == NO_TS).cast(MS),
            }
        ).cast(STATE_SCHEMA)
        return Merged(row, Held(snapshots, convs, state), n_new)

    def _conversations(
        self, snap_codes: np.ndarray, in_snap: np.ndarray, date: int, snapshots: list[dict[str, Any]]
    ) -> pa.Table:
        """The history's conversations after the merge, in their order, with their status."""
        held = self.held
        c_first = np.full(len(self.keys), date, dtype=np.int64)
        c_first[self.conv_code] = held.convs.column("first_seen").cast(pa.int64()).to_numpy()
        columns = [*CONVERSATION_COLUMNS, "conversation_key", "first_seen", "last_seen"]
        kept = held.convs.filter(pa.array(~in_snap[self.conv_code])).select(columns)
        snap = pa.concat_tables(self.snap_convs) if self.snap_convs else kept.select(columns[:-2]).slice(0, 0)
        snap = snap.append_column("first_seen", pa.array(c_first[snap_codes]).cast(MS))
        snap = snap.append_column("last_seen", pa.array(np.full(snap.num_rows, date, dtype=np.int64)).cast(MS))
        convs = pa.concat_tables([kept, snap.cast(kept.schema)])
        newest = latest(snapshots)
        c_prov = convs.column("provider").to_numpy(zero_copy_only=False)
        bound = np.array([newest.get(p, NO_TS) for p in c_prov], dtype=np.int64)
        current = convs.column("last_seen").cast(pa.int64()).to_numpy() >= bound
        convs = convs.append_column("status", pa.array(np.where(current, "current", "deleted-upstream"), pa.string()))
        convs = convs.take(pa.array(conversation_order(convs), pa.int64()))
        convs = convs.set_column(
            convs.schema.get_field_index("conv_index"), "conv_index", pa.array(np.arange(convs.num_rows))
        )
        return convs.cast(empty_table("conversations").schema)


def latest(snapshots: list[dict[str, Any]]) -> dict[str, int]:
    """Each provider's newest snapshot date (as epoch milliseconds)."""
    out: dict[str, int] = {}
    for snap in snapshots:
        value = int(snap["date"].value // 1_000_000)
        out[snap["provider"]] = max(out.get(snap["provider"], value), value)
    return out


def snapshots_table(snapshots: list[dict[str, Any]]) -> pa.Table:
    """The snapshots' rows as a table (:data:`SNAPSHOT_COLUMNS`)."""
    frame = conform(pd.DataFrame(snapshots, columns=list(SNAPSHOT_COLUMNS)), SNAPSHOT_COLUMNS)
    return pa.Table.from_pandas(frame, preserve_index=False).cast(empty_table("snapshots").schema)


def frames_of(tables: dict[str, pa.Table], tz: str | None = None) -> dict[str, pd.DataFrame]:
    """History tables (see :meth:`History.tables`) as conforming frames, timestamps shown in ``tz``."""
    columns = {
        "snapshots": SNAPSHOT_COLUMNS,
        "conversations": CONVERSATION_HISTORY_COLUMNS,
        "messages": MESSAGE_HISTORY_COLUMNS,
    }
    return {name: to_pandas(tables[name], columns[name], tz) for name in columns if name in tables}


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
    tables = read_tables(Path(folder))
    if tables is None:
        raise FormatError("not a history folder (no snapshots.parquet)", reason="not-found", source=str(folder))
    return frames_of(tables, tz)
