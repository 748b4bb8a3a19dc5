"""The first-person rules of the zero-LLM distiller: which category a sentence the user says about
themselves belongs to (:func:`classify`, :func:`categorise`), shared by the distiller
(:mod:`.structured`) and the memory trace, which reads remembered statements in the first person."""

from __future__ import annotations

import re
from typing import Final

from .facts import CONTENT_MAX

__all__ = ["LEAD", "RELATIVES", "RULES", "categorise", "classify"]

RELATIVES = (
    r"wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|son|daughter|kid|child|mother|mom|"
    r"mum|father|dad|brother|sister|grandmother|grandfather|grandma|grandpa|aunt|uncle|cousin|"
    r"boss|manager|co-?founder|best friend|friend|colleague|dog|cat|puppy|kitten"
)
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
        ("relationship", rf"^my\s+(?:{RELATIVES})\b(?!['’]s\b)"),
        (
            "relationship",
            rf"^i\s+have\s+(?:a|an|one|two|three|four|five|\d+)\s+(?:\w+\s+)?(?:{RELATIVES}|"
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
    ("relationship", re.compile(rf"\b(?:{RELATIVES}|married|kids|children)\b", re.IGNORECASE)),
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

LEAD = re.compile(
    r"^(?:(?:also|and|but|so|well|oh|ok|okay|btw|by the way|fyi|actually|honestly|hi|hey|"
    r"hello|anyway|plus|just so you know)\b[,!:]?\s+)+",
    re.IGNORECASE,
)
_SKIP = re.compile(
    r"^(?:if|when|whenever|what if|suppose|imagine|pretend|let's say|assume|assuming|"
    r"hypothetically|in a story)\b",
    re.IGNORECASE,
)


def categorise(sentence: str) -> str | None:
    """The category a first-person rule gives ``sentence``, else the first keyword class, else None."""
    return classify(sentence) or next((cat for cat, rx in _KEYWORDS if rx.search(sentence)), None)


def classify(sentence: str) -> str | None:
    """The category of the first rule in :data:`RULES` matching ``sentence``; None when none does
    or the sentence is a question, hypothetical, or too short/long to be a fact."""
    core = LEAD.sub("", sentence)
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
