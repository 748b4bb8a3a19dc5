"""A history folder that grows: the merged history of every export added to it, as a Parquet dataset.

The folder's files are described in :mod:`memvelope_tools._history_files`. Adding an export reads
that export a batch of conversations at a time, and of the folder only its small tables and its
state (a hash per message, never the texts): each conversation's messages are compared by hash with
the path the history holds for it, as :mod:`memvelope_tools._history` compares them. The messages
seen for the first time go to a new part; the state, the conversations and the snapshots are
written again. An add that changes nothing (the folder's newest export added again) writes no
file. The new files are written beside the old ones and renamed over them together at the end, so
an add that is interrupted leaves the folder as it was. An add that gains messages also brings the
search index kept beside them up to date (the one :func:`memvelope_tools.search` keeps beside a
Parquet folder), indexing only the new part.

An export whose conversations do not all have ids of their own (a null or repeated id), or that is
not read from a file, is read whole and compared as one batch, by the same rules.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import tempfile
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ._atomic import atomic_outputs, check_output_folder, output_folder
from ._frames.columns import CONVERSATION_COLUMNS, MS, to_pandas
from ._frames.flatten import flatten_file_batches, flatten_pieces_batches
from ._history import (
    NO_TS,
    SNAPSHOT_COLUMNS,
    conversation_keys,
    conversation_order,
    convert_all,
    newest_in,
    pairs,
    path_status,
    read_snapshot,
    snapshot_date,
)
from ._history_files import (
    OLD_MESSAGES,
    PART_COLUMNS,
    PARTS,
    STATE_SCHEMA,
    TABLE_FILES,
    empty_table,
    is_history_folder,
    message_hashes,
    parts_of,
    read_table,
    with_parts,
)
from ._json.elements import read_windows
from ._json.walker import Fallback
from ._parquet import schema_metadata
from ._read import Source, check
from ._sources import labels_of, resolve_one
from ._tags import ENVELOPE_TAG
from .errors import FormatError, OutputError, SearchIndexError

__all__ = ["add_export", "add_to_history", "is_history_folder"]

_BATCH_ROWS = 4096  # messages of an export compared at a time, at least (a window of the envelope file at a time)
_ROW_GROUP = 1 << 16  # rows of a part's row group, at most
_GROUP_BYTES = 8 << 20  # bytes of a part's row group, about: the index reads and indexes a row group at a time
_WINDOW = 4 << 20  # bytes of the envelope file read at a time: memory holds a few times this


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


class Piped(Protocol):
    """An export being converted elsewhere, the text of its envelope's conversations array coming as it
    is made (the command line converts in a process started before its libraries load)."""

    def provider(self) -> str | None: ...
    def pieces(self) -> Iterator[bytes]: ...
    def meta(self) -> dict[str, Any] | None: ...


def add_export(
    export: Source,
    folder: str | os.PathLike[str],
    *,
    date: Any = None,
    named: Source | None = None,
    piped: Piped | None = None,
    workers: int | None = 1,
    progress: bool | None = None,
) -> dict[str, Any]:
    """:func:`add_to_history`, the export's label and date read from the name of ``named`` when given
    (an envelope converted from a download names the download); ``piped``: the export, being converted,
    read as it comes (should that fail, the export is converted here, which says why)."""
    base = Path(folder)
    check_output_folder(base)
    [label] = labels_of([export if named is None else named])
    with tempfile.TemporaryDirectory(prefix="memvelope-history-") as tmp:
        adder = _Adder(_Held.read(base), base, label)
        try:
            try:
                if piped is not None:
                    provider = _read_piped(piped, label, adder)
                else:
                    readable = _readable(export, label, Path(tmp), workers, progress)
                    provider = _read_batches(readable, label, adder, progress)
            except (_Whole, Fallback):
                adder.discard()
                adder = _Adder(_Held.read(base), base, label, whole=True)
                if piped is not None:
                    readable = _readable(export, label, Path(tmp), workers, progress)
                snap = read_snapshot(readable, label=label, dated=False, progress=progress)
                adder.add(snap.convs, snap.msgs)
                provider = snap.provider
            when, rule = snapshot_date(named if named is not None else export, date, label, adder.newest)
            written = adder.finish(provider, when, rule)
        finally:
            adder.discard()
    if written.get("indexed"):
        _give_back_memory()  # what reading the export freed, before the index takes its own
        _index(base)
    written.pop("indexed", None)
    return written


def _read_piped(piped: Piped, label: str, adder: _Adder) -> str:
    """Give ``adder`` the piped export's tables a batch at a time; its provider. Fallback when the
    conversion failed or gave no conversation."""
    provider = piped.provider()
    if provider is None:
        raise Fallback
    flatten_pieces_batches(piped.pieces(), provider, label, label, adder.add, rows=_BATCH_ROWS, window=_WINDOW)
    meta = piped.meta()
    if meta is None or meta.get("source_provider") != provider:
        raise Fallback
    check({"memvelope": ENVELOPE_TAG, "meta": meta, "conversations": []}, source_name=label)
    return provider


def _readable(export: Source, label: str, tmp: Path, workers: int | None, progress: bool | None) -> Source:
    """The export as an envelope file when it is one or converts to one (converted into ``tmp``), else as given."""
    found = resolve_one(export, "any", label=label)
    paths = found.files()
    if paths is not None:
        envelope = tmp / "export.mve.json"
        convert_all([(paths, envelope)], workers, progress)
        return envelope
    return export


def _read_batches(source: Source, label: str, adder: _Adder, progress: bool | None) -> str:
    """Give ``adder`` the export's tables a batch at a time; its provider. Fallback (or _Whole, from the
    adder) when it is to be read whole instead."""
    found = resolve_one(source, "any", label=label)
    if found.kind != "envelope" or found.path is None or found.value is not None:
        raise Fallback
    with read_windows(os.fspath(found.path), window=_WINDOW) as windows:
        if windows is None:
            raise Fallback
        return flatten_file_batches(windows, label, found.name or label, adder.add, rows=_BATCH_ROWS, progress=progress)


class _Whole(Exception):
    """The export is to be read whole: its conversations' keys depend on all of them."""


