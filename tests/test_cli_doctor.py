"""`memvelope doctor`: JSON keys, exit codes, one-line errors, no message text without --show-text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import memvelope_tools as mv
from memvelope_tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
CHATGPT_MIXED = ROOT / "fixtures" / "doctor" / "chatgpt-mixed" / "input.json"
CLAUDE = [
    {
        "uuid": "c",
        "name": "Named",
        "chat_messages": [
            {"sender": "human", "text": "a secret sentence"},
            {"sender": "assistant", "text": "", "content": [{"type": "thinking", "thinking": "private musing"}]},
        ],
    }
]


def test_json_top_level(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--json", str(CHATGPT_MIXED)]) == 0
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert out.err == ""
    assert report["messages_kept"] == mv.convert(CHATGPT_MIXED)["meta"]["message_count"] == 8
    assert report["messages_dropped"]["abandoned branch"] == 1
    assert sum(report["messages_dropped"].values()) == 13
    for key in (
        "provider",
        "converts",
        "conversations_kept",
        "conversations_dropped",
        "parts",
        "ignored",
        "branches",
        "timestamps",
        "ordering",
        "types",
        "unknown_types",
        "examples",
    ):
        assert key in report, key


def test_text_summary_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", str(CHATGPT_MIXED)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("memvelope doctor: chatgpt export, 1 part; converts")
    assert "Messages: 21 in the export" in out and "abandoned branch" in out


def test_no_message_text_without_show_text(write_parts, capsys: pytest.CaptureFixture[str]) -> None:
    (path,) = write_parts(CLAUDE)
    for flags in ([], ["--json"]):
        assert main(["doctor", *flags, str(path)]) == 0
        out = capsys.readouterr().out
        assert "secret sentence" not in out and "private musing" not in out
        assert "Named" in out  # titles are shown: they name the example
    assert main(["doctor", "--json", "--show-text", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["examples"]["message: thinking"][0]["text"] == "private musing"


@pytest.mark.parametrize(
    ("content", "reason_words"),
    [
        (b"[{", "not valid JSON"),
        (None, "no such file or folder"),
    ],
)
def test_bad_input_one_line_error(
    write_parts, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, reason_words: str
) -> None:
    path = write_parts(content)[0] if content is not None else tmp_path / "missing.json"
    assert main(["doctor", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("memvelope: error: ") and captured.err.count("\n") == 1
    assert reason_words in captured.err and "Traceback" not in captured.err


def test_export_that_would_not_convert_reports_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unknown = tmp_path / "conversations.json"
    unknown.write_text(json.dumps([{"name": "not a conversation"}]))
    assert main(["doctor", "--json", str(unknown)]) == 1
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["converts"] is False and report["error"]["reason"] == "no-provider"
    assert report["messages_kept"] == 0
    assert captured.err.count("\n") == 1 and "would not convert" in captured.err


def test_a_single_conversation_is_one_line_as_for_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    single = ROOT / "fixtures" / "doctor" / "single-object" / "input.json"
    assert main(["doctor", str(single)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "memvelope: error: a single ChatGPT conversation, not an export: an export is an array of conversations; "
        f"put it inside [ ] to convert it (in {single})\n"
    )


def test_help_has_an_example() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memvelope_tools", "doctor", "--help"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0 and "Example" in proc.stdout and "--show-text" in proc.stdout
