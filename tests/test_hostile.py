"""Hostile and broken inputs through the real CLI.

Every failure must be exit 1, exactly one line on stderr that starts ``memvelope: error:`` and names the
problem and the file, no traceback, nothing on stdout, and no output file touched. A few cases run as a
real ``python -m memvelope_tools`` process too (deep nesting, a 500 MB string, Ctrl-C, a full disk).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvelope_tools._convert import ZipLimits, dumps_canonical
from memvelope_tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = [{"uuid": "c1", "name": "t", "chat_messages": [{"sender": "human", "text": "hello there"}]}]
PREVIOUS = b"previous good output\n"


# ---- helpers -------------------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str | os.PathLike[str]) -> tuple[int, str, str]:
    code = main([os.fspath(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_error_line(code: int, out: str, err: str, *needles: str) -> str:
    """Exit 1, nothing on stdout, one ``memvelope: error:`` line holding every needle, no traceback."""
    assert code == 1, err
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("memvelope: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    return lines[0]


def fails_cleanly(capsys: pytest.CaptureFixture[str], tmp_path: Path, inputs: list[Path | str], *needles: str) -> str:
    """Convert ``inputs`` to an existing output file; the conversion must fail and leave it intact."""
    out = tmp_path / "previous.mve.json"
    out.write_bytes(PREVIOUS)
    before = sorted(p.name for p in tmp_path.iterdir())
    line = assert_one_error_line(*run(capsys, "convert", *inputs, "-o", out), *needles)
    assert out.read_bytes() == PREVIOUS
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no temporary file left behind
    return line


def module(*args: str | os.PathLike[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    """``python -m memvelope_tools ARGS`` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "memvelope_tools", *map(os.fspath, args)],
        capture_output=True,
        env=env,
        timeout=300,
        check=False,
        **kwargs,
    )  # type: ignore[call-overload]


def assert_process_error(proc: subprocess.CompletedProcess[bytes], *needles: str) -> None:
    assert_one_error_line(proc.returncode, proc.stdout.decode(), proc.stderr.decode(), *needles)


def write_zip(path: Path, members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name), data, compress_type=method)
    return path


def tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


# ---- broken files --------------------------------------------------------------------------------


def test_empty_file(capsys, tmp_path: Path) -> None:
    (tmp_path / "conversations.json").write_bytes(b"")
    for mode in _convert_modes():
        fails_cleanly(capsys, tmp_path, [tmp_path / "conversations.json", *mode], "empty", "conversations.json")


def test_blank_file(capsys, tmp_path: Path) -> None:
    (tmp_path / "conversations.json").write_bytes(b" \n\t\r\n")
    fails_cleanly(capsys, tmp_path, [tmp_path / "conversations.json"], "empty", "conversations.json")


