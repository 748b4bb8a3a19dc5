"""Provider memory over real exports: several exports at once, single-conversation files, wrong inputs,
and snapshot entries traced through the writes they merge."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import COLLECTED

import memvelope_tools as mv
from memvelope_tools._memory.frame import memory_frame

TREE = COLLECTED / "memory" / "xiaodaimeng2333__ChatGPT-Tree-Saver__tree-tsx-conversation.json"
HELLO = COLLECTED / "memory" / "xiaodaimeng2333__ChatGPT-Tree-Saver__hello-tsx-conversation.json"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"the collected real exports are not beside the repository ({path.name})")
    return path


def _current_snapshot(path: Path) -> tuple[str, list[str]]:
    """The node id and the entries' texts of the snapshot on the conversation's active path, read from the
    raw JSON: the model_editable_context node met walking up from current_node."""
    conv = json.loads(path.read_text(encoding="utf-8"))
    mapping, node = conv["mapping"], conv["current_node"]
    while node is not None:
        content = (mapping[node].get("message") or {}).get("content") or {}
        if content.get("content_type") == "model_editable_context":
            blocks = [b for b in content["model_set_context"].split("\n\n") if b.strip()]
            return node, [" ".join(b.split(". ", 2)[2].split()) for b in blocks]
        node = mapping[node].get("parent")
    raise AssertionError("no snapshot on the active path")


# --- snapshot rows: on the active path, traced -----------------------------------------------------


def test_snapshot_row_on_active_path_is_that_of_its_latest_snapshot() -> None:
    path = _need(TREE)
    _, entries = _current_snapshot(path)
    assert len(entries) == 21
    frame = memory_frame(path)
    snap = frame[frame["kind"] == "snapshot"]
    current = snap[snap["text"].isin(entries)]
    assert len(current) == 21 and current["current"].all()
    assert current["on_active_path"].tolist() == [True] * 21
    # the entry the current snapshot rewrote is listed only in snapshots of abandoned branches
    gone = snap[~snap["text"].isin(entries)]
    assert len(gone) == 1 and gone["on_active_path"].tolist() == [False]


def test_merged_snapshot_entry_is_traced_as_the_writes_it_merges(tmp_path: Path) -> None:
    path = _need(TREE)
    wrapped = tmp_path / "conversations.json"
    wrapped.write_text("[" + path.read_text(encoding="utf-8") + "]", encoding="utf-8")
    facts = mv.distill_structured(mv.convert(wrapped))
    frame = memory_frame(path, facts=facts)
    _, entries = _current_snapshot(path)
    merged = entries[-1]  # entry 21: the write about San Francisco, then the one about Sweden
    first = "User wants to work for an AI company in San Francisco"
    writes = frame[(frame["kind"] == "saved") & frame["text"].str.contains("San Francisco")]
    assert len(writes) == 2 and writes["traced"].all()  # each traced by the message the user wrote before it
    snap = frame[frame["kind"] == "snapshot"]
    older = snap[~snap["current"].astype(bool)]
    assert older["text"].str.startswith(first).tolist() == [True] and older["traced"].all()
    row = frame[(frame["kind"] == "snapshot") & (frame["text"] == merged)]
    assert row["current"].tolist() == [True]
    assert row["traced"].tolist() == [True]


def test_snapshot_entry_with_a_word_no_write_holds_is_not_traced() -> None:
    from memvelope_tools._memory_trace import add_trace

    frame = pd.DataFrame(
        {
            "kind": pd.Categorical(["saved", "saved", "snapshot", "snapshot"]),
            "text": [
                "User lives in Oslo.",
                "User has a dog.",
                "User lives in Oslo. They have a dog.",
                "User lives in Oslo. They have a cat.",
            ],
            "ts": pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-03"], utc=True),
            "first_seen": pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-03"], utc=True),
            "current": pd.array([None, None, True, True], dtype="boolean"),
            "stated_date": [None, None, None, None],
            "conversation_id": ["c1", "c2", "c3", "c3"],
            "preceding_user_message": ["I live in Oslo", "I have a dog now", None, None],
        }
    )
    facts = pd.DataFrame(columns=["fact_index", "content", "convo_id", "effective_date", "category"])
    traced = add_trace(frame, facts)["traced"].tolist()
    assert traced == [True, True, True, False]
