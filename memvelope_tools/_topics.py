"""What a chat history is about, and how that changed: topics found by TF-IDF and NMF (scikit-learn).

>>> import memvelope_tools as mv
>>> found = mv.topics("history.mve.json", n_topics=8)        # doctest: +SKIP
>>> found.labels                                            # doctest: +SKIP
>>> found.over_time("quarter")                              # doctest: +SKIP

``source`` is a history as :mod:`memvelope_tools._corpus` describes: anything the frame functions
take, a messages frame, a Parquet folder, or a list of them.

**Units.** With ``unit="conversation"`` (the default) each conversation is one document: its title
and the text of all its messages; with ``unit="message"`` each message is one.

**Words.** Text is lower-cased; fenced code blocks (```` ``` ````, also one left open), inline code
(`` `...` ``) and URLs are removed; a word is a run of letters (digits and punctuation split words, so
numbers never count), of at least two letters and at most :data:`MAX_WORD` (40), or a single Chinese
character (Chinese and Japanese do not separate words with spaces: each ideograph counts as a word, a
run of katakana as one, and hiragana, mostly grammar, is left out). Stop words are scikit-learn's
English list, the English list of the ``stop-words`` package, a few words of chat small talk, and the
``stop-words`` list of every other language that makes up at least 0.5 % of the history's words
(German, French, Spanish, Russian, Chinese, ... 33 languages in all), plus ``stop_words`` given here.
Of the rest, words in at least two units (when there are 20 units or more) and in at most 70 % of them
are kept, the 20,000 most frequent at most.

**Model.** TF-IDF with sublinear term frequency, then non-negative matrix factorisation (``init=
"nndsvda"``, coordinate descent, ``random_state=seed``): the same input and seed give the same topics.
Topics are numbered by size, 0 the largest. Each is labelled by its top three terms, joined with
`` · `` (a label that would repeat another gets its number appended).

**Small histories.** ``n_topics`` is lowered, with a warning, to the number of units that have
words or the number of distinct words, whichever is smaller: one conversation gives one topic. A
history without any unit that has a word left raises :class:`~memvelope_tools.TopicsError`
(reason ``no-text``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ._convert.zips import kept_open
from ._frames import STRING
from ._sources import resolve
from ._stream import history_stream
from ._topic_units import Counting, Words
from .errors import TopicsError

__all__ = ["Topics", "topics"]

UNITS = ("conversation", "message")
N_TERMS = 10
MIN_LANGUAGE_SHARE = 0.005
MAX_FEATURES = 20_000
MAX_DF = 0.7
#: The longest word counted, in letters: a longer run of letters (a key, an encoding, a run of one letter
#: repeated) names no topic, and is dropped before it costs anything.
MAX_WORD = 40
#: Words of chat small talk that say nothing about a topic, in addition to the stop-word lists.
_CHAT_WORDS = (
    "ok okay yes yeah sure thanks thank please hi hello hey let lets like just really also use using used "
    "want need know think make way thing things good great help example here would could should might "
    "don doesn didn isn wasn aren weren won wouldn couldn shouldn haven hasn ll ve re"
)
CHAT_WORDS = frozenset(_CHAT_WORDS.split())
# Fenced code blocks (also one left open), inline code and URLs.
_NOT_PROSE = r"(?s)```.*?(?:```|$)|`[^`\n]*`|(?:https?://|www\.)\S+"
_KANA_OR_HAN = r"[\x{3040}-\x{30ff}\x{3400}-\x{4dbf}\x{4e00}-\x{9fff}\x{f900}-\x{faff}]"
_BATCH = 200_000
_HAN = r"[\x{3400}-\x{4dbf}\x{4e00}-\x{9fff}\x{f900}-\x{faff}]"
_HIRAGANA = r"[\x{3040}-\x{309f}]+"
_KATAKANA = r"([\x{30a0}-\x{30ff}]+)"
_NOT_LETTER = r"[^\p{L}\p{M}]+"
_FREQS = {
    "W": "W-SUN",
    "week": "W-SUN",
    "M": "M",
    "MS": "M",
    "month": "M",
    "Q": "Q",
    "QS": "Q",
    "quarter": "Q",
    "Y": "Y",
    "YS": "Y",
    "year": "Y",
}


@dataclass(frozen=True)
class Topics:
    """Topics found in a history: their terms, each unit's topic, and shares over time."""

    #: One row per topic and top term: ``topic`` (0 the largest), ``label``, ``rank`` (0 first),
    #: ``term``, ``weight`` (the term's weight in the topic).
    terms: pd.DataFrame
    #: One row per unit: where it is (``source``, ``conv_index``, ``conversation_id``, ``title``,
    #: for messages also ``position`` and ``role``), ``ts`` (a conversation's earliest message time),
    #: ``topic`` (its main topic; null when no word of it is in the vocabulary), ``label``,
    #: ``weight`` (the main topic's share of the unit), and ``weight_0`` ... one share per topic.
    assignments: pd.DataFrame
    #: ``conversation`` or ``message``.
    unit: str
    #: Languages whose stop words were left out, besides English.
    languages: tuple[str, ...] = ()

    @property
    def labels(self) -> pd.Series:
        """Each topic's label, indexed by topic number."""
        first = self.terms.drop_duplicates("topic").set_index("topic")["label"]
        return first.rename_axis("topic")

    @property
    def n_topics(self) -> int:
        """How many topics there are."""
        return int(self.terms["topic"].nunique())

    def over_time(self, freq: str = "month", tz: str = "UTC", *, counts: bool = False) -> pd.DataFrame:
        """Share of units per topic (columns, labelled) per period (rows, every period from the first
        to the last, its start on the wall clock of ``tz``); ``counts=True`` gives the numbers of
        units instead. ``freq`` is ``week`` (Monday to Sunday), ``month``, ``quarter`` or ``year``.
        Units without a time or without a topic are left out."""
        code = _FREQS.get(freq)
        if code is None:
            raise ValueError(f"freq must be one of week, month, quarter, year, got {freq!r}")
        labels = self.labels
        done = self.assignments.loc[self.assignments["topic"].notna() & self.assignments["ts"].notna()]
        columns = pd.Index(list(labels), name="topic")
        if done.empty:
            return pd.DataFrame(columns=columns, index=pd.DatetimeIndex([], name="period"), dtype=float)
        local = done["ts"].dt.tz_convert(tz).dt.tz_localize(None)
        periods = local.dt.to_period(code)
        table = pd.crosstab(periods.to_numpy(), done["topic"].to_numpy(dtype=np.int64))
        span = pd.period_range(periods.min(), periods.max(), freq=code)
        table = table.reindex(index=span, columns=range(len(labels)), fill_value=0)
        table.index = pd.DatetimeIndex(span.start_time, name="period")
        table.columns = columns
        if counts:
            return table.astype(np.int64)
        totals = table.sum(axis=1).replace(0, np.nan)
        return table.div(totals, axis=0).fillna(0.0)

    def __repr__(self) -> str:
        return (
            f"<Topics: {self.n_topics} topics over {len(self.assignments):,} {self.unit}s: "
            + "; ".join(f"{t}: {label}" for t, label in self.labels.items())
            + ">"
        )


