"""The saved memories ChatGPT cited in its answers (``conversation_context_type: "user_memory"``): all the
sharded 2026 export keeps of its memory, read by memory_frame and listed by ``memvelope memory``."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import COLLECTED
from whole_exports import T0, chatgpt, message

import memvelope_tools as mv
from memvelope_tools._memory.frame import memory_frame
from memvelope_tools._memory.items import NO_RECORDS
from memvelope_tools._memory.read import read_memory
from memvelope_tools._memory_ir import build_memory_ir
from memvelope_tools._validate import check_ir_against_envelope, validate
from memvelope_tools._whole.citations import CITED_ONLY, merge_quotes
from memvelope_tools.cli import main

REAL = COLLECTED / "files" / "Fenixhuman27__knowledge-forge__data-conversations-004.json"


def _citing(*cited: tuple[str, str, str], other: bool = False) -> dict[str, Any]:
    """A message's metadata citing memories, each ``(citation uuid, memory id, snippet)``."""
    entries = [
        {
            "citation": {
                "conversation_context_type": "user_memory",
                "memory_id": memory,
                "snippet": snippet,
                "title": "the model's words",
                "reason": "the model's reason",
                "type": "conversation_context_citation",
            },
            "citation_uuid": uuid,
            "deleted": False,
        }
        for uuid, memory, snippet in cited
    ]
    if other:
        entries.append(
            {
                "citation": {"conversation_context_type": "past_conversation", "snippet": "an earlier chat"},
                "citation_uuid": "p-1",
            }
        )
    return {"conversation_context_citation_metadata": entries}


def _export(tmp_path: Path, convs: list[dict[str, Any]]) -> Path:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(convs), encoding="utf-8")
    return path


def test_citations_become_one_item_per_memory(tmp_path: Path) -> None:
    first = chatgpt(
        "c1",
        [
            message("user", ["how old am I?"], at=1),
            message("assistant", ["You are 45."], metadata=_citing(("u1", "m-age", "Mario is 45"), other=True), at=2),
            message("user", ["and?"], at=3),
            message(
                "assistant",
                ["45, born 1980."],
                metadata=_citing(("u2", "m-age", "Mario is 45, born in 1980."), ("u3", "m-tea", "likes tea")),
                at=4,
            ),
        ],
    )
    second = chatgpt(
        "c2",
        [
            message("user", ["?"], at=50),
            message("assistant", ["ok"], metadata=_citing(("u4", "m-age", "unemployed")), at=60),
        ],
    )
    frame = memory_frame(_export(tmp_path, [first, second, first]))  # the first conversation given twice
    cited = frame[frame["kind"] == "cited"].set_index("memory_id")
    assert sorted(cited.index) == ["m-age", "m-tea"] and len(frame) == 2
    age = cited.loc["m-age"]
    assert age["count"] == 3  # three citations (u1, u2, u4): a repeated conversation adds none
    assert age["conversation_ids"] == ["c1", "c2"]
    assert age["text"] == "Mario is 45, born in 1980. … unemployed"  # the first quote is inside the second
    assert age["first_seen"] == pd.Timestamp(T0 + 2, unit="s", tz="UTC")
    assert age["last_seen"] == pd.Timestamp(T0 + 60, unit="s", tz="UTC")
    assert (age["conversation_id"], age["node_id"], age["message_id"], age["on_active_path"]) == (
        "c1",
        "n2",
        "m2",
        True,
    )
    assert cited.loc["m-tea", "count"] == 1 and cited.loc["m-tea", "conversation_ids"] == ["c1"]
    assert frame.attrs["notes"] == [CITED_ONLY]  # no system or tool message: only what was cited is known


def test_other_kinds_have_no_conversation_ids_and_a_note_only_without_records(tmp_path: Path) -> None:
    conv = chatgpt(
        "c1",
        [
            message("user", ["remember I like tea"], at=1),
            {**message("assistant", ["User likes tea."], at=2), "recipient": "bio"},
            message("tool", ["Model set context updated."], at=3, name="bio"),
            message("assistant", ["Tea it is."], metadata=_citing(("u1", "m-tea", "User likes tea.")), at=4),
        ],
    )
    frame = memory_frame(_export(tmp_path, [conv]))
    assert sorted(frame["kind"].astype(str)) == ["cited", "saved"] and frame.attrs["notes"] == []
    saved = frame[frame["kind"] == "saved"].iloc[0]
    assert saved["conversation_ids"] is None and pd.isna(saved["memory_id"])


