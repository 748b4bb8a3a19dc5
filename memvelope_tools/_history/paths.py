"""Comparing message paths: how many leading messages two paths share, and what that makes of a conversation."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._lookup import positions
from .._spec import ROLES

NO_TS = np.iinfo(np.int64).min
_CHUNK = 1 << 18  # message pairs compared at a time
_TEXT_BYTES = 8 << 20  # bytes of text taken for comparing at a time


class Comparable:
    """The columns a message compares by: role, timestamp, text (its chunks as they are, never joined
    whole: :meth:`texts` takes a few at a time)."""

    def __init__(self, msgs: pa.Table) -> None:
        self.role = positions(msgs.column("role"), ROLES).astype(np.int8)
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