def topics(
    source: Any,
    n_topics: int = 12,
    *,
    unit: str = "conversation",
    seed: int = 0,
    stop_words: Iterable[str] = (),
) -> Topics:
    """Find ``n_topics`` topics in a history (see the module docstring).

    Parameters
    ----------
    source
        A history, as :func:`search` takes it.
    n_topics
        How many topics to find.
    unit
        What is assigned a topic: ``"conversation"`` or ``"message"``.
    seed
        Seed of the factorisation, for the same topics on the same history.
    stop_words
        More words to leave out.

    Returns
    -------
    Topics
        The topics' terms and labels and each unit's topic.

    Raises
    ------
    memvelope_tools.errors.TopicsError
        Nothing is left to model (``no-text``).
    memvelope_tools.errors.InputError
        An input is missing, empty, not JSON or a file of another kind.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> found = mv.topics(mv.sample_path("chatgpt"), 3)  # doctest: +SKIP
    >>> found.n_topics  # doctest: +SKIP
    3
    """
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}, got {unit!r}")
    if isinstance(n_topics, bool) or not isinstance(n_topics, int) or n_topics < 1:
        raise ValueError(f"n_topics must be a positive int, got {n_topics!r}")
    units, counts, vocabulary = counted(source, unit)
    what = f"{unit}s"
    if units.empty:
        raise TopicsError(f"no {what} to find topics in: the history is empty")

    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfTransformer

    stops, languages = _stop_words(counts, vocabulary, ENGLISH_STOP_WORDS, stop_words)
    keep = _vocabulary_mask(counts, vocabulary, stops)
    counts, vocabulary = counts[:, keep], vocabulary[keep]
    with_words = int((counts.getnnz(axis=1) > 0).sum())
    if with_words == 0 or not len(vocabulary):
        which = f"the only {unit} has no word" if len(units) == 1 else f"none of the {len(units):,} {what} has a word"
        raise TopicsError(
            f"no words to find topics in: {which} left once stop words, code, URLs and numbers are removed"
        )
    k = min(n_topics, with_words, len(vocabulary))
    if k < n_topics:
        warnings.warn(
            f"only {with_words:,} {what} with words and {len(vocabulary):,} distinct words: finding {k} "
            f"topic{'s' if k != 1 else ''}, not {n_topics}",
            stacklevel=2,
        )
    tfidf = TfidfTransformer(sublinear_tf=True).fit_transform(counts)
    weights, components = _factorise(tfidf, k, seed)
    return _result(units, unit, weights, components, vocabulary, languages)


