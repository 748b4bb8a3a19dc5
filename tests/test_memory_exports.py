"""Provider memory over real exports: several exports at once, single-conversation files, wrong inputs,
and snapshot entries traced through the writes they merge."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import COLLECTED, REAL_EXPORTS

import memvelope_tools as mv
from memvelope_tools._memory.frame import memory_frame
from memvelope_tools._memory.items import INSTRUCTIONS_ONLY, NO_RECORDS
from memvelope_tools._memory_ir import statements
from memvelope_tools._validate import check_ir_against_envelope, validate
from memvelope_tools.cli import main
from memvelope_tools.errors import InputError

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


# --- single-conversation files, notes, wrong inputs --------------------------------------------------


@pytest.mark.parametrize("path", [HELLO, TREE], ids=["hello-tsx", "tree-tsx"])
def test_memory_o_and_memory_ir_write_what_memory_lists_for_a_single_conversation(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _need(path)
    assert main(["memory", str(path)]) == 0
    listed = capsys.readouterr().out
    out = tmp_path / "memories.mv.json"
    assert main(["memory", "-q", str(path), "-o", str(out)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    # the envelope the file gives with its conversation inside [ ], as the listing's message ids say
    wrapped = tmp_path / "conversations.json"
    wrapped.write_text("[" + path.read_text(encoding="utf-8") + "]", encoding="utf-8")
    assert validate(doc) == [] and check_ir_against_envelope(doc, mv.convert(wrapped)) == []
    frame = memory_frame(path)
    assert f"{len(frame)} items, oldest first" in listed
    contents = {f["content"] for f in doc["facts"]}
    for text, kind in zip(frame["text"], frame["kind"].astype(str), strict=True):
        assert set(statements(text, kind)) <= contents, text
    api = mv.memory_ir(path)
    assert api["facts"] == doc["facts"]


def test_custom_instructions_without_memory_records_get_a_note_that_does_not_deny_them() -> None:
    path = _need(REAL_EXPORTS / "librechat" / "chatgpt-modern-export.json")
    frame = memory_frame(path)
    assert sorted(frame["kind"].astype(str)) == ["about_model", "about_user"]
    assert list(frame["text"]) == ["The user is an SRE.", "Answer concisely."]
    assert NO_RECORDS not in frame.attrs["notes"]
    assert frame.attrs["notes"] == [INSTRUCTIONS_ONLY]
    assert "custom instructions listed were read" in INSTRUCTIONS_ONLY


@pytest.mark.parametrize(
    "path",
    [
        COLLECTED / "files" / "Fenixhuman27__knowledge-forge__data-export_manifest.json",
        COLLECTED / "files" / "bot-knows__claude_export.json",
        REAL_EXPORTS / "synapse" / "export_manifest.json",
    ],
    ids=["manifest", "wrapper", "synapse-manifest"],
)
def test_memory_refuses_a_manifest_or_wrapper_as_convert_does(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _need(path)
    assert main(["convert", str(path)]) == 1
    refused = capsys.readouterr().err
    assert main(["memory", str(path)]) == 1
    err = capsys.readouterr().err
    assert err == refused and err.count("\n") == 1
    assert f"(in {path})" in err
    with pytest.raises(InputError) as caught:
        mv.memory_frame(path)
    assert caught.value.reason == "no-provider" and caught.value.source == str(path)


# --- several exports -------------------------------------------------------------------------------

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "memory"


def _raw_items(path: Path) -> set[tuple[str, str]]:
    """The distinct remembered texts of one ChatGPT conversation file, read from the raw JSON: its
    assistant messages to bio and the entries of its model_set_context snapshots."""
    conv = json.loads(path.read_text(encoding="utf-8"))
    found: set[tuple[str, str]] = set()
    for node in conv["mapping"].values():
        message = node.get("message") or {}
        content = message.get("content") or {}
        if message.get("recipient") == "bio" and message["author"]["role"] == "assistant":
            found.add(("saved", " ".join(content["parts"][0].split())))
        if content.get("content_type") == "model_editable_context":
            for block in content["model_set_context"].split("\n\n"):
                if block.strip():
                    found.add(("snapshot", " ".join(block.split(". ", 2)[2].split())))
    return found


def test_memory_frame_takes_a_path_or_a_list_of_paths() -> None:
    one = memory_frame(FIX / "chatgpt-memory.json")
    listed = memory_frame([FIX / "chatgpt-memory.json"])
    pd.testing.assert_frame_equal(one, listed)
    assert listed.attrs == one.attrs
    assert mv.memory_ir([FIX / "claude-export"])["facts"] == mv.memory_ir(FIX / "claude-export")["facts"]


def test_memory_frame_of_a_chatgpt_and_a_claude_export_holds_both() -> None:
    # 8 items in the ChatGPT fixture (2 writes, 3 snapshot entries, 3 custom instructions), 2 in the
    # Claude one (its account memory and the project memory that is not blank)
    for given in (
        [FIX / "chatgpt-memory.json", FIX / "claude-export"],
        [FIX / "claude-export", FIX / "chatgpt-memory.json"],
    ):
        frame = memory_frame(given)
        assert frame["provider"].value_counts().to_dict() == {"chatgpt": 8, "claude": 2}
        assert frame.attrs["provider"] is None
        pd.testing.assert_frame_equal(frame, memory_frame(*given))  # the *paths form reads the same
        dated = frame["ts"].dropna()
        assert dated.is_monotonic_increasing and frame["ts"].iloc[: len(dated)].notna().all()


def test_cli_memory_of_a_claude_and_a_chatgpt_export_lists_both(capsys: pytest.CaptureFixture[str]) -> None:
    tree = _need(TREE)
    assert main(["memory", "-q", str(FIX / "claude-export"), str(tree)]) == 0
    out = capsys.readouterr().out
    assert "What Claude remembers about you (read from the export): 2 items, oldest first." in out
    assert f"What ChatGPT remembers about you (read from the export): {len(_raw_items(tree))} items" in out
    assert len(_raw_items(tree)) == 26
    assert out.count("memory snapshot: ") + out.count("saved memory: ") == 26


def test_memory_o_refuses_exports_of_both_providers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "memories.mv.json"
    assert main(["memory", "-q", str(FIX / "chatgpt-memory.json"), str(FIX / "claude-export"), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ChatGPT and Claude" in err and "one provider" in err
    assert not out.exists()
    with pytest.raises(InputError) as caught:
        mv.memory_ir([FIX / "chatgpt-memory.json", FIX / "claude-export"])
    assert caught.value.reason == "bad-source"


# --- the same, on files made here (no real export needed) -------------------------------------------


def test_folded_snapshot_entry_takes_on_active_path_from_its_last_listing() -> None:
    from memvelope_tools._memory.items import Folding, Seen

    def listed(stamp: str, on_path: bool, where: str) -> Seen:
        return Seen("snapshot", "User likes tea.", stamp, where, conversation_id=where, on_active_path=on_path)

    seen = Folding()
    seen.extend([listed("2024-01-01T00:00:00Z", False, "c1"), listed("2024-02-01T00:00:00Z", True, "c2")])
    [item] = seen.items("chatgpt")
    assert item.on_active_path is True and item.conversation_id == "c1"  # first listed there, last listed on the path
    seen = Folding()
    seen.extend([listed("2024-02-01T00:00:00Z", False, "c2"), listed("2024-01-01T00:00:00Z", True, "c1")])
    [item] = seen.items("chatgpt")
    assert item.on_active_path is False and item.conversation_id == "c1"


def test_memory_o_of_a_conversation_saved_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conversations = json.loads((FIX / "chatgpt-memory.json").read_text(encoding="utf-8"))
    single = tmp_path / "conversation.json"
    single.write_text(json.dumps(conversations[0]), encoding="utf-8")
    wrapped = tmp_path / "wrapped" / "conversations.json"
    wrapped.parent.mkdir()
    wrapped.write_text(json.dumps([conversations[0]]), encoding="utf-8")
    out = tmp_path / "memories.mv.json"
    assert main(["memory", "-q", str(single), "-o", str(out)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert check_ir_against_envelope(doc, mv.convert(wrapped)) == []
    assert doc["facts"] == mv.memory_ir(wrapped)["facts"] == mv.memory_ir(single)["facts"]
    assert doc["facts"], "the first conversation holds a memory write and custom instructions"
