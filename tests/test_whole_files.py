"""The files of a download: those the spec does not convert (listed by the inventory, noted by convert),
the check against export_manifest.json, the inventory's sections, and the assets and projects tables of
a Parquet dataset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import COLLECTED
from whole_exports import T0, chatgpt, message, write_folder, write_zip

import memvelope_tools as mv
from memvelope_tools._convert import sources
from memvelope_tools._sources import resolve_one
from memvelope_tools._whole import read
from memvelope_tools._whole.export import READERS, export_inputs, finish, read_nodes
from memvelope_tools._whole.files import list_export, unconverted_note
from memvelope_tools._whole.sections import inventory_sections, read_whole, unconverted_files, verify_manifest
from memvelope_tools.cli import main
from memvelope_tools.errors import FormatError

CONV = chatgpt(
    "c1",
    [
        message(
            "user",
            [{"content_type": "image_asset_pointer", "asset_pointer": "sediment://file_00a", "size_bytes": 4}],
            metadata={"attachments": [{"id": "file_00a", "name": "a.png", "mime_type": "image/png"}]},
        ),
        message("user", [{"content_type": "image_asset_pointer", "asset_pointer": "sediment://file_00b"}], at=1),
        message("user", [{"content_type": "image_asset_pointer", "asset_pointer": "sediment://file_00a"}], at=2),
    ],
    gizmo_id="g-p-1",
    gizmo_type="snorlax",
)
PARTS = {"conversations-000.json": [CONV], "conversations-001.json": [chatgpt("c2", [message("user", ["hi"])])]}
SIDE = {
    "group_chats.json": {"chats": []},
    "library_files.json": [],
    "user.json": {"id": "u"},
    "chat.html": "<html></html>",
    "notes.txt": "mine",
    "file_00a.dat": b"aaaa",
    "file_00z.dat": b"zz",
}


def _manifest(members: dict[str, object], **sizes: int) -> dict[str, object]:
    """A manifest listing ``members`` with their sizes (``sizes`` overrides some)."""
    files = []
    for name, value in members.items():
        data = value if isinstance(value, bytes) else (value if isinstance(value, str) else json.dumps(value))
        size = len(data.encode() if isinstance(data, str) else data)
        files.append({"path": name, "size_bytes": sizes.get(name.replace(".", "_").replace("-", "_"), size)})
    return {
        "version": 1,
        "manifest_file": "export_manifest.json",
        "export_files": files,
        "logical_files": {"conversations.json": {"files": list(PARTS), "sharded": True, "shard_count": 2}},
    }


# ---- files the spec does not convert ---------------------------------------------------------------


def test_every_file_but_the_conversation_parts_is_listed(tmp_path: Path) -> None:
    path = write_zip(tmp_path / "export.zip", {**PARTS, **SIDE})
    found = unconverted_files(path)
    assert [f["name"] for f in found] == [
        "chat.html",
        "file_00a.dat",
        "file_00z.dat",
        "group_chats.json",
        "library_files.json",
        "notes.txt",
        "user.json",
    ]
    by_name = {f["name"]: f for f in found}
    assert by_name["group_chats.json"]["what"] == "group chats (conversations with other people)"
    assert by_name["group_chats.json"]["size"] == len(json.dumps({"chats": []}))
    assert by_name["notes.txt"]["what"] is None and not by_name["notes.txt"]["asset"]
    assert by_name["file_00z.dat"]["asset"] and by_name["file_00z.dat"]["what"] == "an uploaded or generated file"


def test_a_folder_at_any_depth_and_a_claude_download_of_zips(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "export", {**PARTS, "dalle-generations/x.webp": b"w", ".hidden": b"h"})
    assert [f["name"] for f in unconverted_files(folder)] == ["dalle-generations/x.webp"]
    claude = tmp_path / "claude"
    claude.mkdir()
    write_zip(claude / "conversations-000.zip", {"conversations.json": [{"uuid": "k", "chat_messages": []}]})
    write_zip(claude / "projects-000.zip", {"projects.json": []})
    assert [(f["name"], f["what"]) for f in unconverted_files(claude)] == [
        ("projects-000.zip", "Claude's projects, zipped")
    ]


def test_the_note_counts_the_uploaded_files_apart() -> None:
    many = [{"name": f"f{i}.json", "asset": False} for i in range(7)] + [{"name": "file_00a.dat", "asset": True}]
    assert unconverted_note(many) == (
        "8 files the spec does not convert: f0.json, f1.json, f2.json, f3.json, f4.json, 2 more files and 1 "
        "uploaded or generated file"
    )
    assert unconverted_note([{"name": "a.dat", "asset": True}]) == (
        "1 file the spec does not convert: 1 uploaded or generated file"
    )
    assert unconverted_note([]) is None


def test_convert_notes_them_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_zip(tmp_path / "export.zip", {**PARTS, **SIDE})
    assert main(["convert", str(path), "-o", str(tmp_path / "x.mve.json")]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "note:" in line]
    assert notes == [
        "memvelope: note: 7 files the spec does not convert: chat.html, group_chats.json, library_files.json, "
        "notes.txt, user.json and 2 uploaded or generated files"
    ]
    assert main(["convert", str(path), "-q", "-o", str(tmp_path / "y.mve.json")]) == 0
    assert capsys.readouterr().err == ""
    parts = write_folder(tmp_path / "parts", PARTS)
    assert main(["convert", str(parts), "-o", str(tmp_path / "z.mve.json")]) == 0
    assert "note:" not in capsys.readouterr().err  # a folder of conversation parts only


# ---- the manifest ------------------------------------------------------------------------------------


def test_a_clean_download_matches_its_manifest(tmp_path: Path) -> None:
    members = {**PARTS, **SIDE}
    path = write_zip(tmp_path / "export.zip", {**members, "export_manifest.json": _manifest(members)})
    found = verify_manifest(path)
    assert found == {"manifest": "export_manifest.json", "checked": 9, "missing": [], "size_mismatch": []}


def test_missing_files_and_sizes_that_differ(tmp_path: Path) -> None:
    members = {**PARTS, **SIDE}
    manifest = _manifest(members, file_00z_dat=3)
    manifest["export_files"].append({"path": "file_00gone.dat", "size_bytes": 10})  # type: ignore[attr-defined]
    manifest["logical_files"]["conversations.json"]["files"].append("conversations-002.json")  # type: ignore[index]
    folder = write_folder(tmp_path / "export", {**members, "export_manifest.json": manifest})
    found = verify_manifest(folder)
    assert found["checked"] == 11
    assert found["missing"] == [
        {"path": "file_00gone.dat", "size_bytes": 10},
        {"path": "conversations-002.json", "size_bytes": None},
    ]
    assert found["size_mismatch"] == [{"path": "file_00z.dat", "expected": 3, "actual": 2}]


def test_a_manifest_in_the_zips_folder_checks_that_folder(tmp_path: Path) -> None:
    members = {**PARTS, "user.json": {"id": "u"}}
    inside = {f"export-2026/{name}": value for name, value in members.items()}
    path = write_zip(tmp_path / "export.zip", {**inside, "export-2026/export_manifest.json": _manifest(members)})
    assert verify_manifest(path) == {
        "manifest": "export-2026/export_manifest.json",
        "checked": 3,
        "missing": [],
        "size_mismatch": [],
    }


def test_no_manifest_checks_nothing(tmp_path: Path) -> None:
    found = verify_manifest(write_zip(tmp_path / "export.zip", PARTS))
    assert found == {"manifest": None, "checked": 0, "missing": [], "size_mismatch": []}


@pytest.mark.parametrize(
    ("manifest", "said"),
    [
        ([1, 2], "an export manifest is a JSON object, not an array"),
        ({"export_files": {}}, "'export_files' is not an array"),
    ],
)
def test_a_manifest_of_another_shape_is_one_line(tmp_path: Path, manifest: object, said: str) -> None:
    path = write_zip(tmp_path / "export.zip", {**PARTS, "export_manifest.json": manifest})
    with pytest.raises(FormatError) as info:
        verify_manifest(path)
    assert info.value.reason == "bad-shape" and said in str(info.value) and "export_manifest.json" in str(info.value)


def test_real_2026_manifest_against_the_one_shard_held(tmp_path: Path) -> None:
    shard = COLLECTED / "files" / "Fenixhuman27__knowledge-forge__data-conversations-004.json"
    manifest = COLLECTED / "files" / "Fenixhuman27__knowledge-forge__data-export_manifest.json"
    if not shard.exists() or not manifest.exists():
        pytest.skip("the collected real exports are not beside the repository")
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "conversations-004.json").symlink_to(shard)  # read in place
    (folder / "export_manifest.json").symlink_to(manifest)
    listed = json.loads(manifest.read_text(encoding="utf-8"))["export_files"]
    found = verify_manifest(folder)
    assert found["checked"] == len(listed) == 240
    assert [m["path"] for m in found["missing"]] == [f["path"] for f in listed if f["path"] != "conversations-004.json"]
    assert found["size_mismatch"] == []  # the shard is the size its manifest gives


# ---- the inventory's sections and the Parquet tables -------------------------------------------------


def test_inventory_sections(tmp_path: Path) -> None:
    members = {**PARTS, **SIDE}
    path = write_zip(tmp_path / "export.zip", {**members, "export_manifest.json": _manifest(members, user_json=1)})
    found = inventory_sections(path, verify=True)
    assert set(found) == {"assets", "projects", "unconverted", "verify"}
    # file_00a (named twice, held), file_00b (missing), file_00z (held, named by no conversation)
    assert found["assets"] == {"total": 3, "present": 2, "missing": 1}
    assert found["projects"] == [
        {
            "provider": "chatgpt",
            "project_id": "g-p-1",
            "kind": "chatgpt-project",
            "name": None,
            "conversations": 1,
            "docs": None,
        }
    ]
    assert [f["name"] for f in found["unconverted"]][:2] == ["chat.html", "export_manifest.json"]
    assert found["verify"]["size_mismatch"] == [{"path": "user.json", "expected": 1, "actual": 11}]
    assert inventory_sections(path)["verify"] is None
    json.dumps(found)  # the inventory writes it as JSON


def _count_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the export parts opened from now on, in order."""
    opened: list[str] = []
    real = sources.Part.open

    def counting(self: sources.Part) -> Any:
        opened.append(self.name)
        return real(self)

    monkeypatch.setattr(sources.Part, "open", counting)
    return opened


