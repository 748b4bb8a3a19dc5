"""Word counts of Arrow string arrays: ``len(s.split())`` for every string, vectorized over UTF-8 bytes."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa

# Whitespace as Python's str.isspace() (what str.split() splits on), as UTF-8 bytes.
_ASCII_SPACE = np.zeros(256, dtype=bool)
_ASCII_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True
# Non-ASCII ones (a test checks this list against str.isspace): U+0085, U+00A0 (C2 xx), U+1680
# (E1 9A 80), U+2000-U+200A, U+2028, U+2029, U+202F (E2 80 xx), U+205F (E2 81 9F), U+3000 (E3 80 80).
_WORD_CHUNK = 1 << 20  # cache-sized slices: the byte passes below run several times faster

def word_counts(text: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """``len(s.split())`` for every string of a non-null Arrow string array, vectorized over its bytes."""
    chunks = text.chunks if isinstance(text, pa.ChunkedArray) else [text]
    return np.concatenate([np.zeros(0, dtype=np.int64), *map(_word_counts_chunk, chunks)])


def _word_counts_chunk(arr: pa.Array) -> np.ndarray:
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset:arr.offset + n + 1].astype(np.int64)
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if n else np.zeros(0, dtype=np.uint8)
    out = np.zeros(n, dtype=np.int64)
    # Slices of about _WORD_CHUNK bytes keep the temporary arrays small.
    bounds = np.unique(np.concatenate([
        np.searchsorted(offsets, np.arange(offsets[0], offsets[-1], _WORD_CHUNK), side="left"), [n]]))
    for lo, hi in itertools.pairwise(bounds):
        local = offsets[lo:hi + 1] - offsets[lo]
        chunk = data[offsets[lo]:offsets[hi]]
        if not len(chunk):
            continue
        space = chunk <= 32  # every ASCII whitespace byte, and a few control bytes that are not
        # One pass finds the rare bytes that need a closer look: below 0x1C (controls), or 0xC0 and
        # above (lead bytes of non-ASCII characters, some of which are whitespace).
        rare = np.flatnonzero((chunk - np.uint8(0xC0)) < 92)
        controls = rare[chunk[rare] < 28]
        space[controls[~_ASCII_SPACE[chunk[controls]]]] = False
        _mark_unicode_space(chunk, space, rare[chunk[rare] >= 0xC0])
        # start[j]: a word starts at byte j (non-space after a space, or the first byte overall).
        start = np.empty(len(chunk), dtype=bool)
        start[0] = not space[0]
        np.greater(space[:-1], space[1:], out=start[1:])
        counts = np.diff(np.searchsorted(np.flatnonzero(start), local))
        # A string's first byte starts a word iff it is not a space, whatever came before it.
        nonempty = local[:-1] < local[1:]
        heads = local[:-1][nonempty]
        counts[nonempty] += (~space[heads]).astype(np.int64) - start[heads]
        out[lo:hi] = counts
    return out


def _mark_unicode_space(chunk: np.ndarray, space: np.ndarray, lead: np.ndarray) -> None:
    """Set ``space`` on every byte of the non-ASCII whitespace characters listed above.

    ``lead`` holds the positions of the chunk's non-ASCII lead bytes (or a superset).
    """
    values = chunk[lead]
    lead = lead[(values == 0xC2) | ((values >= 0xE1) & (values <= 0xE3))]
    if not lead.size:
        return
    padded = np.concatenate([chunk[lead[0]:], np.zeros(2, dtype=np.uint8)])
    rel = lead - lead[0]
    b0, b1, b2 = padded[rel], padded[rel + 1], padded[rel + 2]
    two = (b0 == 0xC2) & ((b1 == 0x85) | (b1 == 0xA0))
    three = (((b0 == 0xE1) & (b1 == 0x9A) & (b2 == 0x80))
             | ((b0 == 0xE2) & (b1 == 0x80) & (((b2 >= 0x80) & (b2 <= 0x8A)) | (b2 == 0xA8) | (b2 == 0xA9)
                                                | (b2 == 0xAF)))
             | ((b0 == 0xE2) & (b1 == 0x81) & (b2 == 0x9F))
             | ((b0 == 0xE3) & (b1 == 0x80) & (b2 == 0x80)))
    hits = lead[two | three]
    space[hits] = True
    space[hits + 1] = True
    space[lead[three] + 2] = True
