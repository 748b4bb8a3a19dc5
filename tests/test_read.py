"""memvelope_tools._read: layer by in-document tag, tolerance of unknown fields, each refusal."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

from memvelope_tools import layer_of, read
from memvelope_tools._json import elements
from memvelope_tools.errors import FormatError

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
DATA = Path(__file__).resolve().parent / "data"
ENVELOPES = [*sorted((FIXTURES / "envelope").glob("*/expected.mve.json")), FIXTURES / "sample.mve.json"]
IR_VALID = sorted((FIXTURES / "ir" / "valid").glob("*.mv.json"))
assert len(ENVELOPES) > 10, "envelope fixtures not found"
assert IR_VALID, "Facts IR fixtures not found"


def _envelope() -> dict[str, Any]:
    return json.loads((DATA / "hand.mve.json").read_bytes())


def _ir() -> dict[str, Any]:
    return json.loads((FIXTURES / "ir" / "valid" / "spec-example-completed.mv.json").read_bytes())


@pytest.mark.parametrize("path", ENVELOPES, ids=lambda p: p.parent.name)
def test_every_fixture_envelope_reads_the_same_from_each_kind_of_source(path: Path) -> None:
    expected = json.loads(path.read_bytes())
    data = path.read_bytes()
    with open(path, "rb") as fh:
        from_file = read(fh)
    for got in (read(path), read(str(path)), read(data), read(bytearray(data)), from_file, read(io.BytesIO(data))):
        assert got == expected
    assert layer_of(expected) == "envelope"


@pytest.mark.parametrize("path", IR_VALID, ids=lambda p: p.name)
def test_every_valid_ir_fixture_reads_as_ir(path: Path) -> None:
    doc = read(path)
    assert doc == json.loads(path.read_bytes())
    assert layer_of(doc) == "ir"


def test_a_dict_is_checked_and_returned_as_is() -> None:
    env = _envelope()
    assert read(env) is env


def test_layer_comes_from_the_tag_never_the_file_name(tmp_path: Path) -> None:
    ir_named_like_envelope = tmp_path / "facts.mve.json"
    ir_named_like_envelope.write_bytes(json.dumps(_ir()).encode())
    envelope_plain_json = tmp_path / "whatever.txt"
    envelope_plain_json.write_bytes(json.dumps(_envelope()).encode())
    assert layer_of(read(ir_named_like_envelope)) == "ir"
    assert layer_of(read(envelope_plain_json)) == "envelope"


def test_unknown_fields_are_tolerated_at_every_level() -> None:
    doc = read(DATA / "hand.mve.json")  # carries x-* fields at top level, meta, conversation, message
    assert doc["x-annotator"]["by"] == "tests/data"
    assert doc["conversations"][0]["messages"][0]["x-lang"] == "en"
    ir = read(FIXTURES / "ir" / "valid" / "offset-and-unknown-fields.mv.json")
    assert ir["extension"] is True and ir["facts"][0]["confidence"] == 0.9


def test_bom_is_skipped() -> None:
    data = json.dumps(_envelope()).encode()
    assert read(b"\xef\xbb\xbf" + data) == read(data)


@pytest.mark.parametrize("use_orjson", [True, False], ids=["orjson", "stdlib"])
def test_lone_surrogate_escapes_survive(monkeypatch: pytest.MonkeyPatch, use_orjson: bool) -> None:
    if not use_orjson:
        monkeypatch.setattr(elements, "orjson", None)
    env = _envelope()
    data = json.dumps(env).replace('"ok"', '"o\\ud800k"').encode()
    assert read(data)["conversations"][0]["messages"][2]["text"] == "o\ud800k"


@pytest.mark.parametrize(
    "text",
    [
        '{"memvelope": "envelope-v0", "meta": {"source_provider": "a", "n": 12345678901234567890123},'
        ' "conversations": []}',
        '{"memvelope": "envelope-v0", "meta": {"source_provider": "a", "n": 1e400}, "conversations": []}',
        '{"memvelope": "envelope-v1", "memvelope": "envelope-v0", "meta": {"source_provider": "a"},'
        ' "conversations": []}',
    ],
)
def test_values_are_those_of_the_standard_json_module(text: str) -> None:
    # orjson (when installed) would give floats for huge integers; read() must not.
    assert read(text.encode()) == json.loads(text)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_what_json_parse_refuses_is_refused(literal: str) -> None:
    # The standard json module reads these; JSON.parse, and so read(), does not.
    text = '{"memvelope": "envelope-v0", "meta": {"source_provider": "a", "n": N}, "conversations": []}'
    text = text.replace("N", literal)
    with pytest.raises(FormatError) as info:
        read(text.encode())
    assert info.value.reason == "invalid-json" and f"line 1 column {text.index(literal) + 1}" in str(info.value)


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


_DELETE = object()

REFUSALS = [
    # (id, document, reason, JSON path, words the message must contain)
    ("top-level-array", lambda: [_envelope()], "not-memvelope", None, ["an export part, not a Memvelope document"]),
    (
        "no-tag",
        lambda: _set(_envelope(), ("memvelope",), _DELETE),
        "not-memvelope",
        "$",
        ["no top-level 'memvelope'", "'envelope-v0'", "'memvelope-ir-v0'"],
    ),
    (
        "numeric-tag",
        lambda: _set(_envelope(), ("memvelope",), 0),
        "not-memvelope",
        "$.memvelope",
        ["a number", "not a string"],
    ),
    ("null-tag", lambda: _set(_envelope(), ("memvelope",), None), "not-memvelope", "$.memvelope", ["null"]),
    (
        "envelope-v1",
        lambda: _set(_envelope(), ("memvelope",), "envelope-v1"),
        "unsupported-tag",
        "$.memvelope",
        ["'envelope-v1'", "'envelope-v0'", "'memvelope-ir-v0'"],
    ),
    (
        "memory-v0-reserved",
        lambda: _set(_envelope(), ("memvelope",), "memory-v0"),
        "unsupported-tag",
        "$.memvelope",
        ["'memory-v0'", "reserved", "'envelope-v0'"],
    ),
    (
        "ir-tag-at-top",
        lambda: _set(_envelope(), ("memvelope",), "memvelope-ir-v0"),
        "unsupported-tag",
        "$.memvelope",
        ["'memvelope-ir-v0'"],
    ),
    (
        "ir-v1",
        lambda: _set(_ir(), ("meta", "format"), "memvelope-ir-v1"),
        "unsupported-tag",
        "$.meta.format",
        ["'memvelope-ir-v1'", "'memvelope-ir-v0'"],
    ),
    (
        "ir-format-number",
        lambda: _set(_ir(), ("meta", "format"), 1),
        "not-memvelope",
        "$.meta.format",
        ["not a string"],
    ),
    (
        "conversations-not-list",
        lambda: _set(_envelope(), ("conversations",), {"a": 1}),
        "bad-shape",
        "$.conversations",
        ["an array", "an object"],
    ),
    (
        "meta-missing",
        lambda: _set(_envelope(), ("meta",), _DELETE),
        "bad-shape",
        "$.meta",
        ["expected an object", "null"],
    ),
    (
        "conversation-not-object",
        lambda: _set(_envelope(), ("conversations", 1), "c"),
        "bad-shape",
        "$.conversations[1]",
        ["an object", "a string"],
    ),
    (
        "messages-not-list",
        lambda: _set(_envelope(), ("conversations", 2, "messages"), None),
        "bad-shape",
        "$.conversations[2].messages",
        ["an array", "null"],
    ),
    (
        "message-without-text",
        lambda: _set(_envelope(), ("conversations", 0, "messages", 2, "text"), _DELETE),
        "bad-shape",
        "$.conversations[0].messages[2]",
        ["missing field 'text'"],
    ),
    (
        "text-null",
        lambda: _set(_envelope(), ("conversations", 2, "messages", 0, "text"), None),
        "bad-shape",
        "$.conversations[2].messages[0].text",
        ["a string", "null"],
    ),
    (
        "role-system",
        lambda: _set(_envelope(), ("conversations", 1, "messages", 0, "role"), "system"),
        "bad-shape",
        "$.conversations[1].messages[0].role",
        ["'system'", "user, assistant"],
    ),
    (
        "ts-number",
        lambda: _set(_envelope(), ("conversations", 0, "messages", 1, "ts"), 1700000000),
        "bad-shape",
        "$.conversations[0].messages[1].ts",
        ["a number"],
    ),
    (
        "title-missing",
        lambda: _set(_envelope(), ("conversations", 1, "title"), _DELETE),
        "bad-shape",
        "$.conversations[1]",
        ["missing field 'title'"],
    ),
    ("facts-not-list", lambda: _set(_ir(), ("facts",), None), "bad-shape", "$.facts", ["an array"]),
    (
        "fact-category",
        lambda: _set(_ir(), ("facts", 0, "category"), "hobbies"),
        "bad-shape",
        "$.facts[0].category",
        ["'hobbies'", "identity, career"],
    ),
    (
        "fact-subject-type",
        lambda: _set(_ir(), ("facts", 0, "subject_type"), "pet"),
        "bad-shape",
        "$.facts[0].subject_type",
        ["'pet'"],
    ),
    (
        "fact-content-missing",
        lambda: _set(_ir(), ("facts", 0, "content"), _DELETE),
        "bad-shape",
        "$.facts[0]",
        ["missing field 'content'"],
    ),
    (
        "archetype-missing",
        lambda: _set(_ir(), ("archetype",), _DELETE),
        "bad-shape",
        "$.archetype",
        ["expected an object"],
    ),
    ("ir-meta-facts-bool", lambda: _set(_ir(), ("meta", "facts"), True), "bad-shape", "$.meta.facts", ["a boolean"]),
]


@pytest.mark.parametrize(("make", "reason", "path", "words"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_each_refusal_names_what_was_found_and_where(
    tmp_path: Path, make: Any, reason: str, path: str, words: list[str]
) -> None:
    doc = make()
    with pytest.raises(FormatError) as info:
        read(doc if isinstance(doc, dict) else json.dumps(doc).encode())
    assert info.value.reason == reason
    assert info.value.path == path
    for word in words:
        assert word in str(info.value)
    # The same refusal from a file names the file too, on one line.
    file = tmp_path / "doc.json"
    file.write_bytes(json.dumps(doc).encode())
    with pytest.raises(FormatError) as info:
        read(file)
    assert info.value.reason == reason and info.value.path == path
    assert str(file) in str(info.value) and "\n" not in str(info.value)


def test_invalid_json_names_the_file_and_position(tmp_path: Path) -> None:
    bad = tmp_path / "broken.mve.json"
    bad.write_bytes(b'{"memvelope": "envelope-v0",\n  "meta": }')
    with pytest.raises(FormatError) as info:
        read(bad)
    assert info.value.reason == "invalid-json"
    assert "broken.mve.json" in str(info.value) and "line 2" in str(info.value)


def test_deep_nesting_is_a_format_error_not_a_crash() -> None:
    with pytest.raises(FormatError) as info:
        read(b"[" * 200_000 + b"]" * 200_000)
    assert info.value.reason == "too-deep"


def test_invalid_utf8_is_refused_with_its_offset() -> None:
    with pytest.raises(FormatError) as info:
        read(b'{"memvelope": "envelope-v0\xff"}')
    assert info.value.reason == "not-utf8" and "offset 26" in str(info.value)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        read(tmp_path / "nope.json")
    assert info.value.reason == "not-found"
    with pytest.raises(FormatError) as info:
        read(tmp_path)
    assert info.value.reason == "no-parts"  # a folder is an export's, and this one holds none


def test_text_mode_file_object_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_bytes(json.dumps(_envelope()).encode())
    with open(path, encoding="utf-8") as fh, pytest.raises(FormatError) as info:
        read(fh)  # type: ignore[arg-type]
    assert info.value.reason == "text-mode" and "'rb'" in str(info.value)


def test_unsupported_source_type() -> None:
    with pytest.raises(FormatError) as info:
        read(42)  # type: ignore[arg-type]
    assert info.value.reason == "bad-source"
