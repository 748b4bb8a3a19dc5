"""One export merged into a history, a batch of its conversations at a time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa

from .._frames.columns import CONVERSATION_COLUMNS, MS
from .._frames.folders import PART_COLUMNS, STATE_SCHEMA, empty_table
from .._lookup import positions
from ..errors import FormatError
from .dates import epoch_ms, from_epoch_ms, newest_in, shown_date
from .keys import Side, conversation_keys, id_key, key_rule, match_conversations, message_hashes
from .paths import NO_TS, pairs, path_status


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


class HeldAlready(Exception):
    """The export is one the history already holds (an older one than its newest): its snapshot row."""

    def __init__(self, row: dict[str, Any]) -> None:
        super().__init__(row["source"])
        self.row = row


@dataclass
class Merged:
    """What a merge gives: the export's snapshot row, the history with it, and how many messages it saw first."""

    row: dict[str, Any]
    held: Held
    new: int


class Merge:
    """One export merged into a history, a batch of its conversations at a time (the package's rules):
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
        held_keys = dictionary.tolist()
        known = set(held_keys)
        # The keys of conversations without messages in the state: sorted, or as they come when it holds none.
        others = [key for key in dict.fromkeys(conv_keys.tolist()) if key not in known]
        self.keys: list[Any] = [*held_keys, *(sorted(others) if held_keys else others)]
        n_keys = len(self.keys)
        self.codes = codes
        self.pos = held.state.column("position").to_numpy()
        self.hash = held.state.column("hash").to_numpy()
        self.first = held.state.column("first_seen").cast(pa.int64()).to_numpy()
        self.last = held.state.column("last_seen").cast(pa.int64()).fill_null(NO_TS).to_numpy().copy()
        self.conv_code = positions(conv_keys, self.keys)
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
        self.held_ids: set[str] | None = None

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
        codes = positions(keys, self.keys)
        self._match_open(convs, keys, codes, hashes, s_start, s_len)
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

    def _match_open(
        self,
        convs: pa.Table,
        keys: np.ndarray,
        codes: np.ndarray,
        hashes: np.ndarray,
        s_start: np.ndarray,
        s_len: np.ndarray,
    ) -> None:
        """Match the batch's conversations that no key matched by the package's rule (as :func:`diff` does),
        in place in ``codes`` and ``keys`` (a conversation so matched keeps the key the history knows it by);
        :class:`Whole` when a batch keyed by id holds one that may match so."""
        held = self.held.convs
        if not self.whole:
            # Keyed by id, a conversation no key matched is open (see match_conversations) when the
            # history holds its id under another rule's key: then the export is merged whole.
            if self.held_ids is None:
                self.held_ids = set(held.column("conversation_id").drop_null().to_pylist())
            ids = convs.column("conversation_id").to_pylist()
            if any(ids[row] in self.held_ids for row in np.flatnonzero(codes < 0).tolist()):
                raise Whole
            return
        conv_keys = held.column("conversation_key").to_numpy(zero_copy_only=False)
        old = Side(
            conv_keys,
            np.array([key_rule(k) for k in conv_keys], dtype=object),
            held.column("provider").to_numpy(zero_copy_only=False),
            held.column("conversation_id").to_pylist(),
            self._held_first,
        )
        new = Side(
            keys,
            np.array([key_rule(k) for k in keys], dtype=object),
            convs.column("provider").to_numpy(zero_copy_only=False),
            convs.column("conversation_id").to_pylist(),
            lambda rows: [int(hashes[s_start[r]]) if s_len[r] else None for r in rows.tolist()],
        )
        matching = match_conversations(old, new)
        for row in np.flatnonzero(matching.rule == "first message"):
            codes[row] = self.conv_code[matching.match[row]]
            keys[row] = self.keys[codes[row]]

    def _held_first(self, rows: np.ndarray) -> list[int | None]:
        """The hash of the first message the history holds on the path of each of its conversations ``rows``."""
        out: list[int | None] = []
        for code in self.conv_code[rows].tolist():
            at = self.path_rows[self.path_start[code]] if self.path_len[code] else -1
            out.append(int(self.hash[at]) if at >= 0 and self.pos[at] == 0 else None)
        return out

    def _keys(self, convs: pa.Table, msgs: pa.Table) -> np.ndarray:
        """The batch's conversation keys: ``provider:id:ID`` while every id so far is its own (else
        :class:`Whole`); the package's full rule for an export merged whole."""
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
        left = pa.table(
            {
                "code": codes[open_s],
                "position": msgs.column("position").to_numpy()[open_s],
                "hash": hashes[open_s],
                "row": open_s,
            }
        )
        right = pa.table({"code": self.codes[free], "position": self.pos[free], "hash": self.hash[free], "row_h": free})
        right = right.group_by(on).aggregate([("row_h", "max")])  # the last of a repeat
        joined = left.join(right, keys=on, join_type="inner")
        source_of[joined.column("row").to_numpy()] = joined.column("row_h_max").to_numpy()

    def finish(self, provider: str, when: datetime, rule: str) -> Merged:
        """The history with the export merged in, as its snapshot ``when`` (given by ``rule``).

        Raises FormatError when ``when`` is before the history's newest snapshot of ``provider``."""
        held = self.held
        date = epoch_ms(when)
        newest = latest(held.snapshots).get(provider)
        if newest is not None and date < newest:
            for held_row in held.snapshots:
                if self._holds_it(held_row, provider, when):
                    raise HeldAlready({**held_row})
            raise FormatError(self._out_of_order(provider, when, rule), reason="bad-source", source=self.label)
        snap_codes = np.concatenate([np.zeros(0, dtype=np.int64), *self.snap_codes])
        in_snap = np.zeros(len(self.keys), dtype=bool)
        in_snap[snap_codes] = True
        previous = [s for s in held.snapshots if s["provider"] == provider]
        if previous:
            last = epoch_ms(previous[-1]["date"])
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

    def _holds_it(self, row: dict[str, Any], provider: str, when: datetime) -> bool:
        """Whether the snapshot ``row`` is this export: its provider, date, numbers of conversations and
        messages, and no message the history does not hold."""
        return (row["provider"], row["date"], row["conversations"], row["messages"]) == (
            provider,
            when,
            self.n_convs,
            self.n_msgs,
        ) and not self.new

    def _out_of_order(self, provider: str, when: datetime, rule: str) -> str:
        """What to do with an export older than the history's newest of its provider: every export again,
        in date order, into a new folder."""
        newest = from_epoch_ms(latest(self.held.snapshots)[provider])
        exports = [(s["date"], s["source"], s["date_source"]) for s in self.held.snapshots]
        exports.append((when, self.label, rule))
        steps = "; ".join(
            f"memvelope history add {label} --to NEW-FOLDER"
            + (f" --date {date:%Y-%m-%dT%H:%M:%SZ}" if how == "given" else "")
            for date, label, how in sorted(exports, key=lambda e: e[0])
        )
        return (
            f"this export is dated {shown_date(when)}, before the folder's newest {provider} export "
            f"({shown_date(newest)}), and a history folder is built oldest first (add exports oldest first): "
            f"to put it in its place, add every export again in date order to a new folder: {steps}"
        )

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
        value = epoch_ms(snap["date"])
        out[snap["provider"]] = max(out.get(snap["provider"], value), value)
    return out


def conversation_order(convs: pa.Table) -> np.ndarray:
    """Current conversations in the newest export's order, then those that vanished, the latest to go first."""
    last = convs.column("last_seen").cast(pa.int64()).to_numpy()
    return np.lexsort((convs.column("conv_index").to_numpy(), -last))
