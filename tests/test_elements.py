"""The one JSON reader: it accepts exactly what ``JSON.parse`` accepts on every path, its C scanner and
pure-Python twin agree on every input, and cutting the text anywhere (inside strings, around escapes
and surrogate pairs, at batch edges) changes neither the elements found nor their values."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ENGINES, engine_running
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from reference_json import convert_values, decode, loads_js

from memvelope_tools import read
from memvelope_tools._convert import (
    ConversionError,
    convert,
    convert_stream,
    dumps_canonical,
    parallel,
    pipeline,
)
from memvelope_tools._json import elements
from memvelope_tools.errors import FormatError

EXAMPLES = int(os.environ.get("MEMVELOPE_FUZZ_EXAMPLES", "300"))
NATIVE = elements._native
if NATIVE is None and os.environ.get("MEMVELOPE_REQUIRE_NATIVE"):
    raise RuntimeError("the C scanner (memvelope_tools._json._scan) was not built")
native_only = pytest.mark.skipif(NATIVE is None, reason="the C scanner is not built (no C compiler at install)")


def reference(data: bytes) -> bytes | tuple[str, str]:
    """``JSON.parse`` of the part as the stdlib parser gives it (after WHATWG decoding), converted."""
    try:
        return dumps_canonical(convert_values([loads_js(decode(data).text, "p")]))
    except ConversionError as exc:
        return ("error", exc.reason)


def every_path(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pool: parallel.Pool | None = None
) -> dict[str, object]:
    def run(name: str, fn) -> None:
        try:
            results[name] = fn()
        except ConversionError as exc:
            results[name] = ("error", exc.reason)

    def to_file() -> bytes:
        out = tmp_path / "out.mve.json"
        convert_stream(path, out, progress=False)
        return out.read_bytes()

    def workers() -> bytes:
        out = tmp_path / "workers.mve.json"
        convert_stream(path, out, progress=False, workers=2)
        return out.read_bytes()

    results: dict[str, object] = {}
    run("in memory", lambda: dumps_canonical(convert(path, progress=False)))
    run("without orjson", lambda: dumps_canonical(convert(path, fast=False, progress=False)))
    with monkeypatch.context() as m:  # bounded: every byte is its own read, every element its own batch
        m.setattr(elements, "CHUNK", 3)
        m.setattr(elements, "BATCH", 1)
        run("bounded, tiny reads", to_file)
    with engine_running("python"):
        run("pure-Python scanner", lambda: dumps_canonical(convert(path, progress=False)))
    if pool is not None:  # the elements after the first five parsed by a worker
        with monkeypatch.context() as m:
            m.setattr(pipeline, "Pool", lambda count: pool)
            run("worker processes", workers)
    return results


CONV = '{"uuid": "c", "name": "t", "chat_messages": [{"sender": "human", "text": "hi there", "created_at": 1}]}'
# Six conversations before it: the first five detect the provider in the converting process, the rest
# (the sixth and CONV) go to the worker processes on that path.
HEAD = "[" + "".join(CONV.replace('"c"', f'"c{i}"').replace("hi there", f"hello {i}") + ", " for i in range(6))
# Where a byte goes: between tokens, inside a string, before the "[" and after the "]" of the part.
PLACES = {
    "between tokens": lambda b: (HEAD + CONV.replace('"uuid":', '"uuid":\x00')).encode().replace(b"\x00", b) + b"]",
    "inside a string": lambda b: (HEAD + CONV + "]").encode().replace(b"hi there", b"hi" + b + b"there"),
    "before the array": lambda b: b + (HEAD + CONV + "]").encode(),
    "after the array": lambda b: (HEAD + CONV + "]").encode() + b,
    "after an element": lambda b: (HEAD + CONV).encode() + b + b"]",
}


@pytest.fixture(scope="module")
def pool() -> Iterator[parallel.Pool]:
    """Two worker processes shared by many conversions (each conversion closes its pool otherwise)."""
    shared = parallel.Pool(2)
    close, shared.close = shared.close, shared._pending.clear  # type: ignore[method-assign]
    shared.release = lambda: None  # type: ignore[method-assign]
    yield shared
    close()


@pytest.mark.slow
@pytest.mark.parametrize("place", list(PLACES))
def test_every_byte_value_everywhere_as_json_parse(
    place: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pool: parallel.Pool
) -> None:
    path = tmp_path / "conversations.json"
    accepted = set()
    for value in range(256):
        data = PLACES[place](bytes([value]))
        path.write_bytes(data)
        expected = reference(data)
        results = every_path(path, tmp_path, monkeypatch, pool)
        for name, got in results.items():
            assert got == expected, f"byte 0x{value:02x} {place}: {name} gives {got!r}, JSON.parse {expected!r}"
        if isinstance(expected, bytes):
            accepted.add(value)
    whitespace = {0x09, 0x0A, 0x0D, 0x20}
    if place == "inside a string":
        # no control character, no quote; a backslash makes the "\t" escape of "hi\there"
        assert accepted == set(range(0x20, 256)) - {0x22}
    else:
        assert accepted == whitespace  # 0x0B and 0x0C are no JSON whitespace; nor is a stray quote


def test_read_accepts_what_json_parse_accepts_byte_by_byte() -> None:
    doc = b'{"memvelope": "envelope-v0", "meta": {"source_provider": "claude"}, "conversations": []}'
    for value in range(256):
        b = bytes([value])
        for data in (doc[:1] + b + doc[1:], doc + b, b + doc):
            try:
                json.loads(data.decode("utf-8"), parse_constant=lambda s: 1 / 0)
                ok = True
            except (ValueError, ZeroDivisionError):
                ok = False
            try:
                read(data)
                got = True
            except FormatError:
                got = False
            assert got == ok, (value, data)


# ---- the scanner --------------------------------------------------------------------------------------

_TRICKY = st.text(
    alphabet=st.sampled_from(list('[]{}",:\\/ab \u00e9\u4e2d\U0001f600\n\t\ud800\udc00\udbff\udfff')), max_size=10
)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**25), 10**25)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TRICKY,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_TRICKY, children, max_size=4),
    max_leaves=25,
)


def _dumps(value: object, ascii_only: bool, indent: int | None) -> bytes:
    return json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode("utf-8", "surrogatepass")


def whole(data: bytes) -> tuple[list[object], tuple[int, int] | None]:
    """Every child's key and value spans, flags and depth (as bytes), scanning all at once."""
    found: list[object] = []
    pos, state = 0, elements.BEGIN
    while True:
        pos, state, children, error = elements.scan(data, pos, state, True)
        found += _spans(data, children, 0)
        if error is not None or state == elements.END:
            if error is None:
                error = elements.scan(data, pos, state, True)[3]
            return found, error


