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
numbers never count) of at least two letters and at most :data:`~memvelope_tools._topic_units.MAX_WORD`
(40). Chinese and Japanese do not separate words with spaces: a run of katakana is a word, hiragana
(mostly grammar) is left out, and a run of Chinese characters is split at the one-character Chinese
stop words (的, 了, 是, ...) and stands for its overlapping character bigrams (``冒泡排序``: ``冒泡``,
``泡排``, ``排序``; a lone character is a word of one).

**Stop words.** scikit-learn's English list, the English list of the ``stop-words`` package, a few
words of chat small talk, ``stop_words`` given here, and the ``stop-words`` list of every language
(33 in all) that is the main language of units holding at least 2 % of the history's words
(:data:`MIN_LANGUAGE_SHARE`). A unit's main language is the one whose list covers most of its words,
when at least three are covered; Chinese counts its character words. :attr:`Topics.languages` names
the languages used besides English. Of the rest, in a history of 20 units or more, words in at least
two units are kept, and in at most half of them and at most half of the units of each language with
20 units or more (the words a language's list lacks, such as the ``zoals`` or ``vuoi`` of every other
answer); the 20,000 most frequent at most.

**Model.** TF-IDF with sublinear term frequency, then non-negative matrix factorisation (``init=
"nndsvda"``, coordinate descent, ``random_state=seed``): the same input and seed give the same topics.
Topics whose listed terms are the same words are merged into one. Topics are numbered by size, 0 the
largest. Each is labelled by its top three terms, joined with `` · `` (a label that would repeat
another gets its number appended).

**How many.** ``n_topics=None`` (the default) looks for one topic per five units, at least 2 and at
most 12, as ``memvelope topics`` and the report do. Fewer are found when the data allow fewer: at most
as many as the units that have words, or as the distinct words; one conversation gives one topic. A
number asked for and lowered, or topics merged, is said with a warning. A history without any unit
that has a word left raises :class:`~memvelope_tools.TopicsError` (reason ``no-text``).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ._convert.log import ConversionLog
from ._convert.zips import kept_open
from ._corpus import history_stream
from ._frames import STRING
from ._gc import gc_paused
from ._plural import count
from ._sources import resolve
from ._topic_count import N_TOPICS, topic_count
from ._topic_units import HAN, NOT_LETTER, Counted, Counting
from .errors import TopicsError

__all__ = ["N_TOPICS", "Topics", "topic_count", "topics"]

UNITS = ("conversation", "message")
N_TERMS = 10
#: A language's stop words are left out when it is the main language of units holding this share of the words.
MIN_LANGUAGE_SHARE = 0.02
#: A unit has a main language when at least this many of its words are stop words (of that language most).
MIN_LANGUAGE_HITS = 3
MAX_FEATURES = 20_000
#: Words in more than this share of the units, or of the units of one language, are left out.
MAX_DF = 0.5
#: The document-frequency rules apply to a history, or to a language's units, of at least this many units.
MIN_UNITS_FOR_DF = 20
#: Words of chat small talk that say nothing about a topic, in addition to the stop-word lists.
_CHAT_WORDS = (
    "ok okay yes yeah sure thanks thank please hi hello hey let lets like just really also use using used "
    "want need know think make way thing things good great help example here would could should might "
    "don doesn didn isn wasn aren weren won wouldn couldn shouldn haven hasn ll ve re"
)
CHAT_WORDS = frozenset(_CHAT_WORDS.split())
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
            f"<Topics: {count(self.n_topics, 'topic')} over {count(len(self.assignments), self.unit)}: "
            + "; ".join(f"{t}: {label}" for t, label in self.labels.items())
            + ">"
        )


