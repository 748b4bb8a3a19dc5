"""The streaming path refuses nesting deeper than the in-memory path parses (``too-deep``), quickly and in
bounded memory, and the depth gauge it uses is exact however the text is cut into pieces."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvelope_tools.convert import ConversionError, convert, convert_stream, dumps_canonical

pytest.importorskip("ijson")
pytest.importorskip("numpy")

from memvelope_tools import _depth
from memvelope_tools.convert import stream as streaming

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 1024  # orjson's limit: the in-memory path parses 1024 levels and refuses 1025


def reference(text: bytes, limit: int = LIMIT) -> tuple[int, bool, int | None]:
    """Independent byte-by-byte lexer: the depth and whether inside a string after ``text``, and the
    index of the first bracket past ``limit`` (or None)."""
    depth, in_string, escaped, over = 0, False, False, None
    for i, byte in enumerate(text):
        char = chr(byte)
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit and over is None:
                over = i
        elif char in "]}":
            depth -= 1
    return depth, in_string, over


def gauge_over(text: bytes, cuts: list[int], limit: int = LIMIT) -> int | None:
    """Feed ``text`` to a gauge in pieces cut at ``cuts``; the index of the refusal, or None. After each
    piece the gauge's depth and string state must be the reference lexer's."""
    gauge = _depth.DepthGauge(limit)
    offset = 0
    for end in [*sorted(set(cuts)), len(text)]:
        piece = text[offset:end]
        kept = gauge.feed(piece)
        if kept < len(piece):
            return offset + kept
        offset = end
        assert (gauge.depth, gauge.in_string) == reference(text[:end], limit)[:2], f"state after {end} bytes"
    return None


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


def run_stream_and_memory(path: Path) -> tuple[object, object]:
    results = []
    for stream in (True, False):
        try:
            results.append(dumps_canonical(convert(path, stream=stream, progress=False)))
        except ConversionError as exc:
            results.append(("error", exc.reason, str(exc)))
    return results[0], results[1]


# ---- the limit, on both paths --------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [LIMIT - 1, LIMIT])
def test_depth_up_to_the_limit_converts_as_in_memory(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(nested(depth))
    streamed, in_memory = run_stream_and_memory(path)
    assert isinstance(streamed, bytes) and streamed == in_memory
    assert json.loads(streamed)["meta"]["message_count"] == 1


@pytest.mark.parametrize("depth", [LIMIT + 1, LIMIT + 2, 5000])
def test_depth_past_the_limit_is_too_deep_on_both_paths(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(nested(depth))
    streamed, in_memory = run_stream_and_memory(path)
    assert streamed == in_memory == ("error", "too-deep", f"JSON nested too deeply to parse (in {path})")


def test_the_gauge_limit_is_orjsons() -> None:
    orjson = pytest.importorskip("orjson")
    assert _depth.LIMIT == LIMIT
    orjson.loads("[" * LIMIT + "]" * LIMIT)
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads("[" * (LIMIT + 1) + "]" * (LIMIT + 1))


def test_deep_non_array_part_is_too_deep(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text('{"a": ' * 3000 + "1" + "}" * 3000)
    with pytest.raises(ConversionError) as info:
        convert(path, stream=True, progress=False)
    assert info.value.reason == "too-deep"


def test_invalid_json_before_the_depth_is_reported_as_invalid(tmp_path: Path) -> None:
    # The bytes past the too-deep bracket are held back, so ijson refuses the earlier error first,
    # as the in-memory parser does: the same reason on both paths.
    path = tmp_path / "conversations.json"
    path.write_text("[1,,2" + "[" * 5000)
    streamed, in_memory = run_stream_and_memory(path)
    assert streamed[:2] == in_memory[:2] == ("error", "invalid-json")


def test_too_deep_after_invalid_utf8_and_a_second_read(tmp_path: Path) -> None:
    # Invalid UTF-8 sends the part back to its start (repair mode): the gauge starts afresh, and the
    # depth is still refused (not counted twice, not missed).
    path = tmp_path / "conversations.json"
    good = nested(LIMIT).encode()
    path.write_bytes(good.replace(b'"hi"', b'"h\xffi"'))
    streamed, in_memory = run_stream_and_memory(path)
    assert isinstance(streamed, bytes) and streamed == in_memory
    path.write_bytes(nested(LIMIT + 1).encode().replace(b'"hi"', b'"h\xffi"'))
    streamed, in_memory = run_stream_and_memory(path)
    assert streamed[:2] == in_memory[:2] == ("error", "too-deep")


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


@pytest.mark.parametrize("shape", ["arrays", "objects", "inside a conversation"])
def test_100000_levels_through_the_cli_stream(tmp_path: Path, shape: str) -> None:
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
        [sys.executable, "-c", _LIMITED, "convert", str(path), "-o", str(out), "--stream"],
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
    assert lines[0] == f"memvelope: error: JSON nested too deeply to parse (in {path})"
    assert int(lines[1].split()[1]) < 500 * 1024, "peak memory should stay far below 500 MB"
    assert elapsed < 30


@pytest.mark.parametrize("api", ["convert", "convert_stream"])
def test_100000_levels_through_the_api(tmp_path: Path, api: str) -> None:
    path = tmp_path / "conversations.json"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(ConversionError) as info:
        if api == "convert":
            convert(path, stream=True, progress=False)
        else:
            convert_stream(path, tmp_path / "out.mve.json", progress=False)
    assert info.value.reason == "too-deep" and info.value.source == str(path)
    assert not (tmp_path / "out.mve.json").exists()


# ---- the gauge against the reference lexer -------------------------------------------------------------

_TRICKY = st.text(alphabet=st.sampled_from(list('[]{}"\\/ab\u00e9\u4e2d\U0001f600\n')), max_size=12)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TRICKY,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_TRICKY, children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_JSON, ascii_only=st.booleans(), wrap=st.integers(0, LIMIT + 3), cuts=st.lists(st.integers(0, 4000)))
def test_gauge_matches_reference_on_random_json(value: object, ascii_only: bool, wrap: int, cuts: list[int]) -> None:
    inner = json.dumps(value, ensure_ascii=ascii_only).encode()
    text = b"[" * wrap + inner + b"]" * wrap  # near the limit, so the refusal index is checked too
    cuts = [c for c in cuts if c <= len(text)]
    depth, in_string, over = reference(text)
    assert (depth, in_string) == (0, False)
    assert gauge_over(text, cuts) == over
    assert gauge_over(inner, cuts, limit=1_000_000) is None  # every cut's state checked, no refusal


@pytest.mark.parametrize("piece", [1, 2, 3, 5, 7])
@pytest.mark.parametrize("block", [1, 2, 3, 7, 1 << 20])
def test_gauge_escapes_across_pieces_and_blocks(monkeypatch: pytest.MonkeyPatch, piece: int, block: int) -> None:
    monkeypatch.setattr(_depth, "_BLOCK", block)
    strings = ['\\"[', '\\\\"', '\\\\\\"{', "\\" * 20 + '"]', "\\" * 21 + '"', '"', "[{", "}]"]
    value = [{"k" + s: [s, [s, {s: s}]]} for s in strings]
    for text in (json.dumps(value).encode(), json.dumps(value, ensure_ascii=False).encode()):
        wrapped = b"[" * (LIMIT - 5) + text + b"]" * (LIMIT - 5)  # five levels inside: LIMIT exactly
        *_, over = reference(wrapped)
        assert over is None
        assert gauge_over(wrapped, list(range(0, len(wrapped), piece))) is None
        deeper = b"[" + wrapped + b"]"
        *_, over = reference(deeper)
        assert over is not None and gauge_over(deeper, list(range(0, len(deeper), piece))) == over


def test_gauge_long_backslash_runs_across_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    for block in (3, 16, 1 << 20):
        monkeypatch.setattr(_depth, "_BLOCK", block)
        for _ in range(30):
            runs = ["\\" * rng.randrange(0, 40) + rng.choice('"[]{}a') for _ in range(20)]
            text = json.dumps(["".join(runs)] * 3 + [[[]]]).encode()  # 3 levels, the deepest ([[]]) last
            cuts = sorted(rng.randrange(len(text)) for _ in range(rng.randrange(0, 50)))
            assert gauge_over(text, cuts, limit=1_000_000) is None  # every cut's state checked
            wrapped = b"[" * (LIMIT - 2) + text + b"]" * (LIMIT - 2)  # past the limit only after the strings
            *_, over = reference(wrapped)
            assert over == LIMIT - 2 + text.rindex(b"[[]]") + 1  # its inner bracket
            cuts = sorted(rng.randrange(len(wrapped)) for _ in range(rng.randrange(0, 50)))
            assert gauge_over(wrapped, cuts) == over


# ---- the reader with tiny chunks: no output changes ------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 64])
def test_tiny_chunks_convert_tricky_text_as_in_memory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chunk: int
) -> None:
    monkeypatch.setattr(streaming, "_CHUNK", chunk)
    monkeypatch.setattr(_depth, "_BLOCK", max(1, chunk // 2))
    texts = ['say "[[[" and \\"{{{', "\\\\", '\\\\"]]]', "caf\u00e9 \u4e2d \U0001f600 ]}", "\\" * 17 + "]"]
    conversation = {
        "uuid": "c1",
        "name": '"[{title',
        "chat_messages": [{"sender": "human", "text": t, "content": [[[{"x": t}]]]} for t in texts],
    }
    path = tmp_path / "conversations.json"
    for ascii_only in (True, False):
        path.write_text(json.dumps([conversation] * 3, ensure_ascii=ascii_only), encoding="utf-8")
        streamed, in_memory = run_stream_and_memory(path)
        assert isinstance(streamed, bytes) and streamed == in_memory
        assert [m["text"] for m in json.loads(streamed)["conversations"][0]["messages"]] == texts
