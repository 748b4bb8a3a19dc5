"""Facts the zero-LLM distiller finds inside requests, and what it must never take for a fact.

Each case is one user message written for this test; the expected facts are read off the rules in
memvelope_tools/_ir/clauses.py (the clause that states the fact, "As a <role>" written "I'm a <role>").
"""

from __future__ import annotations

import pytest

from memvelope_tools._ir import distill_structured
from memvelope_tools._ir.clauses import request_facts, statable
from memvelope_tools._validate import check_ir_against_envelope, validate


def envelope(*texts: str) -> dict:
    return {
        "memvelope": "envelope-v0",
        "meta": {"source_provider": "chatgpt", "conversation_count": 1, "message_count": len(texts)},
        "conversations": [
            {
                "id": "c1",
                "title": "",
                "created_at": "2024-05-06T10:00:00.000Z",
                "updated_at": None,
                "messages": [
                    {"id": f"m{i + 1}", "role": "user", "ts": None, "text": text} for i, text in enumerate(texts)
                ],
            }
        ],
    }


def facts(text: str) -> list[tuple[str, str, str]]:
    doc = distill_structured(envelope(text))
    return [(f["category"], f["content"], f["subject"]) for f in doc["facts"]]


# (message, [(category, content, subject)])
FOUND = [
    # "As a <role>, ..." with the user as the subject of the rest
    (
        "As a high school chemistry teacher, how can I explain moles?",
        [("career", "I'm a high school chemistry teacher", "self")],
    ),
    (
        "As a high school chemistry teacher, how would you explain moles?",
        [("career", "I'm a high school chemistry teacher", "self")],
    ),
    (
        "As a high school chemistry teacher, how would you explain moles to my students?",
        [("career", "I'm a high school chemistry teacher", "self")],
    ),
    (
        "As a parent of two toddlers, what should I pack for a flight?",
        [("relationship", "I'm a parent of two toddlers", "self")],
    ),
    (
        "As a small business owner, what accounting software do I need?",
        [("identity", "I'm a small business owner", "self")],
    ),
    (
        "As a non-native speaker, how can I improve my pronunciation?",
        [("identity", "I'm a non-native speaker", "self")],
    ),
    (
        "As an American living in Lisbon, do I need to file taxes in both countries?",
        [("identity", "I'm an American living in Lisbon", "self")],
    ),
    ("As a Python developer, I need to learn Rust; where do I start?", [("career", "I'm a Python developer", "self")]),
    ("How can I, as a nurse, stay awake on a night shift?", [("career", "I'm a nurse", "self")]),
    ("I, as a teacher, need ideas for a rainy day lesson.", [("career", "I'm a teacher", "self")]),
    ("Being vegetarian, what can I eat in Rome?", [("preferences", "I'm vegetarian", "self")]),
    ("Being allergic to cats, which dog breeds should I look at?", [("identity", "I'm allergic to cats", "self")]),
    # before "so"
    (
        "My husband is diabetic, so can you suggest desserts for his birthday?",
        [("relationship", "My husband is diabetic", "self")],
    ),
    (
        "My sister Ana is a lawyer, so what should I ask her about my lease?",
        [("relationship", "My sister Ana is a lawyer", "Ana")],
    ),
    (
        "I run a small bakery in Porto, so how should I price my sourdough?",
        [("career", "I run a small bakery in Porto", "self")],
    ),
    ("I'm Dutch, so do I need a visa for Canada?", [("identity", "I'm Dutch", "self")]),
    ("I'm left-handed so which guitar should I buy?", [("identity", "I'm left-handed", "self")]),
    ("I'm married, so do I file jointly?", [("relationship", "I'm married", "self")]),
    ("I don't eat pork, so please adapt this recipe.", [("preferences", "I don't eat pork", "self")]),
    ("I prefer short answers, so can you keep it brief?", [("preferences", "I prefer short answers", "self")]),
    (
        "My brother Tom runs a bike repair shop, so how would I set up bookings for him?",
        [("relationship", "My brother Tom runs a bike repair shop", "Tom")],
    ),
    (
        "My startup sells refurbished laptops, so which marketplaces should we list on?",
        [("projects", "My startup sells refurbished laptops", "self")],
    ),
    # in a sentence that ends with a question
    ("I have two kids, what are good board games for ages 5 and 8?", [("relationship", "I have two kids", "self")]),
    ("I'm 34, is it too late to learn the piano?", [("identity", "I'm 34", "self")]),
    ("My name is Inês, can you write a short bio for me?", [("identity", "My name is Inês", "self")]),
    ("Hi! I live in Toronto, where can I see the northern lights?", [("identity", "I live in Toronto", "self")]),
    (
        "I speak French and Spanish, which language should I learn next?",
        [("identity", "I speak French and Spanish", "self")],
    ),
    (
        "I'm a big fan of Tolkien, can you recommend similar authors?",
        [("preferences", "I'm a big fan of Tolkien", "self")],
    ),
    (
        "I'm a software engineer at a bank, how should I prepare for a system design interview?",
        [("career", "I'm a software engineer at a bank", "self")],
    ),
    ("My daughter studies law, what laptop should she get?", [("relationship", "My daughter studies law", "self")]),
    (
        "I love hiking in the mountains, where should I go in Portugal?",
        [("preferences", "I love hiking in the mountains", "self")],
    ),
    ("I'm a mom of three, how can I find time to exercise?", [("relationship", "I'm a mom of three", "self")]),
    (
        "My wife works at a hospital, any ideas for a gift for her night shifts?",
        [("relationship", "My wife works at a hospital", "self")],
    ),
    ('My favourite book is "Dune", any similar ones?', [("preferences", 'My favourite book is "Dune"', "self")]),
    (
        "Quick question: my partner is vegan, what can I cook for our anniversary?",
        [("relationship", "my partner is vegan", "self")],
    ),
    ("I'm a nurse, I work nights, what shoes should I buy?", [("career", "I'm a nurse", "self")]),
    # after a semicolon
    (
        "I'm a nurse on night shifts; how can I sleep during the day?",
        [("career", "I'm a nurse on night shifts", "self")],
    ),
    (
        "I moved to Lisbon last year; where can I learn Portuguese?",
        [("identity", "I moved to Lisbon last year", "self")],
    ),
    (
        "My thesis is about coral bleaching; which journals should I target?",
        [("projects", "My thesis is about coral bleaching", "self")],
    ),
    (
        "I've been developing a budgeting app for a year; how do I get my first users?",
        [("projects", "I've been developing a budgeting app for a year", "self")],
    ),
    # after or before a dash
    ("I'm vegetarian - any ideas for dinner tonight?", [("preferences", "I'm vegetarian", "self")]),
    (
        "My wife is allergic to nuts — can you check this recipe?",
        [("relationship", "My wife is allergic to nuts", "self")],
    ),
    (
        "I'm writing a novel about a lighthouse keeper – how do I outline it?",
        [("projects", "I'm writing a novel about a lighthouse keeper", "self")],
    ),
    (
        "I'm the founder of a small design agency -- how should I price logo work?",
        [("career", "I'm the founder of a small design agency", "self")],
    ),
    (
        "Can you suggest a birthday gift - my dad is a retired pilot.",
        [("relationship", "my dad is a retired pilot", "self")],
    ),
    # after "since", "because", "as"
    ("Since I live in Berlin, which neighbourhoods are good for families?", [("identity", "I live in Berlin", "self")]),
    (
        "Because my son is autistic, how do I prepare him for a new school?",
        [("relationship", "my son is autistic", "self")],
    ),
    ("As I'm diabetic, can you suggest snacks for a long hike?", [("identity", "I'm diabetic", "self")]),
    ("Can you recommend a quiet hotel because I'm a light sleeper?", [("identity", "I'm a light sleeper", "self")]),
    # a plain statement beside a request, and two facts in one request
    (
        "I'm building a Django webshop for my brother's bike repair business. How should I model repairs?",
        [("projects", "I'm building a Django webshop for my brother's bike repair business.", "self")],
    ),
    (
        "I live in Oslo and I work as a nurse; can you suggest a warm coat, as I cycle to work?",
        [("identity", "I live in Oslo and I work as a nurse", "self")],
    ),
    (
        "I'm lactose intolerant so I don't drink milk, is my calcium going to be a problem?",
        [("identity", "I'm lactose intolerant", "self"), ("preferences", "I don't drink milk", "self")],
    ),
    (
        "I grew up in Scotland, but I live in London now - which accent do I have?",
        [("identity", "I grew up in Scotland", "self"), ("identity", "I live in London now", "self")],
    ),
]


