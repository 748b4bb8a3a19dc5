"""`validate()` and `memvelope validate`: both schemas, the IR fixture corpus, cross-checks, the CLI."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from memvelope_tools._tags import ENVELOPE_TAG, IR_TAG
from memvelope_tools._validate import check_ir_against_envelope, json_path, validate
from memvelope_tools.cli import main
from memvelope_tools.errors import FormatError
from memvelope_tools.schema import SCHEMA_FILES, load_schema

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
IR_VALID = sorted((FIXTURES / "ir" / "valid").glob("*.mv.json"))
IR_INVALID = sorted((FIXTURES / "ir" / "invalid").glob("*.mv.json"))
EXPECTED = json.loads((FIXTURES / "ir" / "expected-violations.json").read_text(encoding="utf-8"))
assert IR_VALID and IR_INVALID, "IR fixtures not found"


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# --- the fixture corpus ---------------------------------------------------------------------------


def test_corpus_is_complete() -> None:
    assert len(IR_VALID) + len(IR_INVALID) >= 20
    assert sorted(EXPECTED) == sorted(p.name for p in IR_INVALID)
    for name, exp in EXPECTED.items():  # each invalid file is named after the rule it breaks
        assert name == f"{exp['rule']}.mv.json"


@pytest.mark.parametrize("path", IR_VALID, ids=lambda p: p.name)
def test_valid_ir_fixture(path: Path) -> None:
    assert validate(_load(path)) == []


@pytest.mark.parametrize("path", IR_INVALID, ids=lambda p: p.name)
def test_invalid_ir_fixture(path: Path) -> None:
    exp = EXPECTED[path.name]
    doc = _load(path)
    if exp.get("error") == "FormatError":
        with pytest.raises(FormatError) as info:
            validate(doc)
        assert (info.value.reason, info.value.path) == (exp["rule"], exp["path"])
        return
    violations = validate(doc)
    assert [(v.rule, v.path) for v in violations] == [(exp["rule"], exp["path"])]
    line = str(violations[0])
    assert line.startswith(f"{exp['path']}: [{exp['rule']}] ")


@pytest.mark.parametrize("path", IR_INVALID, ids=lambda p: p.name)
def test_invalid_fixture_breaks_one_rule_of_the_valid_base(path: Path) -> None:
    """Each invalid file differs from the completed spec example in one place only."""
    base = _load(FIXTURES / "ir" / "valid" / "spec-example-completed.mv.json")
    diffs = list(_diff(base, _load(path), "$"))
    assert len(diffs) == 1, diffs


def _diff(a: object, b: object, path: str):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a.keys() | b.keys():
            if k not in a or k not in b:
                yield f"{path}.{k}"
            else:
                yield from _diff(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _diff(x, y, f"{path}[{i}]")
    elif a != b or type(a) is not type(b):
        yield path


def test_ir_schema_alone_rejects_another_format() -> None:
    """The schema's `format` const, for tools that use the schema without our tag dispatch."""
    doc = _load(IR_VALID[0])
    doc["meta"]["format"] = "envelope-v0"
    errors = list(Draft7Validator(load_schema("memvelope-ir-v0")).iter_errors(doc))
    assert [e.validator for e in errors] == ["const"]


def test_both_schemas_are_valid_draft7() -> None:
    for name in ("envelope-v0", "memvelope-ir-v0"):
        schema = load_schema(name)
        Draft7Validator.check_schema(schema)
        assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"


def test_one_packaged_schema_per_tag_named_after_it() -> None:
    assert SCHEMA_FILES == {ENVELOPE_TAG: "envelope-v0.schema.json", IR_TAG: "memvelope-ir-v0.schema.json"}
    assert list(SCHEMA_FILES) == [ENVELOPE_TAG, IR_TAG]


# --- envelope-v0 ----------------------------------------------------------------------------------

ENVELOPE = {
    "memvelope": "envelope-v0",
    "meta": {"source_provider": "claude", "conversation_count": 2, "message_count": 3},
    "conversations": [
        {
            "id": "c1",
            "title": "Moving",
            "created_at": "2019-03-14T09:00:00.000Z",
            "updated_at": None,
            "messages": [
                {
                    "id": "m1",
                    "role": "user",
                    "ts": "2019-03-14T09:00:00.000Z",
                    "text": "I moved to Lisbon on 14 March 2019 with my sister Marta.",
                },
                {"id": "m2", "role": "assistant", "ts": None, "text": "Welcome to Lisbon!"},
            ],
        },
        {
            "id": None,
            "title": "",
            "created_at": None,
            "updated_at": None,
            "messages": [{"id": "m1", "role": "user", "ts": None, "text": "I prefer tea. Since 2021."}],
        },
    ],
}


