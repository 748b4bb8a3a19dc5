"""The table set (memvelope_tools._tables): one read of documents, the frames as its pandas face,
exports read as their envelopes' bytes, and odd conversations parsed alone."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import engine_running

from memvelope_tools._convert import convert_stream
from memvelope_tools._frames import flatten as flatten_module
from memvelope_tools._frames.envelopes import conversations_frame, messages_frame
from memvelope_tools._frames.facts import archetype_frame, facts_frame
from memvelope_tools._json.elements import FIELDS
from memvelope_tools._tables import Tables, read_parquet, read_tables, to_parquet
from memvelope_tools._tags import ENVELOPE_TAG, IR_TAG
from memvelope_tools.errors import FormatError

SAMPLES = Path(__file__).resolve().parent.parent / "memvelope_tools" / "samples"
EXPORT = SAMPLES / "chatgpt-export.zip"
FACTS = SAMPLES / "facts-claude.mv.json"


def _parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Grows by the number of conversations each time some are parsed rather than read into columns."""
    calls: list[int] = []
    parse = flatten_module.parse_spans
    monkeypatch.setattr(
        flatten_module, "parse_spans", lambda data, found: calls.append(len(found) // FIELDS) or parse(data, found)
    )
    return calls


def test_one_read_gives_every_frame(tmp_path: Path) -> None:
    tables = read_tables([EXPORT, FACTS])
    assert isinstance(tables, Tables)
    assert [d["format"] for d in tables.documents] == [ENVELOPE_TAG, IR_TAG]
    frames = tables.to_pandas()
    pd.testing.assert_frame_equal(frames["messages"], messages_frame(EXPORT))
    pd.testing.assert_frame_equal(frames["conversations"], conversations_frame(EXPORT))
    pd.testing.assert_frame_equal(frames["facts"], facts_frame(FACTS))
    pd.testing.assert_frame_equal(frames["archetype"], archetype_frame(FACTS))
    assert len(frames["messages"]) > 0 and len(frames["facts"]) > 0


def test_the_table_set_writes_what_to_parquet_writes(tmp_path: Path) -> None:
    written = read_tables([EXPORT, FACTS], with_whole=True).to_parquet(tmp_path / "a")
    # the whole export given by path: its nodes, files and projects beside the envelope's tables
    assert sorted(written) == ["assets", "conversations", "facts", "messages", "nodes", "projects"]
    again = to_parquet([EXPORT, FACTS], tmp_path / "b")
    a, b = read_parquet(tmp_path / "a"), read_parquet(tmp_path / "b")
    assert sorted(a) == ["archetype", "conversations", "facts", "messages", "nodes"]
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name])
    assert sorted(again) == sorted(written)


def test_a_layer_is_enforced() -> None:
    with pytest.raises(FormatError, match="expected an envelope"):
        read_tables([EXPORT, FACTS], layer="envelope")


def test_an_export_s_frames_are_its_envelope_file_s_built_without_its_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvelope_tools import _engine
    from memvelope_tools._convert import pipeline

    envelope = tmp_path / "chatgpt-export.zip.mve.json"
    convert_stream(EXPORT, envelope, progress=False)
    parsed = _parsed(monkeypatch)
    columns = _engine.ran().get(("columns", "c"), 0)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("envelope bytes made")

    with monkeypatch.context() as patched:
        patched.setattr(pipeline, "fragment", refused)
        from_export = messages_frame(EXPORT, sources=["x"])
        convs_export = conversations_frame(EXPORT, sources=["x"])
    # the tables were built from the conversations: no envelope bytes were made, read into columns or parsed
    assert parsed == [] and _engine.ran().get(("columns", "c"), 0) == columns
    pd.testing.assert_frame_equal(from_export, messages_frame(envelope, sources=["x"]))
    pd.testing.assert_frame_equal(convs_export, conversations_frame(envelope, sources=["x"]))


def _envelope_file(path: Path, n: int, odd: set[int]) -> dict[str, Any]:
    conversations = [
        {
            "id": f"c{k}",
            "title": "lone \ud83d half" if k in odd else f"title {k}",
            "created_at": "2024-01-01T00:00:00.000Z",
            "updated_at": None,
            "messages": [
                {"id": f"m{i}", "role": ("user", "assistant")[i % 2], "ts": None, "text": f"text {k} {i} é/"}
                for i in range(3)
            ],
        }
        for k in range(n)
    ]
    env = {"memvelope": "envelope-v0", "meta": {"source_provider": "chatgpt"}, "conversations": conversations}
    path.write_text(json.dumps(env), encoding="utf-8")  # a lone surrogate as its \ud83d escape
    return env


