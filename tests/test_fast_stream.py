"""Every conversion path (orjson or not, in memory or streaming to a file, C scanner or its twin) gives the
bytes, or the error, of the reference: each part parsed whole by the stdlib reference parser."""

from __future__ import annotations

import io
import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import engine_running
from generate import generate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_json import convert_values, decode, loads_js

from memvelope_tools._conformance import case_inputs, find_cases
from memvelope_tools._convert import (
    ConversionError,
    ConversionLog,
    convert,
    convert_stream,
    dumps_canonical,
    dumps_envelope,
    expand,
    pipeline,
)
from memvelope_tools._json import elements
from memvelope_tools._plural import count
from memvelope_tools.cli import main

pytest.importorskip("orjson")

ROOT = Path(__file__).resolve().parent.parent
CASES = find_cases(ROOT / "fixtures" / "envelope")
REAL = ROOT.parent / "shared" / "real-exports"
REAL_FILES = sorted(REAL.rglob("*.json")) if REAL.is_dir() else []
LONE = re.compile(rb"\\ud[89a-f][0-9a-f]{2}(?!\\ud[c-f])")
assert CASES, "no envelope fixtures found"


def _stream_bytes(paths: list[Path], tmp_path: Path, workers: int = 1) -> bytes:
    out = tmp_path / "streamed.mve.json"
    convert_stream(paths, out, progress=False, workers=workers)
    return out.read_bytes()


def _parallel_bytes(paths: list[Path], tmp_path: Path) -> bytes:
    """Two worker processes, each batch one element: every range boundary falls between elements."""
    saved = elements.BATCH
    elements.BATCH = 1
    try:
        return _stream_bytes(paths, tmp_path, workers=2)
    finally:
        elements.BATCH = saved


def _spilled_bytes(paths: list[Path], tmp_path: Path) -> bytes:
    """Only the first 100 bytes of the envelope's body held in memory, the rest in a temporary file."""
    saved = pipeline.SPOOL_BYTES
    pipeline.SPOOL_BYTES = 100
    try:
        return _stream_bytes(paths, tmp_path)
    finally:
        pipeline.SPOOL_BYTES = saved


def _in_memory_bytes(paths: list[Path], tmp_path: Path) -> bytes:
    """As ``memvelope convert --no-stream`` on a large export: two workers, the body held in memory."""
    out = tmp_path / "in-memory.mve.json"
    convert_stream(paths, out, progress=False, workers=2, in_memory=True)
    return out.read_bytes()


def _reference(paths: list[Path]) -> bytes:
    """Each part decoded and parsed whole by the stdlib reference parser, then converted."""
    parts = expand(paths).parts
    values = [loads_js(decode(p.read()).text, p.name) for p in parts]
    source = parts[0].name if len(parts) == 1 else f"{parts[0].name} and {count(len(parts) - 1, 'more part')}"
    return dumps_canonical(convert_values(values, source))


def _twin(paths: list[Path]) -> bytes:
    with engine_running("python"):
        return dumps_envelope(convert(*paths))


def _all_paths(paths: list[Path], tmp_path: Path) -> dict[str, object]:
    """Bytes (or the error reason) from every path; the plain one is the reference."""
    runs = {
        "plain": lambda: _reference(paths),
        "no orjson": lambda: dumps_canonical(convert(*paths, fast=False)),
        "fast": lambda: dumps_envelope(convert(*paths, fast=True), trusted=True),
        "fast, checked serialiser": lambda: dumps_envelope(convert(*paths, fast=True)),
        "pure-Python scanner": lambda: _twin(paths),
        "stream to file": lambda: _stream_bytes(paths, tmp_path),
        "two worker processes": lambda: _parallel_bytes(paths, tmp_path),
        "stream, spilled to a file": lambda: _spilled_bytes(paths, tmp_path),
        "two workers, in memory": lambda: _in_memory_bytes(paths, tmp_path),
    }
    results: dict[str, object] = {}
    for name, run in runs.items():
        try:
            results[name] = run()
        except ConversionError as exc:
            results[name] = ("error", exc.reason)
    return results


def _assert_all_equal(results: dict[str, object]) -> None:
    reference = results["plain"]
    for name, got in results.items():
        assert got == reference, f"{name} differs from the plain path"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_fixture_case_every_path(case: Path, tmp_path: Path) -> None:
    _assert_all_equal(_all_paths(case_inputs(case), tmp_path))


