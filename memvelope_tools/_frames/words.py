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
_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _bytewise_bit_count(x: np.ndarray) -> np.ndarray:
    """Set bits of every uint64 in ``x``, as ``np.bitwise_count`` (NumPy 2.0+) gives them, one byte at a time."""
    per_byte: np.ndarray = _BYTE_BITS[np.ascontiguousarray(x, dtype=np.uint64).view(np.uint8)]
    counts: np.ndarray = per_byte.reshape(*x.shape, 8).sum(-1, np.uint8)
    return counts


if hasattr(np, "bitwise_count"):

    def _bit_count(x: np.ndarray) -> np.ndarray:
        """Set bits of every uint64 in ``x``."""
        counts: np.ndarray = np.bitwise_count(x)
        return counts

else:  # NumPy 1.x
    _bit_count = _bytewise_bit_count


def word_counts(text: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """``len(s.split())`` for every string of a non-null Arrow string array, vectorized over its bytes."""
    chunks = text.chunks if isinstance(text, pa.ChunkedArray) else [text]
    return np.concatenate([np.zeros(0, dtype=np.int64), *map(_word_counts_chunk, chunks)])


def _word_counts_chunk(arr: pa.Array) -> np.ndarray:
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset : arr.offset + n + 1].astype(np.int64)
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if n else np.zeros(0, dtype=np.uint8)
    out = np.zeros(n, dtype=np.int64)
    # Slices of about _WORD_CHUNK bytes keep the temporary arrays small.
    bounds = np.unique(
        np.concatenate([np.searchsorted(offsets, np.arange(offsets[0], offsets[-1], _WORD_CHUNK), side="left"), [n]])
    )
    for lo, hi in itertools.pairwise(bounds):
        local = offsets[lo : hi + 1] - offsets[lo]
        chunk = data[offsets[lo] : offsets[hi]]
        if not len(chunk):
            continue
        space = chunk <= 32  # every ASCII whitespace byte, and a few control bytes that are not
        # One pass finds the rare bytes that need a closer look: below 0x1C (controls), or 0xC0 and
        # above (lead bytes of non-ASCII characters, some of which are whitespace).
        rare = np.flatnonzero((chunk - np.uint8(0xC0)) < 92)
        controls = rare[chunk[rare] < 28]
        space[controls[~_ASCII_SPACE[chunk[controls]]]] = False
        _mark_unicode_space(chunk, space, rare[chunk[rare] >= 0xC0])
        out[lo:hi] = _count_starts(space, local)
    return out


def _count_starts(space: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Words per string: non-space bytes after a space or at the string's start, counted as bits.

    ``local`` holds the strings' byte offsets into ``space``. Bit j of ``starts`` is set when byte
    j-1 is a space and byte j is not, 64 bytes per word, so counting needs no byte-sized array.
    """
    packed = np.packbits(space, bitorder="little")
    x = np.zeros((len(packed) + 15) // 8, dtype=np.uint64)  # one spare word past the end
    x.view(np.uint8)[: len(packed)] = packed
    carry = np.empty_like(x)
    carry[0] = 1  # the byte before the first counts as a space
    np.right_shift(x[:-1], np.uint64(63), out=carry[1:])
    starts = ((x << np.uint64(1)) | carry) & ~x
    cum = np.zeros(len(x) + 1, dtype=np.int64)
    np.cumsum(_bit_count(starts), out=cum[1:])

    def before(p: np.ndarray) -> np.ndarray:  # word starts at bytes < p
        word, bit = p >> 6, (p & 63).astype(np.uint64)
        below: np.ndarray = cum[word] + _bit_count(starts[word] & ((np.uint64(1) << bit) - np.uint64(1)))
        return below

    counts: np.ndarray = before(local[1:]) - before(local[:-1])
    # A string's first byte starts a word iff it is not a space, whatever came before it.
    heads = local[:-1][local[:-1] < local[1:]]
    head_start = (starts[heads >> 6] >> (heads & 63).astype(np.uint64)) & np.uint64(1)
    counts[local[:-1] < local[1:]] += (~space[heads]).astype(np.int64) - head_start.astype(np.int64)
    return counts


def _mark_unicode_space(chunk: np.ndarray, space: np.ndarray, lead: np.ndarray) -> None:
    """Set ``space`` on every byte of the non-ASCII whitespace characters listed above.

    ``lead`` holds the positions of the chunk's non-ASCII lead bytes (or a superset).
    """
    values = chunk[lead]
    lead = lead[(values == 0xC2) | ((values >= 0xE1) & (values <= 0xE3))]
    if not lead.size:
        return
    padded = np.concatenate([chunk[lead[0] :], np.zeros(2, dtype=np.uint8)])
    rel = lead - lead[0]
    b0, b1, b2 = padded[rel], padded[rel + 1], padded[rel + 2]
    two = (b0 == 0xC2) & ((b1 == 0x85) | (b1 == 0xA0))
    three = (
        ((b0 == 0xE1) & (b1 == 0x9A) & (b2 == 0x80))
        | ((b0 == 0xE2) & (b1 == 0x80) & (((b2 >= 0x80) & (b2 <= 0x8A)) | (b2 == 0xA8) | (b2 == 0xA9) | (b2 == 0xAF)))
        | ((b0 == 0xE2) & (b1 == 0x81) & (b2 == 0x9F))
        | ((b0 == 0xE3) & (b1 == 0x80) & (b2 == 0x80))
    )
    hits = lead[two | three]
    space[hits] = True
    space[hits + 1] = True
    space[lead[three] + 2] = True