class _Held:
    """What an add reads of a history folder: its snapshots, its conversations and its state."""

    def __init__(self) -> None:
        self.snapshots: list[dict[str, Any]] = []
        self.convs = empty_table("conversations")
        self.state = empty_table("state")
        self.parts: list[tuple[str, int]] = []
        self.old_messages: pa.Table | None = None  # the previous layout's messages, to be written as a part

    @classmethod
    def read(cls, base: Path) -> _Held:
        held = cls()
        if not base.is_dir():
            return held
        if not (base / "snapshots.parquet").is_file():
            if (base / "conversations.parquet").exists() or (base / OLD_MESSAGES).exists():
                raise FormatError(
                    "this folder holds Parquet files but no snapshots.parquet: not a history folder",
                    reason="bad-source",
                    source=str(base),
                )
            return held
        snaps = to_pandas(read_table(base / "snapshots.parquet", "snapshots"), SNAPSHOT_COLUMNS, None)
        held.snapshots = [{str(k): v for k, v in row.items()} for row in snaps.to_dict("records")]
        held.convs = read_table(base / "conversations.parquet", "conversations")
        if (base / "state.parquet").is_file():
            held.state = read_table(base / "state.parquet", "state")
            held.parts = parts_of(held.state)
        elif (base / OLD_MESSAGES).is_file():
            old = read_table(base / OLD_MESSAGES, "messages")
            off = pc.equal(old.column("status").cast(pa.string()), "edited-away").to_numpy(zero_copy_only=False)
            held.state = pa.table(
                {
                    "conversation_key": old.column("conversation_key").dictionary_encode(),
                    "position": old.column("position"),
                    "hash": pa.array(message_hashes(old), pa.uint64()),
                    "first_seen": old.column("first_seen"),
                    "last_seen": pa.array(old.column("last_seen").cast(pa.int64()).to_numpy(), mask=~off).cast(MS),
                }
            ).cast(STATE_SCHEMA)
            held.old_messages = old.select(list(PART_COLUMNS))
        return held