def topics(
    source: Any,
    n_topics: int | None = None,
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
        How many topics to find; ``None`` for :func:`topic_count` of the units (one per five, 2 to 12).
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
    if n_topics is not None and (isinstance(n_topics, bool) or not isinstance(n_topics, int) or n_topics < 1):
        raise ValueError(f"n_topics must be a positive int or None, got {n_topics!r}")
    units, counts, vocabulary = counted(source, unit)
    what = f"{unit}s"
    if units.empty:
        raise TopicsError(f"no {what} to find topics in: the history is empty")
    asked = n_topics is not None
    wanted = n_topics if n_topics is not None else topic_count(len(units))

    with gc_paused():  # scikit-learn's import makes objects by the hundred thousand and no garbage
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfTransformer

    stops, languages, unit_language = _stop_words(counts, vocabulary, ENGLISH_STOP_WORDS, stop_words)
    keep = _vocabulary_mask(counts, vocabulary, stops, unit_language)
    counts, vocabulary = counts[:, keep], vocabulary[keep]
    with_words = int((counts.getnnz(axis=1) > 0).sum())
    if with_words == 0 or not len(vocabulary):
        which = f"the only {unit} has no word" if len(units) == 1 else f"none of the {len(units):,} {what} has a word"
        raise TopicsError(
            f"no words to find topics in: {which} left once stop words, code, URLs and numbers are removed"
        )
    k = min(wanted, with_words, len(vocabulary))
    if k < wanted and asked:
        warnings.warn(
            f"only {count(with_words, unit)} with words and {count(len(vocabulary), 'distinct word')}: finding "
            f"{count(k, 'topic')}, not {wanted}",
            stacklevel=2,
        )
    tfidf = TfidfTransformer(sublinear_tf=True).fit_transform(counts)
    weights, components = _factorise(tfidf, k, seed)
    weights, components = _merge_alike(weights, components, vocabulary.astype(str))
    if len(components) < k and asked:
        warnings.warn(
            f"{k - len(components)} of the {k} topics found had the same top terms as another: "
            f"merged, {len(components)} left",
            stacklevel=2,
        )
    return _result(units, unit, weights, components, vocabulary, languages)


# ---- units ---------------------------------------------------------------------------------------


def counted(
    source: Any,
    unit: str,
    *,
    progress: bool | None = None,
    on_conversion: Callable[[ConversionLog, str], object] | None = None,
) -> tuple[pd.DataFrame, Any, np.ndarray]:
    """The units of the history ``source`` (one row each), their word counts and the words, read a batch at
    a time, each input resolved once (a :class:`Counted` is taken as it is). ``progress`` shows a bar while
    an export is converted; ``on_conversion`` is called with what each export's conversion read and left
    out, and its provider."""
    if isinstance(source, Counted):
        if source.unit != unit:
            raise ValueError(f"the words were counted per {source.unit}, not per {unit}")
        return source.units, source.counts, source.vocabulary
    with kept_open():
        inputs = resolve(source, "history", list_means="documents", caller="topics()")
        # The documents among the inputs come together where the first of them is, as the frames hold them.
        first = next((i for i, found in enumerate(inputs) if found.kind not in _HELD), len(inputs))
        order = sorted(range(len(inputs)), key=lambda i: i if inputs[i].kind in _HELD else first)
        count = Counting(unit)
        for i in order:
            count.begin()
            log = ConversionLog()
            provider = history_stream(inputs[i], count, progress=progress, log=log)
            if log.parts and provider is not None and on_conversion is not None:
                on_conversion(log, provider)
    return count.finish()


_HELD = ("frame", "tables", "parquet")


# ---- vocabulary ----------------------------------------------------------------------------------


def _words_of(items: Iterable[str]) -> set[str]:
    """``items`` lower-cased and split as the text is split, so "don't" gives "don" and "aren't" "aren"."""
    lowered = [item.lower() for item in items]
    if not lowered:
        return set()
    parts = pc.list_flatten(pc.split_pattern_regex(pa.array(lowered, pa.string()), pattern=NOT_LETTER))
    return {w for w in parts.to_pylist() if w}


@functools.cache
def _language_lists(english: frozenset[str]) -> tuple[tuple[str, ...], tuple[frozenset[str], ...]]:
    """The languages of the ``stop-words`` package, English first, and each one's stop words (English's
    with ``english``, scikit-learn's list, and the words of chat small talk)."""
    from stop_words import AVAILABLE_LANGUAGES, get_stop_words

    others = sorted(language for language in AVAILABLE_LANGUAGES if language != "english")
    base = _words_of(english) | _words_of(get_stop_words("english")) | set(CHAT_WORDS)
    return ("english", *others), (frozenset(base), *(frozenset(_words_of(get_stop_words(o))) for o in others))


def _stop_words(
    counts: Any, vocabulary: np.ndarray, english: Iterable[str], extra: Iterable[str]
) -> tuple[frozenset[str], tuple[str, ...], np.ndarray]:
    """The stop words to leave out, the languages (besides English) whose lists are among them, and each
    unit's main language (an index into the languages, English 0; -1 for none).

    A unit's main language is the one most of its words are stop words of (ties go to the language
    listed first, English first), when at least :data:`MIN_LANGUAGE_HITS` are; Chinese counts its
    ideograph words, as its stop words separate them. A language's list is used when it is the main
    language of units holding :data:`MIN_LANGUAGE_SHARE` of the words or more.
    """
    from scipy import sparse

    names, lists = _language_lists(frozenset(english))
    position = {w: i for i, w in enumerate(vocabulary)}
    rows: list[int] = []
    cols: list[int] = []
    for column, words in enumerate(lists):
        hits = [position[w] for w in words if w in position]
        rows.extend(hits)
        cols.extend([column] * len(hits))
    if "chinese" in names and len(vocabulary):
        han = pc.match_substring_regex(pa.array(vocabulary.astype(str), pa.string()), pattern=f"^{HAN}+$")
        hits = np.flatnonzero(han.to_numpy(zero_copy_only=False)).tolist()
        rows.extend(hits)
        cols.extend([names.index("chinese")] * len(hits))
    marks = sparse.csr_matrix(
        (np.ones(len(rows), dtype=np.float32), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
        shape=(len(vocabulary), len(names)),
    )
    scores = np.asarray((counts @ marks).todense(), dtype=np.float32)
    unit_language = scores.argmax(axis=1) if len(names) else np.zeros(counts.shape[0], dtype=np.int64)
    unit_language[scores.max(axis=1, initial=0) < MIN_LANGUAGE_HITS] = -1
    words_per_unit = np.asarray(counts.sum(axis=1)).ravel()
    total = float(words_per_unit.sum()) or 1.0
    shares = (
        np.bincount(unit_language[unit_language >= 0], weights=words_per_unit[unit_language >= 0], minlength=len(names))
        / total
    )
    chosen = [i for i in range(1, len(names)) if shares[i] >= MIN_LANGUAGE_SHARE]
    stops = set(lists[0]) | _words_of(extra)
    for i in chosen:
        stops |= lists[i]
    return frozenset(stops), tuple(names[i] for i in chosen), unit_language.astype(np.int64)


def _vocabulary_mask(
    counts: Any, vocabulary: np.ndarray, stops: frozenset[str], unit_language: np.ndarray
) -> np.ndarray:
    """Which words to keep: not stop words and, in a history of :data:`MIN_UNITS_FOR_DF` units or more,
    in two units at least and in at most :data:`MAX_DF` of them, and of the units of each language that
    has that many (the most common words of a language its stop-word list lacks), the
    :data:`MAX_FEATURES` most frequent at most."""
    n_units = counts.shape[0]
    df = np.bincount(counts.indices, minlength=len(vocabulary))
    keep = np.fromiter((w not in stops for w in vocabulary), dtype=bool, count=len(vocabulary))
    if n_units >= MIN_UNITS_FOR_DF:
        keep &= (df >= 2) & (df <= MAX_DF * n_units)
        for language in np.unique(unit_language[unit_language >= 0]):
            rows = np.flatnonzero(unit_language == language)
            if len(rows) >= MIN_UNITS_FOR_DF and len(rows) < n_units:
                within = np.bincount(counts[rows].indices, minlength=len(vocabulary))
                keep &= within <= MAX_DF * len(rows)
    if keep.sum() > MAX_FEATURES:
        totals = np.asarray(counts.sum(axis=0)).ravel()
        ranked = np.lexsort((vocabulary.astype(str), -totals))  # most frequent first, ties by the word
        allowed = np.zeros(len(vocabulary), dtype=bool)
        allowed[ranked[keep[ranked]][:MAX_FEATURES]] = True
        keep &= allowed
    return keep


# ---- model ---------------------------------------------------------------------------------------


def _factorise(tfidf: Any, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    with gc_paused():
        from sklearn.decomposition import NMF
        from sklearn.exceptions import ConvergenceWarning

    model = NMF(n_components=k, init="nndsvda", solver="cd", max_iter=400, tol=1e-4, random_state=seed)
    with warnings.catch_warnings(), gc_paused():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # A fit that is exact up to rounding makes the error a tiny negative number under a square root.
        warnings.filterwarnings("ignore", "invalid value encountered in sqrt", RuntimeWarning)
        weights = model.fit_transform(tfidf)
    return np.asarray(weights, dtype=np.float64), np.asarray(model.components_, dtype=np.float64)


def _top_terms(component: np.ndarray, words: np.ndarray) -> np.ndarray:
    """The indices of a topic's listed terms: its :data:`N_TERMS` heaviest (ties by the word) of
    weight above zero, or its heaviest one when none is."""
    top = np.lexsort((words, -component))[:N_TERMS]
    return top[component[top] > 0] if (component[top] > 0).any() else top[:1]


def _merge_alike(weights: np.ndarray, components: np.ndarray, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Topics whose listed terms are the same words made one: their units' weights added, their terms'
    weights averaged by the weight each has in the units."""
    while True:
        seen: dict[frozenset[str], int] = {}
        pair = None
        for t in range(len(components)):
            key = frozenset(words[_top_terms(components[t], words)])
            if key in seen:
                pair = (seen[key], t)
                break
            seen[key] = t
        if pair is None:
            return weights, components
        a, b = pair
        mass = weights[:, [a, b]].sum(axis=0)
        share = mass / mass.sum() if mass.sum() > 0 else np.array([0.5, 0.5])
        components = components.copy()
        weights = weights.copy()
        components[a] = share[0] * components[a] + share[1] * components[b]
        weights[:, a] += weights[:, b]
        components = np.delete(components, b, axis=0)
        weights = np.delete(weights, b, axis=1)


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
        top = _top_terms(components[t], words)
        label = " · ".join(words[top[:3]])
        if label in labels:
            label = f"{label} ({t})"
        labels.append(label)
        rows.extend((t, rank, words[i], float(components[t, i])) for rank, i in enumerate(top))
    terms = pd.DataFrame(rows, columns=["topic", "rank", "term", "weight"])
    terms.insert(1, "label", pd.array([labels[t] for t in terms["topic"]], dtype=STRING.pandas))
    terms["term"] = terms["term"].astype(STRING.pandas)

    assignments = units.copy()
    topic = pd.array(main, dtype=pd.Int64Dtype())
    topic[main < 0] = pd.NA
    assignments["topic"] = topic
    assignments["label"] = pd.array([labels[t] if t >= 0 else None for t in main], dtype=STRING.pandas)
    weight = pd.array(shares[np.arange(len(main)), np.maximum(main, 0)], dtype=pd.Float64Dtype())
    weight[main < 0] = pd.NA
    assignments["weight"] = weight
    for t in range(k):
        assignments[f"weight_{t}"] = shares[:, t]
    return Topics(terms=terms, assignments=assignments, unit=unit, languages=languages)
