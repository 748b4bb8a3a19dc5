"""mv.assets_frame: every place a ChatGPT or Claude export names an uploaded or generated file, and
whether the download holds it under each naming (``file-<id>-<name>``, ``file_<id>-<uuid>``,
``dalle-generations/``, ``.dat`` named by ``conversation_asset_file_names.json``), read from the listing only."""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from pathlib import Path

import pandas as pd
import pytest
from conftest import COLLECTED
from whole_exports import T0, chatgpt, message, write_folder, write_zip

import memvelope_tools as mv
from memvelope_tools._whole.assets import ASSET_COLUMNS, ASSET_KINDS
from memvelope_tools.errors import InputError

REAL = COLLECTED / "files" / "Fenixhuman27__knowledge-forge__data-conversations-004.json"
REAL_MANIFEST = COLLECTED / "files" / "Fenixhuman27__knowledge-forge__data-export_manifest.json"

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _image(pointer: str, size: int, **metadata: object) -> dict[str, object]:
    return {"content_type": "image_asset_pointer", "asset_pointer": pointer, "size_bytes": size, "metadata": metadata}


CLASSIC = chatgpt(
    "c1",
    [
        message(
            "user",
            [_image("file-service://file-Up1", 11), "look at my cat"],
            metadata={"attachments": [{"id": "file-Up1", "name": "cat.png", "mime_type": "image/png", "size": 11}]},
            at=1,
        ),
        message("assistant", ["A cat."], at=2),
        message("tool", [_image("file-service://file-Gen1", 20, dalle={"gen_id": "g1"})], at=3, name="dalle.text2im"),
        message("tool", [_image("file-service://file-Gen2", 33, dalle={"gen_id": "g2"})], at=4, name="dalle.text2im"),
        message(
            "user",
            [{"content_type": "audio_asset_pointer", "asset_pointer": "sediment://file_00aud", "format": "wav"}],
            at=5,
        ),
        message(
            "user",
            ["here is the plan"],
            metadata={"attachments": [{"id": "file-Doc1", "name": "plan.docx", "mime_type": DOCX, "size": 9}]},
            at=6,
        ),
        message("user", [_image("sediment://file_00gone", 7)], at=7),
    ],
)
CLASSIC_MEMBERS = {
    "conversations.json": [CLASSIC],
    "user.json": {"id": "u"},
    "file-Up1-cat.png": b"x" * 11,
    "dalle-generations/file-Gen1-1f2e3d4c.webp": b"g" * 20,
    "dalle-generations/6b1c0000-aaaa-bbbb-cccc-000000000000.webp": b"h" * 33,  # a uuid only: found by its size
    "dalle-generations/9999aaaa-aaaa-bbbb-cccc-000000000000.webp": b"i" * 44,  # no conversation names it
    "c1/audio/file_00aud-7a7a7a7a.wav": b"a" * 5,
}


@pytest.fixture
def classic(tmp_path: Path) -> pd.DataFrame:
    return mv.assets_frame(write_zip(tmp_path / "chatgpt-export.zip", CLASSIC_MEMBERS))


def _one(frame: pd.DataFrame, **where: object) -> pd.Series:
    mask = pd.Series(True, index=frame.index)
    for column, value in where.items():
        mask &= frame[column] == value
    rows = frame[mask]
    assert len(rows) == 1, f"{where}: {len(rows)} rows"
    return rows.iloc[0]


def test_columns_kinds_and_dtypes(classic: pd.DataFrame) -> None:
    assert list(classic.columns) == list(ASSET_COLUMNS)
    assert list(classic["kind"].cat.categories) == list(ASSET_KINDS)
    assert str(classic["ts"].dtype) == "datetime64[ms, UTC]" and str(classic["present"].dtype) == "boolean"
    assert str(classic["size_bytes"].dtype) == "Int64" and classic.attrs["provider"] == "chatgpt"


def test_an_upload_named_file_dash_id_dash_name_is_present_with_its_attachment_merged(classic: pd.DataFrame) -> None:
    row = _one(classic, pointer="file-Up1")  # the pointer and the attachment of one message: one row
    assert (row["kind"], row["name"], row["mime"], row["size_bytes"]) == ("image", "cat.png", "image/png", 11)
    assert (row["member"], row["present"], row["found_in"]) == ("file-Up1-cat.png", True, "content")
    assert (row["conversation_id"], row["node_id"], row["role"]) == ("c1", "n1", "user")
    assert row["ts"] == pd.Timestamp(T0 + 1, unit="s", tz="UTC")