class _Adder:
    """One export added to a history folder, a batch of its conversations at a time (see the module)."""

    def __init__(self, held: _Held, base: Path, label: str, *, whole: bool = False) -> None:
        self.held, self.base, self.label, self.whole = held, base, label, whole
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
        self.writer: pq.ParquetWriter | None = None
        self.buffered: list[pa.Table] = []
        self.buffered_rows = self.buffered_bytes = 0
        self.part: Path | None = None
        self.made_parts_folder = False

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
            part = part.append_column("conversation_key", pa.array(keys[conv_of[new_rows]], pa.string()))
            self._write(part)
        self.snap_convs.append(
            convs.select(list(CONVERSATION_COLUMNS)).append_column("conversation_key", pa.array(keys, pa.string()))
        )
        self.snap_codes.append(codes)
        self.n_convs += convs.num_rows
        self.n_msgs += msgs.num_rows

    def _keys(self, convs: pa.Table, msgs: pa.Table) -> np.ndarray:
        """The batch's conversation keys: ``provider:id:ID`` while every id so far is its own (else _Whole);
        the module's full rule for an export read whole."""
        if self.whole:
            keys, _ = conversation_keys(convs, msgs)
            return keys
        ids = convs.column("conversation_id").to_pylist()
        if None in ids or len(set(ids)) < len(ids) or not self.ids.isdisjoint(ids):
            raise _Whole
        self.ids.update(ids)
        providers = convs.column("provider").to_pylist()
        return np.array([f"{p}:id:{i}" for p, i in zip(providers, ids, strict=True)], dtype=object)

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

    def _write(self, part: pa.Table) -> None:
        """Write new messages to the part, in row groups of :data:`_ROW_GROUP` rows or :data:`_GROUP_BYTES` at most."""
        self.buffered.append(part)
        self.buffered_rows += part.num_rows
        self.buffered_bytes += part.get_total_buffer_size()
        if self.buffered_rows >= _ROW_GROUP or self.buffered_bytes >= _GROUP_BYTES:
            self._flush()

    def _flush(self) -> None:
        if not self.buffered:
            return
        part = pa.concat_tables(self.buffered)
        self.buffered, self.buffered_rows, self.buffered_bytes = [], 0, 0
        if self.writer is None:
            folder = self.base / PARTS
            self.made_parts_folder = not folder.exists()
            output_folder(folder)
            fd, name = tempfile.mkstemp(prefix=".part-", suffix=".tmp", dir=folder)
            os.close(fd)
            self.part = Path(name)
            self.writer = pq.ParquetWriter(name, empty_table("part").schema, compression="zstd")
        self.writer.write_table(part.cast(empty_table("part").schema), row_group_size=part.num_rows or 1)

    def discard(self) -> None:
        """Let go of a part being written (an add that failed, or one already committed)."""
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.close()
            self.writer = None
        if self.part is not None:
            with contextlib.suppress(OSError):
                self.part.unlink()
            self.part = None
        if self.made_parts_folder:
            with contextlib.suppress(OSError):
                (self.base / PARTS).rmdir()
            self.made_parts_folder = False

    def finish(self, provider: str, when: pd.Timestamp, rule: str) -> dict[str, Any]:
        """Write what the add changed (nothing when it changed nothing); the snapshot's row, ``added``,
        and ``indexed``: whether the search index is to be brought up to date."""
        held = self.held
        date = int(when.value // 1_000_000)
        newest = _latest(held.snapshots).get(provider)
        if newest is not None and date < newest:
            shown = pd.Timestamp(newest, unit="ms", tz="UTC").isoformat()
            raise FormatError(
                f"this export is dated {when.isoformat()}, before the folder's newest {provider} export "
                f"({shown}); add exports oldest first",
                reason="bad-source",
                source=self.label,
            )
        n_keys = len(self.keys)
        snap_codes = np.concatenate([np.zeros(0, dtype=np.int64), *self.snap_codes])
        in_snap = np.zeros(n_keys, dtype=bool)
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
        last_before = held.state.column("last_seen").cast(pa.int64()).fill_null(NO_TS).to_numpy()
        if (
            held.snapshots
            and (held.snapshots[-1]["date"], held.snapshots[-1]["provider"]) == (when, provider)
            and n_new == 0
            and held.old_messages is None
            and np.array_equal(self.last, last_before)
            and convs.equals(held.convs)
        ):
            return {**held.snapshots[-1], "added": False, "indexed": False}
        parts = list(held.parts)
        also: list[tuple[Path, Path]] = []
        if held.old_messages is not None:
            name = _part_name(len(parts))
            also.append((self._write_whole(held.old_messages), self.base / PARTS / name))
            parts.append((name, held.old_messages.num_rows))
        if n_new:
            self._flush()
            assert self.writer is not None and self.part is not None
            self.writer.close()
            self.writer = None
            with open(self.part, "rb+") as fh:
                os.fsync(fh.fileno())
            name = _part_name(len(parts))
            also.append((self.part, self.base / PARTS / name))
            parts.append((name, n_new))
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
        tables = {
            "state": with_parts(state, parts),
            "conversations": convs,
            "snapshots": pa.Table.from_pandas(
                pd.DataFrame(snapshots, columns=list(SNAPSHOT_COLUMNS)).astype(
                    {k: v for k, v in SNAPSHOT_COLUMNS.items() if k != "date"}
                ),
                preserve_index=False,
            ).cast(empty_table("snapshots").schema),
        }
        described = [{"source": s["source"], "format": ENVELOPE_TAG, "provider": s["provider"]} for s in snapshots]
        meta = schema_metadata(described)
        out = output_folder(self.base)
        try:
            with atomic_outputs(out, [f"{name}.parquet" for name in TABLE_FILES], also=also) as open_file:
                for name in TABLE_FILES:
                    table = tables[name]
                    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})
                    write_table(table, open_file(f"{name}.parquet"))
        except OSError as exc:
            raise OutputError(
                f"cannot write the history: {exc.strerror or exc}", reason="output", source=str(self.base)
            ) from exc
        self.part = None
        self.made_parts_folder = False
        if held.old_messages is not None:
            with contextlib.suppress(OSError):
                (self.base / OLD_MESSAGES).unlink()
        return {**row, "added": True, "indexed": True}

    def _write_whole(self, table: pa.Table) -> Path:
        """Write ``table`` as a part beside the parts (synced); the file written."""
        folder = output_folder(self.base / PARTS)
        fd, name = tempfile.mkstemp(prefix=".part-", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "wb") as fh:
            pq.write_table(table.cast(empty_table("part").schema), fh, compression="zstd", row_group_size=_ROW_GROUP)
            fh.flush()
            os.fsync(fh.fileno())
        return Path(name)

    def _conversations(
        self, snap_codes: np.ndarray, in_snap: np.ndarray, date: int, snapshots: list[dict[str, Any]]
    ) -> pa.Table:
        """The history's conversations after the add, in their order, with their status."""
        held = self.held
        c_first = np.full(len(self.keys), date, dtype=np.int64)
        c_first[self.conv_code] = held.convs.column("first_seen").cast(pa.int64()).to_numpy()
        columns = [*CONVERSATION_COLUMNS, "conversation_key", "first_seen", "last_seen"]
        kept = held.convs.filter(pa.array(~in_snap[self.conv_code])).select(columns)
        snap = pa.concat_tables(self.snap_convs) if self.snap_convs else kept.select(columns[:-2]).slice(0, 0)
        snap = snap.append_column("first_seen", pa.array(c_first[snap_codes]).cast(MS))
        snap = snap.append_column("last_seen", pa.array(np.full(snap.num_rows, date, dtype=np.int64)).cast(MS))
        convs = pa.concat_tables([kept, snap.cast(kept.schema)])
        latest = _latest(snapshots)
        c_prov = convs.column("provider").to_numpy(zero_copy_only=False)
        newest = np.array([latest.get(p, NO_TS) for p in c_prov], dtype=np.int64)
        current = convs.column("last_seen").cast(pa.int64()).to_numpy() >= newest
        convs = convs.append_column("status", pa.array(np.where(current, "current", "deleted-upstream"), pa.string()))
        convs = convs.take(pa.array(conversation_order(convs), pa.int64()))
        convs = convs.set_column(
            convs.schema.get_field_index("conv_index"), "conv_index", pa.array(np.arange(convs.num_rows))
        )
        return convs.cast(empty_table("conversations").schema)


def write_table(table: pa.Table, fh: Any) -> None:
    """Write one of the folder's small tables."""
    pq.write_table(table, fh, compression="zstd", row_group_size=1 << 20)


def _give_back_memory() -> None:
    """Return the memory freed so far to the system: Arrow's pool, and the C library's where it can."""
    pa.default_memory_pool().release_unused()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).malloc_trim(0)


def _part_name(n: int) -> str:
    return f"part-{n:05d}.parquet"


def _latest(snapshots: list[dict[str, Any]]) -> dict[str, int]:
    """Each provider's newest snapshot date (as epoch milliseconds)."""
    out: dict[str, int] = {}
    for snap in snapshots:
        value = int(snap["date"].value // 1_000_000)
        out[snap["provider"]] = max(out.get(snap["provider"], value), value)
    return out


def _index(base: Path) -> None:
    """Bring the search index kept beside the folder's files up to date with them."""
    from ._search import update_folder_index

    try:
        update_folder_index(base)
    except (OSError, SearchIndexError) as exc:
        failure = (exc.strerror or str(exc)) if isinstance(exc, OSError) else exc.msg
        warnings.warn(f"cannot write the search index of {base} ({failure}); search will build it", stacklevel=3)
