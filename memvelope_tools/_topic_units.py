"""The units topics are found in, and their word counts, built a batch of a history at a time.

:class:`Counting` takes history batches (messages with their conversations' titles, in order, see
:func:`memvelope_tools._corpus.history_stream`) and keeps, of each, only what topics needs: one row per
unit (where it is, its time) and the unit's word counts, added to a sparse matrix whose vocabulary grows
batch by batch (:class:`Words`). The texts are let go with their batch. The words are those
:func:`split_words` finds (the rules are in :mod:`memvelope_tools._topics`), in the order they were first met:
a history read as one batch gives the vocabulary in the order topics always gave it, so that the
factorisation, whose start depends on the order of the words, finds the same topics. :func:`split_words`
(Arrow kernels) is the rule; where the C helper is built, :func:`counted_words` finds the same words, in
the same order, in one pass over each slice of texts.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ._engine import record
from ._frames import text as _text
from ._frames.columns import INT, ROLE, STRING, TIMESTAMP, arrow_schema, to_pandas

__all__ = [
    "HAN",
    "MAX_WORD",
    "NOT_LETTER",
    "Counted",
    "Counting",
    "Words",
    "count_words",
    "counted_words",
    "split_words",
]

#: The longest word counted, in letters: a longer run of letters (a key, an encoding, a run of one letter
#: repeated) names no topic, and is dropped before it costs anything.
MAX_WORD: Final = 40
# Chinese characters (ideographs), hiragana and katakana: ranges of code points, first and last.
_HAN_RANGES: Final = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF))
_HIRAGANA_RANGES: Final = ((0x3040, 0x309F),)
_KATAKANA_RANGES: Final = ((0x30A0, 0x30FF),)


def _one_of(ranges: tuple[tuple[int, int], ...]) -> str:
    """A regular expression matching one code point of ``ranges``."""
    return "[" + "".join(f"\\x{{{first:x}}}-\\x{{{last:x}}}" for first, last in ranges) + "]"


#: A Chinese character (an ideograph), as a regular expression.
HAN: Final = _one_of(_HAN_RANGES)
#: What splits words: a run of anything but letters and marks, as a regular expression.
NOT_LETTER: Final = r"[^\p{L}\p{M}]+"
# Fenced code blocks (also one left open), inline code and URLs.
_NOT_PROSE = r"(?s)```.*?(?:```|$)|`[^`\n]*`|(?:https?://|www\.)\S+"
_KANA_OR_HAN = _one_of(_HIRAGANA_RANGES + _KATAKANA_RANGES + _HAN_RANGES)
_HIRAGANA = _one_of(_HIRAGANA_RANGES) + "+"
_KATAKANA = f"({_one_of(_KATAKANA_RANGES)}+)"
_BATCH: Final = 200_000
_TEXTS: Final = 1 << 13  # texts split into words at a time, at most: the words of a slice are held until counted
_TEXT_BYTES: Final = 1 << 20  # bytes of text split into words at a time, about (a longer text is split alone)
_NO_TIME: Final = np.iinfo(np.int64).max
_INT32: Final = np.iinfo(np.int32).max
_HAN_BYTES: Final = 3  # bytes of UTF-8 of each character :data:`HAN` matches
_PLACE = {"source": STRING, "conv_index": INT, "conversation_id": STRING, "title": STRING}
#: The columns of a unit, per kind of unit, as topics gives them.
UNIT_COLUMNS: Final[dict[str, dict[str, Any]]] = {
    "conversation": {**_PLACE, "ts": TIMESTAMP, "n_messages": INT},
    "message": {**_PLACE, "position": INT, "role": ROLE, "ts": TIMESTAMP},
}


@dataclass(frozen=True)
class Counted:
    """A history's units and their word counts, already counted (see :class:`Counting`);
    :func:`memvelope_tools._topics.topics` takes one as its ``source``."""

    unit: str
    units: pd.DataFrame
    counts: Any
    vocabulary: np.ndarray


class Words:
    """Word counts per unit, added a batch of words at a time: a sparse units × words matrix whose
    vocabulary grows as new words come."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []

    def add(self, dictionary: pa.Array, indices: np.ndarray, units: np.ndarray, counts: np.ndarray) -> None:
        """Add the counts :func:`counted_words` gives: the word ``dictionary[indices[i]]`` is ``counts[i]``
        times in the unit ``units[i]``."""
        if not len(indices):
            return
        local = dictionary.to_pylist()
        ids = np.fromiter((self.ids.setdefault(w, len(self.ids)) for w in local), dtype=np.int64, count=len(local))
        # Twelve bytes a unit's word: the counts are what topics keeps of a history, and grow with it.
        self.rows.append(units.astype(np.int32 if int(units.max()) < _INT32 else np.int64))
        self.cols.append(ids[indices].astype(np.int32))
        self.counts.append(counts.astype(np.float32, copy=False))

    def mark(self) -> tuple[int, int]:
        """Where the counts and the words added so far end (see :meth:`forget`)."""
        return len(self.rows), len(self.ids)

    def forget(self, mark: tuple[int, int]) -> None:
        """Drop the counts and the words added after :meth:`mark` gave ``mark``."""
        counted, known = mark
        del self.rows[counted:], self.cols[counted:], self.counts[counted:]
        self.ids = dict(itertools.islice(self.ids.items(), known))

    def matrix(self, n_units: int, keep: np.ndarray | None = None) -> tuple[Any, np.ndarray]:
        """The units × words matrix (CSR, float32) and its words, in the order first met, each counted at
        least once; only the units ``keep`` marks, when given (renumbered in order)."""
        from scipy import sparse

        rows = np.concatenate([np.zeros(0, np.int32), *self.rows])
        cols = np.concatenate([np.zeros(0, np.int32), *self.cols])
        counts = np.concatenate([np.zeros(0, np.float32), *self.counts])
        if keep is not None:
            taken = keep[rows]
            rows = (np.cumsum(keep) - 1)[rows[taken]]
            cols, counts = cols[taken], counts[taken]
            n_units = int(keep.sum())
        words = np.asarray(list(self.ids), dtype=object)
        order = np.flatnonzero(np.bincount(cols, minlength=len(words)) > 0)
        renumber = np.full(len(words), -1, dtype=np.int64)
        renumber[order] = np.arange(len(order))
        matrix = sparse.csr_matrix((counts, (rows, renumber[cols])), shape=(n_units, len(order)))
        matrix.sum_duplicates()
        return matrix, words[order]


