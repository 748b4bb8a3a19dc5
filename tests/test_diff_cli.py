"""``memvelope diff`` in a process of its own: the exports are converted by child processes started
before the command loads its libraries, and the result is the one the same command gives in a
process where that cannot happen (this test process, which already runs several threads)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import fresh

from memvelope_tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
HISTORY = ROOT / "fixtures" / "history"
GPT_OLD = HISTORY / "chatgpt-old" / "conversations.json"
GPT_NEW = HISTORY / "chatgpt-new" / "conversations.json"
CLAUDE_OLD = HISTORY / "claude-old" / "conversations.json"
CLAUDE_NEW = HISTORY / "claude-new" / "conversations.json"


@pytest.mark.parametrize(("old", "new"), [(GPT_OLD, GPT_NEW), (CLAUDE_OLD, CLAUDE_NEW)])
def test_a_fresh_process_gives_the_json_of_this_one(old: Path, new: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(old), str(new), "--json"]) == 0
    here = capsys.readouterr().out
    run = fresh("diff", str(old), str(new), "--json")
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout == here
    assert sum(json.loads(run.stdout)["counts"].values()) >= 4  # the fixtures hold four conversations or more


def test_a_fresh_process_gives_the_summary_of_this_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(CLAUDE_OLD), str(CLAUDE_NEW)]) == 0
    here = capsys.readouterr().out
    run = fresh("diff", str(CLAUDE_OLD), str(CLAUDE_NEW), "-q")
    assert run.returncode == 0
    assert run.stdout == here
    assert run.stdout.startswith("4 conversations: new 1, missing 1, unchanged 1, grown 1\n")


def test_an_export_that_fails_to_convert_is_one_line_naming_it(tmp_path: Path) -> None:
    broken = tmp_path / "conversations.json"
    broken.write_bytes(GPT_NEW.read_bytes()[:-40])  # cut short: not JSON any more
    run = fresh("diff", str(GPT_OLD), str(broken), "--json")
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("memvelope: error:")
    assert str(broken) in run.stderr or broken.name in run.stderr
    assert "Traceback" not in run.stderr


def test_an_envelope_beside_an_export_is_read_as_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    envelope = tmp_path / "old.mve.json"
    assert main(["convert", str(GPT_OLD), "-o", str(envelope), "-q"]) == 0
    assert main(["diff", str(GPT_OLD), str(GPT_NEW), "--json"]) == 0
    from_exports = capsys.readouterr().out
    run = fresh("diff", str(envelope), str(GPT_NEW), "--json")
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout == from_exports


def test_a_chatgpt_export_against_a_claude_one_says_they_are_different_providers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["diff", str(GPT_OLD), str(CLAUDE_NEW)]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        "memvelope: note: the two exports are of different providers (chatgpt and claude), so no conversation "
        "matches: compare two exports of one account\n"
    )
    # the older export's 5 ChatGPT conversations with ids are missing, its 2 without one unmatched; Claude's 3 new
    assert captured.out.startswith("10 conversations: new 3, missing 5, unmatched 2\n")
    assert main(["diff", str(CLAUDE_OLD), str(CLAUDE_NEW)]) == 0
    assert capsys.readouterr().err == ""  # one provider: no note
