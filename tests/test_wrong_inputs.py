"""Each kind of wrong input reads one way at every door: the same line, exception class and reason from
every command and every Python function (see memvelope_tools._sources, which identifies inputs)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

import memvelope_tools as mv
from memvelope_tools.cli import main
from memvelope_tools.errors import InputError

ROOT = Path(__file__).resolve().parent.parent

EXPECTED = (
    "expected an export (its zip as downloaded, its folder or a conversations*.json file), "
    "an envelope or a Facts IR document"
)
CONVERSATION = {
    "id": "c1",
    "title": "t",
    "create_time": 1700000000.0,
    "update_time": 1700000000.0,
    "current_node": "a",
    "mapping": {
        "a": {
            "id": "a",
            "parent": None,
            "children": [],
            "message": {
                "id": "a",
                "author": {"role": "user"},
                "create_time": 1700000000.0,
                "content": {"content_type": "text", "parts": ["hi"]},
            },
        }
    },
}

#: kind -> (file name, what it holds, the one line, the reason). The 13 kinds; a line names no path:
#: every door adds " (in PATH)". The reasons are those the spec gives converting the same file: not
#: JSON is invalid-json, a JSON object where an export belongs adds no conversation (no-provider).
KINDS: dict[str, tuple[str, Any, str, str]] = {
    "empty file": ("history.json", b"", f"the file is empty: {EXPECTED}", "invalid-json"),
    "truncated JSON": (
        "conversations.json",
        b'[{"title": "a',
        # the string opens at column 12 and the file ends inside it
        "not valid JSON: Unterminated string starting at line 1 column 12",
        "invalid-json",
    ),
    "binary": ("data.json", bytes(range(256)) * 4, f"a binary file, not JSON: {EXPECTED}", "invalid-json"),
    "PNG named .json": (
        "conversations.json",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64),
        f"a PNG image, not JSON: {EXPECTED}",
        "invalid-json",
    ),
    "Parquet file": (
        "messages.parquet",
        b"PAR1" + bytes(64) + b"PAR1",
        "a Parquet file, not JSON: give the folder that holds it (written by memvelope parquet) to search or "
        "topics, or read it with mv.read_parquet()",
        "invalid-json",
    ),
    "0-byte zip": (
        "export.zip",
        b"",
        "an empty file (0 bytes), not a zip archive: download the export again",
        "bad-zip",
    ),
    "zip without conversations": (
        "export.zip",
        "zip",
        "a zip without conversations.json: it holds images/photo.png, readme.txt; expected an export as downloaded "
        "(a ChatGPT or Claude export holds conversations.json)",
        "no-parts",
    ),
    "folder without an export": (
        "export",
        "folder",
        "a folder without conversations.json: it holds notes.txt; expected an export as downloaded "
        "(a ChatGPT or Claude export holds conversations.json)",
        "no-parts",
    ),
    "missing path": ("nowhere.json", None, "no such file or folder", "not-found"),
    "single conversation object": (
        "conversation.json",
        json.dumps(CONVERSATION).encode(),
        "a single ChatGPT conversation, not an export: an export is an array of conversations; "
        "put it inside [ ] to convert it",
        "no-provider",
    ),
    '{"conversations": [...]}': (
        "conversations.json",
        json.dumps({"conversations": [CONVERSATION]}).encode(),
        "an object holding a 'conversations' array, without the 'memvelope' tag of an envelope: "
        "to convert exported conversations, save the array alone as conversations.json",
        "no-provider",
    ),
    "UTF-16 export": (
        "conversations.json",
        json.dumps([CONVERSATION]).encode("utf-16"),
        "UTF-16 text, not UTF-8: save the file as UTF-8 and try again",
        "invalid-json",
    ),
    "text that is not JSON": (
        "notes.json",
        b"hello, world\n",
        "not valid JSON: Expecting value at line 1 column 1",
        "invalid-json",
    ),
}

#: command -> its arguments, PATH standing for the input.
COMMANDS: dict[str, list[str]] = {
    "convert": ["convert", "PATH"],
    "validate": ["validate", "PATH"],
    "info": ["info", "PATH"],
    "parquet": ["parquet", "PATH", "-o", "OUT/pq"],
    "report": ["report", "PATH", "-o", "OUT/report.html"],
    "search": ["search", "PATH", "hi"],
    "topics": ["topics", "PATH"],
    "doctor": ["doctor", "PATH"],
    "distill": ["distill", "PATH", "-o", "OUT/facts.mv.json"],
}

#: function name -> how to call it on a path.
FUNCTIONS: dict[str, Any] = {
    "load": lambda path, out: mv.load(path),
    "messages_frame": lambda path, out: mv.messages_frame(path),
    "conversations_frame": lambda path, out: mv.conversations_frame(path),
    "convert": lambda path, out: mv.convert(path),
    "search": lambda path, out: mv.search(path, "hi"),
    "to_parquet": lambda path, out: mv.to_parquet(path, out / "pq"),
}


def make(kind: str, root: Path) -> Path:
    """The input of ``kind`` under ``root``."""
    name, content, _, _ = KINDS[kind]
    root.mkdir(parents=True, exist_ok=True)
    path = root / name
    if content is None:
        return path
    if content == "zip":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("readme.txt", "nothing to convert")
            archive.writestr("images/photo.png", b"\x89PNG\r\n\x1a\n")
    elif content == "folder":
        path.mkdir()
        (path / "notes.txt").write_text("nothing to convert")
    else:
        path.write_bytes(content)
    return path


@pytest.fixture
def out(tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def test_the_table_has_the_thirteen_kinds() -> None:
    assert len(KINDS) == 13
    assert all("\n" not in line and line for _, _, line, _ in KINDS.values())


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_command_says_it_one_way(
    kind: str, command: str, tmp_path: Path, out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = make(kind, tmp_path / "in")
    argv = [str(path) if a == "PATH" else a.replace("OUT", str(out)) for a in COMMANDS[command]]
    code = main(argv)
    captured = capsys.readouterr()
    line = KINDS[kind][2]
    assert (code, captured.out) == (1, "")
    assert captured.err == f"memvelope: error: {line} (in {path})\n"
    assert list(out.iterdir()) == []  # nothing written, not even half


@pytest.mark.parametrize("function", list(FUNCTIONS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_function_raises_it_one_way(kind: str, function: str, tmp_path: Path, out: Path) -> None:
    path = make(kind, tmp_path / "in")
    _, _, line, reason = KINDS[kind]
    with pytest.raises(InputError) as info:
        FUNCTIONS[function](path, out)
    assert type(info.value) is InputError
    assert (info.value.msg, info.value.reason, info.value.source) == (line, reason, str(path))
    assert str(info.value) == f"{line} (in {path})"
    assert list(out.iterdir()) == []


def test_an_input_error_is_caught_as_either_older_class() -> None:
    assert issubclass(InputError, mv.ConversionError) and issubclass(InputError, mv.FormatError)


@pytest.mark.parametrize("kind", ["binary", "PNG named .json", "Parquet file", "text that is not JSON"])
def test_utf16_advice_only_for_utf16(kind: str, tmp_path: Path) -> None:
    path = make(kind, tmp_path)
    with pytest.raises(InputError) as info:
        mv.load(path)
    assert "UTF-16" not in str(info.value)


def test_utf16_without_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_bytes(json.dumps([CONVERSATION]).encode("utf-16-le"))
    with pytest.raises(InputError) as info:
        mv.convert(path)
    assert (info.value.msg, info.value.reason) == (KINDS["UTF-16 export"][2], "invalid-json")


def test_the_same_wrong_bytes_read_the_same_way(tmp_path: Path) -> None:
    """Bytes and a binary file object get the line a path gets (without a path to name)."""
    for kind in ("empty file", "truncated JSON", "PNG named .json", "single conversation object"):
        path = make(kind, tmp_path / kind.replace(" ", "-"))
        _, _, line, reason = KINDS[kind]
        with pytest.raises(InputError) as from_bytes:
            mv.load(path.read_bytes())
        assert (from_bytes.value.msg, from_bytes.value.reason) == (line, reason)
        with open(path, "rb") as fh, pytest.raises(InputError) as from_file:
            mv.messages_frame(fh)
        assert (from_file.value.msg, from_file.value.reason) == (line, reason)


def test_doctor_on_an_envelope_says_it_is_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    envelope = tmp_path / "history.mve.json"
    mv.write_envelope(mv.convert(mv.sample_path("claude")), envelope)
    code = main(["doctor", str(envelope)])
    captured = capsys.readouterr()
    assert (code, captured.out) == (1, "")
    assert captured.err == (
        f"memvelope: error: already a Memvelope envelope, not an export: use info, parquet or report (in {envelope})\n"
    )


def test_validate_reports_verdicts_on_stdout_and_unreadable_files_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    envelope = tmp_path / "history.mve.json"
    mv.write_envelope(mv.convert(mv.sample_path("claude")), envelope)
    missing = tmp_path / "gone.json"
    code = main(["validate", str(envelope), str(missing)])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == f"{envelope}: ok\n"
    assert captured.err == f"memvelope: error: no such file or folder (in {missing})\n"


def test_export_parts_given_as_several_documents_are_refused(tmp_path: Path) -> None:
    parts = []
    for i in range(2):
        part = tmp_path / f"conversations-00{i}.json"
        part.write_text(json.dumps([CONVERSATION]))
        parts.append(part)
    with pytest.raises(InputError) as info:
        mv.messages_frame(parts)
    assert info.value.reason == "bad-source"
    assert "conversations-000.json, conversations-001.json look like parts of one export" in info.value.msg
    # as the parts of one export they convert
    assert mv.load(parts)["meta"]["conversation_count"] == 2


def test_two_files_with_one_name_get_their_paths_as_labels_everywhere(tmp_path: Path) -> None:
    envelope = mv.dumps_canonical(mv.convert(mv.sample_path("claude")))
    paths = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        paths.append(tmp_path / folder / "history.mve.json")
        paths[-1].write_bytes(envelope)
    frame = mv.conversations_frame(paths)
    assert list(dict.fromkeys(frame["source"])) == [str(p) for p in paths]
    from memvelope_tools._report import build_report

    page = build_report(paths)
    assert all(str(p) in page for p in paths)
    history = mv.search(paths, "the")
    assert set(history["source"]) <= {str(p) for p in paths}


def test_labels_are_decided_in_one_place() -> None:
    from memvelope_tools._sources import labels_of

    given = ["a/history.json", "b/history.json", b"{}", Path("c/other.json"), "export/"]
    assert labels_of(given) == ["a/history.json", "b/history.json", "doc2", "other.json", "export"]


def test_a_missing_parquet_folder_reads_as_any_missing_path(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        mv.read_parquet(tmp_path / "gone")
    assert (info.value.msg, info.value.reason) == ("no such file or folder", "not-found")


def test_what_a_list_means(tmp_path: Path) -> None:
    """For load and convert a list is the parts of one export; for the frames, several documents."""
    envelope = mv.convert(mv.sample_path("claude"))
    with pytest.raises(InputError) as info:
        mv.load([envelope, envelope])  # type: ignore[list-item]
    assert info.value.reason == "bad-source" and "parts of one export" in info.value.msg
    frame = mv.conversations_frame([envelope, envelope])
    assert list(dict.fromkeys(frame["source"])) == ["doc0", "doc1"]


def test_the_resolver_is_light() -> None:
    code = (
        "import sys, memvelope_tools._sources, memvelope_tools.cli.common;"
        "heavy = [m for m in ('pandas', 'pyarrow', 'numpy', 'matplotlib') if m in sys.modules];"
        "assert not heavy, heavy"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