class Counting:
    """The units of a history and their word counts, from its batches in order (see the module docstring).

    A unit is a conversation (``unit="conversation"``: its messages that follow one another in the
    history, and its title) or a message.
    """

    def __init__(self, unit: str) -> None:
        self.unit = unit
        self.words = Words()
        self.n_units = 0
        self.last: tuple[Any, int] | None = None  # (source, conv_index) of the last message
        self.places: list[pa.Table] = []
        self.times: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # units, earliest time, messages
        self.marks: tuple[int, tuple[Any, int] | None, int, int, tuple[int, int]] = (0, None, 0, 0, (0, 0))

    def begin(self) -> None:
        """An input starts (see :meth:`restart`)."""
        self.marks = (self.n_units, self.last, len(self.places), len(self.times), self.words.mark())

    def restart(self) -> None:
        """Forget what the input begun last gave so far: it is read again."""
        self.n_units, self.last, places, times, words = self.marks
        del self.places[places:], self.times[times:]
        self.words.forget(words)

    def add(self, history: pa.Table) -> None:
        """Count the messages of one history batch (see :data:`memvelope_tools._corpus.HISTORY_COLUMNS`)."""
        n = history.num_rows
        if not n:
            return
        texts = history.column("text").combine_chunks().cast(pa.large_string()).fill_null("")
        if self.unit == "message":
            self.places.append(history.select(list(UNIT_COLUMNS["message"])))
            self._count(texts, np.arange(self.n_units, self.n_units + n))
            self.n_units += n
            return
        source = history.column("source").to_numpy(zero_copy_only=False)
        conv = history.column("conv_index").to_numpy(zero_copy_only=False).astype(np.int64)
        starts = np.ones(n, dtype=bool)
        starts[1:] = (conv[1:] != conv[:-1]) | (source[1:] != source[:-1])
        goes_on = self.last == (source[0], int(conv[0]))
        starts[0] = not goes_on
        unit = self.n_units - 1 + np.cumsum(starts)
        first = np.flatnonzero(starts)
        runs = first if not goes_on else np.concatenate([[0], first])
        ts = history.column("ts").cast(pa.int64()).fill_null(_NO_TIME).to_numpy()
        self.times.append((unit[runs], np.minimum.reduceat(ts, runs), np.diff(np.append(runs, n))))
        new = history.take(pa.array(first)).select(list(_PLACE))
        self.places.append(new)
        titles = new.column("title").combine_chunks().cast(pa.large_string()).fill_null("")
        self._count(pa.concat_arrays([texts, titles]), np.concatenate([unit, unit[first]]))
        self.n_units = int(unit[-1]) + 1
        self.last = (source[-1], int(conv[-1]))

    def _count(self, texts: pa.Array, owners: np.ndarray) -> None:
        ends = np.cumsum(pc.binary_length(texts).to_numpy(zero_copy_only=False))
        start = 0
        while start < len(texts):
            base = int(ends[start - 1]) if start else 0
            stop = int(np.searchsorted(ends, base + _TEXT_BYTES, side="right"))
            stop = min(max(stop, start + 1), start + _TEXTS)
            self.words.add(*counted_words(texts.slice(start, stop - start), owners[start:stop]))
            start = stop

    def finish(self, keep: np.ndarray | None = None) -> tuple[pd.DataFrame, Any, np.ndarray]:
        """The units (one row each, in order), their word counts (units × words, CSR) and the words; only
        the units ``keep`` marks, when given."""
        columns = UNIT_COLUMNS[self.unit]
        if self.unit == "message":
            table = pa.concat_tables(self.places) if self.places else _empty(columns)
            units = to_pandas(table, columns, None)
        else:
            table = pa.concat_tables(self.places) if self.places else _empty(_PLACE)
            units = to_pandas(table, _PLACE, None)
            ids = np.concatenate([np.zeros(0, np.int64), *(t[0] for t in self.times)])
            earliest = np.full(self.n_units, _NO_TIME, dtype=np.int64)
            np.minimum.at(earliest, ids, np.concatenate([np.zeros(0, np.int64), *(t[1] for t in self.times)]))
            sizes = np.zeros(self.n_units, dtype=np.int64)
            np.add.at(sizes, ids, np.concatenate([np.zeros(0, np.int64), *(t[2] for t in self.times)]))
            stamps = pa.array(earliest, mask=earliest == _NO_TIME).cast(pa.timestamp("ms", tz="UTC"))
            units["ts"] = to_pandas(pa.table({"ts": stamps}), {"ts": TIMESTAMP}, None)["ts"]
            units["n_messages"] = sizes
        if keep is not None:
            units = units.loc[keep].reset_index(drop=True)
        counts, vocabulary = self.words.matrix(self.n_units, keep)
        return units, counts, vocabulary


