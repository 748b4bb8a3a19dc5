"""Nesting: the reader enforces one limit itself (1024 levels, orjson's, the top-level array counting as
one), with one reason (``too-deep``) and one message, on every path (conversion in memory and to a file,
the C scanner and its pure-Python twin, ``read()``, the frames from a path, doctor) and on every
interpreter, since no path relies on the interpreter's recursion limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import engine_running

from memvelope_tools import read
from memvelope_tools._convert import ConversionError, convert, convert_stream, dumps_canonical
from memvelope_tools._json import elements
from memvelope_tools.errors import FormatError

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 1024  # orjson's limit: 1024 levels parse, 1025 are refused
MESSAGE = "JSON nested too deeply to parse"


def nested(depth: int, inner: str = "1") -> str:
    """``depth`` levels in all: the top-level array, a conversation, its messages, a message, the rest
    as alternating arrays and objects under the message's ``content``."""
    extra = depth - 4
    opens = "".join("[" if i % 2 == 0 else '{"k": ' for i in range(extra))
    closes = "".join("]" if i % 2 == 0 else "}" for i in reversed(range(extra)))
    return (
        '[{"uuid": "c1", "name": "t", "chat_messages": [{"sender": "human", "text": "hi", "content": '
        + opens
        + inner
        + closes
        + "}]}]"
    )


def every_path(path: Path, tmp_path: Path) -> dict[str, object]:
    """The bytes, or (error, reason, message), of each conversion path."""

    def twin() -> bytes:
        with engine_running("python"):
            return dumps_canonical(convert(path, progress=False))

    def to_file() -> bytes:
        out = tmp_path / "out.mve.json"
        convert_stream(path, out, progress=False)
        return out.read_bytes()

    runs = {
        "in memory": lambda: dumps_canonical(convert(path, progress=False)),
        "without orjson": lambda: dumps_canonical(convert(path, fast=False, progress=False)),
        "pure-Python scanner": twin,
        "to a file": to_file,
    }
    results: dict[str, object] = {}
    for name, run in runs.items():
        try:
            results[name] = run()
        except ConversionError as exc:
            results[name] = ("error", exc.reason, str(exc))
    return results


def one_outcome(results: dict[str, object]) -> object:
    outcomes = set(results.values())
    assert len(outcomes) == 1, results
    return outcomes.pop()


def envelope_nested(depth: int) -> bytes:
    """An envelope whose unknown member ``x`` takes the document ``depth`` levels deep."""
    inner = "[" * (depth - 1) + "]" * (depth - 1)
    return ('{"memvelope": "envelope-v0", "meta": {"source_provider": "claude"}, "conversations": [], "x": '
            + inner + "}").encode()  # fmt: skip


