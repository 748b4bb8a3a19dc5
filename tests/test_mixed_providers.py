"""One call given conversations of both providers: the library warns, the command line says what was
kept, why, how many of the other provider were left out and how to convert each."""

from __future__ import annotations

import copy
import warnings

import pytest
from small_exports import CHATGPT_CONV, CLAUDE_CONV

import memvelope_tools as mv
from memvelope_tools.cli import main
from memvelope_tools.errors import MixedProvidersWarning


def _chatgpt(n: int) -> list[dict[str, object]]:
    out = []
    for i in range(n):
        conv = copy.deepcopy(CHATGPT_CONV)
        conv["id"] = f"g-{i}"
        out.append(conv)
    return out


def _claude(n: int) -> list[dict[str, object]]:
    out = []
    for i in range(n):
        conv = copy.deepcopy(CLAUDE_CONV)
        conv["uuid"] = f"k-{i}"
        out.append(conv)
    return out


def test_library_warns_claude_kept_when_among_the_first_five(write_parts) -> None:
    # Two ChatGPT conversations first, then three Claude ones: a Claude one is among the first five.
    chatgpt, claude = write_parts(_chatgpt(2), _claude(3), names=["chatgpt.json", "claude.json"])
    with pytest.warns(MixedProvidersWarning) as caught:
        env = mv.convert(chatgpt, claude)
    assert env["meta"]["source_provider"] == "claude"
    assert len(env["conversations"]) == 3
    (w,) = [w for w in caught if issubclass(w.category, MixedProvidersWarning)]
    assert w.message.provider == "claude" and w.message.left_out == 2  # type: ignore[union-attr]
    text = str(w.message)
    assert "kept Claude" in text and "2 ChatGPT conversations were left out" in text
    assert "first 5" in text and "convert-many" in text
    assert w.filename == __file__  # points at the caller, not the package


def test_library_warns_chatgpt_kept_when_no_claude_among_the_first_five(write_parts) -> None:
    chatgpt, claude = write_parts(_chatgpt(5), _claude(1), names=["chatgpt.json", "claude.json"])
    expected = r"kept ChatGPT, as none of its first 5 .* 1 Claude conversation was left"
    with pytest.warns(MixedProvidersWarning, match=expected):
        env = mv.convert(chatgpt, claude)
    assert env["meta"]["source_provider"] == "chatgpt"


def test_one_provider_gives_no_warning(write_parts) -> None:
    (part,) = write_parts(_chatgpt(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", MixedProvidersWarning)
        mv.convert(part)


def test_cli_note_says_kept_why_how_many_and_how(write_parts, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    chatgpt, claude = write_parts(_chatgpt(3), _claude(1), names=["chatgpt.json", "claude.json"])
    assert main(["convert", str(chatgpt), str(claude), "-o", str(tmp_path / "out.mve.json")]) == 0
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err  # the note once, not the Python warning as well
    assert lines[0].startswith("memvelope: note: the input mixes ChatGPT and Claude conversations: kept Claude")
    assert "3 ChatGPT conversations were left out" in lines[0]
    assert "here Claude (from its first elements)" not in err


def test_cli_topics_gives_the_warning_as_a_note(write_parts, capsys: pytest.CaptureFixture[str]) -> None:
    folder_parts = write_parts(_chatgpt(6), _claude(1), names=["conversations-000.json", "conversations-001.json"])
    folder = folder_parts[0].parent
    main(["topics", str(folder), "-n", "1"])
    err = capsys.readouterr().err
    assert "memvelope: note: the input mixes ChatGPT and Claude conversations: kept ChatGPT" in err