def test_an_export_without_memory_keeps_its_note(tmp_path: Path) -> None:
    conv = chatgpt("c1", [message("user", ["hi"]), message("assistant", ["hello"], metadata=_citing(), at=1)])
    read = read_memory(_export(tmp_path, [conv]))
    assert read.items == [] and read.notes == [NO_RECORDS]


def test_doctor_counts_cited_memories_apart_from_envelope_messages(tmp_path: Path) -> None:
    conv = chatgpt("c1", [message("user", ["?"]), message("assistant", ["yes"], metadata=_citing(("u", "m", "tea")))])
    report = mv.doctor(_export(tmp_path, [conv])).to_json()["memory"]
    assert report["by_kind"] == {"cited": 1} and report["notes"] == [CITED_ONLY]
    assert report["also_in_envelope"] == 0  # the answer citing it is in the envelope, the memory is not


def test_merge_quotes_keeps_each_part_once() -> None:
    text = merge_quotes("a b c", "x y")
    assert text == "a b c … x y"
    assert merge_quotes(text, "b  c") == text  # held already (spaces do not count)
    assert merge_quotes(text, "a b c d") == "a b c d … x y"  # takes the place of the shorter
    assert merge_quotes("one … two", "one two three") == "one two three"  # holds both: stands for both


def test_the_facts_ir_of_cited_memories_validates(tmp_path: Path) -> None:
    conv = chatgpt(
        "c1",
        [
            message("user", ["?"]),
            message("assistant", ["yes"], metadata=_citing(("u", "m", "User lives in Porto.")), at=5),
        ],
    )
    path = _export(tmp_path, [conv])
    doc = build_memory_ir(read_memory(path), mv.convert(path))
    assert validate(doc) == [] and check_ir_against_envelope(doc, mv.convert(path)) == []
    assert [(f["content"], f["memory_kind"]) for f in doc["facts"]] == [("User lives in Porto.", "cited")]


# ---- the real 2026 export --------------------------------------------------------------------------


def _walk(value: Any) -> Any:
    """Every object inside ``value``, at any depth."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


@pytest.fixture(scope="module")
def real() -> tuple[pd.DataFrame, dict[str, list[tuple[str, float, str]]]]:
    if not REAL.exists():
        pytest.skip("the collected real exports are not beside the repository")
    # counted by hand, apart from the reader: every user_memory object anywhere in each message
    by_memory: dict[str, list[tuple[str, float, str]]] = defaultdict(list)
    for conv in json.loads(REAL.read_text(encoding="utf-8")):
        for node in conv["mapping"].values():
            msg = node.get("message") or {}
            for obj in _walk(msg):
                if obj.get("conversation_context_type") == "user_memory":
                    by_memory[obj["memory_id"]].append((conv["conversation_id"], msg["create_time"], obj["snippet"]))
    return memory_frame(REAL), by_memory


def test_real_2026_export_30_citations_of_7_memories_in_13_conversations(real: Any) -> None:
    frame, by_memory = real
    sightings = [s for found in by_memory.values() for s in found]
    assert (len(sightings), len(by_memory), len({c for c, _, _ in sightings})) == (30, 7, 13)
    cited = frame[frame["kind"] == "cited"]
    assert len(frame) == len(cited) == 7 and frame.attrs["notes"] == [CITED_ONLY]
    assert cited["count"].sum() == 30
    assert len({c for ids in cited["conversation_ids"] for c in ids}) == 13
    for row in cited.itertuples():
        found = by_memory[row.memory_id]
        assert row.count == len(found)
        assert sorted(row.conversation_ids) == sorted({c for c, _, _ in found})
        assert row.first_seen == pd.Timestamp(min(t for _, t, _ in found), unit="s", tz="UTC").floor("ms")
        assert row.last_seen == pd.Timestamp(max(t for _, t, _ in found), unit="s", tz="UTC").floor("ms")
        spaced = " ".join(row.text.split())
        assert all(" ".join(snippet.split()) in spaced for _, _, snippet in found)


def test_real_2026_export_memory_command_lists_them(real: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", str(REAL), "-q"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("What ChatGPT remembers about you (read from the export): 7 items, oldest first.")
    assert out.count("memory ChatGPT cited: ") == 7 and "cannot be read from what was given" not in out
    assert "memory 1d3ae956-1898-4537-8a61-2c9bdea5a168, cited 8 times in 4 conversations until 2026-06-07" in out
