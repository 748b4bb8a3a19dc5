"""Facts stated in passing, as a clause of a request, and the messages that state none.

People give the fact the answer depends on inside the request itself: "As a nurse on night shifts, how
can I sleep in the day?", "My husband is diabetic, so can you suggest desserts?", "I'm vegetarian - any
ideas for tonight?". This module finds those clauses for the zero-LLM distiller (:mod:`.structured`):

* **A request** is a sentence that ends with a question mark, or one of whose clauses asks ("can you",
  "please", "suggest", "any ideas", "I need" ...). Its clauses are cut at a semicolon, a spaced dash, "so",
  "because" / "since" / "as" before "I" or "my", a colon before "I" or "my", a comma before "and"/"but",
  and a comma before a question, a request, "I" or "my". A trailing ", please" or ", thanks" is politeness,
  not a request.
* **A fact clause** is one the first-person rules (:data:`.rules.RULES`) classify, other than a standing
  instruction (an "always ..." inside a request is about that request), that also passes the durability
  check of its category (:data:`DURABLE`): what is said in passing is more often a passing state than a
  standing fact, so a relative needs a lasting predicate ("is diabetic", "works as", "lives in", not
  "wants the report by Friday"), a project a thing made over time ("a webshop", not "a function"), a
  job or an identity a role noun. The clause is the fact's content; the request is dropped.
* **"As a <role>, ..."** (also "Being a <role>, ..." and "I, as a <role>, ...") states that the user is
  that role when the rest of the sentence has the user as its subject ("how can I ...", "I need ...",
  "my students ..."), or asks how to pass something on ("As a chemistry teacher, how would you explain
  moles?": the one who will explain it asks); its content is "I'm a <role>". Otherwise "As a <role>, how
  would you ..." or "As a <role>, review ..." asks the assistant to answer in that role, and a role the
  assistant is usually given ("As an expert ...", "As a senior developer ...") states nothing about the user.

Never facts, whatever they say:

* a message asking to translate, summarise, correct, proofread or rephrase text (:func:`statable`): the
  text it gives is someone's words to work on, not the user's account of themself;
* a message setting up role-play ("act as", "pretend", "you are a ...", "let's play");
* the lines from an "Example:", "Prompt:", "Input:" or "Text:" label to the end of the message;
* a sentence holding quoted text (a quoted title of a few words, such as "Dune", is not quoted text);
* a sentence opening hypothetically (:data:`.rules.SKIP`), and a clause holding "if", "would", "wish" ...
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from .facts import CONTENT_MAX
from .rules import BUSINESSES, JOBS, LEAD, RELATIVES, SKIP, classify

__all__ = ["DURABLE", "Clause", "request_facts", "statable"]


class Clause(NamedTuple):
    """A fact found in a request: its content, its category and the words it was read from."""

    content: str
    category: str
    source: str


_I = re.IGNORECASE

# --- messages that state no fact -------------------------------------------------------------------

_TEXT_OBJECT = (
    r"(?:text|paragraph|sentence|sentences|message|e-?mail|mail|letter|essay|post|tweet|bio|cover letter|cv|"
    r"resume|résumé|passage|article|story|speech|caption|description|note|grammar|spelling|wording|"
    r"punctuation|following|below|above)"
)
_TRANSFORM: Final = re.compile(
    r"\b(?:translat(?:e|ing|ion)|summari[sz](?:e|ing)|summary of|tl;?dr|proof-?read(?:ing)?|paraphras(?:e|ing)|"
    r"rephras(?:e|ing)|reword(?:ing)?|spell-?check|grammar[- ]check)\b"
    r"|\bhow (?:do|would|can) (?:you|i|we) say\b"
    r"|\b(?:correct|rewrite|re-write|edit|polish)\s+(?:[\w'-]+\s+){0,3}?(?:" + _TEXT_OBJECT + r"|this|it)\b"
    r"|\b(?:fix|check|improve|shorten|simplify|tidy up|clean up)\s+(?:[\w'-]+\s+){0,3}?" + _TEXT_OBJECT + r"\b",
    _I,
)
_ROLE_PLAY: Final = re.compile(
    r"\bact(?:ing)?\s+(?:as|like)\b|\bpretend(?:ing)?\b|\brole-?play(?:ing)?\b|\bin\s+character\b"
    r"|\bplay(?:ing)?\s+(?:the\s+)?(?:role|part|character)\b|\blet'?s\s+(?:play|pretend|imagine)\b"
    r"|\byou\s+are\s+(?:now\s+)?(?:a|an|my|the)\s|\byou're\s+(?:now\s+)?(?:a|an|my|the)\s"
    r"|\bimagine\s+(?:you|that\s+you|i|that\s+i|we)\b|\bsimulat(?:e|ing)\s+(?:a|an)\b|\bimpersonat"
    r"|\bfrom\s+the\s+perspective\s+of\b|\b(?:speak|respond|answer|reply|write)(?:ing)?\s+as\s+(?:if|a|an)\b",
    _I,
)
_PAYLOAD_LABEL: Final = re.compile(
    r"^[ \t>*#-]*(?:examples?|prompt|input|output|text|sample|template|answer|response|question|q|a)"
    r"\s*\d*\s*:",
    re.IGNORECASE | re.MULTILINE,
)
_QUOTED: Final = re.compile(r'"([^"]*)"|“([^”]*)”|«([^»]*)»|„([^“”]*)[“”]')
#: What a quoted passage is replaced with; a sentence holding it states no fact.
MASK: Final = '"…"'
_TITLE_WORDS = 6


def statable(text: str) -> str | None:
    """The part of a user message whose sentences may state facts about the user.

    Parameters
    ----------
    text
        The message.

    Returns
    -------
    str or None
        The message cut at its first "Example:"-style label, each quoted passage replaced by :data:`MASK`;
        None when no sentence of it may state a fact (a request to translate, summarise or correct text,
        or role-play).

    Raises
    ------
    None

    Examples
    --------
    >>> statable('She said "I live in Paris. I love it." Is that true?')
    'She said "…" Is that true?'
    >>> statable("Pretend I'm a pirate.") is None
    True
    """
    if _TRANSFORM.search(text) or _ROLE_PLAY.search(text):
        return None
    label = _PAYLOAD_LABEL.search(text)
    if label:
        text = text[: label.start()]
    return _QUOTED.sub(_mask, text)


def _mask(m: re.Match[str]) -> str:
    inner = next(g for g in m.groups() if g is not None)
    if len(inner.split()) <= _TITLE_WORDS and not re.search(r"[.!?;:\n]", inner):
        return m.group(0)  # a title or a term, part of the user's own sentence
    return MASK


# --- clauses of a request ---------------------------------------------------------------------------

_FIRST_PERSON = r"(?:i|i'm|i've|i'd|i'll|im|my|we|we're|our)"
_QUESTION = (
    r"(?:can|could|would|will|won't|should|shall|do|does|did|is|are|was|were|what|what's|whats|"
    r"how|how's|which|where|who|whom|whose|when|why|any|anything|is there|are there)"
)
_ASK = (
    r"(?:please|pls|plz|kindly|can you|could you|would you|will you|help|give|suggest|recommend|tell|show|"
    r"list|make|write|explain|create|generate|find|draft|plan|describe|compare|check|fix|review|"
    r"thoughts|ideas|tips|advice|suggestions|recommendations|any (?:ideas|tips|suggestions|advice|"
    r"thoughts|recommendations)|i (?:need|want|would like|am looking for)|i'd like|i'm looking for|"
    r"looking for|need)"
)
_SPLIT: Final = re.compile(
    r"\s*;\s+|\s+[-–—]{1,2}\s+|\s*—\s*|,\s*(?:and\s+)?so\s+"
    rf"|\s+so\s+(?=(?:{_QUESTION}|{_ASK}|{_FIRST_PERSON})\b)"
    rf"|,\s*(?:and|but)\s+(?=(?:{_QUESTION}|{_ASK}|{_FIRST_PERSON})\b)"
    rf"|,\s+(?=(?:{_QUESTION}|{_ASK}|{_FIRST_PERSON})\b)"
    rf"|\s+(?:because|since|as)\s+(?={_FIRST_PERSON}\b)|:\s+(?={_FIRST_PERSON}\b)",
    _I,
)
_ASKING: Final = re.compile(rf"^(?:{_ASK})\b", _I)
_QUESTIONING: Final = re.compile(rf"^(?:{_QUESTION}|{_ASK})\b", _I)
_TAG: Final = re.compile(r",?\s*(?:right|correct|no|yes|ok|okay|isn't it|aren't i|don't i|am i|do i)\s*\?$", _I)
_POLITE: Final = re.compile(r"^(?:please|pls|thanks|thank you|thx|ty|cheers)\W*$", _I)
_CAUSE: Final = re.compile(r"^(?:since|because|as|given that|now that|seeing as|considering(?: that)?)\s+", _I)
_TAIL: Final = re.compile(
    r"(?:,?\s*(?:if (?:that|it|this) (?:helps|matters)|in case (?:that|it|this) (?:helps|matters)|fwiw|"
    r"for context|for reference|btw|by the way|lol|haha|though|too|as well))+\W*$",
    _I,
)
# A clause stating what might be, not what is.
_NOT_SO: Final = re.compile(
    r"\b(?:if|unless|would|wouldn't|wish|were|might|maybe|perhaps|pretend|imagine|suppose|supposedly|"
    r"hypothetically|someday|one day|soon|tomorrow|next (?:week|month|year))\b",
    _I,
)

# --- what lasts, by category -------------------------------------------------------------------------

_CONDITIONS = (
    r"allergic|diabetic|colou?r-?blind|left-handed|right-handed|autistic|dyslexic|neurodivergent|"
    r"vegetarian|vegan|pescatarian|celiac|coeliac|(?:lactose|gluten)[- ]intolerant|deaf|blind|disabled|"
    r"retired|married|divorced|widowed|bilingual|epileptic|asthmatic"
)
_ILLNESSES = (
    r"(?:type\s+[12]\s+)?diabetes|autism|adhd|asthma|epilepsy|dyslexia|(?:celiac|coeliac)(?:\s+disease)?|"
    r"(?:a|an)\s+(?:[\w-]+\s+)?(?:allergy|intolerance|disability)|(?:[\w-]+\s+)?allergies|down syndrome|"
    r"cerebral palsy|arthritis|multiple sclerosis|parkinson's|alzheimer's|dementia|cancer|"
    r"(?:a|an|one|two|three|four|five|six|\d+)\s+(?:\w+\s+)?(?:kids?|children|child|sons?|daughters?|"
    r"dogs?|cats?|grandchildren|grandkids)"
)
#: Nouns that say who someone is: a job, a family role, a belief, a way of living.
ROLE_NOUNS = (
    JOBS + r"|owner|parent|mother|father|mom|mum|dad|grandparent|grandmother|grandfather|grandma|grandpa|"
    r"wife|husband|widow|widower|twin|woman|man|teenager|teen|retiree|pensioner|veteran|immigrant|expat|"
    r"citizen|resident|native|speaker|homeowner|renter|tenant|landlord|christian|muslim|jew|buddhist|"
    r"hindu|atheist|catholic|protestant|introvert|extrovert|runner|cyclist|climber|swimmer|gamer|hobbyist|"
    r"collector|gardener|baker|cook|reader|traveller|traveler|hiker|vegetarian|vegan|pescatarian|diabetic|"
    r"member|volunteer|caregiver|carer|coach|trainer|mentor|tutor|pilot|driver|farmer|mechanic|"
    r"electrician|plumber|carpenter|paramedic|surgeon|dentist|vet|veterinarian|psychologist|psychiatrist|"
    r"social worker|firefighter|police officer|officer|soldier|athlete|dancer|singer|actor|actress|author|"
    r"poet|blogger|youtuber|streamer|podcaster|creator|employee|homemaker|graduate|undergraduate|"
    r"alumn[a-z]*|major|fan|lover|enthusiast|player|maker|builder|sleeper|riser|eater|drinker|smoker|"
    r"non-smoker|mom of \w+|dad of \w+"
)
_PROJECT_NOUNS = (
    r"app|application|website|site|web ?shop|online shop|shop|store|game|book|novel|memoir|thesis|"
    r"dissertation|startup|business|company|platform|product|service|tool|library|framework|plugin|"
    r"extension|bot|chatbot|assistant|podcast|blog|newsletter|channel|course|curriculum|album|film|movie|"
    r"documentary|series|comic|portfolio|saas|api|system|dashboard|crm|erp|engine|compiler|robot|drone|"
    r"house|garden|boat|project|side project|mod|tracker|marketplace|community|network|campaign|cabin|van|"
    r"studio|brand|label|museum|exhibition|collection"
)
_SECTORS = (
    r"industry|sector|field|healthcare|health care|finance|banking|insurance|education|marketing|sales|"
    r"(?-i:IT)|tech|technology|retail|hospitality|government|academia|research|consulting|construction|"
    r"logistics|law|medicine|pharma|biotech|media|publishing|journalism|nonprofit|hospital|school|university|"
    r"bank|startup|company|team|department|lab|clinic|office|factory|warehouse|restaurant|kitchen|shop|"
    r"store|ngo|hr|human resources|accounting|engineering|science|film|music|fashion|real estate|"
    r"agriculture|energy|automotive|aviation|defen[cs]e|military|public sector|private sector"
)
_NOT_IDENTITY = (
    r"Sorry|Not|Just|Still|So|Also|Really|Very|Trying|Getting|Having|Looking|Going|Working|Currently|Now|"
    r"Here|Back|Done|Ready|Fine|Good|Stuck|Confused|Lost|New|Curious|Wondering|Using|Running|Building|"
    r"Making|Writing|Doing|Pretty|Quite|Always|Never|Sure|Afraid|Glad|Happy|Sad|Tired|Busy|Able|Unable"
)
_REL_NAME = r"(?:\s+(?-i:[A-Z])[\w'-]+)?,?"
_LASTING = (
    r"(?:is|'s|are)\s+(?:(?:a|an)\s+(?!(?:bit|little|lot|big|huge|total|complete|mess|pain|nightmare)\b)"
    rf"[\w-]+|\d{{1,3}}(?:\s+(?:years?|months?)\s+old)?(?![%\w])|(?:{_CONDITIONS})\b|(?:originally\s+)?from\b|"
    r"based\s+in\b|called\b|named\b)"
    r"|(?:lives|works|studies|teaches|grew up|was born)\b"
    rf"|(?:runs|owns)\s+(?:a|an|her|his|their)\s+(?:[\w&'-]+\s+){{0,3}}?(?:{BUSINESSES})s?\b"
    r"|(?:loves|likes|hates|prefers|adores|enjoys|can't stand)\b"
    r"(?!\s+(?:it|this|that|these|those|them|you|your|me|the\s+(?:idea|answer|one|first|second)))"
    rf"|has\s+(?:{_ILLNESSES})\b"
    r"|and\s+i\s+(?:live|work|run|own|have)\b"
    r"|'s\s+name\s+is\b"
)

#: category -> the forms a clause of that category must take to be kept as a fact (matched at its start).
DURABLE: Final[dict[str, tuple[re.Pattern[str], ...]]] = {
    cat: tuple(re.compile(rx, _I) for rx in forms)
    for cat, forms in {
        "identity": (
            r"^(?:my name is|my name's|i(?:'m| am) called|people call me)\s+\S",
            r"^i\s+(?:live|lived|grew up)\s+(?:in|on|at|near|with|abroad|outside|between|alone|by|close to)\b",
            r"^i\s+was\s+born\b",
            r"^i\s+(?:moved|relocated)\b",
            r"^i(?:'m| am)\s+(?:originally\s+)?(?:based|located|from)\b",
            r"^i(?:'m| am)\s+\d",
            r"^i\s+speak\b",
            rf"^i(?:'m| am)\s+(?:{_CONDITIONS})\b",
            rf"^i(?:'m| am)\s+(?:a|an)\s+(?:[\w-]+\s+){{0,3}}?(?:{ROLE_NOUNS})s?\b",
            rf"^i(?:'m| am)\s+(?!(?:{_NOT_IDENTITY})\b)(?-i:[A-Z][a-z][\w'-]*)\b",
        ),
        "career": (
            r"^i\s+(?:work|worked|have worked|'ve worked)\s+(?:as|at|for)\b"
            r"(?!\s+(?:the\s+moment|free|myself|you|me|hours|a\s+while|now)\b)",
            rf"^i\s+(?:work|worked|have worked|'ve worked)\s+in\s+(?:the\s+|a\s+|an\s+)?(?:[\w-]+\s+){{0,2}}?"
            rf"(?:{_SECTORS})\b",
            r"^i\s+(?:run|own|founded|co-founded|cofounded|started|sold)\s",
            r"^i\s+(?:started\s+(?:at|working)|joined|left|quit)\s",
            r"^i\s+(?:lead|manage)\s+(?:a|an|the|our|my)\s+(?:[\w-]+\s+){0,3}?(?:team|department|group|lab|"
            r"project|company|business|unit|squad|office|store|shop|restaurant|clinic|school|class)e?s?\b",
            r"^i\s+(?:teach|studied|graduated|retired)\b",
            rf"^i(?:'m| am)\s+(?:currently\s+|now\s+)?(?:a|an|the)\s+(?:[\w-]+\s+){{0,3}}(?:{JOBS})s?\b",
            r"^my\s+(?:job|role|title|job title|day job|profession|employer)\s+is\s+(?:(?:a|an|as|at|in|with)\s"
            r"|(?-i:[A-Z]))",
        ),
        "projects": (
            r"^i(?:'m| am|'ve been| have been)\s+(?:currently\s+)?(?:working on|building|developing|writing|"
            r"making|designing|creating)\s+(?:a|an|my|our|the|some)\s+(?:[\w.&'+#/-]+\s+){0,4}?"
            rf"(?:{_PROJECT_NOUNS})s?\b",
            r"^my\s+(?:own\s+)?(?:project|side project|startup|app|book|novel|thesis|dissertation|website|blog|"
            r"podcast|game|company|business|channel|shop|store)\s+(?:\(?[\w-]+\)?\s+)?(?:is\s+(?:a|an|about|"
            r"called|named|for|built|written|based|on)\b|(?:helps|lets|sells|rents|teaches|tracks|connects|"
            r"makes)\b)",
        ),
        "relationship": (
            rf"^my\s+(?:{RELATIVES}){_REL_NAME}\s+(?:{_LASTING})",
            r"^i\s+have\s",
            r"^i(?:'m| am)\s",
        ),
        "preferences": (r"^",),  # the preference rules already leave out likes of the conversation itself
    }.items()
}

# --- "As a <role>, ..." -------------------------------------------------------------------------------

_AS_ROLE: Final = re.compile(
    r"^(?:as|being)\s+(?P<article>a|an)\s+(?P<role>[^,;:?!()]{2,80}?)(?:\s+myself)?\s*,\s*(?P<rest>\S.*)$", _I
)
_I_AS_ROLE: Final = re.compile(
    r"^(?P<pre>.*?\bi),\s+as\s+(?P<article>a|an)\s+(?P<role>[^,;:?!()]{2,80}?)(?:\s+myself)?,\s*(?P<rest>\S.*)$",
    _I,
)
_BEING: Final = re.compile(
    rf"^being\s+(?P<state>(?:{_CONDITIONS})(?:\s+to\s+[\w\s-]{{2,30}}?)?)\s*,\s*(?P<rest>\S.*)$", _I
)
_QUALIFIER: Final = re.compile(
    r"\s+(?:who|that|with|in|at|for|of|from|on|working|living|based|specializing|specialising|"
    r"raising|caring|studying|teaching)\b",
    _I,
)
_ROLE_HEAD: Final = re.compile(rf"^(?:{ROLE_NOUNS})s?$", _I)
_NATIONALITY: Final = re.compile(r"^(?-i:[A-Z])[a-z]+(?:an|ian|ese|ish|i|ch)$")
_USER_SUBJECT: Final = re.compile(
    rf"^(?:(?:so|then|now|and|but|honestly|also)\s+)?{_FIRST_PERSON}\b"
    r"|^(?:how|what|where|which|when|why|who)\b[^,;?]{0,40}?\b(?:can|could|do|did|should|would|might|may|"
    r"must|shall|will|am|have)\s+(?:i|we)\b"
    r"|^(?:can|could|do|did|should|would|might|may|must|shall|will|am|have)\s+(?:i|we)\b"
    r"|^(?:is|are)\s+(?:it|there)\b[^,;?]{0,60}?\bfor\s+(?:me|us)\b"
    r"|\b(?:my|our)\s+(?:students|pupils|class|classes|kids|children|patients|clients|customers|team|"
    r"employees|staff|readers|listeners|audience|followers|players|athletes|trainees|residents)\b",
    _I,
)
_YOU: Final = re.compile(r"\b(?:you|your|yours|yourself)\b", _I)
#: "As a teacher, how would you explain moles?": how to pass something on, asked by the one who will.
_PASSING_ON: Final = re.compile(
    r"^how\s+(?:would|should|could|do)\s+you\s+(?:explain|teach|introduce|present)\b[^?]*\?$", _I
)
#: Roles a request gives the assistant to play ("As an expert, how would you explain ...").
_PERSONA: Final = re.compile(
    r"\b(?:expert|specialist|consultant|advisor|adviser|professional|assistant|guru|senior|lead|principal|"
    r"copywriter|ai|bot|model)\b",
    _I,
)


def _role_fact(core: str) -> tuple[Clause | None, str] | None:
    """``(the "I'm a <role>" fact or None, the rest of the sentence)`` when ``core`` opens with "As a
    <role>," (or says "I, as a <role>,"); None when it does not."""
    m = _BEING.match(core)
    if m:
        content = f"I'm {m.group('state').strip()}"
        fact = _fact_of(content, source=core[: m.start("rest")].rstrip(" ,"), checked=True)
        return (fact if _USER_SUBJECT.search(m.group("rest")) else None), m.group("rest")
    m = _AS_ROLE.match(core)
    rest = m.group("rest") if m else None
    if m is None:
        m = _I_AS_ROLE.match(core)
        if m is None:
            return None
        rest = f"{m.group('pre')} {m.group('rest')}"
    assert rest is not None
    role = " ".join(m.group("role").split())
    head_part = _QUALIFIER.split(role, maxsplit=1)[0].split()
    if not head_part or len(head_part) > 5 or _YOU.search(role):
        return None, rest
    head = head_part[-1]
    passing_on = _PASSING_ON.match(rest) is not None and _PERSONA.search(role) is None
    if not (_ROLE_HEAD.match(head) or _NATIONALITY.match(head)) or not (_USER_SUBJECT.search(rest) or passing_on):
        return None, rest
    source = core[: m.end("role")] if m.re is _AS_ROLE else f"as {m.group('article')} {role}"
    return _fact_of(f"I'm {m.group('article').lower()} {role}", source=source, checked=True), rest