# ---- the limit, on every path ---------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [LIMIT - 1, LIMIT])
def test_depth_up_to_the_limit_converts_on_every_path(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(nested(depth))
    result = one_outcome(every_path(path, tmp_path))
    assert isinstance(result, bytes) and json.loads(result)["meta"]["message_count"] == 1


@pytest.mark.parametrize("depth", [LIMIT + 1, LIMIT + 2, 5000, 100_000])
def test_depth_past_the_limit_is_too_deep_on_every_path(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(nested(depth))
    assert one_outcome(every_path(path, tmp_path)) == ("error", "too-deep", f"{MESSAGE} (in {path})")


@pytest.mark.slow
@pytest.mark.parametrize("depth", [LIMIT, LIMIT + 1, 5000, 100_000])
def test_read_and_frames_enforce_the_same_limit(tmp_path: Path, depth: int) -> None:
    data = envelope_nested(depth)
    path = tmp_path / "deep.mve.json"
    path.write_bytes(data)
    outcomes = []
    for source in (data, path):
        try:
            outcomes.append(("read", read(source)["x"] is not None))
        except FormatError as exc:
            outcomes.append(("error", exc.reason, exc.msg))
    import memvelope_tools as frames  # the frame functions, as users reach them

    try:
        frames.conversations_frame(path)
        outcomes.append(("read", True))
    except FormatError as exc:
        outcomes.append(("error", exc.reason, exc.msg))
    expected = ("read", True) if depth <= LIMIT else ("error", "too-deep", MESSAGE)
    assert outcomes == [expected] * 3


def test_the_limit_is_orjsons() -> None:
    orjson = pytest.importorskip("orjson")
    assert elements.LIMIT == LIMIT
    orjson.loads("[" * LIMIT + "]" * LIMIT)
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads("[" * (LIMIT + 1) + "]" * (LIMIT + 1))


def test_deep_non_array_part_is_too_deep(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text('{"a": ' * 3000 + "1" + "}" * 3000)
    assert one_outcome(every_path(path, tmp_path))[:2] == ("error", "too-deep")


def test_a_deep_element_the_reference_parser_reads(tmp_path: Path) -> None:
    # A lone surrogate sends the element to the stdlib parser: 1024 levels must not hit the interpreter's
    # recursion limit (about 1000 frames on Python 3.11).
    path = tmp_path / "conversations.json"
    path.write_text(nested(LIMIT, inner='"\\ud800"').replace('"hi"', '"h\\ud800i"'))
    result = one_outcome(every_path(path, tmp_path))
    assert isinstance(result, bytes) and b"h\\ud800i" in result


def test_invalid_json_before_the_depth_is_reported_as_invalid(tmp_path: Path) -> None:
    # The first problem in the text is the one reported, as a streaming parser with a limit does.
    path = tmp_path / "conversations.json"
    path.write_text("[1,,2" + "[" * 5000)
    assert one_outcome(every_path(path, tmp_path))[:2] == ("error", "invalid-json")
    path.write_text("[" * 5000 + ",")
    assert one_outcome(every_path(path, tmp_path))[:2] == ("error", "too-deep")


def test_too_deep_after_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    good = nested(LIMIT).encode()
    path.write_bytes(good.replace(b'"hi"', b'"h\xffi"'))
    assert isinstance(one_outcome(every_path(path, tmp_path)), bytes)
    path.write_bytes(nested(LIMIT + 1).encode().replace(b'"hi"', b'"h\xffi"'))
    assert one_outcome(every_path(path, tmp_path))[:2] == ("error", "too-deep")


# ---- 100,000 levels: quick, bounded memory, one line from the CLI ---------------------------------------

_LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from memvelope_tools.cli import main
status = main(sys.argv[1:])
# VmHWM, not ru_maxrss: Linux carries the parent's high-water mark into ru_maxrss across fork and exec.
hwm = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print("maxrss_kb", hwm, file=sys.stderr)
sys.exit(status)
"""


@pytest.mark.slow
@pytest.mark.parametrize("mode", [["--stream"], ["--no-stream"]])
@pytest.mark.parametrize("shape", ["arrays", "objects", "inside a conversation"])
def test_100000_levels_through_the_cli(tmp_path: Path, shape: str, mode: list[str]) -> None:
    levels = 100_000
    text = {
        "arrays": "[" * levels + "]" * levels,
        "objects": '{"a":' * levels + "1" + "}" * levels,
        "inside a conversation": nested(levels),
    }[shape]
    path = tmp_path / "conversations.json"
    path.write_text(text)
    out = tmp_path / "out.mve.json"
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _LIMITED, "convert", str(path), "-o", str(out), *mode],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    elapsed = time.perf_counter() - start
    lines = proc.stderr.splitlines()
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == "" and not out.exists()
    assert len(lines) == 2 and lines[1].startswith("maxrss_kb "), proc.stderr  # the error, then our probe
    assert lines[0] == f"memvelope: error: {MESSAGE} (in {path})"
    assert int(lines[1].split()[1]) < 500 * 1024, "peak memory should stay far below 500 MB"
    assert elapsed < 30


@pytest.mark.parametrize("api", ["convert", "convert_stream"])
def test_100000_levels_through_the_api(tmp_path: Path, api: str) -> None:
    path = tmp_path / "conversations.json"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(ConversionError) as info:
        if api == "convert":
            convert(path, progress=False)
        else:
            convert_stream(path, tmp_path / "out.mve.json", progress=False)
    assert info.value.reason == "too-deep" and info.value.source == str(path)
    assert not (tmp_path / "out.mve.json").exists()


# ---- the reader with tiny chunks: no output changes ------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 64])
def test_tiny_chunks_convert_tricky_text_as_in_memory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chunk: int
) -> None:
    monkeypatch.setattr(elements, "CHUNK", chunk)
    monkeypatch.setattr(elements, "BATCH", max(1, chunk // 2))
    texts = ['say "[[[" and \\"{{{', "\\\\", '\\\\"]]]', "caf\u00e9 \u4e2d \U0001f600 ]}", "\\" * 17 + "]"]
    conversation = {
        "uuid": "c1",
        "name": '"[{title',
        "chat_messages": [{"sender": "human", "text": t, "content": [[[{"x": t}]]]} for t in texts],
    }
    path = tmp_path / "conversations.json"
    for ascii_only in (True, False):
        path.write_text(json.dumps([conversation] * 3, ensure_ascii=ascii_only), encoding="utf-8")
        result = one_outcome(every_path(path, tmp_path))
        assert isinstance(result, bytes)
        assert [m["text"] for m in json.loads(result)["conversations"][0]["messages"]] == texts