def _env(**changes: object) -> dict:
    env = copy.deepcopy(ENVELOPE)
    for path, value in changes.items():
        target = env
        *parents, last = path.split("__")
        for p in parents:
            target = target[int(p)] if p.isdigit() else target[p]
        if value is _DELETE:
            del target[int(last) if last.isdigit() else last]
        else:
            target[int(last) if last.isdigit() else last] = value
    return env


_DELETE = object()


def test_valid_envelope() -> None:
    assert validate(ENVELOPE) == []


def test_envelope_tolerates_unknown_fields_and_export_date() -> None:
    env = _env(meta__source_export_date="2026-06-30", extra={"x": 1})
    env["conversations"][0]["messages"][0]["annotation"] = "kept"
    assert validate(env) == []
    assert validate(_env(meta__source_export_date="2026-06-30T10:00:00Z")) == []


@pytest.mark.parametrize(
    ("changes", "rule", "path"),
    [
        ({"memvelope": "envelope-v1"}, None, "$.memvelope"),
        ({"meta__source_export_date": None}, "source-export-date-wrong-type", "$.meta.source_export_date"),
        ({"meta__source_export_date": "June 2026"}, "bad-source-export-date", "$.meta.source_export_date"),
        ({"meta__conversation_count": 3}, "conversation-count-mismatch", "$.meta.conversation_count"),
        ({"meta__message_count": 4}, "message-count-mismatch", "$.meta.message_count"),
        ({"meta__source_provider": _DELETE}, "missing-source-provider-key", "$.meta.source_provider"),
        ({"conversations__0__updated_at": _DELETE}, "missing-updated-at-key", "$.conversations[0].updated_at"),
        ({"conversations__1__messages__0__role": "system"}, "bad-role", "$.conversations[1].messages[0].role"),
        ({"conversations__0__messages__1__text": ""}, "empty-text", "$.conversations[0].messages[1].text"),
        ({"conversations__0__created_at": "2019-03-14T09:00:00Z"}, "bad-created-at", "$.conversations[0].created_at"),
        (
            {"conversations__0__messages__0__ts": "2019-03-14T09:00:00.0000Z"},
            "bad-ts",
            "$.conversations[0].messages[0].ts",
        ),
        (
            {"conversations__0__messages__0__ts": "2019-13-14T09:00:00.000Z"},
            "bad-ts",
            "$.conversations[0].messages[0].ts",
        ),
        ({"conversations__0__id": 7}, "id-wrong-type", "$.conversations[0].id"),
        ({"conversations__0__messages__1__id": "2"}, "bad-id", "$.conversations[0].messages[1].id"),
    ],
)
def test_envelope_rule(changes: dict, rule: str | None, path: str) -> None:
    env = _env(**changes)
    if rule is None:
        with pytest.raises(FormatError) as info:
            validate(env)
        assert info.value.reason == "unsupported-tag" and info.value.path == path
        assert "envelope-v1" in str(info.value) and "memvelope-ir-v0" in str(info.value)
        return
    assert [(v.rule, v.path) for v in validate(env)] == [(rule, path)]


def test_empty_messages_rejected_but_zero_counts_allowed() -> None:
    env = _env(conversations=[], meta__conversation_count=0, meta__message_count=0)
    assert validate(env) == []
    env = _env(conversations__1__messages=[], meta__message_count=2)
    assert [(v.rule, v.path) for v in validate(env)] == [("empty-messages", "$.conversations[1].messages")]


def test_violations_sorted_by_path_with_numeric_indices() -> None:
    env = copy.deepcopy(ENVELOPE)
    env["conversations"] = [copy.deepcopy(ENVELOPE["conversations"][1]) for _ in range(12)]
    env["meta"].update(conversation_count=12, message_count=12)
    for conv in env["conversations"]:
        conv["messages"][0]["role"] = "tool"
    paths = [v.path for v in validate(env)]
    assert paths == [f"$.conversations[{i}].messages[0].role" for i in range(12)]


