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


def _counted_messages(conv: dict[str, object]) -> int:
    """Messages of a conversation as its export holds them (mapping nodes with a message, or chat_messages)."""
    if "mapping" in conv:
        return sum(1 for node in conv["mapping"].values() if node.get("message"))  # type: ignore[union-attr]
    return len(conv["chat_messages"])  # type: ignore[arg-type]


@pytest.mark.parametrize("packed", ["folder", "zip"])
def test_doctor_reads_each_provider_by_its_own_rules(write_parts, tmp_path, packed: str, capsys) -> None:
    import json
    import zipfile

    chatgpt, claude = _chatgpt(3), _claude(2)
    paths = write_parts(chatgpt, claude, names=["conversations-000.json", "conversations-001.json"])
    source = paths[0].parent
    if packed == "zip":
        source = tmp_path / "export.zip"
        with zipfile.ZipFile(source, "w") as archive:
            for path in paths:
                archive.write(path, path.name)
    with pytest.warns(MixedProvidersWarning):
        env = mv.convert(source)
    report = mv.doctor(source)
    assert report.provider == "claude" and report.converts
    assert report.conversations_kept == env["meta"]["conversation_count"] == 2
    assert report.messages_kept == env["meta"]["message_count"]
    chatgpt_messages = sum(map(_counted_messages, chatgpt))
    claude_messages = sum(map(_counted_messages, claude))
    assert chatgpt_messages == 6  # two each: a user prompt and its answer
    assert report.messages_total == chatgpt_messages + claude_messages
    assert report.messages_total == report.messages_kept + sum(report.messages_dropped.values())
    others = [c for c in report.conversations if c.provider == "chatgpt"]
    assert [c.id for c in others] == ["g-0", "g-1", "g-2"]  # read by ChatGPT's rules: ids and titles known
    assert {c.omitted for c in others} == {"another provider's conversation"}
    assert "malformed element" not in report.conversations_dropped
    assert report.mixed_providers() == {
        "provider": "chatgpt",
        "conversations": 3,
        "messages": 6,
        "messages_kept_on_their_own": 6,
        "note": report.mixed,
    }
    assert report.mixed is not None and "3 ChatGPT conversations were left out" in report.mixed
    assert main(["doctor", str(source)]) == 0
    out = capsys.readouterr().out
    assert "malformed" not in out and "(no id)" not in out
    assert "e.g. g-0 'Hello' [ChatGPT]" in out
    assert "The 3 ChatGPT conversations are read by ChatGPT's rules: 6 messages, 6 of them kept" in out
    assert main(["doctor", "--json", str(source)]) == 0
    assert json.loads(capsys.readouterr().out)["mixed_providers"]["messages"] == 6
