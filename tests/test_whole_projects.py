"""mv.projects_frame: Claude's projects.json (on its own or in a projects zip), the ChatGPT projects and
custom GPTs conversations use, and how many conversations use each."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from whole_exports import T0, chatgpt, message, write_zip

import memvelope_tools as mv
from memvelope_tools._whole.projects import PROJECT_COLUMNS, PROJECT_KINDS

PROJECTS = [
    {
        "uuid": "p-1",
        "name": "Job search",
        "description": "CV and letters",
        "is_private": True,
        "prompt_template": "Be direct.",
        "created_at": "2025-07-10T12:09:32.316132Z",
        "updated_at": "2025-07-17T09:28:35.223331Z",
        "docs": [
            {"uuid": "d-1", "filename": "cv.md", "content": "Olá", "created_at": "2025-07-10T12:18:58.188Z"},
            {"uuid": "d-2", "filename": "empty.md", "content": "", "created_at": None},
        ],
    },
    {"uuid": "p-2", "name": "Empty", "description": "", "prompt_template": "", "docs": []},
]


def _claude(uuid: str, **extra: object) -> dict[str, object]:
    return {
        "uuid": uuid,
        "name": uuid,
        "created_at": "2025-08-01T00:00:00Z",
        "updated_at": "2025-08-02T00:00:00Z",
        "chat_messages": [{"uuid": f"{uuid}-m", "sender": "human", "text": "hi"}],
        **extra,
    }


def test_claude_projects_with_their_docs_and_dates(tmp_path: Path) -> None:
    frame = mv.projects_frame(
        write_zip(tmp_path / "claude.zip", {"conversations.json": [_claude("k1")], "projects.json": PROJECTS})
    )
    assert list(frame.columns) == list(PROJECT_COLUMNS)
    assert list(frame["kind"].cat.categories) == list(PROJECT_KINDS)
    assert list(frame["project_id"]) == ["p-1", "p-2"] and set(frame["kind"]) == {"claude-project"}
    job = frame.iloc[0]
    assert (job["name"], job["description"], job["instructions"]) == ("Job search", "CV and letters", "Be direct.")
    assert job["created_at"] == pd.Timestamp("2025-07-10T12:09:32.316Z")
    assert job["updated_at"] == pd.Timestamp("2025-07-17T09:28:35.223Z")
    assert [(d["name"], d["size_bytes"]) for d in job["docs"]] == [("cv.md", 4), ("empty.md", 0)]  # UTF-8 bytes
    assert job["docs"][0]["created_at"] == pd.Timestamp("2025-07-10T12:18:58.188Z")
    assert pd.isna(job["docs"][1]["created_at"])
    # no conversation of this export names its project: how many use each cannot be told
    assert frame["conversations"].isna().all()
    empty = frame.iloc[1]
    assert empty["docs"] == [] and pd.isna(empty["description"]) and pd.isna(empty["instructions"])


def test_claude_projects_in_a_projects_zip_and_the_conversations_that_name_them(tmp_path: Path) -> None:
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        archive.writestr("projects.json", json.dumps(PROJECTS))
    convs = [_claude("k1", project_uuid="p-1"), _claude("k2", project={"uuid": "p-1"}), _claude("k3")]
    folder = tmp_path / "download"
    folder.mkdir()
    write_zip(folder / "conversations-000.zip", {"conversations.json": convs})
    (folder / "projects-000.zip").write_bytes(inner.getvalue())
    frame = mv.projects_frame(folder)
    assert list(frame["conversations"]) == [2, 0]
    job = frame.iloc[0]
    assert job["first_used"] == pd.Timestamp("2025-08-01T00:00:00Z")
    assert job["last_used"] == pd.Timestamp("2025-08-02T00:00:00Z")


def test_chatgpt_custom_gpts_and_projects(tmp_path: Path) -> None:
    convs = [
        chatgpt("c1", [message("user", ["hi"])], gizmo_id="g-abc123", gizmo_type="gpt"),
        chatgpt("c2", [message("user", ["hi"])], gizmo_id="g-abc123", conversation_template_id="g-abc123"),
        chatgpt("c3", [message("user", ["hi"])], gizmo_id="g-p-6800aa", gizmo_type="snorlax"),
        chatgpt("c4", [message("user", ["plan"])], gizmo_id="gizmo-project-1", gizmo_type="snorlax"),
        chatgpt(
            "c5",
            [message("user", ["@writer"]), message("assistant", ["ok"], metadata={"gizmo_id": "g-writer9"}, at=9)],
            gizmo_id=None,
        ),
        chatgpt("c6", [message("user", ["plain"])], gizmo_id=None, conversation_template_id=None),
    ]
    frame = mv.projects_frame(write_zip(tmp_path / "chatgpt.zip", {"conversations.json": convs}))
    got = {r.project_id: (r.kind, r.conversations) for r in frame.itertuples()}
    assert got == {
        "g-abc123": ("custom-gpt", 2),
        "g-p-6800aa": ("chatgpt-project", 1),
        "gizmo-project-1": ("chatgpt-project", 1),
        "g-writer9": ("custom-gpt", 1),
    }
    assert set(frame["provider"]) == {"chatgpt"} and frame["name"].isna().all() and frame["docs"].isna().all()
    gpt = frame[frame["project_id"] == "g-abc123"].iloc[0]
    assert gpt["first_used"] == pd.Timestamp(T0, unit="s", tz="UTC")
    assert gpt["last_used"] == pd.Timestamp(T0 + 1000, unit="s", tz="UTC")


def test_an_export_with_none(tmp_path: Path) -> None:
    frame = mv.projects_frame(
        write_zip(tmp_path / "x.zip", {"conversations.json": [chatgpt("c", [message("user", ["a"])])]})
    )
    assert frame.empty and list(frame.columns) == list(PROJECT_COLUMNS)


def test_the_bundled_claude_sample() -> None:
    frame = mv.projects_frame(mv.sample_path("claude"))
    with zipfile.ZipFile(mv.sample_path("claude")) as archive:
        projects = json.loads(archive.read("projects.json"))
    assert list(frame["name"]) == [p["name"] for p in projects]
    assert [len(d) for d in frame["docs"]] == [len(p["docs"]) for p in projects]


@pytest.mark.parametrize("broken", [b"[{", b"\xff\xfe"])
def test_a_broken_projects_file_is_one_line(tmp_path: Path, broken: bytes) -> None:
    path = write_zip(tmp_path / "c.zip", {"conversations.json": [_claude("k1")], "projects.json": broken})
    with pytest.raises(mv.InputError) as info:
        mv.projects_frame(path)
    assert "projects.json" in str(info.value) and "\n" not in str(info.value)