# ---- units ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Counted:
    """A history's units and their word counts, already counted (see :func:`counting`); :func:`topics`
    takes one as its ``source``."""

    unit: str
    units: pd.DataFrame
    counts: Any
    vocabulary: np.ndarray


def counting(unit: str) -> Counting:
    """An empty count of ``unit`` s, to be given a history a batch at a time (see
    :mod:`memvelope_tools._topic_units`)."""
    return Counting(unit, _tokens)


def counted(source: Any, unit: str) -> tuple[pd.DataFrame, Any, np.ndarray]:
    """The units of the history ``source`` (one row each), their word counts and the words, read a batch at
    a time, each input resolved once (a :class:`Counted` is taken as it is)."""
    if isinstance(source, Counted):
        if source.unit != unit:
            raise ValueError(f"the words were counted per {source.unit}, not per {unit}")
        return source.units, source.counts, source.vocabulary
    with kept_open():
        inputs = resolve(source, "history", list_means="documents", caller="topics()")
        # The documents among the inputs come together where the first of them is, as the frames hold them.
        first = next((i for i, found in enumerate(inputs) if found.kind not in _HELD), len(inputs))
        order = sorted(range(len(inputs)), key=lambda i: i if inputs[i].kind in _HELD else first)
        count = counting(unit)
        for i in order:
            count.begin()
            history_stream(inputs[i], count)
    return count.finish()


_HELD = ("frame", "tables", "parquet")


def count_words(texts: pd.Series, unit_of_text: np.ndarray, n_units: int) -> tuple[Any, np.ndarray]:
    """Word counts per unit (a sparse units × words matrix) and the words, sorted.

    Texts are worked on a batch at a time with Arrow kernels, so memory stays bounded whatever the size.
    """
    array = pa.array(texts.astype(STRING).array, type=pa.string()) if len(texts) else pa.array([], pa.string())
    array = array.cast(pa.large_string()).fill_null("")
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    words = Words()
    for start in range(0, len(array), _BATCH):
        words.add(*_tokens(array.slice(start, _BATCH), unit_of_text[start : start + _BATCH]))
    return words.matrix(n_units)


