"""`memvelope info` and `memvelope parquet`, in-process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from memvelope_tools._frames.envelopes import conversations_frame, messages_frame
from memvelope_tools._tables import read_parquet
from memvelope_tools.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
HAND = Path(__file__).resolve().parent / "data" / "hand.mve.json"
SAMPLE = FIXTURES / "sample.mve.json"
IR = FIXTURES / "ir" / "valid" / "offset-and-unknown-fields.mv.json"


def test_info_on_an_envelope(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(HAND)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{HAND}:",
        "  layer: envelope (envelope-v0)",
        "  provider: claude",
        "  conversations: 3",
        "  messages: 5",
        "  messages per role: user 3, assistant 2",
        "  dates (message ts): 2024-01-01T09:59:00.123Z .. 2024-03-01T00:00:00.000Z",
        "  undated messages: 2",
        "  conversation ids: 1 null, 1 repeated",
    ]


def test_info_on_a_facts_ir_and_counts_that_disagree_with_meta(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(HAND.read_bytes())
    doc["meta"]["message_count"] = 9
    lying = tmp_path / "lying.json"
    lying.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["info", str(IR), str(lying)]) == 0
    out = capsys.readouterr().out
    assert "  layer: Facts IR (memvelope-ir-v0)\n" in out
    assert "  facts: 5\n" in out
    assert "  categories: identity 1, career 2, preferences 1, relationship 1\n" in out
    assert "  subject types: self 3, person 2\n" in out
    assert "  effective dates: 2019 .. 2026-06-02\n" in out
    assert "  archetype style: reflective (deep self-knowledge)\n" in out
    assert "  generated at: 2026-06-30T22:58:47+05:30\n" in out
    assert "  messages: 5 (meta says 9)\n" in out


def test_info_reports_a_bad_file_on_one_line_and_goes_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"memvelope": "envelope-v1"}', encoding="utf-8")
    assert main(["info", str(bad), str(SAMPLE)]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"memvelope: error: unsupported tag 'envelope-v1'; supported: 'envelope-v0', 'memvelope-ir-v0' "
        f"(in {bad} at $.memvelope)"
    ]
    assert f"{SAMPLE}:" in captured.out and "provider: chatgpt" in captured.out


def test_parquet_writes_a_dataset_equal_to_the_frames(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a.mve.json"
    shutil.copy(HAND, a)
    out = tmp_path / "ds"
    assert main(["parquet", str(a), str(SAMPLE), str(IR), "-o", str(out)]) == 0
    said = capsys.readouterr()
    assert said.out == ""
    assert said.err.splitlines() == [
        f"memvelope: wrote {out / 'conversations.parquet'} (6 rows)",
        f"memvelope: wrote {out / 'messages.parquet'} ({5 + len(messages_frame(SAMPLE))} rows)",
        f"memvelope: wrote {out / 'facts.parquet'} (5 rows)",
    ]
    back = read_parquet(out)
    pd.testing.assert_frame_equal(back["messages"], messages_frame([a, SAMPLE]))
    pd.testing.assert_frame_equal(back["conversations"], conversations_frame([a, SAMPLE]))
    assert back["facts"]["source"].unique().tolist() == [IR.name]


def test_parquet_quiet_prints_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parquet", str(HAND), "-o", str(tmp_path / "q"), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert (tmp_path / "q" / "messages.parquet").is_file()


def test_parquet_bad_input_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parquet", str(tmp_path / "missing.json"), "-o", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err == f"memvelope: error: no such file or folder (in {tmp_path / 'missing.json'})\n"


@pytest.mark.parametrize("command", ["info", "parquet"])
def test_help_has_an_example(command: str) -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    text = sub.choices[command].format_help()  # type: ignore[union-attr]
    assert "Example" in text and f"memvelope {command} " in text


def test_progress_bars_are_silent_off_a_terminal_and_shown_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    from memvelope_tools._progress import progress_bar, wanted

    assert wanted(None) is False  # pytest's captured stderr is not a terminal
    with progress_bar(10, desc="quiet", enabled=None) as bar:
        bar.update(10)
    assert capsys.readouterr().err == ""
    with progress_bar(10, desc="shown", enabled=True) as bar:
        bar.update(10)
    assert "shown" in capsys.readouterr().err