def test_the_inventory_of_a_zip_reads_its_conversations_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_zip(tmp_path / "export.zip", {**PARTS, **SIDE})
    opened = _count_opens(monkeypatch)
    found = mv.inventory(path)
    # the nodes, the files and the projects from one reading of each part
    assert [name for name in opened if "conversations-" in name] == [f"{path}!{name}" for name in PARTS]
    # file_00a (named twice, held), file_00b (missing), file_00z (held, named by no conversation)
    assert found["assets"] == {"total": 3, "present": 2, "missing": 1}
    assert [(p["project_id"], p["conversations"]) for p in found["projects"]] == [("g-p-1", 1)]
    assert found["nodes"] == 4


def test_to_parquet_reads_the_conversations_once_for_the_envelope_and_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_zip(tmp_path / "export.zip", {**PARTS, **SIDE})
    opened = _count_opens(monkeypatch)
    written = mv.to_parquet(path, tmp_path / "pq")
    assert sorted(written) == ["assets", "conversations", "messages", "nodes", "projects"]
    # converted to the envelope, the nodes, the files and the projects made in the same reading
    assert sorted(name for name in opened if "conversations-" in name) == sorted(f"{path}!{name}" for name in PARTS)
    frames = mv.read_parquet(tmp_path / "pq")
    assert len(frames["nodes"]) == 4
    # the files as assets_frame's own reading of the conversations finds them
    assets = pq.read_table(tmp_path / "pq" / "assets.parquet")
    frame = mv.assets_frame(path)
    for column in ("pointer", "name", "present", "conversation_id"):
        assert assets.column(column).to_pylist() == [None if v is pd.NA else v for v in frame[column]]
    assert "a.png" in assets.column("name").to_pylist()