@pytest.mark.parametrize(("text", "expected"), FOUND, ids=[t for t, _ in FOUND])
def test_fact_inside_a_request(text: str, expected: list[tuple[str, str, str]]) -> None:
    assert facts(text) == expected


NOT_FACTS = [
    # the assistant is asked to take the role: nothing is said about the user
    "As an expert chemist, how would you explain moles?",
    "As a senior teacher, how would you explain moles?",
    "As a chemistry teacher, what do you think of moles?",
    "As a senior developer, review my code.",
    "As a senior developer, what do you think of my code?",
    "As a result, how do I fix this?",
    "As a user, how do I reset my password?",
    "As a beginner, how do I learn Python?",
    # transient states, tasks and events
    "I'm getting a KeyError, how do I fix it?",
    "I'm trying to install numpy, but it fails - any ideas?",
    "I'm writing a function that parses dates, how do I handle time zones?",
    "I'm working on a bug in my code, can you help?",
    "My app crashes on startup, what should I check?",
    "My code throws an error, why?",
    "My boss wants the report by Friday, so can you help me draft it?",
    "My dog ate chocolate, what should I do?",
    "My son has a fever, what should I do?",
    "I moved the file to src, now I get an import error - why?",
    "I run a script every night, but it fails; why?",
    "I started Docker, but the container exits, any idea?",
    "I studied the docs, but how do I configure logging?",
    "I manage to get it working, but how do I test it?",
    "I like the second option, can you expand it?",
    "I love this, can you make it shorter?",
    "I'm 100% sure it's a bug, can you check?",
    "I'm an idiot - I forgot the semicolon, can you fix the code?",
    "I'm a bit lost, can you explain again?",
    "I'm stuck on step 3; what do I do next?",
    "I'm using Windows, so how do I set PATH?",
    "I'm so confused, can you explain again?",
    "I'm OK with that, can you continue?",
    "I'm moving to Berlin next month, what should I pack?",
    # hypotheticals
    "If I were a teacher, how would I explain moles?",
    "Suppose I live in Berlin; how much rent would I pay?",
    "Let's say I work at Google, what would my salary be?",
    "Say I'm a teacher, how would you grade this?",
    "I'd love to live in Italy someday, what visa would I need?",
    "What if my wife is vegan, what should I cook?",
    # role-play
    "Pretend I'm a customer and I live in Berlin; what would you say?",
    "Act as a nurse and tell me about night shifts. I live in Berlin.",
    "You are a chef. I'm vegetarian, what should I cook?",
    "Imagine I'm a nurse - how would my day look?",
    "Let's play a game: I'm a detective and my partner is a nurse. Who did it?",
    "I want you to act as my landlord. I have two kids and a dog.",
    # text to translate, summarise or correct
    "Translate to French: I'm a nurse and I live in Lyon.",
    "Can you summarise this? My sister Ana works at a bank in Porto. She loves cats.",
    "Please correct my grammar: I am live in Berlin since 2019.",
    "Rephrase: I love hiking in the mountains.",
    "How do you say I have two kids in Spanish?",
    "Proofread this email for me.\n\nDear Sam, I work as a nurse at St Mary's and I live in Leeds.",
    # quoted text and examples
    "My friend said \"I'm a nurse, so I know what I'm doing.\" What did she mean?",
    'She wrote: "Thanks for asking. I live in Paris. I love cats." What does she mean?',
    "How do I write a good prompt?\nExample: I'm a nurse and I live in Berlin.",
]


