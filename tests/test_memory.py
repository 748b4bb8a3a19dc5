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
from memvelope_tools._convert.assemble import DETECTION_WINDOW
from memvelope_tools._ir.facts import CONTENT_MAX
from memvelope_tools._json import elements as json_elements
from memvelope_tools._memory import scan as memory_scan
from memvelope_tools._memory.chatgpt import instruction_text, snapshot_entries
from memvelope_tools._memory.frame import items_frame, memory_frame
from memvelope_tools._memory.items import KINDS, MEMORY_COLUMNS, NO_RECORDS
from memvelope_tools._memory.read import memory_of_reading, read_memory, read_memory_of
from memvelope_tools._memory.scan import MemoryReading, _Workers
from memvelope_tools._memory_ir import build_memory_ir, statements
from memvelope_tools._validate import check_ir_against_envelope, validate
from memvelope_tools.cli import main

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
    # 2 writes, 3 snapshot entries, 2 versions of about_user, 1 of about_model (repeated 3 times)
    assert sorted(chatgpt["kind"].astype(str)) == sorted(
        ["saved", "saved", "snapshot", "snapshot", "snapshot", "about_user", "about_user", "about_model"]
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
    assert report["by_kind"] == {"saved": 2, "snapshot": 3, "about_user": 2, "about_model": 1}
    assert report["items"] == 8 and report["also_in_envelope"] == 1
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


# --- Facts IR and the command ----------------------------------------------------------------------


def test_statements_split_a_long_memory_without_cutting_words() -> None:
    long = " ".join(["word"] * 150)  # 749 characters, no sentence end
    pieces = statements(long, "saved")
    assert all(len(p) <= CONTENT_MAX for p in pieces) and len(pieces) == 2
    assert pieces[0].endswith("word…") and not pieces[1].endswith("…")
    assert " ".join(p.rstrip("…") for p in pieces) == long
    assert statements("**Work context**\n\nThe user teaches. They like tea.", "claude_account") == [
        "The user teaches.",
        "They like tea.",
    ]
    assert statements("User is vegetarian. User lives in Lisbon.", "saved") == [
        "User is vegetarian. User lives in Lisbon."
    ]


def _facts_by_content(doc: dict) -> dict[str, dict]:
    return {f["content"]: f for f in doc["facts"]}


def test_cli_memory_lists_oldest_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", str(FIX / "chatgpt-memory.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("What ChatGPT remembers about you (read from the export): 8 items, oldest first.")
    days = [line[:10] for line in out.splitlines() if line[:2] == "20"]
    assert days == sorted(days) and len(days) == 8
    assert "on an abandoned branch" in out and "after you wrote: I moved to Lisbon last week." in out


def test_cli_memory_says_when_the_format_keeps_no_records(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", str(FIX / "chatgpt-2026")]) == 0
    out = capsys.readouterr().out
    assert "cannot be read" in out and NO_RECORDS in out and "nothing recorded" not in out


def test_cli_memory_bad_input_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", str(tmp_path / "nope.zip")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("memvelope: error:") and err.count("\n") == 1
    assert main(["memory", str(FIX / "chatgpt-memory.json"), "-o", str(tmp_path / "no" / "x.mv.json")]) == 1
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("export", ["chatgpt-memory.json", "claude-export"])
def test_cli_memory_ir_validates_against_its_export(
    export: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "memories.mv.json"
    assert main(["memory", str(FIX / export), "-o", str(out)]) == 0
    assert main(["validate", str(out), "--envelope", str(FIX / export)]) == 0
    assert capsys.readouterr().out.strip().endswith(": ok")
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert validate(doc) == [] and check_ir_against_envelope(doc, mv.convert(FIX / export)) == []


def test_ir_fields_chatgpt() -> None:
    path = FIX / "chatgpt-memory.json"
    doc = build_memory_ir(read_memory(path), mv.convert(path))
    facts = _facts_by_content(doc)
    assert doc["meta"]["provider"] == "chatgpt" and doc["meta"]["mode"] == "imported (provider memory)"
    veg = facts["User is vegetarian."]  # the write (2024-03-05) and the snapshot entry are one fact
    assert veg["memory_kind"] == "saved" and veg["convo_id"] == "c-a"
    assert veg["effective_date"] == "2024-03-05" and veg["provenance"] == "imported:chatgpt-export:2024-03"
    assert veg["subject"] == "self" and veg["category"] == "preferences" and veg["in_text_date"] is None
    lisbon = facts["User lives in Lisbon."]  # written on an abandoned branch of c-b, a conversation the envelope keeps
    assert lisbon["convo_id"] == "c-b" and lisbon["effective_date"] == "2024-04-10"
    assert lisbon["category"] == "identity"
    assert facts["Answer briefly."]["category"] == "instructions"
    assert facts["I am a nurse living in Lisbon."]["convo_id"] == "c-c"
    assert len(doc["facts"]) == 6  # 8 items; the snapshot entries of the two writes merge with them


def test_ir_fields_claude() -> None:
    path = FIX / "claude-export"
    doc = build_memory_ir(read_memory(path), mv.convert(path))
    account = [f for f in doc["facts"] if f["memory_kind"] == "claude_account"]
    assert len(account) == 5  # five sentences; the three **headings** are labels, not statements
    assert all(f["convo_id"] is None and f["effective_date"] is None for f in doc["facts"])
    assert all(f["provenance"] == "imported:claude-export:2025-03" for f in doc["facts"])  # latest conversation
    assert all(len(f["content"]) <= CONTENT_MAX for f in doc["facts"])
    project = next(f for f in doc["facts"] if f["memory_kind"] == "claude_project")
    assert project["subject"] == "proj-thesis" and project["subject_type"] == "project"
    assert project["category"] == "projects"
    # "March 2025" is stated in the memory but in no message: in_text_date stays null, the date stays in content
    top = next(f for f in account if "March 2025" in f["content"])
    assert top["in_text_date"] is None


def test_round_trip_memories_ir_facts_frame(tmp_path: Path) -> None:
    out = tmp_path / "memories.mv.json"
    assert main(["memory", str(FIX / "chatgpt-memory.json"), "-o", str(out), "-q"]) == 0
    facts = mv.facts_frame(out)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert list(facts["content"]) == [f["content"] for f in doc["facts"]]
    assert list(facts["convo_id"].astype(object).where(facts["convo_id"].notna(), None)) == [
        f["convo_id"] for f in doc["facts"]
    ]
    frame = memory_frame(FIX / "chatgpt-memory.json")
    # every remembered text is in the IR (once: the snapshot entries repeat the writes)
    assert set(frame["text"]) <= set(facts["content"])


def test_ir_date_not_shown_by_the_envelope_is_coarsened(tmp_path: Path) -> None:
    data = json.loads((FIX / "chatgpt-memory.json").read_text(encoding="utf-8"))
    conv_b = data[1]
    conv_b["mapping"]["b4"]["message"]["create_time"] = 1712880000.0  # 2024-04-12, on the abandoned branch
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    doc = build_memory_ir(read_memory(path), mv.convert(path))
    lisbon = _facts_by_content(doc)["User lives in Lisbon."]
    assert lisbon["effective_date"] == "2024-04"  # 2024-04-12 is in no message of c-b; its month is
    assert check_ir_against_envelope(doc, mv.convert(path)) == []


def test_real_memory_ir_validates(tmp_path: Path) -> None:
    for name in ("hello-tsx", "tree-tsx"):
        path = _real(name)
        wrapped = tmp_path / name / "conversations.json"
        wrapped.parent.mkdir()
        wrapped.write_text("[" + path.read_text(encoding="utf-8") + "]", encoding="utf-8")
        doc = build_memory_ir(read_memory(wrapped), mv.convert(wrapped))
        assert validate(doc) == [] and check_ir_against_envelope(doc, mv.convert(wrapped)) == []
        kinds = {f["memory_kind"] for f in doc["facts"]}
        assert "saved" in kinds or name == "tree-tsx"
        # a snapshot entry states its own saving day: that day, or its month/year when no message shows it
        assert all(f["effective_date"] is None or f["effective_date"][:4] == "2024" for f in doc["facts"])


# --- memory against what the user said -------------------------------------------------------------


def _said() -> dict:
    from memvelope_tools._ir.write import build_ir

    def fact(content: str, category: str, convo: str, day: str) -> dict:
        month = day[:7]
        return {
            "subject": "self",
            "subject_type": "self",
            "category": category,
            "content": content,
            "effective_date": day,
            "in_text_date": None,
            "provenance": f"imported:chatgpt-export:{month}",
            "convo_id": convo,
        }

    return build_ir(
        "chatgpt",
        "structured (zero-LLM)",
        [
            fact("I am vegetarian.", "preferences", "c-a", "2024-03-05"),
            fact("I live in Porto.", "identity", "c-a", "2024-03-05"),
            fact("I live in Lisbon now.", "identity", "c-c", "2024-05-20"),
            fact("I am a teacher living in Lisbon.", "career", "c-c", "2024-05-20"),
        ],
    )


def test_memory_against_what_the_user_said(tmp_path: Path) -> None:
    frame = memory_frame(FIX / "chatgpt-memory.json", facts=_said())
    assert list(frame.columns) == [*MEMORY_COLUMNS, "supporting_facts", "traced", "superseded_by"]
    veg = _row(frame, "saved", "User is vegetarian.")
    assert veg["supporting_facts"] == [0] and veg["traced"] and pd.isna(veg["superseded_by"])
    lisbon = _row(frame, "saved", "User lives in Lisbon.")  # {live, lisbon} both in fact 2; fact 3 shares "living"
    assert lisbon["supporting_facts"] == [2, 3] and lisbon["traced"]
    porto = _row(frame, "about_user", "I am a nurse living in Porto.")
    # fact 1 (same day, same words) supports it; fact 3 (later, career, teacher vs nurse) supersedes it
    assert porto["supporting_facts"] == [1]
    assert porto["superseded_by"] == "a later fact (2024-05-20): I am a teacher living in Lisbon."
    brief = _row(frame, "about_model", "Answer briefly.")
    assert brief["supporting_facts"] == [] and brief["traced"]  # custom instructions are the user's own words
    aisle = _row(frame, "snapshot", "User prefers aisle seats on flights.")
    assert aisle["supporting_facts"] == [] and not aisle["traced"]  # no trace in anything the user said
    # the same document from a file gives the same answer
    path = tmp_path / "said.mv.json"
    mv.write_ir(_said(), path)
    again = memory_frame(FIX / "chatgpt-memory.json", facts=path)
    assert list(again["traced"]) == list(frame["traced"])


def test_write_traced_by_its_prompt_and_superseded_versions() -> None:
    frame = memory_frame(
        FIX / "chatgpt-memory.json", facts=mv.distill_structured(mv.convert(FIX / "chatgpt-memory.json"))
    )
    # the distiller finds nothing here (the user's sentences are questions or on an abandoned branch), yet
    # each write repeats the message before it
    assert _row(frame, "saved", "User lives in Lisbon.")["traced"]
    assert _row(frame, "saved", "User is vegetarian.")["traced"]
    assert _row(frame, "snapshot", "User is vegetarian.")["traced"]  # as the write it repeats
    assert not _row(frame, "snapshot", "User prefers aisle seats on flights.")["traced"]
    old = _row(frame, "about_user", "I am a nurse living in Porto.")
    assert old["superseded_by"] == "a later version of this text"


def test_trace_refuses_what_is_not_a_facts_ir() -> None:
    with pytest.raises(mv.MemvelopeError):
        memory_frame(FIX / "chatgpt-memory.json", facts=FIX / "chatgpt-memory.json")


# --- pictures and words ----------------------------------------------------------------------------


def test_memory_timeline_rows_and_notes() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3)
    ax = mv.plot.memory_timeline(memory_frame(FIX / "chatgpt-memory.json"), ax=axes[0])
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [
        "saved memory",
        "memory snapshot entry",
        "custom instructions: about you",
        "custom instructions: how to answer",
    ]
    assert sum(len(c.get_offsets()) for c in ax.collections) == 8  # one dot per item
    # lines from first to last sight: about_user v1, about_model, the first snapshot entry
    assert len(ax.lines) == 3
    ax = mv.plot.memory_timeline(FIX / "chatgpt-2026", ax=axes[1])
    assert "no memory records" in " ".join(t.get_text() for t in ax.texts).replace("\n", " ")
    ax = mv.plot.memory_timeline(FIX / "claude-export", ax=axes[2])
    assert "2 items, none with a date" in ax.texts[0].get_text()
    plt.close(fig)


def test_report_section_escapes_and_cautions(tmp_path: Path) -> None:
    from memvelope_tools._report import build_report, memory_section

    data = json.loads((FIX / "chatgpt-memory.json").read_text(encoding="utf-8"))
    data[0]["mapping"]["a3"]["message"]["content"]["parts"] = ["User likes <b>bold</b> & tea."]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    section = memory_section(path)
    assert section.startswith("<h2>What ChatGPT remembers about you</h2>")
    assert "User likes &lt;b&gt;bold&lt;/b&gt; &amp; tea." in section and "<b>bold" not in section
    assert "Think before you share this page" in section
    assert section.count("<tr>") == 1 + 8  # header and one row per item
    page = build_report([path])
    assert "What ChatGPT remembers about you" in page
    none = memory_section(FIX / "chatgpt-2026")
    assert NO_RECORDS in none and "<table>" not in none


def test_cli_report_has_the_memory_section(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(FIX / "claude-export"), "-o", str(out), "-q"]) == 0
    page = out.read_text(encoding="utf-8")
    assert "What Claude remembers about you" in page and "proj-thesis" in page


# --- the bundled samples ---------------------------------------------------------------------------


def test_samples_hold_every_chatgpt_kind() -> None:
    frame = memory_frame(mv.sample_path("chatgpt"))
    counts = frame["kind"].astype(str).value_counts().to_dict()
    # 5 writes (one on an edited-away branch), their 5 entries in the snapshots, 2 profiles, 1 instructions,
    # 2 of the saved memories cited in later answers
    assert counts == {"saved": 5, "snapshot": 5, "about_user": 2, "about_model": 1, "cited": 2}
    cited = frame[frame["kind"] == "cited"]
    assert set(cited["text"]) < set(frame.loc[frame["kind"] == "saved", "text"])  # it quotes what it saved
    assert list(cited["count"]) == [1, 1] and cited["on_active_path"].all()
    saved = frame[frame["kind"] == "saved"]
    assert saved["message_id"].notna().sum() == 4 and (~saved["on_active_path"]).sum() == 1
    profile = frame[frame["kind"] == "about_user"]
    assert list(profile["version"]) == [1, 2] and list(profile["current"]) == [False, True]
    assert frame.attrs["notes"] == []


def test_samples_hold_claude_memory() -> None:
    frame = memory_frame(mv.sample_path("claude"))
    assert list(frame["kind"].astype(str)) == ["claude_account", "claude_project"]
    assert frame.attrs["notes"] == []


@pytest.mark.parametrize("provider", ["chatgpt", "claude"])
def test_public_memory_ir_of_the_samples_validates(provider: str) -> None:
    doc = mv.memory_ir(mv.sample_path(provider))
    assert validate(doc) == []
    assert check_ir_against_envelope(doc, mv.convert(mv.sample_path(provider))) == []
    assert doc["meta"]["provider"] == provider and doc["facts"]
    assert all(f["memory_kind"] in KINDS for f in doc["facts"])


def test_items_past_the_detection_window_are_found(tmp_path: Path) -> None:
    plain = json.loads((FIX / "chatgpt-2026" / "conversations-000.json").read_text(encoding="utf-8"))[0]
    memory = json.loads((FIX / "chatgpt-memory.json").read_text(encoding="utf-8"))
    copies = [{**plain, "id": f"p{i}", "conversation_id": f"p{i}"} for i in range(6)]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([*copies, *memory], indent=None), encoding="utf-8")  # compact: "role":"system"
    frame = memory_frame(path)
    expected = memory_frame(FIX / "chatgpt-memory.json")
    assert list(frame["text"]) == list(expected["text"]) and frame.attrs["notes"] == []
    # a system message only in the seventh conversation still says the export keeps memory records
    late = json.loads((FIX / "chatgpt-none.json").read_text(encoding="utf-8"))[0]
    path.write_text(json.dumps([*copies, late]), encoding="utf-8")
    assert memory_frame(path).attrs["notes"] == []
    path.write_text(json.dumps(copies), encoding="utf-8")
    assert memory_frame(path).attrs["notes"] == [NO_RECORDS]