def test_tags_read_in_spec_order() -> None:
    with pytest.raises(FormatError) as info:
        validate([1])
    assert info.value.reason == "not-memvelope"
    with pytest.raises(FormatError) as info:
        validate({"memvelope": "memory-v0", "meta": {"format": "memvelope-ir-v0"}})
    assert info.value.path == "$.memvelope" and "reserved" in str(info.value)


def test_json_path_quotes_odd_keys() -> None:
    assert json_path(["facts", 3, "content"]) == "$.facts[3].content"
    assert json_path(["a b", "it's"]) == "$['a b']['it\\'s']"


# --- cross-checks against the envelope ------------------------------------------------------------


def _fact(**kw: object) -> dict:
    fact = {
        "subject": "self",
        "subject_type": "self",
        "category": "identity",
        "content": "Moved to Lisbon",
        "effective_date": "2019-03-14",
        "in_text_date": "2019-03-14",
        "provenance": "imported:claude-export:2019-03",
        "convo_id": "c1",
    }
    fact.update(kw)
    return fact


def _ir(*facts: dict) -> dict:
    from memvelope_tools._ir import build_ir

    return build_ir("claude", "test", list(facts), clock=lambda: 0)


def test_cross_checks_pass_for_sourced_facts() -> None:
    ir = _ir(
        _fact(),
        _fact(
            content="Has a sister, Marta",
            subject="Marta",
            subject_type="person",
            category="relationship",
            in_text_date=None,
            effective_date="2019-03",
        ),
        _fact(
            content="Prefers tea",
            category="preferences",
            convo_id=None,
            in_text_date="2021",
            effective_date="2021",
            provenance="imported:claude-export:2026-01",
        ),
    )
    assert validate(ir) == []
    assert check_ir_against_envelope(ir, ENVELOPE) == []


@pytest.mark.parametrize(
    ("fact", "rule", "field"),
    [
        (_fact(convo_id="c9"), "unknown-convo-id", "convo_id"),
        (_fact(provenance="claude-export:2019-03"), "bad-provenance-form", "provenance"),
        (_fact(provenance="imported:claude-export:2019-3"), "bad-provenance-form", "provenance"),
        (_fact(provenance="imported:chatgpt-export:2019-03"), "provenance-provider-mismatch", "provenance"),
        (_fact(provenance="imported:claude-export:2019-04"), "provenance-month-mismatch", "provenance"),
        (_fact(in_text_date="2018"), "in-text-date-not-in-source", "in_text_date"),
        (_fact(in_text_date="2019-03-15", effective_date="2019-03"), "in-text-date-not-in-source", "in_text_date"),
        (_fact(effective_date="2020-01", in_text_date=None), "effective-date-not-in-source", "effective_date"),
        (
            _fact(convo_id=None, in_text_date="2019-03-14", effective_date="1999"),
            "effective-date-not-in-source",
            "effective_date",
        ),
    ],
)
def test_cross_check_rule(fact: dict, rule: str, field: str) -> None:
    ir = _ir(_fact(), fact)
    found = check_ir_against_envelope(ir, ENVELOPE)
    assert [(v.rule, v.path) for v in found] == [(rule, f"$.facts[1].{field}")]
    assert "fact 1" in found[0].message


def test_effective_date_may_be_a_timestamp_prefix_only() -> None:
    # "2019-03-14" is also in the text; "2019-03-14" as a ts prefix of m1 -- use a conversation whose
    # text states no date at all to isolate the prefix rule.
    env = copy.deepcopy(ENVELOPE)
    env["conversations"][0]["messages"][0]["text"] = "I moved to Lisbon."
    ok = _ir(_fact(in_text_date=None, effective_date="2019-03-14"))
    assert check_ir_against_envelope(ok, env) == []
    bad = _ir(_fact(in_text_date=None, effective_date="2019-03-15"))
    assert [v.rule for v in check_ir_against_envelope(bad, env)] == ["effective-date-not-in-source"]


