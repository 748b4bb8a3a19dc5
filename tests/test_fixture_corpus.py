"""Self-checks of the Layer-1 fixture corpus (fixtures/envelope/), independent of the converter.

These tests never import memvelope_tools._convert: they check that every hand-written expectation is a
well-formed canonical envelope (spec "Canonical serialization", presence rule, key order, counts, ids,
roles, TrimString-trimmed text, timestamp profile), so a mistake in a golden file is caught before it
is used to judge the converter.
"""

from __future__ import annotations

import datetime
import json
import re
import unicodedata
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ENVELOPE_DIR = FIXTURES / "envelope"
CASES = sorted(p for p in ENVELOPE_DIR.iterdir() if p.is_dir()) if ENVELOPE_DIR.is_dir() else []
EXPECTED_ENVELOPES = [c / "expected.mve.json" for c in CASES if (c / "expected.mve.json").exists()]
EXPECTED_ERRORS = [c / "expected.error" for c in CASES if (c / "expected.error").exists()]
ERROR_CODES = {"invalid-json", "no-provider", "no-conversations"}

TOP_KEYS = ["memvelope", "meta", "conversations"]
META_KEYS = ["source_provider", "conversation_count", "message_count"]
CONV_KEYS = ["id", "title", "created_at", "updated_at", "messages"]
MSG_KEYS = ["id", "role", "ts", "text"]
TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")

# ECMAScript TrimString: WhiteSpace (TAB VT FF SP NBSP ZWNBSP + Zs) and LineTerminator (LF CR LS PS).
_TRIM_EXTRA = {"\t", "\v", "\f", " ", "\u00a0", "\ufeff", "\n", "\r", "\u2028", "\u2029"}


def _is_trim_space(ch: str) -> bool:
    return ch in _TRIM_EXTRA or unicodedata.category(ch) == "Zs"


def trim_string(s: str) -> str:
    """ECMAScript TrimString (not Python str.strip)."""
    start, end = 0, len(s)
    while start < end and _is_trim_space(s[start]):
        start += 1
    while end > start and _is_trim_space(s[end - 1]):
        end -= 1
    return s[start:end]


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def stringify(value: object) -> bytes:
    """JSON.stringify(value, null, 2) bytes for plain JSON values (as the spec's profile defines them)."""
    text = json.dumps(value, ensure_ascii=False, indent=2)
    text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text.encode("utf-8")


# ---- the serializer used by these checks must itself follow the spec's escape rules ----------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"', '"\\""'),
        ("\\", '"\\\\"'),
        ("\b\t\n\f\r", '"\\b\\t\\n\\f\\r"'),
        ("\x00\x01\x0b\x1b\x1f", '"\\u0000\\u0001\\u000b\\u001b\\u001f"'),
        ("\x7f", '"\x7f"'),
        ("\u2028\u2029", '"\u2028\u2029"'),
        ("/", '"/"'),
        ("é中😀\u0085", '"é中😀\u0085"'),
        ("\ud800", '"\\ud800"'),
        ("a\udfffb\udbff", '"a\\udfffb\\udbff"'),
    ],
)
def test_stringify_escape_rules(text: str, expected: str) -> None:
    assert stringify(text) == expected.encode("utf-8")


def test_stringify_layout() -> None:
    assert stringify({"a": [1, {"b": None}], "c": "x"}) == (
        b'{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ],\n  "c": "x"\n}'
    )


@pytest.mark.parametrize(
    ("raw", "trimmed"),
    [
        ("\u00a0\ufeff\u3000\u2028\u2029\t\v\f \u1680\u2003x\r\n", "x"),
        ("\u0085x\u200b", "\u0085x\u200b"),
        ("\x1cx\x1f", "\x1cx\x1f"),
        ("  a  b  ", "a  b"),
    ],
)
def test_trim_string_reference(raw: str, trimmed: str) -> None:
    assert trim_string(raw) == trimmed


# ---- corpus shape -------------------------------------------------------------------------------


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 45, f"only {len(CASES)} fixture cases under {ENVELOPE_DIR}"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_case_folder_layout(case: Path) -> None:
    names = sorted(p.name for p in case.iterdir())
    inputs = [n for n in names if n.startswith("input")]
    expectations = [n for n in names if n in ("expected.mve.json", "expected.error")]
    assert inputs, "no input file"
    assert len(expectations) == 1, f"need exactly one expectation, found {expectations}"
    assert "case.md" in names
    unexpected = set(names) - set(inputs) - set(expectations) - {"case.md"}
    assert not unexpected, f"unexpected files {unexpected}"
    for name in inputs:
        assert name.endswith((".json", ".zip")), name
    doc = (case / "case.md").read_text(encoding="utf-8").strip()
    assert doc and len(doc.splitlines()) <= 2