def test_truncated_json(capsys, tmp_path: Path) -> None:
    data = json.dumps(CLAUDE * 20).encode()
    (tmp_path / "conversations.json").write_bytes(data[: len(data) // 2])
    fails_cleanly(capsys, tmp_path, [tmp_path / "conversations.json"], "not valid JSON", "line 1", "conversations.json")


@pytest.mark.parametrize(
    "data",
    [
        b"<!DOCTYPE html><html><body>Sign in</body></html>",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        b"conversations: []",
        b"[NaN]",
        b"{'single': 'quotes'}",
    ],
    ids=["html", "png", "yaml", "nan", "python-repr"],
)
def test_not_json_at_all(capsys, tmp_path: Path, data: bytes) -> None:
    (tmp_path / "conversations.json").write_bytes(data)
    said = "a PNG image, not JSON" if data.startswith(b"\x89PNG") else "not valid JSON"
    fails_cleanly(capsys, tmp_path, [tmp_path / "conversations.json"], said, "conversations.json")


@pytest.mark.parametrize(
    "codec", ["utf-16", "utf-16-le", "utf-16-be"], ids=["with-bom", "le-without-bom", "be-without-bom"]
)
def test_utf16_text_is_named(capsys, tmp_path: Path, codec: str) -> None:
    (tmp_path / "conversations.json").write_bytes(json.dumps(CLAUDE).encode(codec))
    for mode in _convert_modes():
        fails_cleanly(
            capsys, tmp_path, [tmp_path / "conversations.json", *mode], "UTF-16", "UTF-8", "conversations.json"
        )


def test_invalid_utf8_converts_with_one_warning(capsys, tmp_path: Path) -> None:
    # NOTES A17/B3: decoded as a browser's File.text() does; the CLI warns once, naming file and count.
    raw = json.dumps(CLAUDE).replace("hello there", "caf\udce9 na\udcefve").encode("utf-8", "surrogateescape")
    (tmp_path / "conversations.json").write_bytes(raw)
    out = tmp_path / "out.mve.json"
    code, stdout, err = run(capsys, "convert", tmp_path / "conversations.json", "-o", out)
    assert code == 0 and stdout == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("memvelope: warning: "), err
    assert "conversations.json" in lines[0] and "2 invalid UTF-8" in lines[0]
    env = json.loads(out.read_bytes())
    assert env["conversations"][0]["messages"][0]["text"] == "caf\ufffd na\ufffdve"


def test_nested_100000_levels(capsys, tmp_path: Path) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    (tmp_path / "conversations.json").write_bytes(deep)
    fails_cleanly(capsys, tmp_path, [tmp_path / "conversations.json"], "nested too deeply", "conversations.json")
    # Inside an otherwise valid conversation, and in a fresh process (a C stack overflow would crash it).
    inner = json.dumps(CLAUDE).replace(
        '"text": "hello there"', '"text": "hi", "content": ' + "[" * 100_000 + "]" * 100_000
    )
    (tmp_path / "inner.json").write_text(inner)
    assert_process_error(module("convert", tmp_path / "inner.json"), "nested too deeply", "inner.json")


def test_integer_literal_past_cpython_limit_converts(capsys, tmp_path: Path) -> None:
    # JSON.parse reads a 5000-digit number as Infinity; CPython's int() refuses more than 4300 digits.
    doc = json.dumps(CLAUDE).replace('"text"', '"created_at": 1' + "0" * 5000 + ', "text"')
    (tmp_path / "conversations.json").write_text(doc)
    code, out, err = run(capsys, "convert", tmp_path / "conversations.json")
    assert (code, err) == (0, "")
    assert json.loads(out)["conversations"][0]["messages"][0]["ts"] is None


@pytest.fixture(scope="module")
def string_500_mb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """An export whose one message text is a single 500 MiB string."""
    size = 500 * 1024 * 1024
    src = tmp_path_factory.mktemp("huge") / "conversations.json"
    chunk = b"a" * (4 << 20)
    assert size % len(chunk) == 0
    with open(src, "wb") as fh:
        fh.write(b'[{"uuid":"x","chat_messages":[{"sender":"human","text":"')
        for _ in range(size // len(chunk)):
            fh.write(chunk)
        fh.write(b'"}]}]')
    yield src, size
    src.unlink()


def _convert_modes() -> list[list[str]]:
    """Both conversion paths when the CLI has ``--stream``/``--no-stream``, else its one path."""
    from memvelope_tools.cli import build_parser

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            build_parser().parse_args(["convert", "x.json", "--no-stream"])
    except SystemExit:
        return [[]]
    return [["--no-stream"], ["--stream"]]


@pytest.mark.parametrize("mode", _convert_modes(), ids=lambda m: m[0].lstrip("-") if m else "default")
def test_single_500_mb_string_converts(tmp_path: Path, string_500_mb: tuple[Path, int], mode: list[str]) -> None:
    """One message whose text is a 500 MiB string converts, in a separate process to keep memory sane."""
    src, size = string_500_mb
    out = tmp_path / "out.mve.json"
    started = time.monotonic()
    proc = module("convert", src, "-o", out, *mode)
    seconds = time.monotonic() - started
    assert (proc.returncode, proc.stdout) == (0, b""), proc.stderr
    assert b"error" not in proc.stderr and b"Traceback" not in proc.stderr
    # The expected bytes are those of the same envelope with a short text, the text widened.
    small = dumps_canonical(
        {
            "memvelope": "envelope-v0",
            "meta": {"source_provider": "claude", "conversation_count": 1, "message_count": 1},
            "conversations": [
                {
                    "id": "x",
                    "title": "",
                    "created_at": None,
                    "updated_at": None,
                    "messages": [{"id": "m1", "role": "user", "ts": None, "text": "a"}],
                }
            ],
        }
    )
    before, after = small.split(b'"text": "a"')
    before += b'"text": "'
    after = b'"' + after
    assert out.stat().st_size == len(before) + size + len(after)
    chunk = b"a" * (4 << 20)
    with open(out, "rb") as fh:
        assert fh.read(len(before)) == before
        left = size
        while left:
            piece = fh.read(min(left, len(chunk)))
            assert piece == chunk[: len(piece)]
            left -= len(piece)
        assert fh.read() == after
    print(f"\n500 MiB string {' '.join(mode) or '(default)'}: converted in {seconds:.1f} s")
    assert seconds < 120, f"a 500 MiB string took {seconds:.0f} s"


# ---- paths ---------------------------------------------------------------------------------------


def test_folder_without_json(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "chat.html").write_text("<html></html>")
    (folder / "notes.txt").write_text("x")
    (folder / ".hidden.json").write_text("[]")
    fails_cleanly(
        capsys,
        tmp_path,
        [folder],
        "a folder without conversations.json: it holds .hidden.json, chat.html, notes.txt",
        "export",
    )


def test_missing_path(capsys, tmp_path: Path) -> None:
    fails_cleanly(capsys, tmp_path, [tmp_path / "no-such-export.zip"], "no such file", "no-such-export.zip")


def test_unreadable_file_permission(capsys, tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(CLAUDE))
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip(
                "running as root: permission bits do not stop reads here (the I/O-error and "
                "not-a-directory cases below still run)"
            )
        fails_cleanly(capsys, tmp_path, [path], "not readable", "conversations.json")
    finally:
        path.chmod(0o644)


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux /proc")
def test_unreadable_file_io_error(capsys, tmp_path: Path) -> None:
    # /proc/self/mem opens but reading offset 0 fails with EIO, even for root: a failing disk, in effect.
    for mode in _convert_modes():
        fails_cleanly(
            capsys, tmp_path, ["/proc/self/mem", *mode], "cannot read", "Input/output error", "/proc/self/mem"
        )


def test_path_through_a_file(capsys, tmp_path: Path) -> None:
    (tmp_path / "conversations.json").write_text(json.dumps(CLAUDE))
    fails_cleanly(capsys, tmp_path, [tmp_path / "conversations.json" / "more.json"], "cannot read", "more.json")


# ---- zips ----------------------------------------------------------------------------------------


def test_not_a_zip_named_zip(capsys, tmp_path: Path) -> None:
    (tmp_path / "export.zip").write_text(json.dumps(CLAUDE))
    fails_cleanly(capsys, tmp_path, [tmp_path / "export.zip"], "not a readable zip", "export.zip")


def test_truncated_zip(capsys, tmp_path: Path) -> None:
    whole = write_zip(tmp_path / "whole.zip", {"conversations.json": json.dumps(CLAUDE * 50).encode()})
    (tmp_path / "export.zip").write_bytes(whole.read_bytes()[:-30])
    whole.unlink()
    fails_cleanly(capsys, tmp_path, [tmp_path / "export.zip"], "zip", "export.zip")


@pytest.mark.parametrize(
    "members", [{}, {"README.txt": b"hi", "photo.png": b"\x89PNG"}], ids=["empty-zip", "no-json-members"]
)
def test_zip_without_conversation_parts(capsys, tmp_path: Path, members: dict[str, bytes]) -> None:
    write_zip(tmp_path / "export.zip", members)
    fails_cleanly(capsys, tmp_path, [tmp_path / "export.zip"], "a zip without conversations.json", "export.zip")


def test_zip_with_only_other_json(capsys, tmp_path: Path) -> None:
    write_zip(tmp_path / "export.zip", {"user.json": b'{"id": "u"}', "projects.json": b"{}"})
    fails_cleanly(
        capsys,
        tmp_path,
        [tmp_path / "export.zip"],
        "a zip without conversations.json: it holds projects.json, user.json",
    )


def test_corrupt_zip_member(capsys, tmp_path: Path) -> None:
    path = write_zip(tmp_path / "export.zip", {"conversations.json": json.dumps(CLAUDE * 200).encode()})
    data = bytearray(path.read_bytes())
    start = data.index(b"conversations.json") + len("conversations.json")
    for i in range(start + 10, start + 60):  # scribble over the deflate stream
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    for mode in _convert_modes():
        fails_cleanly(capsys, tmp_path, [path, *mode], "zip member is corrupt", "export.zip!conversations.json")


@pytest.fixture(scope="module")
def zip_bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1 KB-per-MB zip: one conversation whose text is 80 MB of one letter (genuine, if silly)."""
    path = tmp_path_factory.mktemp("bomb") / "export.zip"
    size = 80 * 1024 * 1024
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
        archive.open("conversations.json", "w", force_zip64=True) as fh,
    ):
        fh.write(b'[{"uuid":"b","chat_messages":[{"sender":"human","text":"')
        block = b"z" * (1 << 20)
        for _ in range(size >> 20):
            fh.write(block)
        fh.write(b'"}]}]')
    return path


def test_zip_bomb_ratio(capsys, tmp_path: Path, zip_bomb: Path) -> None:
    info = zipfile.ZipFile(zip_bomb).getinfo("conversations.json")
    assert info.file_size / info.compress_size > ZipLimits().max_ratio  # it is a bomb by our own rule
    line = fails_cleanly(
        capsys,
        tmp_path,
        [zip_bomb],
        "compression ratio exceeds 400:1",
        "--zip-max-ratio",
        "export.zip!conversations.json",
    )
    assert "zip bomb" in line


def test_zip_bomb_size_limit(capsys, tmp_path: Path, zip_bomb: Path) -> None:
    fails_cleanly(
        capsys,
        tmp_path,
        [zip_bomb, "--zip-max-bytes", str(10 << 20), "--zip-max-ratio", "1e9"],
        "inflates past 10,485,760 bytes",
        "--zip-max-bytes",
        "export.zip!conversations.json",
    )


def test_zip_bomb_passes_when_the_limit_is_raised(capsys, tmp_path: Path, zip_bomb: Path) -> None:
    out = tmp_path / "out.mve.json"
    code, stdout, err = run(capsys, "convert", zip_bomb, "--zip-max-ratio", "100000", "-o", out)
    assert (code, stdout, err) == (0, "", "")
    assert out.stat().st_size > 80 * 1024 * 1024


def test_zip_member_lying_about_its_size(capsys, tmp_path: Path) -> None:
    # Headers that claim 100 bytes for a member that inflates to 20 MB: reading stops at the claimed
    # size and the CRC check fails; nothing inflates past what the header declared.
    real = b"[" + b" " * (20 << 20) + b"]"
    path = write_zip(tmp_path / "export.zip", {"conversations.json": real})
    data = bytearray(path.read_bytes())
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    data[local + 22 : local + 26] = (100).to_bytes(4, "little")
    data[central + 24 : central + 28] = (100).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    for mode in _convert_modes():
        fails_cleanly(capsys, tmp_path, [path, *mode], "corrupt", "export.zip!conversations.json")


def test_zip_members_with_traversal_names_are_never_extracted(capsys, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    absolute = tmp_path / "abs" / "conversations-9.json"  # a member named with this absolute path
    members = {
        "../conversations-1.json": json.dumps(CLAUDE).encode(),
        "../../conversations-2.json": json.dumps(CLAUDE).encode(),
        str(absolute): json.dumps(CLAUDE).encode(),
        "/etc/conversations-3.json": json.dumps(CLAUDE).encode(),
        "ok/../../conversations-4.json": json.dumps(CLAUDE).encode(),
    }
    zpath = write_zip(work / "export.zip", members)
    assert sorted(zipfile.ZipFile(zpath).namelist()) == sorted(members)  # the names survived as written
    before_tmp, before_parent = tree(tmp_path), set(os.listdir(tmp_path.parent))
    out = work / "out.mve.json"
    code, stdout, _ = run(capsys, "convert", zpath, "-o", out)
    assert (code, stdout) == (0, "")
    assert json.loads(out.read_bytes())["meta"]["conversation_count"] == 5  # each member read in memory
    assert tree(tmp_path) == before_tmp | {"work/out.mve.json"}
    assert set(os.listdir(tmp_path.parent)) == before_parent
    assert not absolute.exists() and not Path("/etc/conversations-3.json").exists()


# ---- outputs -------------------------------------------------------------------------------------


@pytest.fixture
def good_input(tmp_path: Path) -> Path:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(CLAUDE))
    return path


def test_output_folder_missing(capsys, tmp_path: Path, good_input: Path) -> None:
    target = tmp_path / "no" / "such" / "out.mve.json"
    assert_one_error_line(
        *run(capsys, "convert", good_input, "-o", target), "output folder does not exist", "out.mve.json"
    )
    assert not (tmp_path / "no").exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("mode", _convert_modes(), ids=lambda m: m[0].lstrip("-") if m else "default")
def test_output_to_dev_full(capsys, good_input: Path, mode: list[str]) -> None:
    assert_one_error_line(*run(capsys, "convert", good_input, "-o", "/dev/full", *mode), "No space left", "/dev/full")
    assert_process_error(module("convert", good_input, "-o", "/dev/full", *mode), "No space left", "/dev/full")


def test_existing_output_survives_failed_conversion(capsys, tmp_path: Path) -> None:
    (tmp_path / "conversations.json").write_text('[{"uuid": "x", "chat_messages": []}]')
    fails_cleanly(capsys, tmp_path, [tmp_path / "conversations.json"], "no conversation survived")


@pytest.mark.parametrize("mode", _convert_modes(), ids=lambda m: m[0].lstrip("-") if m else "default")
def test_existing_output_survives_failed_write(tmp_path: Path, good_input: Path, mode: list[str]) -> None:
    # A file-size limit makes the write itself fail part-way (EFBIG), as a full disk would.
    big = tmp_path / "big.json"
    big.write_text(json.dumps(CLAUDE * 2000))
    out = tmp_path / "previous.mve.json"
    out.write_bytes(PREVIOUS)
    before = tree(tmp_path)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, resource.RLIM_INFINITY))

    proc = module("convert", big, "-o", out, *mode, preexec_fn=limit)
    assert_process_error(proc, "cannot write output", "previous.mve.json")
    assert out.read_bytes() == PREVIOUS
    assert tree(tmp_path) == before  # the temporary file was removed


# ---- Ctrl-C --------------------------------------------------------------------------------------


def _bytes_read(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    return 0


@pytest.fixture(scope="module")
def big_export(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A ~150 MB Claude export: 64,000 conversations of six messages."""
    path = tmp_path_factory.mktemp("big") / "conversations.json"
    conv = json.dumps(
        {
            "uuid": "UUID",
            "name": "t",
            "created_at": "2024-05-01T10:00:00Z",
            "chat_messages": [
                {"sender": s, "text": ("word " * 60) + str(i), "created_at": "2024-05-01T10:00:00.123Z"}
                for i, s in enumerate(["human", "assistant"] * 3)
            ],
        }
    )
    with open(path, "w") as fh:
        fh.write("[" + ",".join(conv.replace("UUID", f"u{i}") for i in range(64_000)) + "]")
    yield path
    path.unlink()


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="watches the process in /proc (Linux)")
@pytest.mark.parametrize("mode", _convert_modes(), ids=lambda m: m[0].lstrip("-") if m else "default")
def test_ctrl_c_during_a_large_conversion(tmp_path: Path, big_export: Path, mode: list[str]) -> None:
    out = tmp_path / "previous.mve.json"
    out.write_bytes(PREVIOUS)
    before = tree(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memvelope_tools", "convert", str(big_export), "-o", str(out), *mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    # Interrupt once a third of the export has been read: the conversion is then under way (in memory,
    # the whole file is read at once and converted afterwards; streaming, it is part-way through).
    deadline = time.monotonic() + 60
    while _bytes_read(proc.pid) < big_export.stat().st_size // 3 and proc.poll() is None:
        assert time.monotonic() < deadline, "the conversion never got going"
        time.sleep(0.01)
    assert proc.poll() is None, "the conversion finished before it could be interrupted"
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert stdout == b""
    lines = stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memvelope: interrupted"), stderr
    assert out.read_bytes() == PREVIOUS
    assert tree(tmp_path) == before  # no partial output, no temporary file


def test_ctrl_c_while_the_output_is_being_written(
    capsys, tmp_path: Path, good_input: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real SIGINT delivered after the bytes reached the temporary file, before it replaces the output.
    import memvelope_tools._atomic as atomic

    def interrupted_fsync(fd: int) -> None:
        signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(atomic.os, "fsync", interrupted_fsync)
    out = tmp_path / "previous.mve.json"
    out.write_bytes(PREVIOUS)
    before = tree(tmp_path)
    code, stdout, err = run(capsys, "convert", good_input, "-o", out)
    assert code == 130 and stdout == ""
    assert len(err.splitlines()) == 1 and err.startswith("memvelope: interrupted"), err
    assert out.read_bytes() == PREVIOUS
    assert tree(tmp_path) == before


# ---- safety: no network, no processes, no code from the export ------------------------------------

# Audit events that mean a network connection or a new process. An audit hook cannot be removed, so it
# is installed once and acts only while armed.
_FORBIDDEN_PREFIXES = (
    "socket.",
    "urllib.",
    "http.client.",
    "ftplib.",
    "smtplib.",
    "subprocess.",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "webbrowser.",
)
_audit = {"armed": False, "seen": []}


def _audit_hook(event: str, args: tuple[object, ...]) -> None:
    if _audit["armed"] and event.startswith(_FORBIDDEN_PREFIXES):
        _audit["seen"].append(event)  # type: ignore[attr-defined]
        raise RuntimeError(f"forbidden during conversion or reading: {event}")


sys.addaudithook(_audit_hook)


@pytest.fixture
def no_network() -> Iterator[list[str]]:
    """Fail any socket use, HTTP request or process start while the test body runs."""
    seen: list[str] = []
    _audit.update(armed=True, seen=seen)
    try:
        yield seen
    finally:
        _audit["armed"] = False
    assert seen == [], f"forbidden calls: {seen}"


def test_the_guard_catches_a_socket(no_network: list[str]) -> None:
    import socket

    with pytest.raises(RuntimeError, match="socket"):
        socket.socket()
    assert no_network == ["socket.__new__"]
    no_network.clear()


HOSTILE_TEXT = [
    "__import__('os').system('touch PWNED')",
    "$(touch PWNED)",
    "`touch PWNED`",
    "{{7*7}} ${7*7} <%= 7*7 %>",
    "<script>alert(1)</script>",
    "cos\nsystem\n(S'touch PWNED'\ntR.",
]


def test_conversion_and_reading_use_no_network_and_run_nothing(
    no_network: list[str], tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memvelope_tools as mv
    from memvelope_tools import read
    from memvelope_tools._convert import convert, convert_stream
    from memvelope_tools._validate import validate

    frames = mv  # the frame functions, as users reach them
    monkeypatch.chdir(tmp_path)
    hostile = tmp_path / "conversations.json"
    hostile.write_text(
        json.dumps([{"uuid": "h", "name": t, "chat_messages": [{"sender": "human", "text": t}]} for t in HOSTILE_TEXT])
    )
    inputs = [[mv.sample_path("claude")], [mv.sample_path("chatgpt")], [hostile]]
    outputs = []
    for paths in inputs:
        reference = dumps_canonical(convert(*paths, fast=False))
        assert dumps_canonical(convert(*paths, fast=True)) == reference
        assert dumps_canonical(convert(*paths)) == reference
        convert_stream(paths, tmp_path / "streamed.mve.json", progress=False)
        assert (tmp_path / "streamed.mve.json").read_bytes() == reference
        out = tmp_path / f"out{len(outputs)}.mve.json"
        assert main(["convert", *map(str, paths), "-o", str(out)]) == 0
        assert out.read_bytes() == reference
        outputs.append(out)
    capsys.readouterr()
    for out in outputs:
        doc = read(out)
        assert validate(doc) == []
        assert len(frames.messages_frame(out)) == doc["meta"]["message_count"]
        assert len(frames.conversations_frame(out)) == doc["meta"]["conversation_count"]
    irs = sorted((PACKAGE / "samples").glob("facts-*.mv.json"))
    assert irs, "bundled Facts IR samples not found"
    for ir in irs:
        read(ir)
        assert len(frames.facts_frame(ir)) == read(ir)["meta"]["facts"]
        assert len(frames.archetype_frame(ir)) == 1
    texts = [m["text"] for c in read(outputs[2])["conversations"] for m in c["messages"]]
    assert texts == HOSTILE_TEXT  # carried as data, verbatim
    assert not list(tmp_path.rglob("PWNED")) and not Path("PWNED").exists()


PACKAGE = ROOT / "memvelope_tools"
# Modules allowed to talk to the network, and why: the llm distiller calls the endpoint the user names.
NETWORK_MODULES = {"_ir/llm.py": "the llm distiller calls the OpenAI-compatible endpoint the user names"}
NETWORK_IMPORTS = (
    "socket",
    "ssl",
    "urllib.request",
    "http.client",
    "requests",
    "httpx",
    "aiohttp",
    "ftplib",
    "smtplib",
    "xmlrpc",
    "websocket",
    "dask.distributed",
)


def _sources() -> list[Path]:
    found = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
    assert len(found) > 20, "package sources not found"
    return found


def test_no_eval_exec_pickle_or_shell_in_the_package() -> None:
    """Text search, as a reviewer would grep (comments included); no exception is allowed today."""
    allowed: dict[tuple[str, str], str] = {}  # (module, pattern) -> why; empty on purpose
    patterns = {
        "eval(": re.compile(r"(?<![\w.])eval\("),  # not literal_eval( or retrieval(
        "exec(": re.compile(r"(?<![\w.])exec\("),
        **{
            p: re.compile(re.escape(p))
            for p in (
                "pickle",
                "shell=True",
                "os.system",
                "os.popen",
                "marshal.",
                "shelve",
                "yaml.load(",
                "__import__(",
            )
        },
    }
    hits = [
        f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}"
        for path in _sources()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for name, pattern in patterns.items()
        if pattern.search(line) and (str(path.relative_to(PACKAGE)), name) not in allowed
    ]
    assert hits == []


def test_only_the_llm_distiller_imports_network_modules() -> None:
    import ast

    offenders = []
    for path in _sources():
        rel = str(path.relative_to(PACKAGE))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                if name.startswith(NETWORK_IMPORTS) and rel not in NETWORK_MODULES:
                    offenders.append(f"{rel} imports {name}")
    assert offenders == []


def test_conversion_core_imports_no_heavy_or_network_module() -> None:
    import ast

    banned = (
        "pandas",
        "matplotlib",
        "pyarrow",
        "numpy",
        "subprocess",
        "multiprocessing",
        "concurrent",
        *NETWORK_IMPORTS,
        "urllib",
        "http",
    )
    offenders = []
    for path in sorted([*(PACKAGE / "_convert").glob("*.py"), *(PACKAGE / "_json").glob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {  # imports under ``if TYPE_CHECKING:`` are read by type checkers only
            id(node)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
            for node in ast.walk(ast.Module(body=block.body, type_ignores=[]))
        }
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            offenders += [f"{path.name} imports {n}" for n in names if n.split(".")[0] in banned or n in banned]
    # Processes are started by the worker layer (memvelope_tools._workers); they run the same pure functions.
    assert offenders == []