@pytest.mark.skipif(not REAL_FILES, reason=f"real-exports folder not present at {REAL}")
@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: str(p.relative_to(REAL)))
def test_real_export_every_path(path: Path, tmp_path: Path) -> None:
    _assert_all_equal(_all_paths([path], tmp_path))


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["chatgpt", "claude"])
@pytest.mark.parametrize("shards", [1, 3])
def test_generated_export_every_path(provider: str, shards: int, tmp_path: Path) -> None:
    parts = generate(tmp_path / "export", provider, 1_500_000, seed=shards, shards=shards, lone_surrogate_every=200_000)
    data = b"".join(p.read_bytes() for p in parts)
    assert len(LONE.findall(data)) >= 4, "the generator should have written lone surrogates"
    results = _all_paths(parts, tmp_path)
    _assert_all_equal(results)
    assert isinstance(results["plain"], bytes) and re.search(rb"\\ud[89a-f][0-9a-f]{2}", results["plain"])


def test_generator_is_deterministic_and_sized(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", "chatgpt", 300_000, seed=3, shards=2)
    b = generate(tmp_path / "b", "chatgpt", 300_000, seed=3, shards=2)
    assert [p.name for p in a] == ["conversations-000.json", "conversations-001.json"]
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    total = sum(p.stat().st_size for p in a)
    assert 300_000 <= total < 2_000_000
    assert all(isinstance(json.loads(p.read_bytes()), list) for p in a)


def _claude(text_json: str, uuid: str = "c", name_json: str | None = None) -> str:
    """A Claude conversation whose human message text (and name, unless given) is the JSON literal."""
    return (
        f'{{"uuid": "{uuid}", "name": {name_json or text_json}, "chat_messages": [{{"sender": "human", '
        f'"text": {text_json}, "created_at": 1700000000}}]}}'
    )


@pytest.mark.parametrize(
    "literal",
    [
        r'"a\ud83d b"',  # lone high
        r'"a\ude00 b"',  # lone low
        r'"\ud83d\ude00 pair"',  # a pair: not lone
        r'"\uD83D\uDE00 PAIR"',  # upper-case pair
        r'"\\ud83d literal"',  # an escaped backslash: literal text, no surrogate at all
        r'"\\\ud83d three"',  # three backslashes: a literal backslash, then a lone high
        r'"\ud83d\ud83d\ude00"',  # lone high, then a pair
        r'"\ude00\ud83d"',  # low then high: both lone
        r'"x\udbff\udfff"',  # U+10FFFF written as a pair (a placeholder character), no lone one
        r'"x\udbff\udfff \ud800"',  # a placeholder character and a lone surrogate: no reversible swap
    ],
)
def test_surrogate_escapes(literal: str, tmp_path: Path, write_parts) -> None:
    paths = write_parts("[" + _claude(literal) + "]")
    _assert_all_equal(_all_paths(paths, tmp_path))


def test_raw_placeholder_character_with_lone_surrogate(tmp_path: Path, write_parts) -> None:
    text = '"raw \U0010f83d and lone \\ud83d"'
    paths = write_parts("[" + _claude(text) + "," + _claude('"\\ud83d key"', "d") + "]")
    results = _all_paths(paths, tmp_path)
    _assert_all_equal(results)
    assert b"raw \xf4\x8f\xa0\xbd and lone \\ud83d" in results["plain"]


def test_bom_invalid_utf8_and_lone_surrogate_in_one_part(tmp_path: Path, write_parts) -> None:
    body = ("[" + _claude('"bad \\ud800 here"') + "]").encode("utf-8").replace(b"bad", b"b\xffd\xc3")
    paths = write_parts(b"\xef\xbb\xbf" + body)
    _assert_all_equal(_all_paths(paths, tmp_path))
    plain, quick, streamed = ConversionLog(), ConversionLog(), ConversionLog()
    convert(*paths, report=plain, fast=False)
    convert(*paths, report=quick, fast=True)
    convert(*paths, report=streamed)
    # "bad" is in the name and the text: two invalid sequences (\xff, and \xc3 before a space) each
    assert plain.replaced == quick.replaced == streamed.replaced
    assert list(plain.replaced.values()) == [4]


@pytest.mark.parametrize(
    "number", ["1e400", "18446744073709551616", "-9223372036854775809", "1" * 5000, "1.5e308", "0.1e-999", "-0", "1E2"]
)
def test_numbers_beyond_what_the_fast_parsers_hold(number: str, tmp_path: Path, write_parts) -> None:
    conv = (
        '{"uuid": "n", "chat_messages": [{"sender": "human", "text": "t", '
        f'"created_at": {number}}}], "created_at": {number}}}'
    )
    _assert_all_equal(_all_paths(write_parts(f"[{conv}]"), tmp_path))


@pytest.mark.parametrize(
    "parts",
    [
        ['[1, 2, 3, 4, 5, {"uuid": "c", "chat_messages": []}]', "[oops"],  # no provider, then bad JSON
        ["[1, 2]", '{"a": 1}'],  # too few elements, one part not an array
        ['{"item": {"uuid": "c", "chat_messages": [{"sender": "human", "text": "x"}]}}'],  # not an array
        ["", "[]"],
        ["[] garbage"],
        ['["\t"]'],  # a raw control character
    ],
)
def test_errors_match(parts: list[str], tmp_path: Path, write_parts) -> None:
    results = _all_paths(write_parts(*parts), tmp_path)
    _assert_all_equal(results)
    assert isinstance(results["plain"], tuple)


@pytest.mark.slow
def test_stream_chunk_boundaries(tmp_path: Path, write_parts, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tiny chunks put every escape, pair and UTF-8 sequence across a read boundary somewhere.
    raw = '"raw \U0010f83d' + " " * 40 + 'lone \\ud83d"'  # a placeholder character of its own, far from "\\"
    literals = [r'"\ud83d\ude00 é \ud83d \\ud83d \ude00 \\\ude01"', r'"中文 \u00e9\ud800"', raw]
    for pad in range(20):  # shifts every byte across the reader's cuts
        convs = (_claude(t, f"u{i}", '"title"') for i, t in enumerate(literals))
        paths = write_parts("[" + " " * pad + ",".join(convs) + "]")
        expected = _reference(paths)
        for chunk in (1, 2, 3, 5, 7, 13):
            monkeypatch.setattr(elements, "CHUNK", chunk)
            monkeypatch.setattr(elements, "BATCH", chunk)
            assert _stream_bytes(paths, tmp_path) == expected, (pad, chunk)


def test_checked_serialiser_falls_back_for_values_orjson_writes_differently() -> None:
    for value in (
        {"a": 1.0, "b": [1e16, 0.1]},
        {"t": (1, 2)},
        {1: "int key"},
        {"big": 2**70},
        {"s": "lone \ud83d", "nested": [{"x": "\udc00"}]},
        {"empty": [], "o": {}},
    ):
        assert dumps_envelope(value) == dumps_canonical(value)


def test_cli_stream_flag_and_automatic_switch(tmp_path: Path, capsys, monkeypatch, write_parts) -> None:
    from memvelope_tools.cli import convert as cli_convert

    paths = write_parts("[" + _claude(r'"hi \ud83d"') + "]")
    plain, streamed, auto = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    assert main(["convert", str(paths[0]), "-o", str(plain), "--no-stream"]) == 0
    assert main(["convert", str(paths[0]), "-o", str(streamed), "--stream"]) == 0
    capsys.readouterr()
    monkeypatch.setattr(cli_convert, "STREAM_ABOVE", 0)
    assert main(["convert", str(paths[0]), "-o", str(auto)]) == 0
    assert "converting streaming" in capsys.readouterr().err
    assert main(["convert", str(paths[0]), "-o", str(auto), "-q"]) == 0
    assert capsys.readouterr().err == ""
    assert plain.read_bytes() == streamed.read_bytes() == auto.read_bytes()
    assert plain.read_bytes() == dumps_canonical(convert(*paths, fast=False))


def test_stream_to_stdout_and_no_output_on_error(tmp_path: Path, write_parts) -> None:
    good = write_parts("[" + _claude('"x"') + "]")
    sink = io.BytesIO()
    meta = convert_stream(good, None, stdout=sink, progress=False)
    assert sink.getvalue() == dumps_canonical(convert(*good))
    assert meta == {"source_provider": "claude", "conversation_count": 1, "message_count": 1}
    bad = tmp_path / "bad.json"
    bad.write_text("[{]")
    out = tmp_path / "never.mve.json"
    with pytest.raises(ConversionError) as info:
        convert_stream([bad], out)
    assert info.value.reason == "invalid-json"
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_worker_processes_take_the_batches_after_detection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memvelope_tools._convert import parallel

    parts = generate(tmp_path / "export", "chatgpt", 400_000, seed=2, shards=2, lone_surrogate_every=50_000)
    submitted: list[int] = []
    submit = parallel.Pool.submit

    def counted(self: parallel.Pool, tag: str, buf: bytes, found: list[int], *args: object) -> None:
        submitted.append(len(found) // 6)
        submit(self, tag, buf, found, *args)

    monkeypatch.setattr(parallel.Pool, "submit", counted)
    monkeypatch.setattr(elements, "BATCH", 4096)
    log = ConversionLog()
    out = tmp_path / "par.mve.json"
    meta = convert_stream(parts, out, progress=False, workers=2, report=log)
    assert len(submitted) > 3 and sum(submitted) < log.elements  # the first batch stays in this process
    assert out.read_bytes() == _reference(parts)
    assert meta["conversation_count"] == json.loads(out.read_bytes())["meta"]["conversation_count"]


_TRICKY_TEXT = st.text(
    alphabet=st.sampled_from(list('ab "\\/\n\t\x00\x1f\u00e9\u4e2d\u2028\U0001f600\ud800\udc00\udbff\udfff\U0010f800')),
    max_size=12,
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(_TRICKY_TEXT, min_size=1, max_size=14),
    cuts=st.lists(st.integers(0, 14), max_size=3),
    batch=st.integers(1, 600),
    ascii_only=st.booleans(),
)
def test_cutting_between_parts_and_batches_changes_nothing(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], cuts: list[int], batch: int, ascii_only: bool
) -> None:
    # Escapes, surrogate pairs, lone surrogates (and, unescaped, the invalid UTF-8 they become) land on
    # either side of every part and batch boundary; the workers read their ranges from the files.
    folder = tmp_path_factory.mktemp("cut")
    convs = [_claude(json.dumps(t, ensure_ascii=ascii_only), f"u{i}", '"t"') for i, t in enumerate(texts)]
    bounds = [0, *sorted({min(c, len(convs)) for c in cuts}), len(convs)]
    paths = []
    for k, (a, b) in enumerate(itertools.pairwise(bounds)):
        path = folder / f"conversations-{k:03d}.json"
        path.write_bytes(("[" + ",\n".join(convs[a:b]) + "]").encode("utf-8", "surrogatepass"))
        paths.append(path)

    def outcome(run: Callable[[], bytes]) -> object:
        try:
            return run()
        except ConversionError as exc:
            return ("error", exc.reason)

    expected = outcome(lambda: _reference(paths))
    saved = elements.BATCH
    elements.BATCH = batch
    try:
        assert outcome(lambda: _stream_bytes(paths, folder, workers=2)) == expected
        assert outcome(lambda: _stream_bytes(paths, folder, workers=1)) == expected
        assert outcome(lambda: _in_memory_bytes(paths, folder)) == expected
    finally:
        elements.BATCH = saved


def test_workers_count_repairs_and_elements_as_one_process(tmp_path: Path, write_parts) -> None:
    # Invalid UTF-8 and a foreign element after the first five: counted by the workers that read them.
    late = [_claude('"b\\u00e9d"', f"u{i}") for i in range(6)]
    late.append('{"mapping": {}, "title": "a ChatGPT one"}')
    body = ("[" + ",".join(late) + "]").encode().replace(b"b\\u00e9d", b"b\xffd")
    paths = write_parts(b"\xef\xbb\xbf" + body)
    logs = []
    for workers in (1, 2):
        log = ConversionLog()
        convert_stream(paths, tmp_path / f"w{workers}.mve.json", progress=False, workers=workers, report=log)
        logs.append(log)
    assert logs[0] == logs[1]
    assert list(logs[1].replaced.values()) == [12] and logs[1].elements == 7 and logs[1].foreign == 1
    assert (tmp_path / "w1.mve.json").read_bytes() == (tmp_path / "w2.mve.json").read_bytes()
