"""`memvelope_tools._doctor`: hand-counted figures, agreement with the converter, drop reasons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memvelope_tools as mv
from memvelope_tools._conformance import case_inputs
from memvelope_tools._convert import chatgpt, claude
from memvelope_tools._convert.prose import Drop, DropRule, Message, js_trim, map_role
from memvelope_tools._convert.timestamps import render_timestamp
from memvelope_tools._doctor import doctor
from memvelope_tools._doctor.timestamps import unaccepted_form
from memvelope_tools._memory.items import NO_RECORDS
from memvelope_tools._providers import registry

ROOT = Path(__file__).resolve().parent.parent
DOCTOR_CASES = sorted(p for p in (ROOT / "fixtures" / "doctor").iterdir() if p.is_dir())
ENVELOPE_CASES = sorted(p for p in (ROOT / "fixtures" / "envelope").iterdir() if (p / "expected.mve.json").exists())
ERROR_CASES = sorted(p for p in (ROOT / "fixtures" / "envelope").iterdir() if (p / "expected.error").exists())
REAL = ROOT.parent / "shared" / "real-exports"
REAL_FILES = sorted(REAL.rglob("*.json")) if REAL.is_dir() else []
SAMPLES = sorted((ROOT / "memvelope_tools" / "samples").glob("*.zip"))

assert DOCTOR_CASES, "no doctor fixtures found"
assert ENVELOPE_CASES, "no envelope fixtures found"


def _matches(expected: Any, got: Any, where: str = "$") -> list[str]:
    """Differences between an expected.json and the report: count tables must match exactly."""
    if isinstance(expected, dict) and isinstance(got, dict):
        if all(isinstance(v, int) for v in expected.values()) and expected:
            return [] if expected == got else [f"{where}: expected {expected}, got {got}"]
        out = []
        for key, value in expected.items():
            if key not in got:
                out.append(f"{where}.{key}: missing")
            else:
                out += _matches(value, got[key], f"{where}.{key}")
        return out
    return [] if expected == got else [f"{where}: expected {expected!r}, got {got!r}"]


@pytest.mark.parametrize("case", DOCTOR_CASES, ids=lambda p: p.name)
def test_hand_counted_figures(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    report = doctor(*case_inputs(case)).to_json()
    assert _matches(expected, report) == []


def test_matches_helper_catches_an_extra_reason() -> None:
    assert _matches({"d": {"a": 1}}, {"d": {"a": 1, "b": 2}})
    assert not _matches({"d": {"x": {"a": 1}}}, {"d": {"x": {"a": 1}, "y": 3}})


def _assert_agrees(*paths: Path) -> None:
    try:
        env = mv.convert(*paths)
    except mv.ConversionError as exc:
        try:
            report = doctor(*paths)
        except mv.ConversionError as again:
            assert again.reason == exc.reason
            return
        assert report.error is not None and report.error[0] == exc.reason
        assert report.messages_kept == 0 and report.conversations_kept == 0
        return
    report = doctor(*paths)
    assert report.error is None and report.provider == env["meta"]["source_provider"]
    assert report.messages_kept == env["meta"]["message_count"]
    assert report.conversations_kept == env["meta"]["conversation_count"]
    kept = [c for c in report.conversations if c.kept]
    assert [c.id for c in kept] == [c["id"] for c in env["conversations"]]
    assert [c.messages_kept for c in kept] == [len(c["messages"]) for c in env["conversations"]]
    assert report.messages_total == report.messages_kept + sum(report.messages_dropped.values())


@pytest.mark.parametrize("case", ENVELOPE_CASES + ERROR_CASES + DOCTOR_CASES, ids=lambda p: p.name)
def test_agrees_with_converter_on_fixtures(case: Path) -> None:
    _assert_agrees(*case_inputs(case))


@pytest.mark.skipif(not REAL_FILES, reason=f"real-exports folder not present at {REAL}")
@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: str(p.relative_to(REAL)))
def test_agrees_with_converter_on_real_exports(path: Path) -> None:
    _assert_agrees(path)


@pytest.mark.skipif(not SAMPLES, reason="bundled samples (memvelope_tools/samples/*.zip) not built yet")
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_agrees_with_converter_on_bundled_samples(path: Path) -> None:
    _assert_agrees(path)
    assert doctor(path).converts


# ---------------------------------------------------------------- the core's classifiers and their drop reasons


def _elements(path: Path) -> list[Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8-sig"))
    except (ValueError, UnicodeDecodeError):
        return []
    return value if isinstance(value, list) else [value]


ALL_JSON = sorted((ROOT / "fixtures").rglob("input*.json")) + REAL_FILES


def _reason(verdict: Message | Drop) -> str | None:
    return None if isinstance(verdict, Message) else verdict.reason


def _assert_well_formed(verdict: Message | Drop, role: object) -> None:
    """A kept message has a mapped role and trimmed, non-empty text; a drop names one of the known rules."""
    if isinstance(verdict, Message):
        assert verdict.role == map_role(role) and verdict.role in ("user", "assistant")
        assert verdict.text and js_trim(verdict.text) == verdict.text
    else:
        assert verdict.rule in get_args(DropRule)
        assert (verdict.detail is None) == (verdict.rule not in ("content type", "block type"))


def test_classifiers_on_every_fixture_and_real_export() -> None:
    nodes = messages = kept = 0
    for path in ALL_JSON:
        for element in _elements(path):
            if type(element) is not dict:
                continue
            if type(element.get("mapping")) is dict:
                for node in element["mapping"].values():
                    nodes += 1
                    verdict = chatgpt.classify(node)
                    kept += isinstance(verdict, Message)
                    message = node.get("message") if type(node) is dict else None
                    author = message.get("author") if type(message) is dict else None
                    _assert_well_formed(verdict, author.get("role") if type(author) is dict else None)
            if type(element.get("chat_messages")) is list:
                for message in element["chat_messages"]:
                    messages += 1
                    verdict = claude.classify(message)
                    kept += isinstance(verdict, Message)
                    _assert_well_formed(verdict, message.get("sender") if type(message) is dict else None)
    assert nodes > 100 and messages > 30 and kept > 50


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(["", " ", "text", "x", "user", "tool"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["text", "type"]), inner, max_size=2),
    max_leaves=6,
)
_NODE = st.fixed_dictionaries(
    {},
    optional={
        "message": st.none()
        | st.fixed_dictionaries(
            {},
            optional={
                "author": st.fixed_dictionaries(
                    {},
                    optional={
                        "role": st.sampled_from(["user", "assistant", "USER", "system", "tool", "critic", " user"])
                        | _JSONISH
                    },
                ),
                "metadata": st.fixed_dictionaries(
                    {}, optional={"is_visually_hidden_from_conversation": st.booleans() | st.none()}
                ),
                "content": st.fixed_dictionaries(
                    {},
                    optional={
                        "content_type": st.sampled_from(
                            ["text", "multimodal_text", "", "code", "user_editable_context"]
                        )
                        | _JSONISH,
                        "parts": _JSONISH | st.lists(st.sampled_from(["", "  ", "hi", {"text": " yo "}, {"x": 1}])),
                        "user_profile": _JSONISH,
                        "user_instructions": _JSONISH,
                    },
                )
                | _JSONISH,
            },
        )
        | _JSONISH,
    },
)
_CLAUDE_MESSAGE = st.fixed_dictionaries(
    {},
    optional={
        "sender": st.sampled_from(["human", "assistant", "system", "Human"]) | _JSONISH,
        "text": st.sampled_from(["", " ", "hello", claude.PLACEHOLDER, "x " + claude.PLACEHOLDER]) | _JSONISH,
        "content": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "type": st.sampled_from(["text", "thinking", "tool_use", "tool_result", "image"]) | _JSONISH,
                    "text": st.sampled_from(["", "  ", "hey"]) | _JSONISH,
                },
            )
            | _JSONISH,
            max_size=3,
        )
        | _JSONISH,
    },
)


@given(_NODE | _JSONISH)
def test_chatgpt_normalise_keeps_exactly_what_classify_keeps(node: Any) -> None:
    verdict = chatgpt.classify(node)
    message = node.get("message") if type(node) is dict else None
    author = message.get("author") if type(message) is dict else None
    _assert_well_formed(verdict, author.get("role") if type(author) is dict else None)
    result = chatgpt.normalise({"mapping": {"a": node}, "current_node": "a"})
    if isinstance(verdict, Message):
        assert result is not None and result["messages"] == [
            {"id": "m1", "role": verdict.role, "ts": render_timestamp(verdict.stamp), "text": verdict.text}
        ]
    else:
        assert result is None


@given(_CLAUDE_MESSAGE | _JSONISH)
def test_claude_normalise_keeps_exactly_what_classify_keeps(message: Any) -> None:
    verdict = claude.classify(message)
    _assert_well_formed(verdict, message.get("sender") if type(message) is dict else None)
    result = claude.normalise({"uuid": "u", "chat_messages": [message]})
    if isinstance(verdict, Message):
        assert result is not None and result["messages"] == [
            {"id": "m1", "role": verdict.role, "ts": render_timestamp(verdict.stamp), "text": verdict.text}
        ]
    else:
        assert result is None


def _gpt(content: object, role: object = "assistant", **message: object) -> dict[str, Any]:
    return {"message": {"author": {"role": role}, "content": content, **message}}


@pytest.mark.parametrize(
    ("node", "reason"),
    [
        ({"message": None}, "no message"),
        ("string node", "malformed element"),
        ({"message": [1]}, "malformed element"),
        (
            _gpt({"content_type": "text", "parts": ["x"]}, metadata={"is_visually_hidden_from_conversation": True}),
            "hidden",
        ),
        (_gpt({"content_type": "text", "parts": ["x"]}, role="system"), "role system"),
        (_gpt({"content_type": "text", "parts": ["x"]}, role="Tool"), "role tool"),
        (_gpt({"content_type": "text", "parts": ["x"]}, role=" user"), "role other"),  # A24: no trimming
        (_gpt({"content_type": "text", "parts": ["x"]}, role=None), "role missing"),
        (_gpt({"content_type": None, "parts": ["x"]}), "content type null"),  # A10
        (_gpt({"content_type": "execution_output", "text": "x"}), "content type execution_output"),
        (_gpt({"content_type": "text", "parts": [" \u3000 "]}), "empty after trimming"),
        (
            _gpt({"content_type": "multimodal_text", "parts": [{"content_type": "image_asset_pointer"}]}),
            "no text parts",
        ),
        (_gpt({"content_type": "user_editable_context", "user_profile": "  "}), "empty after trimming"),
        (_gpt("not an object"), "malformed element"),
        (_gpt({"content_type": "text", "parts": ["kept"]}), None),
    ],
)
def test_chatgpt_drop_reason_names(node: object, reason: str | None) -> None:
    assert _reason(chatgpt.classify(node)) == reason


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("x", "malformed element"),
        ({"sender": "system", "text": "x"}, "role system"),
        ({"text": "x"}, "role missing"),
        ({"sender": "human", "text": claude.PLACEHOLDER}, "placeholder text"),
        ({"sender": "assistant", "text": "", "content": [{"type": "thinking", "thinking": "t"}]}, "thinking"),
        ({"sender": "assistant", "content": [{"type": "thinking"}, {"type": "tool_use"}]}, "tool_use/tool_result"),
        ({"sender": "assistant", "content": [{"type": "image"}]}, "block type image"),
        ({"sender": "assistant", "text": " \n", "content": [{"type": "text", "text": " "}]}, "empty after trimming"),
        ({"sender": "human", "text": "ok"}, None),
        ({"sender": "human", "content": [{"type": "text", "text": claude.PLACEHOLDER}]}, None),  # A26
    ],
)
def test_claude_drop_reason_names(message: object, reason: str | None) -> None:
    assert _reason(claude.classify(message)) == reason


# ---------------------------------------------------------------- timestamp forms


@pytest.mark.parametrize(
    ("value", "form"),
    [
        ("2023-10-07T07:03:01.693863+", "string: naive with trailing +"),
        ("2024-01-01T00:00:00z", "string: lowercase z"),
        ("2024-01-01t00:00:00Z", "string: lowercase t separator"),
        ("2024-01-01T00:00:00+05", "string: offset without minutes"),
        ("2024-01-01T00:00:00+5:30", "string: malformed offset"),
        ("2024-01-01 00:00:00 UTC", "string: zone name instead of offset"),
        ("2024-02-30", "string: impossible date or time, or outside years 0001-9999"),
        ("2024-01-01T24:00:00Z", "string: impossible date or time, or outside years 0001-9999"),
        ("1.7e9", "string: number-like but not a bare number (sign, exponent or dot)"),
        (" 2024-01-01", "string: surrounding whitespace"),
        ("yesterday", "string: unrecognised form"),
        ("", "string: empty"),
        (1e400, "number: not finite"),
        (10**300, "number: outside years 0001-9999"),
        (True, "boolean"),
        ({"t": 1}, "object"),
    ],
)
def test_unaccepted_forms(value: object, form: str) -> None:
    assert render_timestamp(value) is None
    assert unaccepted_form(value) == form


# ---------------------------------------------------------------- presentation


def test_examples_carry_id_and_title_and_text_only_on_request() -> None:
    case = ROOT / "fixtures" / "doctor" / "chatgpt-mixed" / "input.json"
    hidden = doctor(case).to_json()
    (example,) = hidden["examples"]["message: abandoned branch"]
    assert example == {"conversation_id": "c-a", "title": "Alpha", "at": "a1"}
    assert "First answer" not in json.dumps(hidden) and "First answer" not in doctor(case).summary()
    shown = doctor(case, show_text=True).to_json()
    assert shown["examples"]["message: abandoned branch"][0]["text"] == "First answer"


def test_summary_names_the_figures() -> None:
    text = doctor(ROOT / "fixtures" / "doctor" / "claude-mixed" / "input.json").summary()
    assert "claude export, 1 part; converts" in text
    assert "Conversations: 4 in the export, 2 kept, 2 dropped" in text
    assert "Messages: 14 in the export, 6 kept, 8 dropped" in text
    assert "block type hologram: 1" in text  # the never-seen-before list
    assert "string: naive with trailing +: 1" in text


def test_frames() -> None:
    report = doctor(ROOT / "fixtures" / "doctor" / "chatgpt-mixed" / "input.json")
    frames = report.frames()
    convs = frames["conversations"]
    assert list(convs["id"].dropna()) == ["c-a", "c-b", "c-d", "c-e"]
    assert convs["id"].isna().tolist() == [False, False, True, False, False]  # the element 42
    assert int(convs["messages_kept"].sum()) == report.messages_kept == 8
    assert list(convs["kept"]) == [True, False, False, False, True]
    drops = frames["drops"]
    assert int(drops[drops.level == "message"]["count"].sum()) == 13
    assert int(drops[drops.level == "conversation"]["count"].sum()) == 3
    types = frames["types"]
    assert types[types.unknown]["type"].tolist() == ["hologram"]
    assert set(frames) == {"conversations", "drops", "parts", "ignored", "types", "timestamps", "examples"}


def test_unreadable_input_raises_like_convert(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text("[{")
    with pytest.raises(mv.ConversionError) as info:
        doctor(bad)
    assert info.value.reason == "invalid-json"
    with pytest.raises(mv.ConversionError) as info:
        doctor(tmp_path / "nope.json")
    assert info.value.reason == "not-found"


def test_non_array_part_is_explained(tmp_path: Path) -> None:
    report = doctor(ROOT / "fixtures" / "doctor" / "single-object" / "input.json")
    (part,) = report.parts
    assert part.top_level == "object" and "one ChatGPT conversation" in (part.note or "")
    assert "conformance A16" in report.summary()


SINGLE_OBJECTS = [ROOT / "fixtures" / "doctor" / "single-object" / "input.json"] + [
    p
    for p in REAL_FILES
    if isinstance(json.loads(p.read_text(encoding="utf-8")), dict)
    and registry.provider_of(json.loads(p.read_text(encoding="utf-8"))) in registry.SUPPORTED
]


@pytest.mark.parametrize("path", SINGLE_OBJECTS, ids=lambda p: p.parent.name + "/" + p.name)
def test_if_wrapped_agrees_with_converting_the_wrapped_object(path: Path, tmp_path: Path) -> None:
    report = doctor(path)
    assert not report.converts and report.messages_kept == 0 and report.if_wrapped is not None
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_bytes(b"[" + path.read_bytes() + b"]")
    try:
        env = mv.convert(wrapped)
    except mv.ConversionError as exc:  # e.g. the fuzzed samples: nothing prose survives
        assert report.if_wrapped.error is not None and report.if_wrapped.error[0] == exc.reason
        return
    assert report.if_wrapped.converts
    assert report.if_wrapped.messages_kept == env["meta"]["message_count"]
    assert report.if_wrapped.conversations_kept == env["meta"]["conversation_count"]


def test_no_if_wrapped_when_an_array_part_has_elements(write_parts) -> None:
    single = json.loads((ROOT / "fixtures" / "doctor" / "single-object" / "input.json").read_text())
    paths = write_parts([single], single)
    report = doctor(*paths)
    assert report.converts and report.if_wrapped is None and report.messages_kept == 1


def _plain_chatgpt(system: bool, tool_in_metadata: bool) -> list[dict[str, Any]]:
    """The memory fixture's plain conversation (no memory item), with or without its system message, and
    with or without the bytes of a tool's role in an answer's metadata (where no author is)."""
    [conv] = json.loads((ROOT / "fixtures" / "memory" / "chatgpt-none.json").read_text(encoding="utf-8"))
    mapping = conv["mapping"]
    if not system:
        del mapping["d0"]
        mapping["d1"]["parent"] = None
    if tool_in_metadata:
        mapping["d2"]["message"]["metadata"] = {"role": "tool"}
    return [conv]


@pytest.mark.parametrize(
    ("system", "tool_in_metadata", "records"), [(True, False, True), (False, False, False), (False, True, True)]
)
def test_doctor_and_memory_decide_alike_whether_an_export_keeps_memory_records(
    tmp_path: Path, system: bool, tool_in_metadata: bool, records: bool
) -> None:
    """One rule says whether a ChatGPT export keeps memory records (a system or tool message, seen in an
    element's bytes): doctor's memory notes are those of ``memory_frame``, the bytes of a tool's role
    outside any author included."""
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(_plain_chatgpt(system, tool_in_metadata)), encoding="utf-8")
    notes = mv.memory_frame(path).attrs["notes"]
    assert notes == ([] if records else [NO_RECORDS])
    found = doctor(path).memory
    assert found["items"] == 0
    assert found["notes"] == notes
