"""`memvelope convert` and `memvelope conformance`, in-process and as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import memvelope_tools as mv
from memvelope_tools.cli import build_parser, main

CLAUDE = [{"uuid": "c", "name": "n", "chat_messages": [{"sender": "human", "text": "héllo"}]}]


def test_stdout_gets_exact_bytes(write_parts, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    (path,) = write_parts(CLAUDE)
    assert main(["convert", str(path)]) == 0
    out = capsysbinary.readouterr()
    assert out.out == mv.dumps_canonical(mv.convert(path))
    assert not out.out.endswith(b"\n")
    assert out.err == b""


def test_output_file(write_parts, tmp_path: Path) -> None:
    (path,) = write_parts(CLAUDE)
    out = tmp_path / "x.mve.json"
    assert main(["convert", str(path), "-o", str(out)]) == 0
    assert out.read_bytes() == mv.dumps_canonical(mv.convert(path))


def test_error_one_line_nothing_written(write_parts, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (bad,) = write_parts(b"[{", names=["broken.json"])
    out = tmp_path / "keep.mve.json"
    out.write_bytes(b"previous good output")
    assert main(["convert", str(bad), "-o", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("memvelope: error:") and "broken.json" in lines[0]
    assert out.read_bytes() == b"previous good output"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.json", "keep.mve.json"]


def test_missing_output_folder(write_parts, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (path,) = write_parts(CLAUDE)
    assert main(["convert", str(path), "-o", str(tmp_path / "no" / "such" / "out.json")]) == 1
    assert "output folder does not exist" in capsys.readouterr().err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_unwritable_output(write_parts, capsys: pytest.CaptureFixture[str]) -> None:
    (path,) = write_parts(CLAUDE)
    assert main(["convert", str(path), "-o", "/dev/full"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("memvelope: error: cannot write output") and err.count("\n") == 1


def test_chose_parts_note_and_verbose(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    (tmp_path / "conversations.json").write_text(json.dumps(CLAUDE))
    (tmp_path / "users.json").write_text("[]")
    assert main(["convert", str(tmp_path), "-o", str(tmp_path / "o.json")]) == 0
    err = capsysbinary.readouterr().err.decode()
    assert "read 1 part:" in err
    assert main(["convert", str(tmp_path), "-v", "-o", str(tmp_path / "o.json")]) == 0
    err = capsysbinary.readouterr().err.decode()
    assert "passed over" in err and "users.json" in err


def test_invalid_utf8_warning(write_parts, capsysbinary: pytest.CaptureFixture[bytes]) -> None:  # B3
    (path,) = write_parts(json.dumps(CLAUDE).encode().replace(b"llo", b"l\xfflo"), names=["p.json"])
    assert main(["convert", str(path)]) == 0
    err = capsysbinary.readouterr().err.decode()
    assert err.count("\n") == 1 and "1 invalid UTF-8 sequence replaced" in err and "p.json" in err


def test_every_command_has_help_with_an_example() -> None:  # the README's table: tests/test_readme.py
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, command in sub.choices.items():  # type: ignore[union-attr]
        assert command.description and "Example" in command.description, name


def test_conformance_command_reports_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = tmp_path / "one"
    case.mkdir()
    (case / "input.json").write_text(json.dumps(CLAUDE))
    (case / "expected.mve.json").write_bytes(b"{}")
    assert main(["conformance", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL one: ") and out.rstrip().endswith("0 passed, 1 failed")


def test_python_dash_m_entry_point(write_parts) -> None:
    (path,) = write_parts(b"not json")
    proc = subprocess.run(
        [sys.executable, "-m", "memvelope_tools", "convert", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("memvelope: error: not valid JSON") and "Traceback" not in proc.stderr