def test_cross_check_counts_archetype_and_provider() -> None:
    ir = _ir(_fact(), _fact(content="Other", category="career"))
    ir["meta"]["provider"] = "chatgpt"
    ir["meta"]["facts"] = 3
    ir["archetype"]["self_ratio"] = 0.5
    ir["archetype"]["categories"] = {"identity": 2}
    ir["archetype"]["belief_ratio"] = 0.504  # within rounding tolerance of 0.5
    found = {(v.path, v.rule) for v in check_ir_against_envelope(ir, ENVELOPE)}
    assert found == {
        ("$.meta.facts", "facts-count-mismatch"),
        ("$.meta.provider", "provider-mismatch"),
        ("$.archetype.self_ratio", "archetype-mismatch"),
        ("$.archetype.categories", "archetype-mismatch"),
    }


def test_cross_check_archetype_nulls() -> None:
    ir = _ir(_fact(subject=None))
    assert ir["archetype"]["self_ratio"] is None
    assert check_ir_against_envelope(ir, ENVELOPE) == []
    ir["archetype"]["self_ratio"] = 1.0  # cannot be known: a subject is null
    ir["archetype"]["categories"] = None  # could be known: every category is there
    found = {(v.path, v.rule) for v in check_ir_against_envelope(ir, ENVELOPE)}
    assert found == {("$.archetype.self_ratio", "archetype-mismatch"), ("$.archetype.categories", "archetype-mismatch")}


def test_cross_check_refuses_wrong_layers() -> None:
    with pytest.raises(FormatError):
        check_ir_against_envelope(ENVELOPE, ENVELOPE)
    with pytest.raises(FormatError):
        check_ir_against_envelope(_ir(_fact()), _ir(_fact()))


# --- the CLI --------------------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, doc: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def test_cli_ok_and_violations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path, "a.mve.json", ENVELOPE)
    bad_doc = _env(conversations__1__messages__0__role="system")
    bad = _write(tmp_path, "b.json", bad_doc)
    ir = str(FIXTURES / "ir" / "invalid" / "content-over-400.mv.json")
    assert main(["validate", good, bad, ir]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{good}: ok",
        f'{bad}: $.conversations[1].messages[0].role: [bad-role] "system" is not one of "user", "assistant"',
        f"{ir}: $.facts[0].content: [content-over-400] is 401 characters long; at most 400 allowed",
    ]


def test_cli_all_valid_exit_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", *map(str, IR_VALID)]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{p}: ok" for p in IR_VALID]


def test_cli_bad_files_one_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    not_json = tmp_path / "x.json"
    not_json.write_bytes(b'{"memvelope": ')
    bom = tmp_path / "bom.mve.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(ENVELOPE).encode())
    tag = _write(tmp_path, "t.json", {"hello": 1})
    missing = str(tmp_path / "nope.json")
    assert main(["validate", str(not_json), str(bom), tag, missing]) == 1
    captured = capsys.readouterr()
    out, err = captured.out.splitlines(), captured.err.splitlines()
    assert len(out) == 2  # verdicts on stdout; files that cannot be read are errors, on stderr
    assert out[0] == f"{bom}: ok"
    assert out[1].startswith(f"{tag}: $: [not-memvelope] ") and "envelope-v0" in out[1]
    assert err == [
        f"memvelope: error: not valid JSON: Expecting value at line 1 column 15 (in {not_json})",
        f"memvelope: error: no such file or folder (in {missing})",
    ]


def test_cli_envelope_cross_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = _write(tmp_path, "h.mve.json", ENVELOPE)
    ir = _write(tmp_path, "f.mv.json", _ir(_fact(), _fact(in_text_date="1999", effective_date="1999")))
    assert main(["validate", ir]) == 0
    capsys.readouterr()
    assert main(["validate", ir, "--envelope", env]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{ir}: $.facts[1].effective_date: [effective-date-not-in-source] fact 1: 1999 is neither stated "
        'in the text of conversation "c1" nor a prefix of its timestamps',
        f"{ir}: $.facts[1].in_text_date: [in-text-date-not-in-source] fact 1: 1999 is not stated in the "
        'text of conversation "c1"',
    ]


def test_cli_envelope_option_must_be_an_envelope(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ir = _write(tmp_path, "f.mv.json", _ir(_fact()))
    assert main(["validate", ir, "--envelope", ir]) == 1
    err = capsys.readouterr().err
    assert err.startswith("memvelope: error: --envelope must be an envelope-v0") and err.count("\n") == 1
