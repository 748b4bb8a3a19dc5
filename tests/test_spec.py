"""The spec's field tables come from the packaged schemas, once: the C reader's key lists and every
module agree with them, and the format tags are written in one module only."""

from __future__ import annotations

import re
from pathlib import Path

from memvelope_tools import _spec

PACKAGE = Path(__file__).resolve().parent.parent / "memvelope_tools"


def _c_keys(name: str) -> tuple[str, ...]:
    source = (PACKAGE / "_frames" / "_textscan.c").read_text(encoding="utf-8")
    match = re.search(rf"{name}\[\]\s*=\s*\{{([^}}]*)\}}", source)
    assert match is not None, f"{name} not found in _textscan.c"
    return tuple(re.findall(r'"([^"]*)"', match.group(1)))


def test_the_tables_are_the_spec_tables() -> None:
    # Written from the spec's tables (Layer 1 conversation and message, Layer 2 fact), in its order.
    assert _spec.CONVERSATION_FIELDS == ("id", "title", "created_at", "updated_at", "messages")
    assert _spec.MESSAGE_FIELDS == ("id", "role", "ts", "text")
    assert _spec.FACT_FIELDS == (
        "subject",
        "subject_type",
        "category",
        "content",
        "effective_date",
        "in_text_date",
        "provenance",
        "convo_id",
    )
    assert _spec.ROLES == ("user", "assistant")
    assert _spec.SUBJECT_TYPES == ("self", "person", "company", "project", "other")
    assert _spec.CATEGORIES == ("identity", "career", "projects", "preferences", "instructions", "relationship")


def test_field_types_follow_the_schema() -> None:
    types = dict(_spec.field_types("conversation"))
    assert types["id"] == (str, type(None)) and types["title"] == (str,) and types["messages"] == (list,)
    assert dict(_spec.field_types("archetype"))["self_ratio"] == (int, float, type(None))


def test_the_c_reader_reads_the_spec_fields() -> None:
    assert _c_keys("CONV_KEYS") == _spec.CONVERSATION_FIELDS
    assert _c_keys("MSG_KEYS") == _spec.MESSAGE_FIELDS


def test_the_c_key_finder_reads_a_declaration() -> None:
    found = re.search(r"X\[\]\s*=\s*\{([^}]*)\}", 'static const char *const X[] = {"a", "b"};')
    assert found is not None and re.findall(r'"([^"]*)"', found.group(1)) == ["a", "b"]


def test_format_tags_are_written_in_one_module() -> None:
    literal = re.compile(r"""["'](envelope-v0|memvelope-ir-v0)["']""")
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "_tags.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            example_output = code.strip() in ("'envelope-v0'", "'memvelope-ir-v0'")  # a docstring example's
            if literal.search(code) and not example_output and ">>>" not in line and "``" not in line:
                offenders.append(f"{path.relative_to(PACKAGE)}:{number}")
    assert offenders == []