def _empty(columns: dict[str, Any]) -> pa.Table:
    return arrow_schema(columns).empty_table()


def count_words(texts: pd.Series, unit_of_text: np.ndarray, n_units: int) -> tuple[Any, np.ndarray]:
    """Word counts per unit (a sparse units × words matrix) and the words, in first-seen order.

    Texts are worked on a batch at a time (see :func:`counted_words`), so memory stays bounded whatever the size.
    """
    array = pa.array(texts.astype(STRING.pandas).array, type=pa.string()) if len(texts) else pa.array([], pa.string())
    array = array.cast(pa.large_string()).fill_null("")
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    words = Words()
    for start in range(0, len(array), _BATCH):
        words.add(*counted_words(array.slice(start, _BATCH), unit_of_text[start : start + _BATCH]))
    return words.matrix(n_units)


def counted_words(array: pa.Array, owner: np.ndarray) -> tuple[pa.Array, np.ndarray, np.ndarray, np.ndarray]:
    """How many times each word :func:`split_words` finds in the texts of ``array`` is in each unit
    (``owner``: one unit a text): the distinct words in the order first met, then for each unit and word
    found together, in no particular order, the word's index among them, the unit and the count (float32).
    The compiled helper counts them in one pass where it is built, else :func:`split_words` finds them."""
    if _text.native():
        found = _split_compiled(array, owner, counted=True)
        if found is not None:
            record("words", "c")
            return found
    record("words", "python")
    from scipy import sparse

    words, owners = split_words(array, owner)
    encoded = words.dictionary_encode()
    if not len(words):
        return encoded.dictionary, np.zeros(0, np.int64), owners, np.zeros(0, np.float32)
    first = int(owners.min())
    pairs = sparse.coo_matrix(
        (np.ones(len(words), dtype=np.float32), (owners - first, encoded.indices.to_numpy(zero_copy_only=False))),
        shape=(int(owners.max()) - first + 1, len(encoded.dictionary)),
    ).tocsr()  # adds up repeated words
    pairs = pairs.tocoo()
    return encoded.dictionary, pairs.col, pairs.row + first, pairs.data