@pytest.mark.parametrize("path", EXPECTED_ERRORS, ids=lambda p: p.parent.name)
def test_expected_error_is_known_code(path: Path) -> None:
    assert path.read_bytes().decode("ascii") in ERROR_CODES


def test_every_error_code_is_exercised() -> None:
    assert {p.read_bytes().decode("ascii") for p in EXPECTED_ERRORS} == ERROR_CODES


def test_readme_lists_every_case() -> None:
    readme = (ENVELOPE_DIR / "README.md").read_text(encoding="utf-8")
    cases_section = readme.split("\n## Cases\n", 1)[1]
    listed = set(re.findall(r"^- `([^`]+)`", cases_section, flags=re.M))
    assert listed == {c.name for c in CASES}


# ---- every expected envelope is canonical and self-consistent -----------------------------------


def _check_ts(value: object, where: str) -> None:
    if value is None:
        return
    assert isinstance(value, str) and TS_RE.match(value), f"{where}: bad timestamp {value!r}"
    # A real calendar instant, years 0001-9999 (strptime rejects Feb 30, hour 24, ...).
    datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ")


def check_envelope_file(path: Path) -> None:
    data = path.read_bytes()
    assert data, "empty file"
    assert not data.endswith((b"\n", b"\r", b" ")), "trailing whitespace/newline after the closing brace"
    assert not data.startswith(b"\xef\xbb\xbf"), "BOM"
    text = data.decode("utf-8")  # strict: must be valid UTF-8
    env = json.loads(text)

    assert list(env) == TOP_KEYS
    assert env["memvelope"] == "envelope-v0"
    meta = env["meta"]
    assert list(meta) == META_KEYS, "key order / no source_export_date (NOTES A22)"
    assert meta["source_provider"] in ("chatgpt", "claude")
    convs = env["conversations"]
    assert isinstance(convs, list) and convs, "a converter never emits zero conversations"
    assert meta["conversation_count"] == len(convs)
    assert meta["message_count"] == sum(len(c["messages"]) for c in convs)

    for ci, conv in enumerate(convs):
        where = f"conversations[{ci}]"
        assert list(conv) == CONV_KEYS, where
        assert conv["id"] is None or (isinstance(conv["id"], str) and conv["id"] != ""), where
        assert isinstance(conv["title"], str) and conv["title"] == trim_string(conv["title"]), where
        _check_ts(conv["created_at"], where + ".created_at")
        _check_ts(conv["updated_at"], where + ".updated_at")
        msgs = conv["messages"]
        assert isinstance(msgs, list) and msgs, f"{where}: empty messages"
        for mi, msg in enumerate(msgs, 1):
            mwhere = f"{where}.messages[{mi - 1}]"
            assert list(msg) == MSG_KEYS, mwhere
            assert msg["id"] == f"m{mi}", mwhere
            assert msg["role"] in ("user", "assistant"), mwhere
            _check_ts(msg["ts"], mwhere + ".ts")
            assert isinstance(msg["text"], str) and msg["text"], mwhere
            assert msg["text"] == trim_string(msg["text"]), f"{mwhere}: text not TrimString-trimmed"
        if conv["created_at"] is None:
            # created_at falls back to messages[0].ts, so it can only be null when that is null too.
            assert msgs[0]["ts"] is None, f"{where}: created_at null although messages[0].ts is set"

    assert stringify(env) == data, "bytes are not JSON.stringify(value, null, 2) of the parsed value"


@pytest.mark.parametrize("path", EXPECTED_ENVELOPES, ids=lambda p: p.parent.name)
def test_expected_envelope_is_canonical(path: Path) -> None:
    check_envelope_file(path)


def test_sample_envelope_is_canonical() -> None:
    check_envelope_file(FIXTURES / "sample.mve.json")


def test_input_parts_are_not_envelopes() -> None:
    """Guard against an expectation copied into an input slot by mistake."""
    for case in CASES:
        for part in case.glob("input*"):
            assert b'"memvelope": "envelope-v0"' not in part.read_bytes(), part
