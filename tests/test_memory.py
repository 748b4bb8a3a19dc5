"""What the provider remembered, read from the export: every kind on both providers, versions, exports with none."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pandas as pd
import pytest

import memvelope_tools as mv
from memvelope_tools._memory import KINDS, MEMORY_COLUMNS, NO_RECORDS, instruction_text, memory_frame, snapshot_entries

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "memory"
SHARED = ROOT.parent / "shared" / "real-exports-collected"
REAL_MEMORY = SHARED / "memory"


def _row(frame: pd.DataFrame, kind: str, text: str) -> pd.Series:
    rows = frame[(frame["kind"] == kind) & (frame["text"] == text)]
    assert len(rows) == 1, f"{kind} {text!r}: {len(rows)} rows"
    return rows.iloc[0]


@pytest.fixture(scope="module")
def chatgpt() -> pd.DataFrame:
    return memory_frame(FIX / "chatgpt-memory.json")


def test_columns_and_kinds(chatgpt: pd.DataFrame) -> None:
    assert list(chatgpt.columns) == list(MEMORY_COLUMNS)
    assert list(chatgpt["kind"].cat.categories) == list(KINDS)
    assert chatgpt.attrs["provider"] == "chatgpt" and chatgpt.attrs["notes"] == []
    assert str(chatgpt["ts"].dtype) == "datetime64[ms, UTC]"


def test_chatgpt_every_kind_once_per_text(chatgpt: pd.DataFrame) -> None:
    # 2 writes, 2 snapshot entries, 2 versions of about_user, 1 of about_model (repeated 3 times)
    assert sorted(chatgpt["kind"].astype(str)) == sorted(
        ["saved", "saved", "snapshot", "snapshot", "about_user", "about_user", "about_model"]
    )


def test_saved_on_active_path_has_its_envelope_id(chatgpt: pd.DataFrame) -> None:
    row = _row(chatgpt, "saved", "User is vegetarian.")
    assert row["conversation_id"] == "c-a" and row["conversation_title"] == "Dinner ideas"
    assert row["on_active_path"] and row["message_id"] == "m2"
    assert row["preceding_user_message"] == "I'm vegetarian, any dinner ideas for tonight?"
    assert row["ts"] == pd.Timestamp("2024-03-05T12:00:12Z")
    env = mv.convert(FIX / "chatgpt-memory.json")
    conv = next(c for c in env["conversations"] if c["id"] == "c-a")
    assert next(m for m in conv["messages"] if m["id"] == "m2")["text"] == "User is vegetarian."


def test_saved_on_abandoned_branch_is_read_and_marked(chatgpt: pd.DataFrame) -> None:
    row = _row(chatgpt, "saved", "User lives in Lisbon.")
    assert not row["on_active_path"] and pd.isna(row["message_id"])
    assert row["node_id"] == "b4" and row["conversation_id"] == "c-b"
    assert row["preceding_user_message"] == "I moved to Lisbon last week."


def test_snapshot_entries_dated_and_counted(chatgpt: pd.DataFrame) -> None:
    veg = _row(chatgpt, "snapshot", "User is vegetarian.")
    assert veg["stated_date"] == "2024-03-05" and veg["count"] == 2  # listed in c-b and c-c
    assert veg["first_seen"] == pd.Timestamp("2024-04-10T12:00:01Z")
    assert veg["last_seen"] == pd.Timestamp("2024-05-20T12:00:01Z")
    assert veg["current"]
    lisbon = _row(chatgpt, "snapshot", "User lives in Lisbon.")
    assert lisbon["stated_date"] == "2024-04-10" and lisbon["count"] == 1


def test_custom_instructions_repeated_and_changed(chatgpt: pd.DataFrame) -> None:
    porto = _row(chatgpt, "about_user", "I am a nurse living in Porto.")  # old metadata form in c-a, new in c-b
    assert porto["count"] == 2 and porto["version"] == 1 and not porto["current"]
    assert porto["first_seen"] == pd.Timestamp("2024-03-05T12:00:00Z")  # no create_time: the conversation's
    assert porto["last_seen"] == pd.Timestamp("2024-04-10T12:00:00Z")
    lisbon = _row(chatgpt, "about_user", "I am a nurse living in Lisbon.")
    assert lisbon["version"] == 2 and lisbon["current"] and lisbon["conversation_id"] == "c-c"
    brief = _row(chatgpt, "about_model", "Answer briefly.")
    assert brief["count"] == 3 and brief["version"] == 1 and brief["current"]


def test_oldest_first(chatgpt: pd.DataFrame) -> None:
    assert chatgpt["ts"].is_monotonic_increasing


def test_preamble_is_not_the_users_text() -> None:
    assert instruction_text("The user provided the additional info:\n```Be brief.```") == "Be brief."
    assert instruction_text("  Be brief. ") == "Be brief."
    assert instruction_text("The user provided:\n```  ```") == "The user provided:\n```  ```"
    assert instruction_text("   ") is None and instruction_text(None) is None


def test_snapshot_entries_parse() -> None:
    assert snapshot_entries("1. [2024-09-29]. A b.\n\n2. [2024-10-01]. C\nd.") == [
        ("A b.", "2024-09-29"),
        ("C d.", "2024-10-01"),
    ]
    assert snapshot_entries("Free text, not numbered.") == [("Free text, not numbered.", None)]
    assert snapshot_entries("  ") == []


def test_export_with_system_messages_and_no_memory() -> None:
    frame = memory_frame(FIX / "chatgpt-none.json")
    assert len(frame) == 0 and frame.attrs["notes"] == []
    assert list(frame.columns) == list(MEMORY_COLUMNS)


def test_format_without_memory_records_says_so() -> None:
    frame = memory_frame(FIX / "chatgpt-2026")
    assert len(frame) == 0
    assert frame.attrs["notes"] == [NO_RECORDS]


def test_claude_account_and_project() -> None:
    frame = memory_frame(FIX / "claude-export")
    assert frame.attrs["provider"] == "claude" and frame.attrs["notes"] == []
    assert list(frame["kind"].astype(str)) == ["claude_account", "claude_project"]
    account = frame.iloc[0]
    assert account["text"].startswith("**Work context**") and pd.isna(account["ts"])
    assert pd.isna(account["conversation_id"]) and account["count"] == 1 and account["current"]
    project = frame.iloc[1]
    assert project["project_id"] == "proj-thesis" and project["text"].startswith("Thesis project:")
    # "proj-empty" holds only spaces: skipped


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_claude_zip_newer_memories_layout(tmp_path: Path) -> None:
    convs = (FIX / "claude-export" / "conversations.json").read_bytes()
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("memories/acct-1.json", json.dumps({"conversations_memory": "Likes tea.", "project_memories": {}}))
    conv_zip = io.BytesIO()
    with zipfile.ZipFile(conv_zip, "w") as z:
        z.writestr("conversations.json", convs)
    export = _zip(
        tmp_path / "export.zip",
        {"conversations-000.zip": conv_zip.getvalue(), "memories-000.zip": inner.getvalue()},
    )
    frame = memory_frame(export)
    assert list(frame["text"]) == ["Likes tea."] and frame.iloc[0]["kind"] == "claude_account"
    # the same two zips given side by side, as downloaded
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "conversations-000.zip").write_bytes(conv_zip.getvalue())
    (tmp_path / "a" / "memories-000.zip").write_bytes(inner.getvalue())
    frame = memory_frame(tmp_path / "a" / "conversations-000.zip", tmp_path / "a" / "memories-000.zip")
    assert list(frame["text"]) == ["Likes tea."]
    frame = memory_frame(tmp_path / "a")
    assert list(frame["text"]) == ["Likes tea."]


def test_claude_project_memory_changed_is_a_new_version(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    shutil.copytree(FIX / "claude-export", folder)
    (folder / "memories").mkdir()
    newer = {"conversations_memory": "", "project_memories": {"proj-thesis": "Thesis project: all chapters drafted."}}
    (folder / "memories" / "acct-1.json").write_text(json.dumps(newer), encoding="utf-8")
    frame = memory_frame(folder)
    projects = frame[frame["kind"] == "claude_project"]
    assert list(projects["version"]) == [1, 2]
    assert list(projects["current"]) == [False, True]
    assert (frame["kind"] == "claude_account").sum() == 1  # the empty account text is skipped


def test_claude_without_memory_file_says_so() -> None:
    frame = memory_frame(FIX / "claude-none")
    assert len(frame) == 0 and "memories.json" in frame.attrs["notes"][0]


def test_unreadable_export_is_a_conversion_error(tmp_path: Path) -> None:
    with pytest.raises(mv.ConversionError):
        memory_frame(tmp_path / "missing.json")
    bad = tmp_path / "export"
    bad.mkdir()
    (bad / "conversations.json").write_text("[]", encoding="utf-8")
    (bad / "memories.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(mv.ConversionError):
        memory_frame(bad)


def test_doctor_counts_memory_items() -> None:
    report = mv.doctor(FIX / "chatgpt-memory.json").to_json()["memory"]
    assert report["by_kind"] == {"saved": 2, "snapshot": 2, "about_user": 2, "about_model": 1}
    assert report["items"] == 7 and report["also_in_envelope"] == 1
    report = mv.doctor(FIX / "chatgpt-2026").to_json()["memory"]
    assert report["items"] == 0 and report["notes"] == [NO_RECORDS]
    assert "Provider memory" in mv.doctor(FIX / "claude-export").summary()


# --- real exports ----------------------------------------------------------------------------------


def _real(name: str) -> Path:
    path = REAL_MEMORY / f"xiaodaimeng2333__ChatGPT-Tree-Saver__{name}-conversation.json"
    if not path.exists():
        pytest.skip("the collected real exports are not beside the repository")
    return path


def test_real_write_on_active_path_matches_the_envelope(tmp_path: Path) -> None:
    path = _real("hello-tsx")
    frame = memory_frame(path)
    saved = frame[frame["kind"] == "saved"]
    assert len(saved) == 1
    row = saved.iloc[0]
    assert row["text"] == "User is referencing specific page ranges in their bibliography entries."
    assert row["on_active_path"]
    wrapped = tmp_path / "conversations.json"
    wrapped.write_text("[" + path.read_text(encoding="utf-8") + "]", encoding="utf-8")
    env = mv.convert(wrapped)
    msgs = {m["id"]: m["text"] for m in env["conversations"][0]["messages"]}
    assert msgs[row["message_id"]] == row["text"]
    assert "single-conversation" in frame.attrs["notes"][0]


def test_real_writes_on_abandoned_branches_and_their_snapshots() -> None:
    frame = memory_frame(_real("tree-tsx"))
    saved = frame[frame["kind"] == "saved"]
    assert len(saved) == 4 and not saved["on_active_path"].any() and saved["message_id"].isna().all()
    assert saved["preceding_user_message"].notna().all()
    snap = frame[frame["kind"] == "snapshot"]
    # the snapshot on the active path lists a write made on an abandoned branch
    assert "User experiences imposter syndrome, feeling as if others are much better despite working hard." in set(
        snap["text"]
    )
    assert snap["stated_date"].notna().all()
    # an entry the later snapshot rewrote is no longer current
    old = _row(
        frame,
        "snapshot",
        "User wants to work for an AI company in San Francisco and is currently studying with nearly three years "
        "of experience in machine learning.",
    )
    assert not old["current"]


def test_real_2026_format_has_no_memory_records() -> None:
    path = SHARED / "files" / "Fenixhuman27__knowledge-forge__data-conversations-004.json"
    if not path.exists():
        pytest.skip("the collected real exports are not beside the repository")
    frame = memory_frame(path)
    assert len(frame) == 0 and frame.attrs["notes"] == [NO_RECORDS]
