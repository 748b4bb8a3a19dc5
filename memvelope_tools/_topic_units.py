"""The units topics are found in, and their word counts, built a batch of a history at a time.

:class:`Counting` takes history batches (messages with their conversations' titles, in order, see
:func:`memvelope_tools._corpus.history_stream`) and keeps, of each, only what topics needs: one row per
unit (where it is, its time) and the unit's word counts, added to a sparse matrix whose vocabulary grows
batch by batch (:class:`Words`). The texts are let go with their batch. The words are those
:func:`split_words` finds (the rules are in :mod:`memvelope_tools._topics`), in the order they were first met:
a history read as one batch gives the vocabulary in the order topics always gave it, so that the
factorisation, whose start depends on the order of the words, finds the same topics.
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

from ._frames.columns import INT, ROLE, STRING, TIMESTAMP, arrow_schema, to_pandas

__all__ = ["HAN", "MAX_WORD", "NOT_LETTER", "Counted", "Counting", "Words", "count_words", "split_words"]

#: The longest word counted, in letters: a longer run of letters (a key, an encoding, a run of one letter
#: repeated) names no topic, and is dropped before it costs anything.
MAX_WORD: Final = 40
#: A Chinese character (an ideograph), as a regular expression.
HAN: Final = r"[\x{3400}-\x{4dbf}\x{4e00}-\x{9fff}\x{f900}-\x{faff}]"
#: What splits words: a run of anything but letters and marks, as a regular expression.
NOT_LETTER: Final = r"[^\p{L}\p{M}]+"
# Fenced code blocks (also one left open), inline code and URLs.
_NOT_PROSE = r"(?s)```.*?(?:```|$)|`[^`\n]*`|(?:https?://|www\.)\S+"
_KANA_OR_HAN = r"[\x{3040}-\x{30ff}\x{3400}-\x{4dbf}\x{4e00}-\x{9fff}\x{f900}-\x{faff}]"
_HIRAGANA = r"[\x{3040}-\x{309f}]+"
_KATAKANA = r"([\x{30a0}-\x{30ff}]+)"
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

    def add(self, words: pa.Array, units: np.ndarray) -> None:
        """Count ``words``, each of the unit at the same place of ``units``."""
        from scipy import sparse

        if not len(words):
            return
        encoded = words.dictionary_encode()
        local = encoded.dictionary.to_pylist()
        ids = np.fromiter((self.ids.setdefault(w, len(self.ids)) for w in local), dtype=np.int64, count=len(local))
        first = int(units.min())
        batch = sparse.coo_matrix(
            (
                np.ones(len(words), dtype=np.float32),
                (units - first, ids[encoded.indices.to_numpy(zero_copy_only=False)]),
            ),
            shape=(int(units.max()) - first + 1, len(self.ids)),
        ).tocsr()  # adds up repeated words
        batch = batch.tocoo()
        # Twelve bytes a unit's word: the counts are what topics keeps of a history, and grow with it.
        self.rows.append((batch.row + first).astype(np.int32 if int(units.max()) < _INT32 else np.int64))
        self.cols.append(batch.col.astype(np.int32))
        self.counts.append(batch.data)

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
            self.words.add(*split_words(texts.slice(start, stop - start), owners[start:stop]))
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

    Texts are worked on a batch at a time with Arrow kernels, so memory stays bounded whatever the size.
    """
    array = pa.array(texts.astype(STRING).array, type=pa.string()) if len(texts) else pa.array([], pa.string())
    array = array.cast(pa.large_string()).fill_null("")
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    words = Words()
    for start in range(0, len(array), _BATCH):
        words.add(*split_words(array.slice(start, _BATCH), unit_of_text[start : start + _BATCH]))
    return words.matrix(n_units)


def split_words(array: pa.Array, owner: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """The words of the texts in ``array`` (the rules are in :mod:`memvelope_tools._topics`), and the unit
    each belongs to (``owner``: one unit a text)."""
    array = pc.utf8_lower(pc.replace_substring_regex(array, pattern=_NOT_PROSE, replacement=" "))
    cjk = pc.any(pc.match_substring_regex(array, pattern=_KANA_OR_HAN)).as_py()
    if cjk:
        # Chinese and Japanese: a run of katakana (mostly loanwords) is a word, hiragana (mostly grammar)
        # is left out, and a run of ideographs, split at Chinese stop characters, becomes its bigrams.
        array = pc.replace_substring_regex(array, pattern=_HIRAGANA, replacement=" ")
        array = pc.replace_substring_regex(array, pattern=_KATAKANA, replacement=" \\1 ")
        array = pc.replace_substring_regex(array, pattern=_chinese_stop_characters(), replacement=" ")
        array = pc.replace_substring_regex(array, pattern=f"({HAN}+)", replacement=" \\1 ")
    # Most words are letters between spaces; only the others need the (slower) regular expression.
    split = pc.utf8_split_whitespace(array)
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
def _chinese_stop_characters() -> str:
    """A pattern matching the one-character words of the ``stop-words`` Chinese list (的, 了, 是, ...)."""
    from stop_words import get_stop_words

    single = sorted({w for w in get_stop_words("chinese") if len(w) == 1})
    return "[" + "".join(f"\\x{{{ord(c):x}}}" for c in single) + "]"