def test_message_ids_are_the_envelopes(tmp_path: Path) -> None:
    sample = mv.sample_path("chatgpt")
    env = {c["id"]: {m["id"]: m["text"] for m in c["messages"]} for c in mv.convert(sample)["conversations"]}
    saved = memory_frame(sample).query("kind == 'saved' and message_id.notna()")
    assert len(saved) == 4
    for row in saved.itertuples():
        assert env[row.conversation_id][row.message_id] == row.text
    # no current_node: conversion falls back to every message in time order, and so do the ids
    data = json.loads((FIX / "chatgpt-memory.json").read_text(encoding="utf-8"))
    del data[0]["current_node"]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    conv = next(c for c in mv.convert(path)["conversations"] if c["id"] == "c-a")
    row = _row(memory_frame(path), "saved", "User is vegetarian.")
    assert {m["id"]: m["text"] for m in conv["messages"]}[row["message_id"]] == "User is vegetarian."
    assert not row["on_active_path"]


def _padded_export(tmp_path: Path, tail: bytes = b"") -> Path:
    """The memory fixture's conversations after enough plain ones that every one of them is read past
    provider detection (where worker processes take over), the memory ones twice."""
    plain = json.loads((FIX / "chatgpt-none.json").read_text(encoding="utf-8"))
    memory = json.loads((FIX / "chatgpt-memory.json").read_text(encoding="utf-8"))
    path = tmp_path / "conversations.json"
    body = json.dumps(plain * 5 + memory + plain + memory).encode()
    path.write_bytes(body[:-1] + tail + b"]" if tail else body)
    return path


