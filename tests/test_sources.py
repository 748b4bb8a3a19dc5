"""Which files of a folder or zip are parts, and in which order (NOTES A18, B1, B2)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

import memvelope_tools as mv
from memvelope_tools._convert.sources import ZipLimits, expand, utf16_key


def claude_conv(uuid: str) -> dict[str, object]:
    return {"uuid": uuid, "chat_messages": [{"sender": "human", "text": uuid}]}


def make_zip(path: Path, members: dict[str, bytes | object]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, value in members.items():
            data = value if isinstance(value, bytes) else json.dumps(value).encode()
            zf.writestr(name, data)
    return path


def ids(*paths: Path) -> list[str | None]:
    return [c["id"] for c in mv.convert(*paths)["conversations"]]


def test_utf16_order_differs_from_code_point_order() -> None:
    names = ["\U0001f600.json", "\uff5e.json", "a.json", "B.json"]
    assert sorted(names, key=utf16_key) == ["B.json", "a.json", "\U0001f600.json", "\uff5e.json"]


def test_folder_takes_only_conversation_parts_sorted(tmp_path: Path) -> None:
    (tmp_path / "conversations-001.json").write_text(json.dumps([claude_conv("b")]))
    (tmp_path / "conversations-000.json").write_text(json.dumps([claude_conv("a")]))
    (tmp_path / "user.json").write_text(json.dumps({"email": "x"}))
    (tmp_path / ".conversations-002.json").write_text(json.dumps([claude_conv("hidden")]))
    (tmp_path / "chat.html").write_text("<html>")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "conversations.json").write_text(json.dumps([claude_conv("deep")]))
    expansion = expand([tmp_path])
    assert [Path(p.name).name for p in expansion.parts] == ["conversations-000.json", "conversations-001.json"]
    assert expansion.chose
    assert ids(tmp_path) == ["a", "b"]


def test_folder_without_conversation_parts_takes_every_json(tmp_path: Path) -> None:  # A18
    (tmp_path / "b.json").write_text(json.dumps([claude_conv("b")]))
    (tmp_path / "a.json").write_text(json.dumps([claude_conv("a")]))
    (tmp_path / "A.JSON").write_text(json.dumps([claude_conv("upper")]))  # case-sensitive suffix
    assert ids(tmp_path) == ["a", "b"]


def test_mixed_arguments_expand_in_place(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "conversations.json").write_text(json.dumps([claude_conv("folder")]))
    first = tmp_path / "z.json"
    first.write_text(json.dumps([claude_conv("file")]))
    assert ids(first, folder, first) == ["file", "folder", "file"]


def test_zip_members_at_any_depth_sorted_by_full_path(tmp_path: Path) -> None:
    archive = make_zip(
        tmp_path / "export.zip",
        {
            "b/conversations.json": [claude_conv("b")],
            "a/conversations-1.json": [claude_conv("a1")],
            "conversations.json": [claude_conv("top")],
            "__MACOSX/conversations.json": [claude_conv("mac")],
            "users.json": [claude_conv("users")],
        },
    )
    assert ids(archive) == ["a1", "b", "top"]


def test_nested_conversation_zips_opened_in_place(tmp_path: Path) -> None:  # today's Claude layout
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("conversations.json", json.dumps([claude_conv("inner")]))
        zf.writestr("projects.json", json.dumps([{"uuid": "p"}]))
    projects = io.BytesIO()
    with zipfile.ZipFile(projects, "w") as zf:
        zf.writestr("projects.json", json.dumps([claude_conv("project")]))
    outer = make_zip(
        tmp_path / "outer.zip",
        {
            "conversations-000.zip": inner.getvalue(),
            "projects-000.zip": projects.getvalue(),
            "conversations-001.json": [claude_conv("beside")],
            "manifest.json": {"files": []},
        },
    )
    assert ids(outer) == ["inner", "beside"]
    # the same zips in a folder
    folder = tmp_path / "download"
    folder.mkdir()
    (folder / "conversations-000.zip").write_bytes(inner.getvalue())
    (folder / "projects-000.zip").write_bytes(projects.getvalue())
    (folder / "manifest.json").write_text("{}")
    assert ids(folder) == ["inner"]


def test_zip_errors(tmp_path: Path) -> None:
    fake = tmp_path / "export.zip"
    fake.write_text("[]")
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(fake)
    assert info.value.reason == "bad-zip"
    empty = make_zip(tmp_path / "empty.zip", {"readme.txt": b"hi"})
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(empty)
    assert info.value.reason == "no-parts"


def test_zip_bomb_limits(tmp_path: Path) -> None:
    bomb = make_zip(tmp_path / "bomb.zip", {"conversations.json": b"[" + b" " * 5_000_000 + b"]"})
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(bomb, zip_limits=ZipLimits(max_member_bytes=1_000_000))
    assert info.value.reason == "zip-limit" and "--zip-max-bytes" in str(info.value)
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(bomb, zip_limits=ZipLimits(max_ratio=100, ratio_floor_bytes=1000))
    assert info.value.reason == "zip-limit" and "--zip-max-ratio" in str(info.value)


def test_zip_member_names_with_traversal_are_never_extracted(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    archive = make_zip(
        work / "evil.zip",
        {"../../conversations.json": [claude_conv("evil")], "/abs/conversations-1.json": [claude_conv("abs")]},
    )
    before = {p for p in tmp_path.rglob("*")}
    assert ids(archive) == ["evil", "abs"]  # "." sorts before "/"
    assert {p for p in tmp_path.rglob("*")} == before


def test_missing_and_unreadable_paths(tmp_path: Path) -> None:
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(tmp_path / "nope.json")
    assert info.value.reason == "not-found"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(empty)
    assert info.value.reason == "no-parts"