def test_projects_used_in_several_parts_are_counted_across_them(tmp_path: Path) -> None:
    gpt = {"gizmo_id": "g-abc", "gizmo_type": "gpt"}
    first = chatgpt("c1", [message("user", ["a"])], **gpt)
    unnamed = {
        k: v for k, v in chatgpt("", [message("user", ["b"])], **gpt).items() if k not in ("id", "conversation_id")
    }
    later = {**chatgpt("c2", [message("user", ["c"])], **gpt), "create_time": T0 + 5000, "update_time": T0 + 9000}
    parts = {"conversations-000.json": [first, unnamed], "conversations-001.json": [later, unnamed]}
    path = write_zip(tmp_path / "export.zip", parts)
    # by hand: c1, c2 and the two conversations without an id use g-abc; from T0 to T0 + 9000 s
    found = mv.inventory(path)["projects"]
    assert found == [
        {
            "provider": "chatgpt",
            "project_id": "g-abc",
            "kind": "custom-gpt",
            "name": None,
            "conversations": 4,
            "docs": None,
        }
    ]
    assert found == inventory_sections(path)["projects"]  # the pass for the files and projects alone agrees
    mv.to_parquet(path, tmp_path / "pq")  # its projects read in the pass of the nodes
    [row] = pq.read_table(tmp_path / "pq" / "projects.parquet").to_pylist()
    assert (row["conversations"], row["first_used"].isoformat(), row["last_used"].isoformat()) == (
        4,
        "2026-05-28T20:26:40+00:00",
        "2026-05-28T22:56:40+00:00",
    )