def _in_one_process(elements: list[object]) -> pd.DataFrame:
    """The memory frame of ``elements``, each handed to one reading in this process with its bytes."""
    reading = MemoryReading()
    for element in elements:
        data = json.dumps(element).encode()
        reading.element(element, "chatgpt", data, 0, len(data))
    return items_frame(memory_of_reading("chatgpt", reading, []))


def test_worker_processes_give_the_frame_one_process_gives(tmp_path: Path) -> None:
    path = _padded_export(tmp_path)
    elements = json.loads(path.read_text(encoding="utf-8"))
    plain = _in_one_process(elements)
    one = items_frame(read_memory_of([path], None, False, workers=1))
    two = items_frame(read_memory_of([path], None, False, workers=2))
    assert len(plain) > 0 and set(plain["kind"]) >= {"saved", "snapshot", "about_user", "about_model"}
    pd.testing.assert_frame_equal(one, plain)
    pd.testing.assert_frame_equal(two, plain)
    assert one.attrs == two.attrs == plain.attrs
    pd.testing.assert_frame_equal(memory_frame(path), plain)


@pytest.mark.parametrize("per_worker", [0, 1])
def test_batches_read_here_while_workers_are_busy_give_the_frame_one_process_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, per_worker: int
) -> None:
    path = _padded_export(tmp_path)
    elements = json.loads(path.read_text(encoding="utf-8"))
    plain = _in_one_process(elements)
    read_here: list[int] = []
    read = memory_scan._read_elements

    def counted(*args: object) -> object:
        read_here.append(1)
        return read(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(json_elements, "BATCH", 1)  # one conversation a batch
    monkeypatch.setattr(memory_scan, "_read_elements", counted)
    monkeypatch.setattr(_Workers, "_PER_WORKER", per_worker)  # 0: no worker takes a batch; 1: one each
    frame = items_frame(read_memory_of([path], None, False, workers=2))
    pd.testing.assert_frame_equal(frame, plain)
    if per_worker == 0:  # every conversation past those that tell the provider was read here, one batch each
        assert len(read_here) == len(elements) - DETECTION_WINDOW


def test_worker_processes_report_invalid_json_as_one_process_does(tmp_path: Path) -> None:
    path = _padded_export(tmp_path, tail=b', {"mapping": {]')
    errors = []
    for workers in (1, 2):
        with pytest.raises(mv.ConversionError) as caught:
            read_memory_of([path], None, False, workers=workers)
        errors.append(str(caught.value))
    assert errors[0] == errors[1] and "conversations.json" in errors[0]


def test_unpaired_surrogate_becomes_replacement_character(tmp_path: Path) -> None:
    raw = (FIX / "chatgpt-memory.json").read_text(encoding="utf-8")
    assert raw.count('"User is vegetarian."') == 1
    path = tmp_path / "conversations.json"
    path.write_text(raw.replace('"User is vegetarian."', '"User is vegetarian \\udfff."'), encoding="utf-8")
    with pytest.warns(UnicodeWarning, match="text"):
        frame = memory_frame(path)
    assert _row(frame, "saved", "User is vegetarian \ufffd.")["kind"] == "saved"
    assert frame["text"].dtype == memory_frame(FIX / "chatgpt-memory.json")["text"].dtype


def test_cli_memory_prints_an_unpaired_surrogate_as_replacement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = (FIX / "chatgpt-memory.json").read_text(encoding="utf-8")
    path = tmp_path / "conversations.json"
    path.write_text(raw.replace('"User is vegetarian."', '"User is vegetarian \\udfff."'), encoding="utf-8")
    assert main(["memory", str(path)]) == 0
    out = capsys.readouterr().out
    assert "saved memory: User is vegetarian \ufffd." in out
    out.encode("utf-8")  # printable as UTF-8