def request_facts(sentence: str) -> list[Clause] | None:
    """The facts a request states in passing (see the module docstring); None when ``sentence`` is no
    request and opens with no role, so that the rules read it whole as a plain statement.

    Parameters
    ----------
    sentence
        One sentence of a user message, whitespace collapsed.

    Returns
    -------
    list of Clause or None
        Each fact's content (the clause, or "I'm a <role>"), category and source words, in order.

    Raises
    ------
    None

    Examples
    --------
    >>> [c.content for c in request_facts("My husband is diabetic, so can you suggest desserts?")]
    ['My husband is diabetic']
    >>> [c.content for c in request_facts("As a teacher, how would you explain moles?")]
    ["I'm a teacher"]
    >>> request_facts("As an expert, how would you explain moles?")
    []
    >>> request_facts("I live in Porto.") is None
    True
    """
    core = LEAD.sub("", sentence).strip()
    if SKIP.match(core):
        return []
    found: list[Clause] = []
    role = _role_fact(core)
    if role is not None:
        if role[0] is not None:
            found.append(role[0])
        core = role[1]
    parts = [p for p in (_strip(p) for p in _SPLIT.split(core)) if p and not _POLITE.match(p)]
    asking = core.rstrip().endswith("?") or any(_ASKING.match(LEAD.sub("", p)) for p in parts)
    if role is None and (not asking or len(parts) < 2):
        return [] if asking else None
    for i, part in enumerate(parts):
        if i and not _QUESTIONING.match(part) and not _TAG.search(part):
            part = part.rstrip("?").rstrip()  # the request's question mark, after a clause that asks nothing
        fact = _fact_of(part, source=part)
        if fact is not None and fact not in found:
            found.append(fact)
    return found


def _strip(part: str) -> str:
    part = _CAUSE.sub("", LEAD.sub("", part.strip()))
    return _TAIL.sub("", part).strip(" ,;:-–—.!")


def _fact_of(content: str, *, source: str, checked: bool = False) -> Clause | None:
    """``content`` as a fact when a rule classifies it and (unless ``checked``) it is durable."""
    content = content.strip()
    if content.endswith("?") or len(content) > CONTENT_MAX or MASK in content or _NOT_SO.search(content):
        return None
    category = classify(content)
    if category is None or category == "instructions":
        return None
    if not checked and not any(rx.search(content) for rx in DURABLE[category]):
        return None
    return Clause(content, category, source)