@pytest.mark.slow
def test_worker_processes_read_the_files_and_projects_the_pass_alone_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def sent(i: int) -> dict[str, Any]:
        return message("user", [{"content_type": "image_asset_pointer", "asset_pointer": f"sediment://file_01{i}"}])

    gpt = {"gizmo_id": "g-x", "gizmo_type": "gpt"}
    parts = {
        "conversations-000.json": [CONV, *(chatgpt(f"f{i}", [sent(i)]) for i in range(6))],
        "conversations-001.json": [chatgpt(f"g{i}", [message("user", ["hi"])], **gpt) for i in range(6)],
    }
    path = write_zip(tmp_path / "export.zip", {**parts, **SIDE})
    found = resolve_one(path, "export")
    inputs = export_inputs([found], "test")
    listing = list_export(inputs)
    here: list[object] = []
    real = read.take
    monkeypatch.setattr(read, "take", lambda *args: here.append(args) or real(*args))
    _, provider, readers = read_nodes(found, workers=2, beside=READERS)
    assert here == []  # every batch was read in a worker process
    assets, projects = finish(inputs, listing, readers, provider)
    alone_assets, alone_projects, _ = read_whole(inputs, listing, False)
    assert assets == alone_assets and projects == alone_projects
    # file_00a twice, file_00b, file_010 .. file_015, and file_00z that no conversation names
    assert len(assets) == 10 and [(p.project_id, p.conversations) for p in projects] == [("g-p-1", 1), ("g-x", 6)]


def test_parquet_writes_assets_and_projects_for_an_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_zip(tmp_path / "export.zip", {**PARTS, **SIDE})
    out = tmp_path / "pq"
    assert main(["parquet", str(path), "-o", str(out), "-q"]) == 0
    assets, projects = pq.read_table(out / "assets.parquet"), pq.read_table(out / "projects.parquet")
    frame = mv.assets_frame(path)
    assert assets.column_names == ["source", *frame.columns]
    assert set(assets.column("source").to_pylist()) == {"export.zip"} and assets.num_rows == len(frame)
    assert projects.column("project_id").to_pylist() == ["g-p-1"]
    runs = {pq.read_schema(out / f"{name}.parquet").metadata[b"memvelope.run"] for name in ("messages", "assets")}
    assert len(runs) == 1  # written together with the other tables
    api = tmp_path / "api"
    assert sorted(mv.to_parquet(path, api)) == ["assets", "conversations", "messages", "nodes", "projects"]
    assert pq.read_table(api / "assets.parquet").num_rows == len(frame)
    envelope = tmp_path / "x.mve.json"
    mv.write_envelope(mv.convert(path), envelope)
    assert sorted(mv.to_parquet(envelope, tmp_path / "env")) == ["conversations", "messages"]  # no export: none


# ---- the inventory's sections --------------------------------------------------------------------------


def test_the_inventory_holds_the_files_projects_and_unconverted_of_the_sample() -> None:
    found = mv.inventory(mv.sample_path("chatgpt"))
    # the sample's two uploads (one left out of the zip on purpose) and its DALL-E image
    assert found["assets"] == {"total": 3, "present": 2, "missing": 1}
    assert [(p["kind"], p["project_id"], p["conversations"]) for p in found["projects"]] == [
        ("custom-gpt", "g-rk9Wq3TzP", 2)
    ]
    assert {f["name"] for f in found["unconverted"] if not f["asset"]} == {
        "chat.html",
        "message_feedback.json",
        "shared_conversations.json",
        "user.json",
    }
    assert found["verify"] is None


def test_inventory_verify_says_each_problem_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    members = {**PARTS, **SIDE}
    manifest = _manifest(members, file_00z_dat=3)
    manifest["export_files"].append({"path": "file_00gone.dat", "size_bytes": 10})  # type: ignore[attr-defined]
    folder = write_folder(tmp_path / "export", {**members, "export_manifest.json": manifest})
    assert main(["inventory", str(folder), "--verify", "--json", "-q"]) == 1
    out, err = capsys.readouterr()
    verify = json.loads(out)["verify"]
    assert verify["missing"] == [{"path": "file_00gone.dat", "size_bytes": 10}]
    assert verify["size_mismatch"] == [{"path": "file_00z.dat", "expected": 3, "actual": 2}]
    assert err.splitlines() == [
        "memvelope: verify: missing from the download: file_00gone.dat",
        "memvelope: verify: size differs: file_00z.dat (the manifest says 3 bytes, the download holds 2)",
    ]
    clean = write_folder(tmp_path / "clean", {**members, "export_manifest.json": _manifest(members)})
    assert main(["inventory", str(clean), "--verify", "-q"]) == 0
    out, err = capsys.readouterr()
    assert "Files uploaded or generated" in out
    assert err == "memvelope: verify: the download holds the 9 files its manifest lists\n"
    assert main(["inventory", str(clean), "-q"]) == 0  # without --verify nothing is checked
    assert "verify" not in capsys.readouterr().err
