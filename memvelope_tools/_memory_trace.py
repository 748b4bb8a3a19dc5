"""Memory against what the user said: which facts support each remembered item, which items have no
trace in the user's own words, and which were superseded.

The rules are deterministic word matching, no model:

* **Words.** A text's content words: letters and digits, lower-cased, without common function words and
  the words a memory uses for the user ("user", "they", "I", ...), reduced by a crude suffix rule so that
  "lives" and "live" meet.
* **Conflict.** A fact and an item of the same category (not null, not ``instructions``) that share a
  content word while each holds one or two the other lacks ("User lives in Porto", "I live in Lisbon")
  say different things about one matter: the fact never supports the item.
* **Support.** A fact that does not conflict with an item supports it when they share a content word and
  either come from the same conversation or the fact holds at least half of the item's content words.
* **Superseded by a later fact.** A conflicting fact dated after the item (``effective_date`` after the
  item's day, compared at the coarser of the two precisions).
* **Superseded by a later version.** An item that is not ``current``: a changed custom instruction or
  Claude memory, or a snapshot entry gone from the latest snapshot.
* **Traced.** Custom instructions always are (the user wrote them). Another item is traced when a fact
  supports it (for a snapshot entry, the conversation it is listed in does not count as its own) or,
  for a memory write, when the user message before the write shares two of its content words (or half,
  when that is fewer). A snapshot entry is also traced, and supported as they are, when it is made of
  traced memory writes or earlier snapshot entries: those whose content words are all in it hold every
  one of its own (a write it repeats, or several it merges into one entry).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, Final

from ._ir.rules import categorise

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TRACE_COLUMNS", "add_trace", "category_of", "content_words", "from_memory", "same_statement"]

#: The columns :func:`add_trace` adds.
TRACE_COLUMNS: Final = ("supporting_facts", "traced", "superseded_by")

_WORD: Final = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_STOP: Final = frozenset(
    (
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "so",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "with",
        "as",
        "by",
        "from",
        "into",
        "about",
        "over",
        "under",
        "than",
        "then",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "not",
        "no",
        "yes",
        "very",
        "also",
        "just",
        "currently",
        "now",
        "still",
        "will",
        "would",
        "can",
        "could",
        "should",
        "may",
        "might",
        "must",
        "i",
        "i'm",
        "i've",
        "i'd",
        "i'll",
        "me",
        "my",
        "mine",
        "myself",
        "we",
        "us",
        "our",
        "you",
        "your",
        "user",
        "users",
        "user's",
        "they",
        "them",
        "their",
        "theirs",
        "he",
        "she",
        "him",
        "her",
        "his",
        "who",
        "which",
        "what",
        "when",
        "where",
        "how",
        "there",
        "here",
        "some",
        "any",
        "all",
        "more",
        "most",
        "much",
        "many",
        "such",
        "own",
        "per",
        "via",
        "like",
    )
)
_THIRD_PERSON: Final = re.compile(r"^(?:the\s+)?user(?:'s)?\s+(\w+)", re.IGNORECASE)
_IRREGULAR: Final = {"is": "am", "has": "have", "was": "was", "does": "do", "doesn't": "don't"}
_SUFFIXES: Final = ("ing", "ed", "es", "s", "e")
_NO_SUPERSEDE: Final = frozenset({"instructions"})
_USERS_OWN: Final = frozenset({"about_user", "about_model"})  # custom instructions: the user wrote them
_SWAPPED: Final = 2  # at most this many words differ on each side of a conflict: a changed value, not a new topic
_PROMPT_WORDS: Final = 2  # words a memory write shares with the message before it to be traced by it


def _first_person(sentence: str) -> str:
    """``sentence`` as the user would say it, for the classifier: "User lives in" -> "I live in"."""
    m = _THIRD_PERSON.match(sentence)
    if m is None:
        return sentence
    if m.group(0).lower().endswith("user's " + m.group(1).lower()):
        return "My " + sentence[m.start(1) :]
    verb = m.group(1)
    low = verb.lower()
    if low in _IRREGULAR:
        verb = _IRREGULAR[low]
    elif low.endswith("ies"):
        verb = verb[:-3] + "y"
    elif low.endswith(("shes", "ches", "sses", "xes")):
        verb = verb[:-2]
    elif low.endswith("s") and not low.endswith("ss"):
        verb = verb[:-1]
    return f"I {verb}{sentence[m.end(1) :]}"


def category_of(sentence: str, kind: str) -> str | None:
    """The category of a remembered statement of ``kind``: ``"instructions"`` for how the user wants
    answers, else the zero-LLM classifier's for the statement read in the first person.

    Parameters
    ----------
    sentence
        The statement.
    kind
        The item's kind (:data:`memvelope_tools._memory.KINDS`).

    Returns
    -------
    str or None
        A Facts IR category, or None when no rule supports one.

    Examples
    --------
    >>> category_of("User lives in Lisbon.", "saved")
    'identity'
    """
    if kind == "about_model":
        return "instructions"
    return categorise(_first_person(sentence))


def _stem(word: str) -> str:
    word = word.removesuffix("'s")
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> frozenset[str]:
    """The content words of ``text``, as the matching rules compare them.

    Parameters
    ----------
    text
        Any text.

    Returns
    -------
    frozenset of str
        Lower-cased, function words and words for the user left out, suffixes reduced.

    Examples
    --------
    >>> sorted(content_words("User lives in Lisbon."))
    ['lisbon', 'liv']
    >>> content_words("I live in Lisbon") == content_words("User lives in Lisbon.")
    True
    """
    return frozenset(_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1)


def same_statement(said: str, remembered: str) -> bool:
    """Whether a remembered statement says what the user said: the same content words, once the memory is
    read in the first person ("User likes tea." and "I like tea").

    Parameters
    ----------
    said
        What the user said.
    remembered
        What the provider remembered.

    Returns
    -------
    bool
        True when both have content words and they are the same.

    Raises
    ------
    None

    Examples
    --------
    >>> same_statement("I'm vegetarian.", "User is vegetarian.")
    True
    >>> same_statement("I live in Porto.", "User lives in Lisbon.")
    False
    """
    words = content_words(said)
    return bool(words) and words == content_words(_first_person(remembered))


def from_memory(doc: Any) -> frozenset[int]:
    """The places, in a Facts IR's ``facts``, of the facts it took from the provider's memory (those
    carrying ``memory_kind``): memory cannot be traced by itself, so the trace leaves them out.

    Parameters
    ----------
    doc
        A parsed Facts IR document.

    Returns
    -------
    frozenset of int
        Their ``fact_index`` values.

    Raises
    ------
    None

    Examples
    --------
    >>> sorted(from_memory({"facts": [{"content": "a"}, {"content": "b", "memory_kind": "saved"}]}))
    [1]
    """
    listed = doc.get("facts") if isinstance(doc, dict) else None
    if not isinstance(listed, list):
        return frozenset()
    return frozenset(i for i, f in enumerate(listed) if isinstance(f, dict) and "memory_kind" in f)


def _text(value: Any) -> str | None:
    """A frame cell as a string; None when missing."""
    import pandas as pd

    return None if value is None or value is pd.NA or value is pd.NaT or value != value else str(value)


def _day(value: Any) -> str | None:
    """A timestamp cell as its UTC day; None when missing."""
    import pandas as pd

    return value.strftime("%Y-%m-%d") if isinstance(value, pd.Timestamp) and not pd.isna(value) else None


def _merged(frame: pd.DataFrame, traced: list[bool], supporting: list[list[int]]) -> None:
    """Trace each snapshot entry through what it was made of: the memory writes and earlier snapshot
    entries whose content words are all in it. It is traced, and supported as they are, when those of
    them that are traced hold every one of its content words (one write it repeats, or several it merges)."""
    import pandas as pd

    kinds = [str(k) for k in frame["kind"]]
    words = [content_words(str(t)) for t in frame["text"]]
    firsts = [None if pd.isna(t) else t for t in frame["first_seen"]]
    snapshots = [i for i, kind in enumerate(kinds) if kind == "snapshot"]
    snapshots.sort(key=lambda i: (firsts[i] is None, firsts[i] or pd.Timestamp(0, tz="UTC"), i))
    writes = [i for i, kind in enumerate(kinds) if kind == "saved"]
    done: list[int] = []  # snapshot entries traced so far, oldest first
    for i in snapshots:
        parts = [j for j in (*writes, *done) if words[j] and words[j] <= words[i] and traced[j]]
        if words[i] and parts and frozenset().union(*(words[j] for j in parts)) >= words[i]:
            traced[i] = True
            supporting[i] = sorted(set(supporting[i]).union(*(supporting[j] for j in parts)))
        done.append(i)


def add_trace(frame: pd.DataFrame, facts: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (of :func:`memvelope_tools._memory.memory_frame`) with the columns :data:`TRACE_COLUMNS`.

    Parameters
    ----------
    frame
        The remembered items.
    facts
        The :func:`memvelope_tools.facts_frame` of a Facts IR distilled from the same history.

    Returns
    -------
    pandas.DataFrame
        A copy with ``supporting_facts`` (the ``fact_index`` of each supporting fact, a list),
        ``traced`` (bool) and ``superseded_by`` (what replaced the item, or missing).

    Examples
    --------
    >>> import memvelope_tools as mv                                         # doctest: +SKIP
    >>> facts = mv.distill_structured(mv.convert("export.zip"))              # doctest: +SKIP
    >>> mv.memory_frame("export.zip", facts=facts)[["text", "traced"]]       # doctest: +SKIP
    """
    import pandas as pd

    table = facts
    fact_rows = [
        (
            int(row["fact_index"]),
            content_words(str(row["content"])),
            _text(row["convo_id"]),
            _text(row["effective_date"]),
            _text(row["category"]),
            str(row["content"]),
        )
        for row in table.to_dict("records")
    ]
    supporting: list[list[int]] = []
    traced: list[bool] = []
    superseded: list[str | None] = []
    for item in frame.to_dict("records"):
        words = content_words(str(item["text"]))
        need = max(1, math.ceil(len(words) / 2))
        conv = None if item["kind"] == "snapshot" else _text(item["conversation_id"])  # listed there, not written
        day = _text(item["stated_date"]) if item["kind"] == "snapshot" else None
        day = day or _day(item["ts"])
        category = category_of(str(item["text"]), str(item["kind"]))
        found: list[int] = []
        later: str | None = None
        for index, fwords, fconv, fdate, fcat, fcontent in fact_rows:
            shared = words & fwords
            if not shared:
                continue
            conflict = (
                category is not None
                and category == fcat
                and category not in _NO_SUPERSEDE
                and 0 < len(words - fwords) <= _SWAPPED
                and 0 < len(fwords - words) <= _SWAPPED
            )
            if conflict:
                if later is None and day is not None and fdate is not None and fdate[: len(day)] > day[: len(fdate)]:
                    later = f"a later fact ({fdate}): {fcontent}"
                continue
            if (conv is not None and conv == fconv) or len(shared) >= need:
                found.append(index)
        prompt = _text(item["preceding_user_message"])
        said = prompt is not None and len(words & content_words(prompt)) >= min(_PROMPT_WORDS, need)
        if _text(item["current"]) == "False":
            later = later or (
                "a later snapshot without it" if item["kind"] == "snapshot" else "a later version of this text"
            )
        supporting.append(found)
        own = item["kind"] in _USERS_OWN
        traced.append(bool(found) or said or own)
        superseded.append(later)
    _merged(frame, traced, supporting)
    out = frame.copy()
    out["supporting_facts"] = pd.Series(supporting, index=out.index, dtype=object)
    out["traced"] = pd.Series(traced, index=out.index, dtype="boolean")
    out["superseded_by"] = pd.Series(superseded, index=out.index, dtype="string")
    out.attrs = dict(frame.attrs)
    return out