@pytest.mark.filterwarnings("ignore::UnicodeWarning")
@pytest.mark.parametrize("span_bytes", [300, 16 << 20])
def test_only_the_odd_conversations_are_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, span_bytes: int
) -> None:
    path = tmp_path / "odd.json"
    _envelope_file(path, 40, {0, 7, 8, 39})
    monkeypatch.setattr("memvelope_tools._stable.WINDOW", span_bytes)
    parsed = _parsed(monkeypatch)
    with engine_running("c", "columns"):
        msgs = messages_frame(path)
    assert sum(parsed) == 4 and max(parsed) == 1  # each odd conversation alone, the other 36 in columns
    with engine_running("python", "text"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UnicodeWarning)
        pd.testing.assert_frame_equal(msgs, messages_frame(path))
    assert conversations_frame(path)["title"].tolist()[:2] == ["lone \ufffd half", "title 1"]


@pytest.mark.filterwarnings("ignore::UnicodeWarning")
def test_a_conversation_the_columns_reader_refuses_is_parsed_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "refused.json"
    env = _envelope_file(path, 30, set())
    # A key written with an escape: the columns reader leaves its conversation to the parser.
    text = path.read_text().replace('"title": "title 12"', '"t\\u0069tle": "title 12"', 1)
    path.write_text(text)
    parsed = _parsed(monkeypatch)
    msgs = messages_frame(path)
    assert sum(parsed) == 1
    assert msgs["text"].tolist() == [m["text"] for c in env["conversations"] for m in c["messages"]]
    assert conversations_frame(path)["title"].tolist()[12] == "title 12"


def _long_chatgpt_export(path: Path, copies: int) -> bytes:
    """A ChatGPT export of the sample's conversations repeated ``copies`` times."""
    import zipfile

    with zipfile.ZipFile(EXPORT) as archive:
        conversations = [c for n in ("000", "001") for c in json.loads(archive.read(f"conversations-{n}.json"))]
    data = json.dumps(conversations * copies).encode()
    path.write_bytes(data)
    return data


def test_an_export_that_fails_midway_gives_the_conversion_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The conversion's error, as converting the export gives it, even when the building thread has already
    taken part of the export's conversations; no thread is left behind."""
    import threading
    import zipfile

    import memvelope_tools as mv
    from memvelope_tools.errors import MemvelopeError

    data = _long_chatgpt_export(tmp_path / "conversations.json", 2)
    part = tmp_path / "export.zip"  # its second part is broken: the first is converted before that is found
    with zipfile.ZipFile(part, "w") as archive:
        archive.writestr("conversations-000.json", data)
        archive.writestr("conversations-001.json", data[: len(data) - 50])
    monkeypatch.setattr(flatten_module, "_HAND_ROWS", 1)  # every conversation handed on as it is made
    with pytest.raises(MemvelopeError) as converting:
        mv.convert(part, progress=False)
    threads = threading.active_count()
    built: list[int] = []
    real_add = flatten_module._Builder.add

    def counted(self: Any, convs: list[Any], **kwargs: Any) -> None:
        built.append(len(convs))
        real_add(self, convs, **kwargs)

    monkeypatch.setattr(flatten_module._Builder, "add", counted)
    with pytest.raises(MemvelopeError) as reading:
        messages_frame(part)
    assert sum(built) > 0  # the building thread had conversations before the conversion failed
    assert (type(reading.value), reading.value.reason, str(reading.value)) == (
        type(converting.value),
        converting.value.reason,
        str(converting.value),
    )
    assert threading.active_count() == threads


def test_a_failure_of_the_building_thread_stops_the_conversion(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    part = tmp_path / "conversations.json"
    _long_chatgpt_export(part, 20)
    monkeypatch.setattr(flatten_module, "_HAND_ROWS", 1)

    def failing(self: Any, convs: list[Any], **kwargs: Any) -> None:
        raise FormatError("the building failed", reason="bad-shape")

    monkeypatch.setattr(flatten_module._Builder, "add", failing)
    from memvelope_tools._frames import documents as documents_module

    taken: list[int] = []
    real = documents_module.export_conversations

    def counting(found: Any, take: Any, **kwargs: Any) -> Any:
        return real(found, lambda conversation: taken.append(1) or take(conversation), **kwargs)

    monkeypatch.setattr(documents_module, "export_conversations", counting)
    with pytest.raises(FormatError, match="the building failed"):
        messages_frame(part)
    import memvelope_tools as mv

    total = mv.convert(part, progress=False)["meta"]["conversation_count"]
    assert 0 < len(taken) < total // 2  # stopped long before the end
