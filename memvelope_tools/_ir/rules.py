"""The first-person rules of the zero-LLM distiller: which category a sentence the user says about
themselves belongs to (:func:`classify`, :func:`categorise`), shared by the distiller
(:mod:`.structured`) and the memory trace, which reads remembered statements in the first person."""

from __future__ import annotations

import re
from typing import Final

from .facts import CONTENT_MAX

__all__ = ["BUSINESSES", "JOBS", "LEAD", "RELATIVES", "RULES", "SKIP", "TECH", "categorise", "classify"]

RELATIVES = (
    r"wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|son|daughter|kid|child|mother|mom|"
    r"mum|father|dad|brother|sister|grandmother|grandfather|grandma|grandpa|aunt|uncle|cousin|"
    r"boss|manager|co-?founder|best friend|friend|colleague|dog|cat|puppy|kitten"
)
JOBS = (
    r"engineer|developer|programmer|scientist|designer|manager|teacher|professor|lecturer|nurse|"
    r"doctor|physician|student|researcher|consultant|founder|ceo|cto|lawyer|analyst|writer|"
    r"journalist|architect|accountant|editor|product owner|freelancer|contractor|entrepreneur|"
    r"photographer|translator|pharmacist|therapist|chef|artist|musician|economist|statistician|"
    r"data \w+|phd|postdoc|intern|librarian|marketer|recruiter|sales\w*"
)
#: What a business someone runs, owns, founded or sold is called.
BUSINESSES = (
    r"business|company|startup|start-up|shop|store|bakery|restaurant|caf[eé]|bar|pub|agency|firm|"
    r"practice|clinic|studio|consultancy|nonprofit|non-profit|charity|blog|podcast|channel|newsletter|"
    r"farm|salon|gym|school|brand|label|franchise|hotel|b&b|hostel|brewery|winery|workshop|garage|"
    r"lab|team|department|website|online shop|webshop|e-?commerce \w+|marketplace|platform|app"
)
#: Programs and tools a sentence names as something used or moved to, not as a place or an employer.
TECH = (
    r"python|react|vue|angular|django|flask|rails|ruby|java|kotlin|swift|rust|go|golang|typescript|"
    r"javascript|node|aws|azure|gcp|linux|windows|mac|macos|ubuntu|debian|docker|kubernetes|postgres|"
    r"postgresql|mysql|sqlite|mongo|mongodb|redis|git|github|gitlab|vs ?code|vim|emacs|excel|notion|"
    r"slack|teams|zoom|chrome|firefox|safari|android|ios|iphone|chatgpt|claude|gpt-?\d\w*|copilot"
)
# What a like, a dislike or a "use" points at when it is about the conversation, not a standing taste.
_TRANSIENT_OBJECT = (
    r"(?!\s+(?:it|this|that|these|those|them|you|your|yours|him|her|both|either|neither|option|"
    r"version|number|how|what|when|where|the\s+(?:way|first|second|third|fourth|last|other|previous|next|"
    r"above|below|former|latter|latest|new|original|current|updated|revised|shorter|longer|idea|answer|"
    r"response|reply|suggestion|suggestions|version|option|options|one|ones|solution|approach|code|"
    r"example|result|results|output|list|draft|edit|change|changes|plan|design|layout|title|name|format|"
    r"style|tone)|a\s+lot)\b)"
)
# Things made in one sitting (a function, an email): "I'm writing a function" is a task, not a project.
_TASK_OBJECT = (
    r"(?!(?:[\w-]+\s+){0,2}(?:function|method|class|script|query|regex|regexp|loop|test|tests|unit test|"
    r"docker image|dockerfile|container|migration|component|prompt|email|e-mail|message|letter|post|"
    r"tweet|comment|reply|response|commit|pull request|formula|macro|table|column|cell|list|cake|"
    r"meal|dinner|lunch|breakfast|request|program|snippet|command|page|form|chart|graph|plot)s?\b)"
)

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
        (
            "career",
            rf"^i\s+(?:run|own|founded|co-founded|cofounded|started|sold)\s+(?:a|an|my|our|the)\s+"
            rf"(?:[\w&'-]+\s+){{0,3}}?(?:{BUSINESSES})s?\b",
        ),
        (
            "career",
            rf"^i\s+(?:started\s+(?:at|working\s+(?:at|for))\s+|joined\s+|left\s+|quit\s+)"
            rf"(?!(?:{TECH})\b)(?-i:[A-Z])",
        ),
        ("career", r"^i\s+(?:lead|manage|teach)\b(?!\s+(?:to|myself|yourself|you|me|it|this|that)\b)"),
        (
            "career",
            r"^i\s+(?:studied|graduated|retired)\b"
            r"(?!\s+(?:the|this|that|these|those|it|them|your|my|his|her|how|what|why|up|on)\b)",
        ),
        (
            "career",
            rf"^i(?:'m| am)\s+(?:currently\s+|now\s+)?(?:a|an|the)\s+(?:[\w-]+\s+){{0,3}}"
            rf"(?:{JOBS})s?\b",
        ),
        ("career", r"^my\s+(?:job|role|title|employer|day job|profession|career)\b"),
        (
            "projects",
            r"^i(?:'m| am|'ve been| have been)\s+(?:currently\s+)?(?:working on|building|developing|"
            rf"writing|making|designing|creating)\s+(?:a|an|my|our|the|some)\s+{_TASK_OBJECT}",
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
            rf"{_TRANSIENT_OBJECT}\b",
        ),
        ("preferences", rf"^i\s+(?:don't|do not|never)\s+(?:like|enjoy|eat|drink|use){_TRANSIENT_OBJECT}\b"),
        (
            "preferences",
            r"^i(?:'m| am)\s+(?:a\s+(?:big\s+|huge\s+)?fan of|not a fan of|into|obsessed with|"
            r"(?:a\s+)?(?:vegetarian|vegan|pescatarian))\b",
        ),
        ("preferences", r"^my\s+favou?rite\b"),
        ("identity", r"^i\s+(?:live|lived|grew up|was born)\b"),
        (
            "identity",
            r"^i\s+(?:moved|relocated)\s+(?:(?:back\s+)?(?:to|from)\s+(?:the\s+)?"
            rf"(?!(?:{TECH})\b)(?-i:[A-Z])[\w-]*+(?!\s*\d)|abroad\b|here\b|house\b|countries\b|cities\b)",
        ),
        ("identity", r"^i(?:'m| am)\s+(?:originally\s+)?(?:based|located|from)\b"),
        ("identity", r"^i(?:'m| am)\s+\d{1,3}(?:\s+(?:years?\s+old|y/?o)\b|(?=\s*(?:[,.;!)]|and\b|$)))"),
        (
            "identity",
            r"^i\s+speak\s+(?:(?:fluent|native|basic|some|a little|a bit of|conversational|good|decent|"
            r"only)\s+)?(?-i:[A-Z])",
        ),
        (
            "identity",
            r"^i(?:'m| am)\s+(?:allergic|diabetic|colou?r-?blind|left-handed|right-handed|"
            r"autistic|dyslexic|neurodivergent|(?:lactose|gluten)[- ]intolerant|celiac|coeliac|deaf|"
            r"epileptic|asthmatic)\b",
        ),
        ("identity", r"^i(?:'m| am)\s+(?:a|an)\s+(?!(?:bit|little|lot|big|huge|total|complete)\b)\w+"),
        ("identity", r"^i(?:'m| am)\s+(?-i:[A-Z])[\w'-]+\b"),
    )
)

#: Keyword classifier for custom-instruction profile text that no rule above matches.
_KEYWORDS: Final = (
    ("relationship", re.compile(rf"\b(?:{RELATIVES}|married|kids|children)\b", re.IGNORECASE)),
    ("career", re.compile(rf"\b(?:work|job|career|occupation|role|employer|company|{JOBS})s?\b", re.IGNORECASE)),
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
#: A sentence opening with one of these is hypothetical or make-believe: none of it is a fact.
SKIP = re.compile(
    r"^(?:if|when|whenever|what if|suppose|supposing|imagine|pretend|let's say|let us say|say|assume|"
    r"assuming|hypothetically|theoretically|in theory|in a story|as if|picture)\b",
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
        and not SKIP.search(sentence)
    )
