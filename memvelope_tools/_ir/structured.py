"""The zero-LLM distiller: deterministic rules that pick the facts users state about themselves.

What counts as a fact (user messages only; assistant text is never read):

* **Custom instructions.** A ChatGPT ``user_editable_context`` message (recognised by its preamble,
  "The user provided the following information about themselves" / "...how they would like you to
  respond") contributes the text inside its fenced blocks only, never the preamble. Every profile
  sentence is about the user (``subject: "self"``); its category comes from :func:`.rules.categorise`, else
  ``null``. Every instruction sentence is ``category: "instructions"``.
* **First-person statements** in ordinary user messages, matched by :data:`.rules.RULES` at the start of a
  sentence (after "Also,", "Btw," and the like): name, work, place, age, relationships, projects,
  preferences, and standing instructions beginning "Always" / "Never" / "From now on".
* **Facts stated inside a request** ("As a nurse, how can I ...?", "My husband is diabetic, so can you
  ...?", "I'm vegetarian - any ideas?"): the clause that states a lasting fact, without the request
  (the rules are in :mod:`.clauses`).

Skipped: questions, hypotheticals ("If I ...", "Imagine ..."), fenced code, quoted lines (``>``) and
quoted passages, one-word sentences, sentences over 400 characters, likes/dislikes of a pronoun or of
the answer itself ("I love this", "I prefer the second option"), and every sentence of a message that asks
to translate, summarise or correct text or that sets up role-play (:func:`.clauses.statable`).

Fields: ``subject`` is ``"self"`` except for a relative named in the sentence ("My sister Ana ...":
subject ``"Ana"``, ``person``; a named pet is ``other``). ``category`` is the rule's, or ``null`` when no
rule supports one. ``content`` is the sentence as written, whitespace collapsed; for a fact inside a
request, the clause that states it ("As a nurse" is written "I'm a nurse"). ``in_text_date`` is
the first date that sentence or clause states (:mod:`.dates`), ``effective_date`` that date or else the
conversation's UTC day (``created_at``, else the first message ``ts``). ``provenance`` follows conformance
B4; a conversation with no timestamp at all cannot form one and is skipped (counted in the stats).
Repeated facts are merged by :func:`.facts.dedup`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from .clauses import MASK, request_facts, statable
from .facts import CONTENT_MAX, DistillStats, conversation_month, dedup, make_fact
from .rules import LEAD, RELATIVES, categorise, classify
from .write import Clock, build_ir

MODE: Final = "structured (zero-LLM)"

_PETS = {"dog", "cat", "puppy", "kitten"}
_RELATIVE_NAME = re.compile(
    rf"^my\s+(?P<rel>{RELATIVES})(?:'s name is|\s+is called|\s+is named|\s+named|"
    r"\s+called|,)?\s+(?P<name>(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)?)",
    re.IGNORECASE,
)
_NOT_NAMES = {"I", "I'm", "Is", "And", "But", "The", "He", "She", "They", "It", "We", "Has", "Was"}
# A sentence ends at . ! or ? followed by a capital, a digit, or chat's lowercase "i".
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?(?:[A-Z0-9]|i\b))")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_PROFILE_MARK = "The user provided the following information about themselves"
_INSTRUCTIONS_MARK = "how they would like you to respond"
_FENCE = re.compile(r"```(.*?)```", re.DOTALL)
# Form labels that only hold other text ("Other Information: I work ..."); real labels such as
# "Preferred name:" or "Role:" are kept, they say what the value is.
CONTAINER_LABEL = re.compile(r"^(?:other information|anything else|more about me)\s*:\s*", re.IGNORECASE)


def sentences(text: str) -> Iterator[str]:
    """The sentences of prose ``text``: fenced code and ``>`` quotes removed, bullets unwrapped."""
    text = re.sub(r"```.*?(?:```|\Z)", "\n", text, flags=re.DOTALL)
    for line in text.splitlines():
        if line.lstrip().startswith(">") or line.startswith("    "):
            continue
        line = _BULLET.sub("", line).strip()
        for part in _SENTENCE_SPLIT.split(line):
            part = " ".join(part.split())
            if part:
                yield part


def _subject(sentence: str, category: str | None) -> tuple[str, str]:
    if category == "relationship":
        m = _RELATIVE_NAME.search(LEAD.sub("", sentence))
        if m and m.group("name").split()[0] not in _NOT_NAMES:
            name = re.sub(r"['’]s$", "", m.group("name"))
            return name, "other" if m.group("rel").lower() in _PETS else "person"
    return "self", "self"


def _custom_instructions(text: str) -> list[tuple[str, str | None]] | None:
    """(sentence, category) pairs of a custom-instructions message, or None if it is not one."""
    if _PROFILE_MARK not in text and _INSTRUCTIONS_MARK not in text:
        return None
    out: list[tuple[str, str | None]] = []
    for section in re.split(rf"(?={re.escape(_PROFILE_MARK)}|The user provided the additional info)", text):
        is_profile = _PROFILE_MARK in section
        for block in _FENCE.findall(section):
            for sentence in sentences(block):
                sentence = CONTAINER_LABEL.sub("", sentence)
                if len(sentence.split()) < 2 or len(sentence) > CONTENT_MAX:
                    continue
                out.append((sentence, categorise(sentence) if is_profile else "instructions"))
    return out


def structured_facts(
    envelope: Mapping[str, Any], *, clock: Clock | None = None, stats: DistillStats | None = None
) -> dict[str, Any]:
    """The Facts IR the rules above give ``envelope`` (a parsed envelope-v0 document), deterministic
    except ``meta.generated_at`` (from ``clock``); ``stats`` learns what was kept and dropped. Raises
    KeyError when ``envelope`` lacks a field of the spec. :func:`memvelope_tools.distill_structured` is the
    public door, which also reads exports and adds the provider's memory."""
    stats = stats if stats is not None else DistillStats()
    provider = str(envelope["meta"]["source_provider"])
    candidates: list[tuple[tuple[int, ...], dict[str, Any]]] = []
    for ci, conv in enumerate(envelope.get("conversations") or []):
        stats.conversations += 1
        month = conversation_month(conv)
        if month is None:
            stats.conversations_undated += 1
            continue
        for mi, msg in enumerate(conv.get("messages") or []):
            if msg.get("role") != "user" or not isinstance(msg.get("text"), str):
                continue
            for si, (content, category, source) in enumerate(_statements(msg["text"])):
                subject, subject_type = _subject(content, category)
                fact = make_fact(
                    subject=subject,
                    subject_type=subject_type,
                    category=category,
                    content=content,
                    source_text=source,
                    conv=conv,
                    provider=provider,
                    month=month,
                )
                candidates.append(((ci, mi, si), fact))
    return build_ir(provider, MODE, dedup(candidates, stats), clock=clock)


def _statements(text: str) -> list[tuple[str, str | None, str]]:
    """(content, category, the words it was read from) of each fact ``text`` states."""
    custom = _custom_instructions(text)
    if custom is not None:
        return [(sentence, category, sentence) for sentence, category in custom]
    body = statable(text)
    if body is None:
        return []
    out: list[tuple[str, str | None, str]] = []
    for sentence in sentences(body):
        if MASK in sentence:
            continue
        clauses = request_facts(sentence)
        if clauses is not None:
            out += [(c.content, c.category, c.source) for c in clauses]
            continue
        category = classify(sentence)
        if category is not None:
            out.append((sentence, category, sentence))
    return out