def _spans(data: bytes, children: list[int], offset: int) -> list[object]:
    out: list[object] = []
    for k in range(0, len(children), 6):
        ks, ke, s, e, flags, depth = children[k : k + 6]
        key = data[ks:ke] if ks >= 0 else None
        out.append((key, data[s:e], flags, depth, s + offset))
    return out


def piecewise(data: bytes, cuts: list[int], batch: int) -> tuple[list[object], tuple[int, int] | None]:
    """The same, reading the bytes in pieces cut at ``cuts`` as the bounded reader does."""
    found: list[object] = []
    buf, pos, state, offset, fed = b"", 0, elements.BEGIN, 0, 0
    ends = [*sorted({c for c in cuts if 0 < c < len(data)}), len(data)]
    while True:
        final = fed >= len(data)
        stop = pos + batch
        pos, state, children, error = elements.scan(buf, pos, state, final, stop)
        found += _spans(buf, children, offset)
        if error is not None:
            return found, (error[0], error[1] + offset)
        if state == elements.END:
            if pos >= len(buf) and final:
                return found, None
            need = pos >= len(buf)
        else:
            need = not (children and children[-3] >= stop)
        if need:
            assert not final, "a final scan must end or report an error"
            end = next(e for e in ends if e > fed)
            buf, offset, pos = buf[pos:] + data[fed:end], offset + pos, 0
            fed = end


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=st.lists(_JSON, max_size=5) | _JSON,
    ascii_only=st.booleans(),
    indent=st.none() | st.integers(0, 2),
    cuts=st.lists(st.integers(0, 3000), max_size=40),
    batch=st.integers(1, 200),
)
def test_cutting_the_text_anywhere_changes_nothing(
    value: object, ascii_only: bool, indent: int | None, cuts: list[int], batch: int
) -> None:
    data = _dumps(value, ascii_only, indent)
    expected = whole(data)
    assert expected[1] is None
    assert piecewise(data, cuts, batch) == expected
    assert piecewise(data, list(range(len(data))), 1) == expected  # every byte its own piece
    truncated = data[: len(data) * 2 // 3]  # an error, found at the same place however the text is cut
    assert piecewise(truncated, cuts, batch) == whole(truncated)
    # The values are the standard library's (a raw surrogate is no UTF-8: refused when read strictly)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        with pytest.raises(elements.Refused) as info:
            elements.Reader(elements.PYTHON).load(data)
        assert info.value.reason == "not-utf8"
    else:
        assert elements.Reader(elements.PYTHON).load(data) == json.loads(text)


@pytest.mark.parametrize("name", ENGINES)
def test_each_engine_reads_solidus_and_upper_case_escapes(name: str) -> None:
    data = b'[{"a\\/b": "\\u00C9t \\/"}, "\\uD83D\\uDE00", "\\uD83D", 1]'
    with engine_running(name):
        pos, state, found, error = elements.scan(data, 0, elements.BEGIN, True)
    assert (pos, state, error) == (len(data), elements.END, None)
    # Children (six ints each): where each value starts and ends, and its flags (1: a lone surrogate).
    assert [found[k + 2 : k + 5] for k in range(0, len(found), elements.FIELDS)] == [
        [1, 23, 0],
        [25, 39, 0],
        [41, 49, elements.LONE],
        [51, 52, 0],
    ]
    values = [value for _, value in elements.Reader(elements.PYTHON).children(data, found)]
    assert values == [{"a/b": "\u00c9t /"}, "\U0001f600", "\ud83d", 1]


@pytest.mark.slow
@native_only
@settings(max_examples=EXAMPLES * 10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.lists(
        st.sampled_from(
            [bytes([c]) for c in b'[]{}",: 1-.e+\n\x0b\xff\\u']
            + [b"d8", b"dc", b"00", b"true", b"nul", b"\xc3\xa9", b"\\ud800", b"\\udc00", b'\\"', b"0" * 19]
            + [b"\\/", b"\\u00C9", b"\\uD83D", b"\\uDE00", b"DC"]
        ),
        max_size=16,
    ).map(b"".join),
    pos=st.integers(0, 3),
    state=st.integers(0, 7),
    final=st.booleans(),
    stop=st.integers(0, 40),
    base=st.sampled_from([0, 1, 1022, 1023, 1024]),
)
@example(data=b'["\\ud800\\udc00"]', pos=0, state=0, final=True, stop=99, base=0)
def test_the_c_scanner_and_its_twin_agree(data: bytes, pos: int, state: int, final: bool, stop: int, base: int) -> None:
    pos = min(pos, len(data))
    assert NATIVE.scan(data, pos, state, final, stop, base) == elements.py_scan(data, pos, state, final, stop, base)


@pytest.mark.parametrize("cut", [9, 12, 15, 17])
def test_the_twin_scans_a_window_that_ends_inside_an_escaped_string(cut: int) -> None:
    """The readers hand the scanners windows as writable memoryviews; one may end inside a string with a
    ``\\u`` escape, which the scanner then leaves for the next window."""
    data = b'["ab", "\\u00e9\\ud83d\\ude00 and more", 1]'
    window = memoryview(bytearray(data))[:cut]
    got = elements.py_scan(window, 1, elements.ARR_FIRST, False, 1 << 62, 1)  # type: ignore[arg-type]
    assert got == (7, elements.ARR_VALUE, [-1, -1, 1, 5, 0, 0], None)
    if NATIVE is not None:
        assert NATIVE.scan(window, 1, elements.ARR_FIRST, False, 1 << 62, 1) == got


@pytest.mark.parametrize(
    ("text", "flags"),
    [
        (r'["\ud83d"]', elements.LONE),
        (r'["\ude00"]', elements.LONE),
        (r'["\ud83d\ude00"]', 0),
        (r'["\\ud83d"]', 0),  # an escaped backslash, then plain text
        (r'["\\\ud83d"]', elements.LONE),
        (r'["\ud83d\ud83d\ude00"]', elements.LONE),
        (r'[{"\udc00": 1}]', elements.LONE),
        ("[1234567890123456789]", elements.BIG_INT),
        ("[-123456789012345678]", 0),
        ("[12345678901234567890.5]", 0),
        ("[1e400]", 0),
    ],
)
def test_flags_name_what_orjson_reads_differently(text: str, flags: int) -> None:
    for scan in (elements.scan, elements.py_scan):
        _, _, children, error = scan(text.encode(), 0, elements.BEGIN, True, 1 << 62, 0)
        assert error is None and children[4] == flags


def test_errors_name_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_bytes(b'[\n  {"uuid": "x",\n   "chat_messages": [] \xc3\xa9}\n]')
    with pytest.raises(ConversionError) as info:
        convert(path)
    assert str(info.value) == f"not valid JSON: Expecting ',' delimiter at line 3 column 24 (in {path})"
