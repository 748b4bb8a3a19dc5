"""The zero-LLM distiller: deterministic rules that pick the facts users state about themselves.

What counts as a fact (user messages only; assistant text is never read):

* **Custom instructions.** A ChatGPT ``user_editable_context`` message (recognised by its preamble,
  "The user provided the following information about themselves" / "...how they would like you to
  respond") contributes the text inside its fenced blocks only, never the preamble. Every profile
  sentence is about the user (``subject: "self"``); its category comes from :func:`categorise`, else
  ``null``. Every instruction sentence is ``category: "instructions"``.
* **First-person statements** in ordinary user messages, matched by :data:`RULES` at the start of a
  sentence (after "Also,", "Btw," and the like): name, work, place, age, relationships, projects,
  preferences, and standing instructions beginning "Always" / "Never" / "From now on".

Skipped: questions, hypotheticals ("If I ...", "Imagine ..."), fenced code, quoted lines (``>``),
one-word sentences, sentences over 400 characters, and likes/dislikes of a pronoun ("I love this").

Fields: ``subject`` is ``"self"`` except for a relative named in the sentence ("My sister Ana ...":
subject ``"Ana"``, ``person``; a named pet is ``other``). ``category`` is the rule's, or ``null`` when no
rule supports one. ``content`` is the sentence as written, whitespace collapsed. ``in_text_date`` is
the first date the sentence states (:mod:`.dates`), ``effective_date`` that date or else the
conversation's UTC day (``created_at``, else the first message ``ts``). ``provenance`` follows conformance
B4; a conversation with no timestamp at all cannot form one and is skipped (counted in the stats).
Repeated facts are merged by :func:`.facts.dedup`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from .facts import CONTENT_MAX, DistillStats, conversation_month, dedup, make_fact
from .write import Clock, build_ir

MODE: Final = "structured (zero-LLM)"

_RELATIVES = (
    r"wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|son|daughter|kid|child|mother|mom|"
    r"mum|father|dad|brother|sister|grandmother|grandfather|grandma|grandpa|aunt|uncle|cousin|"
    r"boss|manager|co-?founder|best friend|friend|colleague|dog|cat|puppy|kitten"
)
_PETS = {"dog", "cat", "puppy", "kitten"}
_JOBS = (
    r"engineer|developer|programmer|scientist|designer|manager|teacher|professor|lecturer|nurse|"
    r"doctor|physician|student|researcher|consultant|founder|ceo|cto|lawyer|analyst|writer|"
    r"journalist|architect|accountant|editor|product owner|freelancer|contractor|entrepreneur|"
    r"photographer|translator|pharmacist|therapist|chef|artist|musician|economist|statistician|"
    r"data \w+|phd|postdoc|intern|librarian|marketer|recruiter|sales\w*"
)
_PRONOUN_OBJECT = r"(?!\s+(?:it|this|that|these|those|them|you|your|yours|him|her)\b)"

#: (category, pattern) tried in order at the start of a sentence; the first match decides.
RULES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (cat, re.compile(rx, re.IGNORECASE))
    for cat, rx in (
        ("instructions", r"^(?:please\s+)?(?:always|never)\b(?!\s+mind\b)"),
        (
            "instructions",
            r"^(?:from now on|going forward|in (?:all|every|future) (?:answers|replies|"
            r"responses))\b",
        ),
        ("instructions", r"^i(?:\s+(?:want|need)|'d like|\s+would like)\s+you\s+to\s+(?:always|never)\b"),
        ("identity", r"^(?:my name is|my name's|i(?:'m| am) called|people call me|call me)\s+\S"),
        ("relationship", rf"^my\s+(?:{_RELATIVES})\b(?!['’]s\b)"),
        (
            "relationship",
            rf"^i\s+have\s+(?:a|an|one|two|three|four|five|\d+)\s+(?:\w+\s+)?(?:{_RELATIVES}|"
            r"kids|children|sons|daughters|brothers|sisters|dogs|cats)\b",
        ),
        (
            "relationship",
            r"^i(?:'m| am)\s+(?:married|engaged|divorced|widowed|a (?:mom|mother|dad|father|"
            r"parent|single parent))\b",
        ),
        ("career", r"^i\s+(?:work|worked|have worked|'ve worked)\s+(?:as|at|for|in|on)\b"),
        ("career", r"^i\s+(?:run|own|founded|co-founded|cofounded|started|sold)\s+(?:a|an|my|our|the)\s"),
        ("career", r"^i\s+(?:started|joined|left|quit)\s+(?:at\s+|working\s+(?:at|for)\s+)?(?-i:[A-Z])"),
        ("career", r"^i\s+(?:lead|manage|teach|studied|graduated|retired)\b"),
        (
            "career",
            rf"^i(?:'m| am)\s+(?:currently\s+|now\s+)?(?:a|an|the)\s+(?:[\w-]+\s+){{0,3}}"
            rf"(?:{_JOBS})s?\b",
        ),
        ("career", r"^my\s+(?:job|role|title|employer|day job|profession|career)\b"),
        (
            "projects",
            r"^i(?:'m| am|'ve been| have been)\s+(?:currently\s+)?(?:working on|building|developing|"
            r"writing|making|designing|creating)\s+(?:a|an|my|our|the|some)\b",
        ),
        (
            "projects",
            r"^my\s+(?:project|side project|startup|app|book|thesis|website|blog|podcast|game|"
            r"company|business)\b",
        ),
        (
            "preferences",
            rf"^i\s+(?:really\s+|absolutely\s+|just\s+|generally\s+|usually\s+)?"
            r"(?:like|love|enjoy|prefer|hate|dislike|adore|can't stand|cannot stand)"
            rf"{_PRONOUN_OBJECT}\b",
        ),
        ("preferences", r"^i\s+(?:don't|do not|never)\s+(?:like|enjoy|eat|drink|use)\b"),
        (
            "preferences",
            r"^i(?:'m| am)\s+(?:a\s+(?:big\s+|huge\s+)?fan of|not a fan of|into|obsessed with|"
            r"vegetarian|vegan|pescatarian)\b",
        ),
        ("preferences", r"^my\s+favou?rite\b"),
        ("identity", r"^i\s+(?:live|lived|grew up|was born|moved|relocated)\b"),
        ("identity", r"^i(?:'m| am)\s+(?:originally\s+)?(?:based|located|from)\b"),
        ("identity", r"^i(?:'m| am)\s+\d{1,3}(?:\s+years?\s+old)?\b"),
        ("identity", r"^i\s+speak\b"),
        (
            "identity",
            r"^i(?:'m| am)\s+(?:allergic|diabetic|colou?r-?blind|left-handed|right-handed|"
            r"autistic|dyslexic|neurodivergent)\b",
        ),
        ("identity", r"^i(?:'m| am)\s+(?:a|an)\s+(?!(?:bit|little|lot|big|huge|total|complete)\b)\w+"),
        ("identity", r"^i(?:'m| am)\s+(?-i:[A-Z])[\w'-]+\b"),
    )
)

#: Keyword classifier for custom-instruction profile text that no rule above matches.
_KEYWORDS: Final = (
    ("relationship", re.compile(rf"\b(?:{_RELATIVES}|married|kids|children)\b", re.IGNORECASE)),
    ("career", re.compile(rf"\b(?:work|job|career|occupation|role|employer|company|{_JOBS})s?\b", re.IGNORECASE)),
    ("projects", re.compile(r"\b(?:project|side project|startup|building|thesis)\b", re.IGNORECASE)),
    (
        "preferences",
        re.compile(r"\b(?:like|love|enjoy|prefer|favou?rite|hate|hobby|hobbies|interests?)\b", re.IGNORECASE),
    ),
    (
        "identity",
        re.compile(
            r"\b(?:name|live|living|based|born|age|years old|pronouns|nationality|"
            r"speak|languages?|fluent|native)\b",
            re.IGNORECASE,
        ),
    ),
)

_LEAD = re.compile(
    r"^(?:(?:also|and|but|so|well|oh|ok|okay|btw|by the way|fyi|actually|honestly|hi|hey|"
    r"hello|anyway|plus|just so you know)\b[,!:]?\s+)+",
    re.IGNORECASE,
)
_SKIP = re.compile(
    r"^(?:if|when|whenever|what if|suppose|imagine|pretend|let's say|assume|assuming|"
    r"hypothetically|in a story)\b",
    re.IGNORECASE,
)
_RELATIVE_NAME = re.compile(
    rf"^my\s+(?P<rel>{_RELATIVES})(?:'s name is|\s+is called|\s+is named|\s+named|"
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
_CONTAINER_LABEL = re.compile(r"^(?:other information|anything else|more about me)\s*:\s*", re.IGNORECASE)


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


def categorise(sentence: str) -> str | None:
    """The category a first-person rule gives ``sentence``, else the first keyword class, else None."""
    return classify(sentence) or next((cat for cat, rx in _KEYWORDS if rx.search(sentence)), None)


def classify(sentence: str) -> str | None:
    """The category of the first rule in :data:`RULES` matching ``sentence``; None when none does
    or the sentence is a question, hypothetical, or too short/long to be a fact."""
    core = _LEAD.sub("", sentence)
    if not _usable(core):
        return None
    return next((cat for cat, rx in RULES if rx.search(core)), None)


def _usable(sentence: str) -> bool:
    return (
        len(sentence.split()) >= 2
        and len(sentence) <= CONTENT_MAX
        and not sentence.rstrip().endswith("?")
        and not _SKIP.search(sentence)
    )


def _subject(sentence: str, category: str | None) -> tuple[str, str]:
    if category == "relationship":
        m = _RELATIVE_NAME.search(_LEAD.sub("", sentence))
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
                sentence = _CONTAINER_LABEL.sub("", sentence)
                if len(sentence.split()) < 2 or len(sentence) > CONTENT_MAX:
                    continue
                out.append((sentence, categorise(sentence) if is_profile else "instructions"))
    return out


def distill_structured(
    envelope: Mapping[str, Any], *, clock: Clock | None = None, stats: DistillStats | None = None
) -> dict[str, Any]:
    """Distil ``envelope`` into a Facts IR document with the rules above; no model, deterministic
    except ``meta.generated_at`` (from ``clock``).

    Parameters
    ----------
    envelope
        The envelope to distil.
    clock
        Gives ``meta.generated_at`` (default: now, UTC).
    stats
        A :class:`~memvelope_tools._ir.DistillStats` to learn what was kept and dropped.

    Returns
    -------
    dict
        The ``memvelope-ir-v0`` document.

    Raises
    ------
    KeyError
        ``envelope`` lacks a field of the spec (check it with :func:`memvelope_tools.read` first).

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> ir = mv.distill_structured(mv.convert(mv.sample_path("claude")))
    >>> ir["meta"]["format"]
    'memvelope-ir-v0'
    """
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
            for si, (sentence, category) in enumerate(_statements(msg["text"])):
                subject, subject_type = _subject(sentence, category)
                fact = make_fact(
                    subject=subject,
                    subject_type=subject_type,
                    category=category,
                    content=sentence,
                    source_text=sentence,
                    conv=conv,
                    provider=provider,
                    month=month,
                )
                candidates.append(((ci, mi, si), fact))
    return build_ir(provider, MODE, dedup(candidates, stats), clock=clock)


def _statements(text: str) -> list[tuple[str, str | None]]:
    custom = _custom_instructions(text)
    if custom is not None:
        return custom
    out: list[tuple[str, str | None]] = []
    for sentence in sentences(text):
        category = classify(sentence)
        if category is not None:
            out.append((sentence, category))
    return out
