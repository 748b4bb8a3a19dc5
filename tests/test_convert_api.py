"""convert(): merging parts, provider detection, counts, errors, determinism."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from reference_json import convert_values

import memvelope_tools as mv
from memvelope_tools._convert import ConversionLog

CHATGPT = {
    "conversation_id": "g",
    "mapping": {
        "u": {"message": {"author": {"role": "user"}, "content": {"parts": ["hello"]}, "create_time": 1700000000}}
    },
}
CLAUDE = {"uuid": "c", "name": "n", "chat_messages": [{"sender": "human", "text": "hi", "created_at": None}]}


def test_merge_in_argv_order_no_dedupe(write_parts) -> None:
    a, b = write_parts([CHATGPT], [dict(CHATGPT, conversation_id="h"), CHATGPT], names=["b.json", "a.json"])
    env = mv.convert(a, b)
    assert [c["id"] for c in env["conversations"]] == ["g", "h", "g"]
    assert env["meta"] == {"source_provider": "chatgpt", "conversation_count": 3, "message_count": 3}


def test_detection_claude_wins_within_first_five() -> None:
    assert convert_values([[CHATGPT, 1, 2, 3, CLAUDE]])["meta"]["source_provider"] == "claude"
    env = convert_values([[CHATGPT, CLAUDE]])
    assert env["meta"]["source_provider"] == "claude"
    assert env["meta"]["conversation_count"] == 1  # the ChatGPT element is omitted under Claude rules


def test_detection_looks_at_five_elements_only() -> None:
    with pytest.raises(mv.ConversionError) as info:
        convert_values([[1, "x", None, [], {}, CHATGPT]])
    assert info.value.reason == "no-provider"


def test_non_array_part_contributes_nothing() -> None:  # A16
    with pytest.raises(mv.ConversionError) as info:
        convert_values([CLAUDE])
    assert info.value.reason == "no-provider"
    assert "not an array" in str(info.value)
    assert convert_values([{"x": 1}, [CLAUDE]])["meta"]["conversation_count"] == 1


def test_empty_and_all_filtered(write_parts) -> None:
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(*write_parts([]))
    assert info.value.reason == "no-provider"
    empty = dict(CLAUDE, chat_messages=[{"sender": "system", "text": "x"}])
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(*write_parts([empty]))
    assert info.value.reason == "no-conversations"


def test_invalid_json_names_the_file(write_parts) -> None:  # A15
    good, bad = write_parts([CLAUDE], b'[{"uuid": ', names=["good.json", "bad.json"])
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(good, bad)
    assert info.value.reason == "invalid-json"
    assert "bad.json" in str(info.value) and "line 1" in str(info.value)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_json_constants_rejected(write_parts, literal: str) -> None:
    (path,) = write_parts(f'[{{"uuid": "c", "chat_messages": [], "x": {literal}}}]')
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(path)
    assert info.value.reason == "invalid-json"


def test_bom_stripped_and_invalid_utf8_replaced(write_parts) -> None:  # A17
    body = json.dumps([dict(CLAUDE, name="x")]).encode()
    (bom,) = write_parts(b"\xef\xbb\xbf" + body)
    assert mv.convert(bom)["conversations"][0]["title"] == "x"
    raw = body.replace(b'"hi"', b'"h\xffi\xed\xa0\x80"')
    (bad,) = write_parts(raw, names=["bad.json"])
    report = ConversionLog()
    env = mv.convert(bad, report=report)
    assert env["conversations"][0]["messages"][0]["text"] == "h\ufffdi\ufffd\ufffd\ufffd"
    assert report.replaced == {str(bad): 4}


def test_lone_surrogates_survive_and_serialise(write_parts) -> None:
    (path,) = write_parts('[{"uuid": "c", "chat_messages": [{"sender": "human", "text": "a\\ud800b"}]}]')
    data = mv.dumps_canonical(mv.convert(path))
    assert b'"text": "a\\ud800b"' in data


def test_huge_integer_timestamp_behaves_as_a_double(write_parts) -> None:
    (path,) = write_parts(
        '[{"uuid": "c", "created_at": 1' + "0" * 400 + ', "chat_messages": [{"sender":'
        ' "human", "text": "x", "created_at": 1700000000000000000000}]}]'
    )
    conv = mv.convert(path)["conversations"][0]
    assert conv["messages"][0]["ts"] is None and conv["created_at"] is None


def test_deep_nesting_is_a_clear_error(write_parts) -> None:
    (path,) = write_parts("[" * 100_000 + "]" * 100_000)
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(path)
    assert info.value.reason == "too-deep"


def test_write_envelope_atomic(tmp_path: Path, write_parts) -> None:
    out = tmp_path / "h.mve.json"
    out.write_bytes(b"previous")
    env = mv.convert(*write_parts([CLAUDE]))
    mv.write_envelope(env, out)
    assert out.read_bytes() == mv.dumps_canonical(env)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_no_network_during_conversion(monkeypatch: pytest.MonkeyPatch, write_parts) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("conversion tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    sample = Path(mv.__file__).parent / "samples"
    paths = sorted(sample.glob("*.zip")) or write_parts([CLAUDE])
    for path in paths:
        assert mv.convert(path)["meta"]["conversation_count"] >= 1


@pytest.mark.slow
def test_bytes_do_not_depend_on_hash_seed_timezone_or_locale(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "envelope"
    cases = sorted(p for p in fixture.iterdir() if p.is_dir() and (p / "expected.mve.json").exists())[:12]
    assert cases
    code = (
        "import sys, hashlib, memvelope_tools as mv\n"
        "from memvelope_tools._conformance import case_inputs\n"
        "from pathlib import Path\n"
        "h = hashlib.sha256()\n"
        "for c in sys.argv[1:]:\n"
        "    h.update(mv.dumps_canonical(mv.convert(*case_inputs(Path(c)))))\n"
        "print(h.hexdigest())\n"
    )
    digests = set()
    for seed, tz, lang in [
        ("0", "UTC", "C"),
        ("12345", "Asia/Kolkata", "de_DE.UTF-8"),
        ("random", "America/St_Johns", "tr_TR.UTF-8"),
    ]:
        env = dict(os.environ, PYTHONHASHSEED=seed, TZ=tz, LANG=lang, LC_ALL=lang)
        out = subprocess.run(
            [sys.executable, "-c", code, *map(str, cases)], env=env, capture_output=True, text=True, check=True
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1
