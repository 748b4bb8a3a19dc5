"""A zip or folder that holds no conversations.json and gives no conversation is told so in one line,
the same from every command and function, naming the files it holds; convert-many leaves no empty
output folder behind when every input fails."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from small_exports import CHATGPT_CONV

import memvelope_tools as mv
from memvelope_tools.cli import main

# What a download of the wrong thing might hold: account files, a page, images, but no conversations.
MEMBERS = {
    "user.json": b'{"id": "user-1", "email": "a@example.com"}',
    "message_feedback.json": b"[]",
    "shared_conversations.json": b"{}",
    "chat.html": b"<html></html>",
    "dalle/one.png": b"\x89PNG\r\n\x1a\n",
    "dalle/two.png": b"\x89PNG\r\n\x1a\n",
    "dalle/three.png": b"\x89PNG\r\n\x1a\n",
}
# The members sorted by name, the first five named, then how many more.
HELD = "it holds chat.html, dalle/one.png, dalle/three.png, dalle/two.png, message_feedback.json and 2 more"
MESSAGE = (
    f"a zip without conversations.json: {HELD}; expected an export as downloaded "
    "(a ChatGPT or Claude export holds conversations.json)"
)


def write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["convert", "{zip}", "-o", "{tmp}/out.mve.json"],
        ["info", "{zip}"],
        ["doctor", "{zip}"],
        ["memory", "{zip}"],
        ["topics", "{zip}"],
        ["parquet", "{zip}", "-o", "{tmp}/pq"],
        ["report", "{zip}", "-o", "{tmp}/report.html"],
        ["diff", "{zip}", "{zip}"],
    ],
    ids=lambda c: c[0],
)
def test_every_command_says_the_one_line(tmp_path: Path, capsys, command: list[str]) -> None:
    path = write_zip(tmp_path / "export.zip", MEMBERS)
    assert main([a.format(zip=path, tmp=tmp_path) for a in command]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"memvelope: error: {MESSAGE} (in {path})"]
    assert captured.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.zip"]  # nothing written


def test_the_functions_raise_the_same_error(tmp_path: Path) -> None:
    path = write_zip(tmp_path / "export.zip", MEMBERS)
    for call in (mv.convert, mv.doctor, mv.messages_frame, mv.memory_frame):
        with pytest.raises(mv.InputError) as info:
            call(path)
        # its .json files were read, as the spec reads a zip without parts, and gave none: the spec's outcome
        assert (info.value.msg, info.value.reason, info.value.source) == (MESSAGE, "no-provider", str(path)), call


def test_a_zip_of_few_files_names_them_all_and_a_folder_says_the_same(tmp_path: Path) -> None:
    path = write_zip(tmp_path / "export.zip", {"user.json": b"{}", "chat.html": b""})
    with pytest.raises(mv.InputError, match=r"^a zip without conversations.json: it holds chat.html, user.json;"):
        mv.convert(path)
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "user.json").write_text("{}")
    with pytest.raises(mv.InputError) as info:
        mv.convert(folder)
    assert info.value.msg.startswith("a folder without conversations.json: it holds user.json; expected an export")


def test_a_zip_whose_other_json_is_an_export_still_converts(tmp_path: Path) -> None:
    # Without conversations.json every .json file is a part (conformance B1): an export under another name converts.
    path = write_zip(tmp_path / "export.zip", {"chats.json": json.dumps([CHATGPT_CONV]).encode(), "notes.txt": b""})
    assert mv.convert(path)["meta"]["conversation_count"] == 1


def test_convert_many_leaves_no_empty_output_folder(tmp_path: Path, capsys) -> None:
    bad = write_zip(tmp_path / "export.zip", MEMBERS)
    out = tmp_path / "made" / "envelopes"
    assert main(["convert-many", str(bad), str(bad), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count(MESSAGE) == 2 and "0 converted, 2 failed" in err
    assert not (tmp_path / "made").exists()  # neither the folder nor the parent it would have made
    existing = tmp_path / "existing"
    existing.mkdir()
    assert main(["convert-many", str(bad), "-o", str(existing)]) == 1
    assert existing.is_dir()  # a folder that was there before stays
    good = tmp_path / "good.json"
    good.write_text(json.dumps([CHATGPT_CONV]))
    assert main(["convert-many", str(bad), str(good), "-o", str(out)]) == 1
    assert [p.name for p in out.iterdir()] == ["good.mve.json"]
