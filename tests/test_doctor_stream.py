"""Doctor reads an export a batch of elements at a time, as conversion does: its findings on an export
split into parts and read one element per batch are the hand-counted ones, each conversation named in
the part it was written to, and an array part is never read whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memvelope_tools._convert import sources
from memvelope_tools._doctor import doctor
from memvelope_tools._json import elements

ROOT = Path(__file__).resolve().parent.parent
CASES = ("chatgpt-mixed", "claude-mixed")
# The counts of expected.json that are whole tables or single figures, compared exactly.
COUNTED = (
    "provider",
    "converts",
    "conversations_total",
    "conversations_kept",
    "conversations_dropped",
    "messages_total",
    "messages_kept",
    "messages_dropped",
    "branches",
    "ordering",
)


def _split(values: list[Any]) -> list[list[Any]]:
    """The elements as three parts: an empty one, then the first two, then the rest."""
    return [[], values[:2], values[2:]]


def _findings(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k not in ("inputs", "parts")}


@pytest.fixture
def one_element_per_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(elements, "BATCH", 1)
    monkeypatch.setattr(elements, "CHUNK", 64)


@pytest.mark.parametrize("case", CASES)
def test_parts_read_an_element_at_a_time_give_the_hand_counted_findings(
    case: str, write_parts: Any, one_element_per_batch: None
) -> None:
    source = ROOT / "fixtures" / "doctor" / case
    values = json.loads((source / "input.json").read_text(encoding="utf-8"))
    expected = json.loads((source / "expected.json").read_text(encoding="utf-8"))
    split = _split(values)
    names = [f"conversations-{i:03d}.json" for i in range(len(split))]
    paths = write_parts(*split, names=names)
    report = doctor(*paths, show_text=True)
    found = report.to_json()
    for key in COUNTED:
        assert found[key] == expected[key], key
    assert [(p["name"], p["elements"]) for p in found["parts"]] == [
        (str(path), len(part)) for path, part in zip(paths, split, strict=True)
    ]
    written_in = [str(path) for path, part in zip(paths, split, strict=True) for _ in part]
    assert [c.part for c in report.conversations] == written_in
    assert [c.index for c in report.conversations] == list(range(len(values)))
    whole = doctor(source / "input.json", show_text=True).to_json()
    assert _findings(found) == _findings(whole)


def test_the_other_providers_conversations_after_the_first_batch_are_read_by_their_rules(
    write_parts: Any, one_element_per_batch: None
) -> None:
    chatgpt = json.loads((ROOT / "fixtures" / "doctor" / "chatgpt-mixed" / "input.json").read_text(encoding="utf-8"))
    claude = json.loads((ROOT / "fixtures" / "doctor" / "claude-mixed" / "input.json").read_text(encoding="utf-8"))
    # ChatGPT's 5 elements decide the provider; of Claude's 4 that come later, "w" has no chat_messages (no
    # Claude conversation: a malformed ChatGPT element), x, y and z hold 14 messages, 6 kept on their own
    report = doctor(*write_parts(chatgpt, claude, chatgpt))
    mixed = report.mixed_providers()
    assert report.provider == "chatgpt" and mixed is not None
    assert mixed["provider"] == "claude" and mixed["conversations"] == 3 and mixed["messages"] == 14
    assert mixed["messages_kept_on_their_own"] == 6
    assert report.elements == 14 and report.conversations_kept == 4


def test_an_array_part_is_never_read_whole(
    write_parts: Any, one_element_per_batch: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = json.loads((ROOT / "fixtures" / "doctor" / "chatgpt-mixed" / "input.json").read_text(encoding="utf-8"))
    asked: list[int] = []
    read = sources._ReadGuard.read

    def counted(self: Any, size: int = -1) -> bytes:
        asked.append(size)
        return read(self, size)

    monkeypatch.setattr(sources._ReadGuard, "read", counted)
    assert doctor(*write_parts(*_split(values))).conversations_kept == 2
    assert asked and all(0 < size <= 4096 for size in asked), sorted(set(asked))