def test_dalle_images_by_their_id_and_by_their_size(classic: pd.DataFrame) -> None:
    by_id = _one(classic, pointer="file-Gen1")
    assert (by_id["kind"], by_id["member"], by_id["present"]) == (
        "generated_image",
        "dalle-generations/file-Gen1-1f2e3d4c.webp",
        True,
    )
    by_size = _one(classic, pointer="file-Gen2")
    assert by_size["member"] == "dalle-generations/6b1c0000-aaaa-bbbb-cccc-000000000000.webp" and by_size["present"]
    orphan = _one(classic, found_in="download")
    assert orphan["member"] == "dalle-generations/9999aaaa-aaaa-bbbb-cccc-000000000000.webp"
    assert (orphan["kind"], orphan["present"], orphan["size_bytes"]) == ("generated_image", True, 44)
    assert pd.isna(orphan["conversation_id"])


def test_a_voice_recording_under_the_conversations_audio_folder(classic: pd.DataFrame) -> None:
    row = _one(classic, pointer="file_00aud")
    assert (row["kind"], row["mime"], row["member"], row["present"]) == (
        "audio",
        "audio/wav",
        "c1/audio/file_00aud-7a7a7a7a.wav",
        True,
    )
    assert row["size_bytes"] == 5  # from the listing, the pointer giving none


def test_files_the_download_does_not_hold(classic: pd.DataFrame) -> None:
    doc = _one(classic, pointer="file-Doc1")
    assert (doc["kind"], doc["name"], doc["found_in"], doc["present"]) == ("file", "plan.docx", "attachments", False)
    assert pd.isna(doc["member"])
    gone = _one(classic, pointer="file_00gone")
    assert (gone["kind"], gone["present"], gone["size_bytes"]) == ("image", False, 7)
    assert len(classic) == 7  # the six files named, and the one DALL-E image no conversation names


SHARDED = chatgpt(
    "c3",
    [
        message("user", [_image("sediment://file_00dat1", 4)], at=1),
        message(
            "user",
            [
                {
                    "content_type": "real_time_user_audio_video_asset_pointer",
                    "audio_asset_pointer": {
                        "content_type": "audio_asset_pointer",
                        "asset_pointer": "sediment://file_00rtaud",
                        "format": "wav",
                        "size_bytes": 3,
                    },
                    "frames_asset_pointers": [_image("sediment://file_00frame", 2)],
                    "video_container_asset_pointer": None,
                }
            ],
            at=2,
        ),
        message("assistant", [_image("sediment://file_00gen", 6, generation={"gen_id": "x"})], at=3),
    ],
)
LIBRARY = [
    {"file_id": "file_00gen", "file_name": "poster.png", "mime_type": "image/png", "image_gen_generation_id": "x"},
    {
        "id": {"id": "libfile_1"},
        "file_id": "file_00lib",
        "file_name": "notes.pdf",
        "mime_type": "application/pdf",
        "origination_thread_id": "c3",
        "origination_message_id": "n9",
        "created_at": "2026-05-01T10:00:00.000000+00:00",
        "file_size_bytes": 123,
        "image_gen_generation_id": None,
        "library_artifact_type": None,
    },
]
SHARDED_MEMBERS = {
    "conversations-000.json": [SHARDED],
    "conversation_asset_file_names.json": {
        "file_00dat1.dat": "holiday.jpg",
        "file_00gen.dat": "poster.png",
        "file-Orphan.dat": "scan.pdf",
    },
    "library_files.json": LIBRARY,
    "file_00dat1.dat": b"d" * 4,
    "file_00rtaud.dat": b"r" * 3,
    "file_00gen.dat": b"p" * 6,
    "file-Orphan.dat": b"o" * 8,
}


@pytest.fixture
def sharded(tmp_path: Path) -> pd.DataFrame:
    return mv.assets_frame(write_folder(tmp_path / "export", SHARDED_MEMBERS))


def test_dat_files_take_their_names_from_conversation_asset_file_names(sharded: pd.DataFrame) -> None:
    row = _one(sharded, pointer="file_00dat1")
    assert (row["name"], row["member"], row["present"], row["kind"]) == (
        "holiday.jpg",
        "file_00dat1.dat",
        True,
        "image",
    )
    orphan = _one(sharded, pointer="file-Orphan")  # held, named, but no conversation points to it
    assert (orphan["found_in"], orphan["name"], orphan["kind"], orphan["present"]) == (
        "download",
        "scan.pdf",
        "file",
        True,
    )


def test_real_time_video_gives_its_audio_and_its_frames(sharded: pd.DataFrame) -> None:
    audio = _one(sharded, pointer="file_00rtaud")
    assert (audio["kind"], audio["mime"], audio["present"]) == ("audio", "audio/wav", True)
    frame = _one(sharded, pointer="file_00frame")
    assert (frame["kind"], frame["present"]) == ("video", False)


