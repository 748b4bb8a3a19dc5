"""The zero-LLM distiller on hand-written conversations, with the facts expected listed by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvelope_tools._ir import DistillStats, distill_structured
from memvelope_tools._validate import check_ir_against_envelope, validate
from memvelope_tools.cli import main

PROFILE = (
    "The user provided the following information about themselves. This user profile is shown to you in "
    "all conversations they have -- this means it is not relevant to 99% of requests.\n"
    'Before answering, quietly think about whether the user\'s request is "directly related".\n'
    "Otherwise, don't acknowledge the existence of these instructions or the information at all.\n"
    "User profile:\n```I'm a data scientist at a Lisbon hospital. Fluent in Portuguese and English. "
    "Coffee snob.```\n\n"
    "The user provided the additional info about how they would like you to respond:\n"
    "```Always answer in British English. Keep answers short.```"
)


def msg(i: int, role: str, text: str, ts: str | None = None) -> dict:
    return {"id": f"m{i}", "role": role, "ts": ts, "text": text}


ENVELOPE = {
    "memvelope": "envelope-v0",
    "meta": {"source_provider": "chatgpt", "conversation_count": 4, "message_count": 8},
    "conversations": [
        {
            "id": "c-late",
            "title": "Custom instructions",
            "created_at": "2025-02-10T08:00:00.000Z",
            "updated_at": None,
            "messages": [
                msg(1, "user", PROFILE, "2025-02-10T08:00:00.000Z"),
                msg(2, "user", "Can you plan a trip? I love hiking in the mountains."),
                msg(3, "assistant", "I love hiking too. My name is ChatGPT."),
            ],
        },
        {
            "id": "c-early",
            "title": "Intro",
            "created_at": "2024-11-03T21:15:00.000Z",
            "updated_at": None,
            "messages": [
                msg(
                    1,
                    "user",
                    "Hi! My name is Inês Carvalho. I moved to Lisbon in March 2019.\n"
                    "My sister Marta is a nurse. If I were rich I would buy a boat. "
                    "Do I live in Lisbon?\n```\nI live in a code block\n```\n> I work at quoted",
                ),
                msg(2, "assistant", "Nice to meet you."),
                msg(3, "user", "Never use emojis, please. I love this!"),
            ],
        },
        {
            "id": None,
            "title": "",
            "created_at": None,
            "updated_at": None,
            "messages": [
                msg(
                    1,
                    "user",
                    "I'm building a habit tracker app. i love hiking in the mountains",
                    "2023-07-01T10:00:00.000Z",
                ),
            ],
        },
        {
            "id": "c-undated",
            "title": "",
            "created_at": None,
            "updated_at": None,
            "messages": [
                msg(1, "user", "I work as a nurse."),
            ],
        },
    ],
}


def fact(
    subject: str,
    subject_type: str,
    category: str | None,
    content: str,
    eff: str | None,
    in_text: str | None,
    month: str,
    convo: str | None,
) -> dict:
    return {
        "subject": subject,
        "subject_type": subject_type,
        "category": category,
        "content": content,
        "effective_date": eff,
        "in_text_date": in_text,
        "provenance": f"imported:chatgpt-export:{month}",
        "convo_id": convo,
    }


# Listed by reading the rules in _ir/rules.py, in order of first position in the envelope.
EXPECTED = [
    fact(
        "self", "self", "career", "I'm a data scientist at a Lisbon hospital.", "2025-02-10", None, "2025-02", "c-late"
    ),
    fact("self", "self", "identity", "Fluent in Portuguese and English.", "2025-02-10", None, "2025-02", "c-late"),
    fact("self", "self", None, "Coffee snob.", "2025-02-10", None, "2025-02", "c-late"),
    fact("self", "self", "instructions", "Always answer in British English.", "2025-02-10", None, "2025-02", "c-late"),
    fact("self", "self", "instructions", "Keep answers short.", "2025-02-10", None, "2025-02", "c-late"),
    # "I love hiking in the mountains." appears in c-late (2025-02-10) and in the undated-id
    # conversation (2023-07-01): the earlier-dated occurrence is kept, at its own position.
    # "Hi!" is a sentence of its own (split before a capital), and no fact.
    fact("self", "self", "identity", "My name is Inês Carvalho.", "2024-11-03", None, "2024-11", "c-early"),
    fact("self", "self", "identity", "I moved to Lisbon in March 2019.", "2019-03", "2019-03", "2024-11", "c-early"),
    fact("Marta", "person", "relationship", "My sister Marta is a nurse.", "2024-11-03", None, "2024-11", "c-early"),
    fact("self", "self", "instructions", "Never use emojis, please.", "2024-11-03", None, "2024-11", "c-early"),
    fact("self", "self", "projects", "I'm building a habit tracker app.", "2023-07-01", None, "2023-07", None),
    fact("self", "self", "preferences", "i love hiking in the mountains", "2023-07-01", None, "2023-07", None),
]


def test_expected_facts() -> None:
    stats = DistillStats()
    doc = distill_structured(ENVELOPE, clock=lambda: 0, stats=stats)
    assert doc["facts"] == EXPECTED
    assert doc["meta"] == {
        "provider": "chatgpt",
        "mode": "structured (zero-LLM)",
        "facts": len(EXPECTED),
        "generated_at": "1970-01-01T00:00:00.000000Z",
        "format": "memvelope-ir-v0",
    }
    assert (stats.conversations, stats.conversations_undated) == (4, 1)
    assert (stats.candidates, stats.duplicates, stats.facts) == (12, 1, 11)


def test_output_is_valid_and_passes_cross_checks() -> None:
    doc = distill_structured(ENVELOPE)
    assert validate(doc) == []
    assert validate(ENVELOPE) == []
    assert check_ir_against_envelope(doc, ENVELOPE) == []


def test_archetype_null_when_a_category_is_unsupported() -> None:
    arch = distill_structured(ENVELOPE)["archetype"]
    assert arch["categories"] is None and arch["belief_ratio"] is None and arch["style"] is None
    assert arch["self_ratio"] == pytest.approx(10 / 11) and arch["distinct_entities"] == 1


def test_deterministic_apart_from_the_clock() -> None:
    a = distill_structured(ENVELOPE, clock=lambda: 5)
    b = distill_structured(json.loads(json.dumps(ENVELOPE)), clock=lambda: 5)
    assert a == b


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("I work at a bank in Porto.", "career"),
        ("I'm a senior software engineer.", "career"),
        ("My favourite band is Radiohead.", "preferences"),
        ("I'm vegetarian.", "preferences"),
        ("I have two kids.", "relationship"),
        ("From now on, reply in Portuguese.", "instructions"),
        ("I'm 34 years old.", "identity"),
        ("Btw, I live in Berlin.", "identity"),
    ],
)
def test_single_statements(text: str, category: str) -> None:
    env = {
        "memvelope": "envelope-v0",
        "meta": {"source_provider": "claude", "conversation_count": 1, "message_count": 1},
        "conversations": [
            {
                "id": "c",
                "title": "",
                "created_at": "2024-01-02T00:00:00.000Z",
                "updated_at": None,
                "messages": [msg(1, "user", text)],
            }
        ],
    }
    facts = distill_structured(env)["facts"]
    assert [(f["category"], f["content"], f["effective_date"]) for f in facts] == [(category, text, "2024-01-02")]


@pytest.mark.parametrize(
    "text",
    [
        "Never mind.",
        "I love it!",
        "Can I work at home?",
        "Imagine I live on Mars.",
        "I'm a bit lost here.",
        "Please fix this bug.",
        "The weather is nice.",
    ],
)
def test_not_facts(text: str) -> None:
    env = {
        "memvelope": "envelope-v0",
        "meta": {"source_provider": "claude", "conversation_count": 1, "message_count": 1},
        "conversations": [
            {
                "id": "c",
                "title": "",
                "created_at": "2024-01-02T00:00:00.000Z",
                "updated_at": None,
                "messages": [msg(1, "user", text)],
            }
        ],
    }
    assert distill_structured(env)["facts"] == []


def test_cli_distill_structured(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env_path = tmp_path / "history.mve.json"
    env_path.write_text(json.dumps(ENVELOPE), encoding="utf-8")
    assert main(["distill", str(env_path), "--mode", "structured"]) == 0
    out = tmp_path / "history.mv.json"
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["facts"] == EXPECTED
    assert f"wrote {out}: 11 facts from 4 conversations" in capsys.readouterr().err
    assert main(["validate", str(out), "--envelope", str(env_path)]) == 0


def test_cli_distill_refuses_a_non_envelope(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ir = tmp_path / "x.mv.json"
    ir.write_text(json.dumps(distill_structured(ENVELOPE)), encoding="utf-8")
    assert main(["distill", str(ir), "-o", str(tmp_path / "y.mv.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("memvelope: error: not an envelope") and err.count("\n") == 1
    assert not (tmp_path / "y.mv.json").exists()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My sister Ana's wedding is in Porto.", [("relationship", "Ana", "person")]),
        ("My grandmother's recipe uses cups.", []),
        ("I run 4 times a week.", []),
        ("I run a small bakery in Porto.", [("career", "self", "self")]),
        ("I started at Kestrel Data on Monday.", [("career", "self", "self")]),
    ],
)
def test_rule_edges(text: str, expected: list) -> None:
    env = {
        "memvelope": "envelope-v0",
        "meta": {"source_provider": "claude", "conversation_count": 1, "message_count": 1},
        "conversations": [
            {
                "id": "c",
                "title": "",
                "created_at": "2024-01-02T00:00:00.000Z",
                "updated_at": None,
                "messages": [msg(1, "user", text)],
            }
        ],
    }
    facts = distill_structured(env)["facts"]
    assert [(f["category"], f["subject"], f["subject_type"]) for f in facts] == expected


def test_profile_container_label_dropped() -> None:
    text = (
        "The user provided the following information about themselves. User profile:\n"
        "```Preferred name: Inês\nOther Information: I work mostly in Python.```"
    )
    env = {
        "memvelope": "envelope-v0",
        "meta": {"source_provider": "chatgpt", "conversation_count": 1, "message_count": 1},
        "conversations": [
            {
                "id": "c",
                "title": "",
                "created_at": "2024-01-02T00:00:00.000Z",
                "updated_at": None,
                "messages": [msg(1, "user", text)],
            }
        ],
    }
    facts = distill_structured(env)["facts"]
    assert [(f["category"], f["content"]) for f in facts] == [
        ("identity", "Preferred name: Inês"),
        ("career", "I work mostly in Python."),
    ]
