"""The one stream of Arrow batches: every kind of input gives, batch by batch, the tables the frames give,
and topics' word counts do not depend on how the history was cut into batches."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import memvelope_tools as mv
from memvelope_tools._corpus import history_stream
from memvelope_tools._frames.documents import envelope_tables
from memvelope_tools._sources import resolve_one
from memvelope_tools._stream import stream
from memvelope_tools._topic_units import Counting, split_words


class Batches:
    """A sink keeping every batch it is given (and how often it was told to start again)."""

    def __init__(self) -> None:
        self.convs: list[pa.Table] = []
        self.msgs: list[pa.Table] = []
        self.restarts = 0

    def add(self, conversations: pa.Table, messages: pa.Table) -> None:
        self.convs.append(conversations)
        self.msgs.append(messages)

    def restart(self) -> None:
        self.restarts += 1
        self.convs.clear()
        self.msgs.clear()


def streamed(source, rows: int, window: int | None = None) -> tuple[Batches, str]:
    sink = Batches()
    provider = stream(resolve_one(source, "any"), sink, rows=rows, window=window)
    return sink, provider


def assert_same_tables(sink: Batches, source) -> None:
    convs, msgs = envelope_tables(source)
    assert pa.concat_tables(sink.convs).equals(convs)
    assert pa.concat_tables(sink.msgs).equals(msgs)


@pytest.fixture(scope="module")
def envelope_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("stream") / "chatgpt.mve.json"
    mv.write_envelope(mv.convert(mv.sample_path("chatgpt")), path)
    return path


@pytest.mark.parametrize(("rows", "window"), [(1, 2048), (7, 1024), (1 << 14, None)])
def test_an_export_streams_the_tables_of_its_envelope_in_batches_of_whole_conversations(rows, window):
    export = mv.sample_path("chatgpt")
    sink, provider = streamed(export, rows, window)
    assert provider == "chatgpt"
    assert_same_tables(sink, export)
    # a batch is handed on as soon as it holds ``rows`` messages or more and ``window`` characters of text or
    # more (the sample's 114 messages hold 43,929), the last with what is left
    assert len(sink.convs) > 10 if window else len(sink.convs) == 1
    for n, (convs, msgs) in enumerate(zip(sink.convs, sink.msgs, strict=True)):
        # whole conversations: the batch's messages are exactly its conversations' messages
        assert msgs.num_rows == sum(convs.column("n_messages").to_pylist())
        assert set(msgs.column("conv_index").to_pylist()) <= set(convs.column("conv_index").to_pylist())
        if n < len(sink.convs) - 1:
            held, chars = msgs.num_rows, sum(convs.column("chars").to_pylist())
            assert held >= rows and chars >= window
            last_messages, last_chars = convs.column("n_messages")[-1].as_py(), convs.column("chars")[-1].as_py()
            assert held - last_messages < rows or chars - last_chars < window
    numbers = pa.concat_tables(sink.convs).column("conv_index").to_pylist()
    assert numbers == list(range(40))  # numbered on across batches


@pytest.mark.parametrize("rows", [5, 1 << 14])
def test_an_envelope_file_bytes_and_a_parsed_envelope_stream_the_same_tables(envelope_file, rows):
    for source in (envelope_file, envelope_file.read_bytes(), mv.read(envelope_file)):
        sink, provider = streamed(source, rows, 4096)
        assert len(sink.convs) > 1 if rows == 5 else len(sink.convs) >= 1
        assert provider == "chatgpt"
        assert sink.restarts == 0
        convs, msgs = envelope_tables(envelope_file)
        label = resolve_one(source, "any").label
        assert pa.concat_tables(sink.msgs).drop(["source"]).equals(msgs.drop(["source"]))
        assert pa.concat_tables(sink.convs).column("source").to_pylist() == [label] * 40
        assert pa.concat_tables(sink.convs).drop(["source"]).equals(convs.drop(["source"]))


def test_an_envelope_the_windows_cannot_read_is_read_whole_with_the_same_tables(tmp_path, envelope_file):
    doc = json.loads(envelope_file.read_text(encoding="utf-8"))
    odd = tmp_path / "odd.mve.json"  # meta after the conversations: read whole
    odd.write_text(
        json.dumps({"memvelope": doc["memvelope"], "conversations": doc["conversations"], "meta": doc["meta"]}),
        encoding="utf-8",
    )
    sink, provider = streamed(odd, 3, 4096)
    assert provider == "chatgpt"
    assert_same_tables(sink, odd)


def test_a_facts_ir_document_is_no_envelope_to_stream():
    with pytest.raises(mv.FormatError) as caught:
        streamed(mv.sample_path("facts-claude"), 100)
    assert caught.value.reason == "wrong-layer"


def test_a_broken_conversation_is_reported_where_it_is(tmp_path, envelope_file):
    doc = json.loads(envelope_file.read_text(encoding="utf-8"))
    doc["conversations"][30]["messages"][0]["role"] = "robot"
    bad = tmp_path / "bad.mve.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(mv.FormatError) as caught:
        streamed(bad, 5, 4096)
    assert "conversations[30]" in str(caught.value)


def counts_of(source, unit: str, rows: int):
    count = Counting(unit)
    count.begin()
    history_stream(resolve_one(source, "history"), count, rows=rows)
    return count.finish()


def by_unit_and_word(counts, words) -> dict[tuple[int, str], float]:
    found = counts.tocoo()
    return {(int(u), str(words[w])): float(n) for u, w, n in zip(found.row, found.col, found.data, strict=True)}


@pytest.mark.parametrize("unit", ["conversation", "message"])
def test_word_counts_do_not_depend_on_how_the_history_is_cut_into_batches(unit):
    frame = mv.messages_frame(mv.sample_path("claude")).assign(title="zyzzyva")
    units, counts, words = counts_of(frame, unit, 1 << 14)
    assert counts.sum() > 1000
    for rows in (1, 6):
        other_units, other_counts, other_words = counts_of(frame, unit, rows)
        assert sorted(other_words) == sorted(words)
        assert by_unit_and_word(other_counts, other_words) == by_unit_and_word(counts, words)
        assert other_units.equals(units)


def test_words_come_in_the_order_first_met():
    table = pa.table(
        {
            "source": ["a", "a", "a"],
            "conv_index": [0, 0, 1],
            "conversation_id": ["x", "x", "y"],
            "position": [0, 1, 0],
            "role": ["user", "assistant", "user"],
            "ts": pa.array([None, None, None], pa.timestamp("ms", tz="UTC")),
            "text": ["zebra apple", "mango zebra", "kiwi"],
            "title": ["plum", "plum", None],
        }
    )
    count = Counting("conversation")
    count.begin()
    count.add(table.slice(0, 2))
    count.add(table.slice(2))
    _, counts, words = count.finish()
    assert list(words) == ["zebra", "apple", "mango", "plum", "kiwi"]  # a batch's texts, then its new titles
    assert counts.toarray().tolist() == [[2, 1, 1, 1, 0], [0, 0, 0, 0, 1]]


def test_a_conversation_split_between_two_batches_is_one_unit():
    frame = mv.messages_frame(mv.sample_path("chatgpt"))
    frame["title"] = "zyzzyva"  # a word no message holds
    whole = counts_of(frame, "conversation", 1 << 14)
    cut = counts_of(frame, "conversation", 3)  # every third message starts a batch, inside conversations
    assert len(cut[0]) == len(whole[0]) == 40
    assert cut[0]["n_messages"].tolist() == whole[0]["n_messages"].tolist()
    assert by_unit_and_word(cut[1], cut[2]) == by_unit_and_word(whole[1], whole[2])
    # each title is counted once per conversation, not once per batch holding its messages
    title = list(whole[2]).index("zyzzyva")
    assert whole[1][:, title].toarray().ravel().tolist() == [1] * 40


def test_counts_of_an_input_read_again_are_not_doubled():
    count = Counting("conversation")
    history = mv.messages_frame(mv.sample_path("claude")).assign(title=None)
    table = pa.Table.from_pandas(history, preserve_index=False)
    count.begin()
    count.add(table.slice(0, 30))
    count.restart()  # the input is read again from its start
    count.add(table)
    units, counts, words = count.finish()
    fresh = Counting("conversation")
    fresh.begin()
    fresh.add(table)
    fresh_units, fresh_counts, fresh_words = fresh.finish()
    assert units.equals(fresh_units)
    assert list(words) == list(fresh_words)
    assert (counts != fresh_counts).nnz == 0
    assert np.asarray(counts.sum()).item() > 0


def test_ideograph_runs_become_their_bigrams_after_the_other_words_each_of_its_text():
    texts = pa.array(["冒泡排序 abc", "x 中文字"], pa.large_string())
    words, owners = split_words(texts, np.array([3, 7]))
    assert words.to_pylist() == ["abc", "冒泡", "泡排", "排序", "中文", "文字"]
    assert owners.tolist() == [3, 3, 3, 3, 7, 7]