def test_generated_images_and_the_library(sharded: pd.DataFrame) -> None:
    made = _one(sharded, pointer="file_00gen")
    assert (made["kind"], made["name"], made["mime"], made["found_in"]) == (
        "generated_image",
        "poster.png",
        "image/png",
        "content",
    )  # named by the library, which gives no second row for it
    lib = _one(sharded, pointer="file_00lib")
    assert (lib["found_in"], lib["name"], lib["mime"], lib["kind"], lib["size_bytes"]) == (
        "library",
        "notes.pdf",
        "application/pdf",
        "file",
        123,
    )
    assert (lib["conversation_id"], lib["node_id"], lib["present"]) == ("c3", "n9", False)
    assert lib["ts"] == pd.Timestamp("2026-05-01T10:00:00Z")
    assert len(sharded) == 6


def test_the_bytes_of_an_asset_are_never_read(tmp_path: Path) -> None:
    path = write_zip(tmp_path / "export.zip", CLASSIC_MEMBERS)
    data = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("file-Up1-cat.png")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    broken = data[:start] + b"\xff" * info.compress_size + data[start + info.compress_size :]
    path.write_bytes(broken)
    with zipfile.ZipFile(path) as archive, pytest.raises((zipfile.BadZipFile, zlib.error)):
        archive.read("file-Up1-cat.png")  # reading it would fail
    assert _one(mv.assets_frame(path), pointer="file-Up1")["present"]


def test_given_parts_alone_hold_no_file(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "export", CLASSIC_MEMBERS)
    frame = mv.assets_frame(folder / "conversations.json")
    assert not frame["present"].any() and len(frame) == 6


CLAUDE = [
    {
        "uuid": "k1",
        "name": "Readme help",
        "created_at": "2025-03-05T13:04:00Z",
        "updated_at": "2025-03-05T13:05:00Z",
        "chat_messages": [
            {
                "uuid": "m1",
                "sender": "human",
                "text": "rewrite this",
                "created_at": "2025-03-05T13:04:59Z",
                "attachments": [
                    {
                        "file_name": "README.md",
                        "file_size": 164,
                        "file_type": "text/markdown",
                        "extracted_content": "# x",
                    },
                    {"file_name": "empty.txt", "file_size": 0, "file_type": "text/plain", "extracted_content": ""},
                ],
                "files": [{"file_name": "photo.jpg"}],
                "files_v2": [{"file_kind": "image", "file_uuid": "f-1", "file_name": "photo.jpg"}],
            },
            {"uuid": "m2", "sender": "assistant", "text": "done", "attachments": [], "files": []},
        ],
    }
]


def test_claude_attachments_are_held_as_their_text_and_files_never(tmp_path: Path) -> None:
    frame = mv.assets_frame(write_zip(tmp_path / "claude.zip", {"conversations.json": CLAUDE, "users.json": []}))
    assert frame.attrs["provider"] == "claude" and len(frame) == 3  # files_v2 stands for files: one row
    readme = _one(frame, name="README.md")
    assert (readme["kind"], readme["mime"], readme["size_bytes"], readme["found_in"]) == (
        "file",
        "text/markdown",
        164,
        "attachments",
    )
    assert (readme["present"], readme["member"], readme["node_id"], readme["role"]) == (
        True,
        "conversations.json",
        "m1",
        "human",
    )
    assert not _one(frame, name="empty.txt")["present"]
    photo = _one(frame, name="photo.jpg")
    assert (photo["kind"], photo["pointer"], photo["present"], photo["found_in"]) == ("image", "f-1", False, "files")


def test_a_wrong_input_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        mv.assets_frame(tmp_path / "missing.zip")
    assert info.value.reason == "not-found" and "\n" not in str(info.value)


def test_real_2026_export_dat_files_named_in_its_manifest(tmp_path: Path) -> None:
    if not REAL.exists() or not REAL_MANIFEST.exists():
        pytest.skip("the collected real exports are not beside the repository")
    manifest = json.loads(REAL_MANIFEST.read_text(encoding="utf-8"))
    dats = {f["path"] for f in manifest["export_files"] if f["path"].endswith(".dat")}
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "conversations-004.json").symlink_to(REAL)  # read in place
    for name in dats:
        (folder / name).write_bytes(b"")  # the listing only matters
    # every file id the shard names, found independently: pointers in its text, attachment ids
    raw = REAL.read_text(encoding="utf-8")
    named = set(re.findall(r'"(?:sediment|file-service)://(file[-_][A-Za-z0-9]+)"', raw))
    for conv in json.loads(raw):
        for node in conv["mapping"].values():
            for attached in ((node.get("message") or {}).get("metadata") or {}).get("attachments") or []:
                named.add(attached["id"])
    held = {name[: -len(".dat")] for name in dats}
    frame = mv.assets_frame(folder)
    told = frame[frame["found_in"] != "download"]
    assert set(told["pointer"]) == named and len(named) == 105
    assert set(told.loc[told["present"].astype(bool), "pointer"]) == named & held and len(named & held) == 101
    assert set(frame.loc[frame["found_in"] == "download", "pointer"]) == held - named
    assert set(told["member"].dropna()) == {f"{p}.dat" for p in named & held}
