"""An export's stream builds its tables from the conversations as conversion makes them, without writing
their envelope bytes and reading them again: on every fixture export and both samples the tables, the
warnings, the conversion log and the errors are those of the export's envelope, converted in one process
or by two workers, then read."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from generate import generate

import memvelope_tools as mv
from memvelope_tools._conformance import case_inputs, find_cases
from memvelope_tools._convert import ConversionLog, convert_stream, pipeline
from memvelope_tools._convert.pipeline import open_export
from memvelope_tools._frames import flatten as flatten_module
from memvelope_tools._frames.documents import envelope_tables
from memvelope_tools._frames.flatten import flatten_batches
from memvelope_tools._json import elements
from memvelope_tools._sources import Input, resolve
from memvelope_tools._stream import stream
from memvelope_tools.errors import MemvelopeError, MixedProvidersWarning

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
LAYOUTS = FIXTURES / "layouts"


def _fixture_exports() -> dict[str, list[Path]]:
    """Every export under fixtures/, as the parts given for it (see each folder's README), by name."""
    exports: dict[str, list[Path]] = {}
    for case in find_cases(FIXTURES / "envelope"):
        exports[f"envelope/{case.name}"] = case_inputs(case)
    for case in find_cases(FIXTURES / "doctor"):
        exports[f"doctor/{case.name}"] = case_inputs(case)
    for folder in ("history", "providers"):
        for case in sorted(p for p in (FIXTURES / folder).iterdir() if p.is_dir()):
            exports[f"{folder}/{case.name}"] = [case]
    for item in sorted((FIXTURES / "memory").iterdir()):
        if item.is_dir() or item.suffix == ".json":
            exports[f"memory/{item.name}"] = [item]
    for layout in sorted(p for p in LAYOUTS.iterdir() if p.is_dir()):
        given = sorted(layout.iterdir())
        if layout.name == "chatgpt-parts":
            given.reverse()  # given as conversations-001.json conversations-000.json
        exports[f"layouts/{layout.name}"] = given
    for name in ("chatgpt", "claude"):
        exports[f"samples/{name}"] = [mv.sample_path(name)]
    return exports


EXPORTS = _fixture_exports()

# A ChatGPT export holding what canonical bytes could change: lone surrogate escapes (high and low, in ids,
# titles and texts), a pair written as two escapes, integers of 19 digits and more, -0.0, 1.0 and exponents
# as times.
ODD = """[
 {"conversation_id": "c\\ud800one", "title": "T\\udfff \\ud83d\\ude00 pair", "create_time": 1.0,
  "update_time": -0.0, "current_node": "b", "mapping": {
   "a": {"id": "a", "parent": null, "children": ["b"], "message": {"id": "a", "author": {"role": "user"},
     "create_time": 1.7e9, "content": {"content_type": "text", "parts": ["hello \\ud83d there", "x\\u0000y"]}}},
   "b": {"id": "b", "parent": "a", "children": [], "message": {"id": "b", "author": {"role": "assistant"},
     "create_time": 12345678901234567890, "content": {"content_type": "text",
     "parts": ["\\ude00 lone low", {"text": "  second  "}]}}}}},
 {"id": "c2", "title": 12345678901234567890123, "create_time": 1700000000.123456789,
  "update_time": "2024-02-29T23:59:59.9999Z", "current_node": "n", "mapping": {
   "n": {"id": "n", "parent": null, "children": [], "create_time": 1e300, "message": {"id": "n",
     "author": {"role": "user"}, "content": {"parts": ["big \\udbff\\udfff end \\ud800"]}}}}}
]"""


def _odd_export(folder: Path) -> list[Path]:
    path = folder / "conversations.json"
    path.write_bytes(ODD.encode("utf-8"))
    json.loads(ODD)  # the fixture is JSON
    return [path]


class _Tables:
    def __init__(self) -> None:
        self.convs: list[pa.Table] = []
        self.msgs: list[pa.Table] = []

    def add(self, conversations: pa.Table, messages: pa.Table) -> None:
        self.convs.append(conversations)
        self.msgs.append(messages)

    def restart(self) -> None:
        self.convs.clear()
        self.msgs.clear()


def _found(paths: list[Path]) -> Input:
    return resolve([str(p) for p in paths], "export", list_means="parts")[0]


def _outcome(run: Any) -> dict[str, Any]:
    """What ``run(found, sink, log)`` gives: the tables (or the error), the log and the warnings."""
    sink, log = _Tables(), ConversionLog()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            provider = run(sink, log)
        except MemvelopeError as exc:
            got: Any = ("error", type(exc), exc.reason, exc.source, exc.path, str(exc))
        else:
            got = (provider, pa.concat_tables(sink.convs), pa.concat_tables(sink.msgs))
    said = [(w.category, str(w.message)) for w in caught if w.category is not ResourceWarning]  # the GC's, not ours
    return {"got": got, "log": log, "warnings": said}


def _streamed(paths: list[Path]) -> dict[str, Any]:
    def run(sink: _Tables, log: ConversionLog) -> str:
        return stream(_found(paths), sink, rows=3, log=log)

    return _outcome(run)


def _read_whole(paths: list[Path]) -> dict[str, Any]:
    """The export converted to its envelope in memory, whose tables are then made as a parsed envelope's."""

    def run(sink: _Tables, log: ConversionLog) -> str:
        found = _found(paths)
        doc = open_export(found, report=log)
        return flatten_batches(doc, found.label, found.name or found.label, sink.add, rows=3, owned=True)

    return _outcome(run)


def _assert_same(got: dict[str, Any], expected: dict[str, Any]) -> None:
    assert got["warnings"] == expected["warnings"]
    assert got["log"] == expected["log"]
    if expected["got"][0] == "error":
        assert got["got"] == expected["got"]
        return
    provider, convs, msgs = got["got"]
    assert provider == expected["got"][0]
    assert convs.equals(expected["got"][1]), convs.to_pylist()
    assert msgs.equals(expected["got"][2]), msgs.to_pylist()


def _envelope_read(paths: list[Path], tmp_path: Path, workers: int, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The tables (and the surrogate warnings) of the export's envelope file, converted by ``workers``
    processes (two: each batch one element, so that every element crosses between processes)."""
    out = tmp_path / f"w{workers}.mve.json"
    with monkeypatch.context() as patched:
        if workers > 1:
            patched.setattr(elements, "BATCH", 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            convert_stream([str(p) for p in paths], out, progress=False, workers=workers)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        convs, msgs = envelope_tables(out)
    return convs, msgs, _replaced([str(w.message) for w in caught if w.category is UnicodeWarning])


def _replaced(said: list[str]) -> dict[str, int]:
    """How many values of each column the surrogate warnings ``said`` (summed or one a batch) say were changed."""
    counts: dict[str, int] = {}
    for text in said:
        found = re.fullmatch(r"(\d+) (.+?) values? contains? unpaired surrogates; replaced by U\+FFFD", text)
        assert found is not None, text
        counts[found[2]] = counts.get(found[2], 0) + int(found[1])
    return counts


def _compare_with_envelopes(
    paths: list[Path], streamed: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if streamed["got"][0] == "error":
        return
    _, convs, msgs = streamed["got"]
    surrogates = _replaced([text for kind, text in streamed["warnings"] if kind is UnicodeWarning])
    label = _found(paths).label
    assert convs.column("source").to_pylist() == [label] * convs.num_rows
    for workers in (1, 2):
        env_convs, env_msgs, env_surrogates = _envelope_read(paths, tmp_path, workers, monkeypatch)
        assert convs.drop(["source"]).equals(env_convs.drop(["source"])), workers
        assert msgs.drop(["source"]).equals(env_msgs.drop(["source"])), workers
        assert surrogates == env_surrogates, workers


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_an_export_streams_the_tables_of_its_envelope(name: str, tmp_path: Path, monkeypatch) -> None:
    paths = EXPORTS[name]
    streamed = _streamed(paths)
    _assert_same(streamed, _read_whole(paths))
    _compare_with_envelopes(paths, streamed, tmp_path, monkeypatch)


def test_the_fixtures_hold_exports_that_convert_and_exports_that_fail() -> None:
    outcomes = {name: _streamed(paths)["got"][0] for name, paths in EXPORTS.items()}
    errors = [name for name, got in outcomes.items() if got == "error"]
    assert len(EXPORTS) > 100 and 5 < len(errors) < len(EXPORTS) - 50, errors
    mixed = _streamed(EXPORTS["envelope/detect-only-first-five"])["warnings"]
    assert [kind for kind, _ in mixed] == [MixedProvidersWarning]


def test_odd_values_stream_as_their_envelope_reads(tmp_path: Path, monkeypatch) -> None:
    paths = _odd_export(tmp_path)
    streamed = _streamed(paths)
    _assert_same(streamed, _read_whole(paths))
    _compare_with_envelopes(paths, streamed, tmp_path, monkeypatch)
    _, convs, msgs = streamed["got"]
    # what the fixture holds, as the spec renders it: the lone surrogates replaced, the pairs kept
    assert convs.column("conversation_id").to_pylist() == ["c\ufffdone", "c2"]
    assert convs.column("title").to_pylist() == ["T\ufffd \U0001f600 pair", ""]
    assert msgs.column("text").to_pylist() == [
        "hello \ufffd there\n\nx\x00y",
        "\ufffd lone low\n\nsecond",
        "big \U0010ffff end \ufffd",
    ]
    created = convs.column("created_at").cast(pa.int64()).to_pylist()
    assert created == [1000, 1700000000123]
    assert _replaced([text for kind, text in streamed["warnings"] if kind is UnicodeWarning]) == {
        "conversation id": 1,
        "title": 1,
        "text": 3,
    }


@pytest.mark.parametrize("provider", ["chatgpt", "claude"])
def test_a_generated_export_with_lone_surrogates_streams_as_its_envelope_reads(
    provider: str, tmp_path: Path, monkeypatch
) -> None:
    paths = generate(tmp_path / "export", provider, 1 << 20, seed=3, lone_surrogate_every=64 << 10, shards=2)
    assert any(b"\\ud83d" in path.read_bytes() for path in paths)  # the lone escape the generator writes
    streamed = _streamed(paths)
    _assert_same(streamed, _read_whole(paths))
    _compare_with_envelopes(paths, streamed, tmp_path, monkeypatch)
    _, convs, msgs = streamed["got"]
    assert convs.num_rows > 10 and msgs.num_rows > 100
    assert _replaced([text for kind, text in streamed["warnings"] if kind is UnicodeWarning])["text"] > 3


def test_an_export_s_stream_neither_writes_nor_reads_envelope_bytes(monkeypatch) -> None:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("envelope bytes made or read")

    expected = _streamed([mv.sample_path("chatgpt")])
    monkeypatch.setattr(pipeline, "fragment", refused)
    monkeypatch.setattr(flatten_module, "stream_envelope", refused)
    monkeypatch.setattr(flatten_module, "parse_spans", refused)
    _assert_same(_streamed([mv.sample_path("chatgpt")]), expected)


def test_a_failing_consumer_stops_the_conversion(tmp_path: Path, monkeypatch) -> None:
    from memvelope_tools import _stream

    paths = generate(tmp_path / "export", "claude", 2 << 20, seed=5)
    taken: list[int] = []
    real = _stream.export_conversations

    def counting(found: Input, take: Any, **kwargs: Any) -> Any:
        return real(found, lambda conversation: taken.append(1) or take(conversation), **kwargs)

    class Failing(_Tables):
        def add(self, conversations: pa.Table, messages: pa.Table) -> None:
            raise OSError("the disk is full")

    monkeypatch.setattr(_stream, "export_conversations", counting)
    with pytest.raises(OSError, match="the disk is full"):
        stream(_found(paths), Failing(), rows=1, window=1)
    total = mv.convert(*paths, progress=False)["meta"]["conversation_count"]
    assert 0 < len(taken) < total // 2  # stopped long before the end