def _split_compiled(
    array: pa.Array, owner: np.ndarray, *, counted: bool
) -> tuple[pa.Array, np.ndarray, np.ndarray, np.ndarray] | None:
    """The words of :func:`split_words`, found by the compiled helper, dictionary-encoded: the distinct words,
    then each word's index among them, its unit and (``counted``) how many times it is in that unit, each
    unit and word then given once (else ones, the words in :func:`split_words`' order). None when a text
    is not UTF-8."""
    array = array.cast(pa.large_string())
    if array.null_count:
        array = array.fill_null("")
    _, offsets, data = array.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[array.offset : array.offset + len(array) + 1]
    found = _text.compiled_words(
        offsets if len(offsets) else np.zeros(1, np.int64),
        b"" if data is None else data,
        np.ascontiguousarray(owner, dtype=np.int64),
        _characters(),
        MAX_WORD,
        counted,
    )
    if found is None:
        return None
    starts, chars, indices, owners, counts = found
    dictionary = pa.LargeStringArray.from_buffers(len(starts) // 8 - 1, pa.py_buffer(starts), pa.py_buffer(chars))
    indices = np.frombuffer(indices, dtype=np.int32)
    counts = np.frombuffer(counts, dtype=np.float32) if counted else np.ones(len(indices), dtype=np.float32)
    return dictionary, indices, np.frombuffer(owners, dtype=np.int64), counts


# What the compiled helper reads of a code point: flags of its lower-cased form (see _textscan.c).
_SPACE, _ALPHA, _LETTER, _IDEOGRAPH, _HIRAGANA_FLAG, _KATAKANA_FLAG, _STOP = (1 << k for k in range(7))
_POINTS: Final = 0x110000
_PLANE: Final = 0x10000
_BLOCK: Final = 256


@functools.cache
def _characters() -> tuple[np.ndarray, np.ndarray]:
    """What :func:`split_words` makes of each code point, for the compiled helper: for each block of 256 code
    points, the index of its row in the table of distinct rows; each row holds, per code point, the offset of
    its lower-cased form (24 bits) and that form's flags (8 bits).

    Lower case, spaces, letters (all letters, as ``utf8_is_alpha`` reads them) and letters or marks (as
    :data:`NOT_LETTER` splits) are what the Arrow kernels :func:`split_words` runs say of every code point,
    so that the two ways agree whatever the Unicode version of the Arrow installed.
    """
    flags = np.zeros(_POINTS, dtype=np.uint8)
    lowered = np.zeros(_POINTS, dtype=np.uint32)
    for start in range(0, _POINTS, _PLANE):  # a plane at a time, which holds little memory
        points = np.arange(start, start + _PLANE, dtype=np.uint32)
        points[(points >= 0xD800) & (points < 0xE000)] = 0x20  # no text holds a surrogate: a stand-in
        text = points.tobytes().decode("utf-32-le")
        one = pa.array([text], pa.large_string())
        lowered[start : start + _PLANE] = _code_points(pc.utf8_lower(one))
        mine = flags[start : start + _PLANE]
        kept = _code_points(pa.array(["".join(pc.list_flatten(pc.utf8_split_whitespace(one)).to_pylist())]))
        space = np.ones(_PLANE, dtype=bool)
        space[kept - start] = False
        mine[space] |= _SPACE
        sizes = 1 + (points >= 0x80) + (points >= 0x800) + (points >= 0x10000)
        each = pa.StringArray.from_buffers(
            _PLANE, pa.py_buffer(np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)), one.buffers()[2]
        )
        mine[pc.utf8_is_alpha(each).to_numpy(zero_copy_only=False)] |= _ALPHA
        mine[~pc.match_substring_regex(each, pattern=NOT_LETTER).to_numpy(zero_copy_only=False)] |= _LETTER
    for ranges, flag in (
        (_HAN_RANGES, _IDEOGRAPH),
        (_HIRAGANA_RANGES, _HIRAGANA_FLAG),
        (_KATAKANA_RANGES, _KATAKANA_FLAG),
    ):
        for first, last in ranges:
            flags[first : last + 1] |= flag
    flags[[ord(c) for c in _chinese_stops()]] |= _STOP
    rows: dict[bytes, int] = {}
    index = np.zeros(_POINTS // _BLOCK, dtype=np.uint16)
    for start in range(0, _POINTS, _PLANE):
        low = lowered[start : start + _PLANE]
        offset = low.astype(np.int64) - np.arange(start, start + _PLANE)
        info = (flags[low].astype(np.uint32) << np.uint32(24)) | (offset & 0xFFFFFF).astype(np.uint32)
        if start == 0:
            info[0xD800:0xE000] = 0  # surrogates
        blocks = info.reshape(-1, _BLOCK)
        index[start // _BLOCK : (start + _PLANE) // _BLOCK] = [rows.setdefault(b.tobytes(), len(rows)) for b in blocks]
    return index, np.frombuffer(b"".join(rows), dtype=np.uint32)


def _code_points(one: pa.Array) -> np.ndarray:
    """The code points of the one string of ``one``."""
    return np.frombuffer(str(one[0].as_py()).encode("utf-32-le"), dtype=np.uint32)


def split_words(array: pa.Array, owner: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """The words of the texts in ``array`` (the rules are in :mod:`memvelope_tools._topics`), and the unit
    each belongs to (``owner``: one unit a text): the Arrow kernels that define the rule, which the compiled
    helper follows (see :func:`counted_words`)."""
    array = pc.utf8_lower(pc.replace_substring_regex(array, pattern=_NOT_PROSE, replacement=" "))
    cjk = pc.any(pc.match_substring_regex(array, pattern=_KANA_OR_HAN)).as_py()
    if cjk:
        # Chinese and Japanese: a run of katakana (mostly loanwords) is a word, hiragana (mostly grammar)
        # is left out, and a run of ideographs, split at Chinese stop characters, becomes its bigrams.
        array = pc.replace_substring_regex(array, pattern=_HIRAGANA, replacement=" ")
        array = pc.replace_substring_regex(array, pattern=_KATAKANA, replacement=" \\1 ")
        array = pc.replace_substring_regex(array, pattern=_chinese_stop_characters(), replacement=" ")
        array = pc.replace_substring_regex(array, pattern=f"({HAN}+)", replacement=" \\1 ")
    # Most words are letters between spaces; only the others need the (slower) regular expression. The texts
    # are trimmed first: the split alone now and then leaves the trailing spaces of the last text of an array
    # on its last word.
    split = pc.utf8_split_whitespace(pc.utf8_trim_whitespace(array))
    flat = pc.list_flatten(split)
    owners = np.repeat(owner, pc.list_value_length(split).to_numpy(zero_copy_only=False))
    alpha = pc.utf8_is_alpha(flat)
    mixed = pc.split_pattern_regex(flat.filter(pc.invert(alpha)), pattern=NOT_LETTER)
    mixed_owners = np.repeat(
        owners[~alpha.to_numpy(zero_copy_only=False)], pc.list_value_length(mixed).to_numpy(zero_copy_only=False)
    )
    tokens = pa.concat_arrays([flat.filter(alpha), pc.list_flatten(mixed)])
    owners = np.concatenate([owners[alpha.to_numpy(zero_copy_only=False)], mixed_owners])
    lengths = pc.utf8_length(tokens).to_numpy(zero_copy_only=False)
    keep = (lengths >= 2) & (lengths <= MAX_WORD)
    single = np.flatnonzero(lengths == 1)  # of one letter, only an ideograph is a word
    if len(single):
        keep[single] = pc.match_substring_regex(tokens.take(single), pattern=f"^{HAN}$").to_numpy(zero_copy_only=False)
    tokens, owners = tokens.filter(pa.array(keep)), owners[keep]
    return _han_bigrams(tokens, owners) if cjk else (tokens, owners)


def _han_bigrams(tokens: pa.Array, owners: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """Each run of two ideographs or more in ``tokens`` replaced by its overlapping character bigrams
    (``冒泡排序``: ``冒泡``, ``泡排``, ``排序``), which stand in for the words Chinese does not separate."""
    runs = pc.match_substring_regex(tokens, pattern=f"^{HAN}{{2,}}$").to_numpy(zero_copy_only=False)
    if not runs.any():
        return tokens, owners
    where = np.flatnonzero(runs)
    taken = tokens.take(pa.array(where)).cast(pa.large_string())
    # Every ideograph is three bytes of UTF-8: a bigram is the six bytes from a character's start.
    offsets = np.frombuffer(taken.buffers()[1], dtype=np.int64)[taken.offset : taken.offset + len(taken) + 1]
    data = np.frombuffer(taken.buffers()[2], dtype=np.uint8)
    counts = np.diff(offsets) // _HAN_BYTES - 1
    firsts = np.repeat(offsets[:-1], counts) + _HAN_BYTES * (
        np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    )
    pieces = data[firsts[:, None] + np.arange(2 * _HAN_BYTES)].ravel()
    bigrams = pa.LargeStringArray.from_buffers(
        len(firsts), pa.py_buffer(np.arange(len(firsts) + 1, dtype=np.int64) * 2 * _HAN_BYTES), pa.py_buffer(pieces)
    )
    rest = ~runs
    return (
        pa.concat_arrays([tokens.filter(pa.array(rest)), bigrams.cast(tokens.type)]),
        np.concatenate([owners[rest], np.repeat(owners[where], counts)]),
    )


@functools.cache
def _chinese_stops() -> tuple[str, ...]:
    """The one-character words of the ``stop-words`` Chinese list (的, 了, 是, ...)."""
    from stop_words import get_stop_words

    return tuple(sorted({w for w in get_stop_words("chinese") if len(w) == 1}))


@functools.cache
def _chinese_stop_characters() -> str:
    """A pattern matching one of :func:`_chinese_stops`."""
    return "[" + "".join(f"\\x{{{ord(c):x}}}" for c in _chinese_stops()) + "]"
