"""Each export layout users download: which parts conversion takes, in which order, and the result.

The fixtures are built by fixtures/layouts/build_layouts.py; the expectations below are written by hand
from the order rule (README "Export layouts", NOTES B1/B2).
"""

from __future__ import annotations

import importlib.util
import json
import zipfile
from pathlib import Path

import pytest

import memvelope_tools as mv
from memvelope_tools._convert.sources import expand
from memvelope_tools._doctor import doctor

LAYOUTS = Path(__file__).resolve().parent.parent / "fixtures" / "layouts"

# layout -> (arguments, parts taken in order, names passed over, conversation ids in the envelope)
CASES: dict[str, tuple[list[str], list[str], set[str], list[str]]] = {
    "chatgpt-zip-single": (
        ["chatgpt-export.zip"],
        ["chatgpt-export.zip!conversations.json"],
        {
            "chatgpt-export.zip!user.json",
            "chatgpt-export.zip!message_feedback.json",
            "chatgpt-export.zip!shared_conversations.json",
            "chatgpt-export.zip!chat.html",
            "chatgpt-export.zip!file-abc123.png",
        },
        ["g-0", "g-1"],
    ),
    "chatgpt-zip-sharded": (
        ["chatgpt-export.zip"],
        [
            "chatgpt-export.zip!conversations-000.json",
            "chatgpt-export.zip!conversations-001.json",
            "chatgpt-export.zip!conversations-002.json",
        ],  # by name, although stored 001, 000, 002
        {
            "chatgpt-export.zip!user.json",
            "chatgpt-export.zip!message_feedback.json",
            "chatgpt-export.zip!shared_conversations.json",
            "chatgpt-export.zip!chat.html",
            "chatgpt-export.zip!file-abc123.png",
        },
        ["g-0a", "g-0b", "g-1a", "g-2a"],
    ),
    "chatgpt-folder": (
        ["chatgpt-export"],
        ["chatgpt-export/conversations-000.json", "chatgpt-export/conversations-001.json"],
        {
            "chatgpt-export/.conversations-002.json",
            "chatgpt-export/user.json",
            "chatgpt-export/message_feedback.json",
            "chatgpt-export/shared_conversations.json",
            "chatgpt-export/chat.html",
            "chatgpt-export/file-abc123.png",
        },  # subfolders are not entered
        ["g-0a", "g-1a"],
    ),
    "chatgpt-parts": (
        ["conversations-001.json", "conversations-000.json"],  # argv order wins over names
        ["conversations-001.json", "conversations-000.json"],
        set(),
        ["g-1a", "g-0a"],
    ),
    "claude-zip": (
        ["claude-export.zip"],
        ["claude-export.zip!conversations.json"],
        {"claude-export.zip!projects.json", "claude-export.zip!users.json", "claude-export.zip!memories.json"},
        ["k-a", "k-b"],
    ),
    "claude-multi-zip-folder": (
        ["claude-download"],
        [
            "claude-download/conversations-000.zip!conversations.json",
            "claude-download/conversations-001.zip!conversations.json",
        ],
        {"claude-download/manifest.json", "claude-download/projects-000.zip", "claude-download/users-000.zip"},
        ["k-0a", "k-0b", "k-1a"],
    ),
    "claude-multi-zip-given": (
        ["conversations-000.zip", "conversations-001.zip", "projects-000.zip", "users-000.zip"],
        ["conversations-000.zip!conversations.json", "conversations-001.zip!conversations.json"],
        {"projects-000.zip", "users-000.zip"},  # zips holding no conversation part, beside ones that do
        ["k-0a", "k-0b", "k-1a"],
    ),
    "claude-outer-zip": (
        ["claude-download.zip"],
        [
            "claude-download.zip!conversations-000.zip!conversations.json",
            "claude-download.zip!conversations-001.zip!conversations.json",
        ],
        {
            "claude-download.zip!manifest.json",
            "claude-download.zip!projects-000.zip",
            "claude-download.zip!users-000.zip",
        },
        ["k-0a", "k-0b", "k-1a"],
    ),
}


def test_every_layout_folder_has_a_case() -> None:
    folders = {p.name for p in LAYOUTS.iterdir() if p.is_dir()}
    assert folders == set(CASES)


def _rel(name: str, base: Path) -> str:
    return name[len(str(base)) + 1 :] if name.startswith(str(base)) else name


@pytest.mark.parametrize("layout", sorted(CASES))
def test_layout_parts_order_and_ids(layout: str) -> None:
    args, parts, passed_over, ids = CASES[layout]
    base = LAYOUTS / layout
    paths = [base / a for a in args]
    expansion = expand(paths)
    assert [_rel(p.name, base) for p in expansion.parts] == parts
    assert {_rel(n, base) for n, _ in expansion.ignored} == passed_over
    env = mv.convert(*paths)
    assert [c["id"] for c in env["conversations"]] == ids
    report = doctor(*paths)
    assert [_rel(p.name, base) for p in report.parts] == parts
    assert [p.order for p in report.parts] == list(range(1, len(parts) + 1))
    assert {_rel(n, base) for n, _ in report.ignored} == passed_over
    assert report.conversations_kept == len(ids) and report.messages_kept == 2 * len(ids)


def test_committed_fixtures_match_the_build_script(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("build_layouts", LAYOUTS / "build_layouts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build(tmp_path)
    built = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(LAYOUTS) for p in LAYOUTS.rglob("*") if p.is_file() and p.parent != LAYOUTS)
    assert built == committed
    for rel in built:
        new, old = tmp_path / rel, LAYOUTS / rel
        if rel.suffix == ".zip":  # compare contents, not bytes (zlib versions may differ)
            with zipfile.ZipFile(new) as a, zipfile.ZipFile(old) as b:
                assert [(i.filename, i.date_time) for i in a.infolist()] == [
                    (i.filename, i.date_time) for i in b.infolist()
                ]
                for info in a.infolist():
                    assert a.read(info) == b.read(info.filename), f"{rel}!{info.filename}"
        else:
            assert new.read_bytes() == old.read_bytes(), str(rel)


def test_a_lone_zip_without_conversation_parts_still_takes_its_json(tmp_path: Path) -> None:  # A18 kept
    projects = LAYOUTS / "claude-multi-zip-given" / "projects-000.zip"
    assert [_rel(p.name, projects.parent) for p in expand([projects]).parts] == ["projects-000.zip!projects.json"]
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(projects)
    assert info.value.reason == "no-provider"


def test_folder_without_conversation_parts_beside_one_with_them_contributes_nothing(tmp_path: Path) -> None:
    conv = {"uuid": "k", "chat_messages": [{"sender": "human", "text": "hi"}]}
    with_parts, without = tmp_path / "a", tmp_path / "b"
    with_parts.mkdir()
    without.mkdir()
    (with_parts / "conversations.json").write_text(f"[{json.dumps(conv)}]")
    (without / "projects.json").write_text('[{"uuid": "p"}]')
    loose = tmp_path / "projects.json"  # a file argument is always read
    loose.write_text('[{"uuid": "p"}]')
    expansion = expand([without, with_parts, loose])
    assert [p.name for p in expansion.parts] == [str(with_parts / "conversations.json"), str(loose)]
    assert (str(without), "holds no conversation part, while other inputs do") in expansion.ignored
    # alone, the same folder still gives its .json files (NOTES A18)
    assert [p.name for p in expand([without]).parts] == [str(without / "projects.json")]