def _tokens(array: pa.Array, owner: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """The words of the texts in ``array`` (see the module docstring), and the unit each belongs to."""
    array = pc.utf8_lower(pc.replace_substring_regex(array, pattern=_NOT_PROSE, replacement=" "))
    if pc.any(pc.match_substring_regex(array, pattern=_KANA_OR_HAN)).as_py():
        # Chinese and Japanese: each ideograph is a word, a run of katakana (mostly loanwords) too, and
        # hiragana (mostly grammar) is left out.
        array = pc.replace_substring_regex(array, pattern=_HIRAGANA, replacement=" ")
        array = pc.replace_substring_regex(array, pattern=_KATAKANA, replacement=" \\1 ")
        array = pc.replace_substring_regex(array, pattern=f"({_HAN})", replacement="\\1 ")
    # Most words are letters between spaces; only the others need the (slower) regular expression.
    split = pc.utf8_split_whitespace(array)
    flat = pc.list_flatten(split)
    owners = np.repeat(owner, pc.list_value_length(split).to_numpy(zero_copy_only=False))
    alpha = pc.utf8_is_alpha(flat)
    mixed = pc.split_pattern_regex(flat.filter(pc.invert(alpha)), pattern=_NOT_LETTER)
    mixed_owners = np.repeat(
        owners[~alpha.to_numpy(zero_copy_only=False)], pc.list_value_length(mixed).to_numpy(zero_copy_only=False)
    )
    tokens = pa.concat_arrays([flat.filter(alpha), pc.list_flatten(mixed)])
    owners = np.concatenate([owners[alpha.to_numpy(zero_copy_only=False)], mixed_owners])
    lengths = pc.utf8_length(tokens).to_numpy(zero_copy_only=False)
    keep = (lengths >= 2) & (lengths <= MAX_WORD)
    single = np.flatnonzero(lengths == 1)  # of one letter, only an ideograph is a word
    if len(single):
        keep[single] = pc.match_substring_regex(tokens.take(single), pattern=f"^{_HAN}$").to_numpy(zero_copy_only=False)
    return tokens.filter(pa.array(keep)), owners[keep]


# ---- vocabulary ----------------------------------------------------------------------------------


def _stop_words(
    counts: Any, vocabulary: np.ndarray, english: Iterable[str], extra: Iterable[str]
) -> tuple[frozenset[str], tuple[str, ...]]:
    """The stop words to leave out, and the languages (besides English) whose lists are among them."""
    from stop_words import AVAILABLE_LANGUAGES, get_stop_words

    def words_of(items: Iterable[str]) -> set[str]:
        # Split as the text is split, so "don't" leaves out "don" and "aren't" "aren".
        lowered = [item.lower() for item in items]
        if not lowered:
            return set()
        parts = pc.list_flatten(pc.split_pattern_regex(pa.array(lowered, pa.string()), pattern=_NOT_LETTER))
        return {w for w in parts.to_pylist() if w}

    base = words_of(english) | words_of(get_stop_words("english")) | set(CHAT_WORDS) | words_of(extra)
    totals = np.asarray(counts.sum(axis=0)).ravel()
    grand = float(totals.sum()) or 1.0
    position = {w: i for i, w in enumerate(vocabulary)}
    languages: list[str] = []
    stops = set(base)
    for language in sorted(AVAILABLE_LANGUAGES):
        if language == "english":
            continue
        own = words_of(get_stop_words(language)) - base
        hits = [position[w] for w in own if w in position]
        if hits and totals[hits].sum() / grand >= MIN_LANGUAGE_SHARE:
            languages.append(language)
            stops |= own
    return frozenset(stops), tuple(languages)


def _vocabulary_mask(counts: Any, vocabulary: np.ndarray, stops: frozenset[str]) -> np.ndarray:
    n_units = counts.shape[0]
    df = np.bincount(counts.indices, minlength=len(vocabulary))
    keep = np.fromiter((w not in stops for w in vocabulary), dtype=bool, count=len(vocabulary))
    if n_units >= 20:
        keep &= (df >= 2) & (df <= MAX_DF * n_units)
    if keep.sum() > MAX_FEATURES:
        totals = np.asarray(counts.sum(axis=0)).ravel()
        ranked = np.lexsort((vocabulary.astype(str), -totals))  # most frequent first, ties by the word
        allowed = np.zeros(len(vocabulary), dtype=bool)
        allowed[ranked[keep[ranked]][:MAX_FEATURES]] = True
        keep &= allowed
    return keep


# ---- model ---------------------------------------------------------------------------------------


def _factorise(tfidf: Any, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.decomposition import NMF
    from sklearn.exceptions import ConvergenceWarning

    model = NMF(n_components=k, init="nndsvda", solver="cd", max_iter=400, tol=1e-4, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # A fit that is exact up to rounding makes the error a tiny negative number under a square root.
        warnings.filterwarnings("ignore", "invalid value encountered in sqrt", RuntimeWarning)
        weights = model.fit_transform(tfidf)
    return np.asarray(weights, dtype=np.float64), np.asarray(model.components_, dtype=np.float64)


def _result(
    units: pd.DataFrame,
    unit: str,
    weights: np.ndarray,
    components: np.ndarray,
    vocabulary: np.ndarray,
    languages: tuple[str, ...],
) -> Topics:
    k = components.shape[0]
    totals = weights.sum(axis=1)
    shares = np.divide(weights, totals[:, None], out=np.zeros_like(weights), where=totals[:, None] > 0)
    main = np.where(totals > 0, shares.argmax(axis=1), -1)
    sizes = np.bincount(main[main >= 0], minlength=k)
    order = np.lexsort((-weights.sum(axis=0), -sizes))  # largest first; ties by total weight
    shares, components = shares[:, order], components[order]
    renumber = np.empty(k, dtype=np.int64)
    renumber[order] = np.arange(k)
    main = np.where(main >= 0, renumber[np.maximum(main, 0)], -1)

    words = vocabulary.astype(str)
    rows: list[tuple[int, int, str, float]] = []
    labels: list[str] = []
    for t in range(k):
        top = np.lexsort((words, -components[t]))[:N_TERMS]
        top = top[components[t, top] > 0] if (components[t, top] > 0).any() else top[:1]
        label = " · ".join(words[top[:3]])
        if label in labels:
            label = f"{label} ({t})"
        labels.append(label)
        rows.extend((t, rank, words[i], float(components[t, i])) for rank, i in enumerate(top))
    terms = pd.DataFrame(rows, columns=["topic", "rank", "term", "weight"])
    terms.insert(1, "label", pd.array([labels[t] for t in terms["topic"]], dtype=STRING))
    terms["term"] = terms["term"].astype(STRING)

    assignments = units.copy()
    topic = pd.array(main, dtype=pd.Int64Dtype())
    topic[main < 0] = pd.NA
    assignments["topic"] = topic
    assignments["label"] = pd.array([labels[t] if t >= 0 else None for t in main], dtype=STRING)
    weight = pd.array(shares[np.arange(len(main)), np.maximum(main, 0)], dtype=pd.Float64Dtype())
    weight[main < 0] = pd.NA
    assignments["weight"] = weight
    for t in range(k):
        assignments[f"weight_{t}"] = shares[:, t]
    return Topics(terms=terms, assignments=assignments, unit=unit, languages=languages)