@pytest.mark.parametrize("text", NOT_FACTS)
def test_never_a_fact(text: str) -> None:
    assert facts(text) == []


def test_dates_come_from_the_clause_not_the_request() -> None:
    doc = distill_structured(envelope("I moved to Lisbon in 2019, so can I apply for residency before 2026?"))
    [fact] = doc["facts"]
    assert fact["content"] == "I moved to Lisbon in 2019"
    assert fact["in_text_date"] == "2019" and fact["effective_date"] == "2019"


def test_the_same_fact_in_a_request_and_on_its_own_is_one_fact() -> None:
    doc = distill_structured(
        envelope("As a nurse, how do I sleep in the day?", "I'm a nurse.", "My husband is diabetic. Any desserts?"),
    )
    assert [f["content"] for f in doc["facts"]] == ["I'm a nurse", "My husband is diabetic."]


def test_request_facts_are_valid_and_sourced() -> None:
    env = envelope(*(text for text, _ in FOUND), *NOT_FACTS)
    doc = distill_structured(env)
    assert validate(doc) == [] and check_ir_against_envelope(doc, env) == []
    assert doc["meta"]["facts"] == len({(c, t) for _, found in FOUND for c, t, _ in found})


def test_plain_statements_are_left_to_the_rules() -> None:
    assert request_facts("I live in Porto.") is None
    assert request_facts("I'm 34, I live in Porto.") is None  # no request: read whole, as before
    assert request_facts("Never use emojis, please.") is None  # politeness is no request
    assert request_facts("If I live in Porto, what then?") == []


def test_statable_masks_long_quotes_and_keeps_titles() -> None:
    assert (
        statable('I loved "Dune" and "The Left Hand of Darkness".') == 'I loved "Dune" and "The Left Hand of Darkness".'
    )
    assert statable('He said "I live in Paris. Bye."') == 'He said "…"'
    assert statable("Translate: I live in Paris.") is None
    assert statable("I act as treasurer of our club.") is None  # role-play wording: precision over recall
