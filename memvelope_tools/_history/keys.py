"""Matching keys: a conversation's key in a history, and the hash a message compares by."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._lookup import positions
from .._spec import ROLES
from .._workers.threads import text_pool


def id_key(provider: str, conv_id: str) -> str:
    """The matching key of a conversation matched by its id."""
    return f"{provider}:id:{conv_id}"


def conversation_keys(convs: pa.Table, msgs: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """Each conversation's matching key and the rule that gave it (see the package's matching rules)."""
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


_NULL_TEXT = np.uint64(0x5BD1E9955BD1E995)


def message_hashes(messages: pa.Table) -> np.ndarray:
    """A 64-bit hash of each message's role, timestamp and text, the three a message compares by
    (two messages that differ in one of them share a hash with a chance of 2**-64)."""
    chunks = [chunk for chunk in messages.column("text").cast(pa.string()).chunks if len(chunk)]
    if len(chunks) == 1 and len(chunks[0]) >= 2 * _HASHED_AT_ONCE:  # two threads: the hash lets go of the GIL
        half = len(chunks[0]) // 2
        chunks = [chunks[0].slice(0, half), chunks[0].slice(half)]
    parts = list(text_pool().map(_text_hashes, chunks))  # the frames' worker threads
    text_hash = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
    roles = positions(messages.column("role"), ROLES).astype(np.uint64)
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


def key_rule(key: str) -> str:
    """The rule that gave a conversation key (``id``, ``created_at+title`` or ``content``)."""
    kind = key.split(":", 2)[1]
    return {"id": "id", "created": "created_at+title"}.get(kind, "content")


@dataclass
class Side:
    """One side of a match: each conversation's key, the rule that gave it, its provider and id, and
    ``first``, which gives the hash of the first message (None: it has none) of the rows asked for."""

    keys: np.ndarray
    rules: np.ndarray
    providers: np.ndarray
    ids: list[str | None]
    first: Callable[[np.ndarray], list[int | None]]


@dataclass
class Matching:
    """How the conversations of a newer side match an older one's: ``match`` (each newer
    conversation's row on the older side, -1: none), ``rule`` (the rule that matched it, None: none),
    and which conversations left without a counterpart are ``unmatched`` rather than new or missing
    (``new_open``, ``old_open``)."""

    match: np.ndarray
    rule: np.ndarray
    new_open: np.ndarray
    old_open: np.ndarray


def match_conversations(old: Side, new: Side) -> Matching:
    """Match the conversations of ``new`` to those of ``old`` by the package's matching rules: by key,
    then, among those left that are not simply new or missing, by their first message."""
    found = positions(new.keys, old.keys)
    rule = np.array([new.rules[i] if m >= 0 else None for i, m in enumerate(found)], dtype=object)
    old_taken = np.zeros(len(old.keys), dtype=bool)
    old_taken[found[found >= 0]] = True
    old_ids = {i for i in old.ids if i is not None}
    new_ids = {i for i in new.ids if i is not None}
    new_open = np.array(
        [m < 0 and not (r == "id" and i not in old_ids) for m, r, i in zip(found, new.rules, new.ids, strict=True)],
        dtype=bool,
    )
    old_open = np.array(
        [not t and not (r == "id" and i not in new_ids) for t, r, i in zip(old_taken, old.rules, old.ids, strict=True)],
        dtype=bool,
    )
    new_rows, old_rows = np.flatnonzero(new_open), np.flatnonzero(old_open)
    if len(new_rows) and len(old_rows):
        pairs = _first_message_pairs(
            list(zip(new.providers[new_rows].tolist(), new.first(new_rows), strict=True)),
            list(zip(old.providers[old_rows].tolist(), old.first(old_rows), strict=True)),
        )
        for n, o in pairs:
            found[new_rows[n]] = old_rows[o]
            rule[new_rows[n]] = "first message"
            new_open[new_rows[n]] = old_open[old_rows[o]] = False
    return Matching(found, rule, new_open, old_open)


def _first_message_pairs(new: list[tuple[str, int | None]], old: list[tuple[str, int | None]]) -> list[tuple[int, int]]:
    """Pairs of (new, old) places whose (provider, first message) is the same and begins no other on either side."""
    new_count = Counter(k for k in new if k[1] is not None)
    old_at = {k: n for n, k in enumerate(old) if k[1] is not None}
    old_count = Counter(k for k in old if k[1] is not None)
    return [
        (n, old_at[k]) for n, k in enumerate(new) if k[1] is not None and new_count[k] == 1 and old_count.get(k, 0) == 1
    ]


def first_hashes(msgs: pa.Table, starts: np.ndarray, lengths: np.ndarray) -> list[int | None]:
    """The hash (:func:`message_hashes`) of the message at each of ``starts``, None where ``lengths`` is 0."""
    has = lengths > 0
    hashed = message_hashes(msgs.take(pa.array(starts[has], pa.int64()))) if has.any() else np.zeros(0, np.uint64)
    out: list[int | None] = [None] * len(starts)
    for place, value in zip(np.flatnonzero(has).tolist(), hashed.tolist(), strict=True):
        out[place] = int(value)
    return out
