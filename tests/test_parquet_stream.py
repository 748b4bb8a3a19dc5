"""``memvelope parquet`` and ``to_parquet`` read each envelope and export as a stream of batches, keep the
messages in a file beside the output and write them as row groups: the files are those of the tables read
whole (:func:`read_tables`, then written), row groups included."""

from __future__ import annotations

import functools
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import memvelope_tools as mv
from memvelope_tools import _parquet, _stream, _tables
from memvelope_tools._frames.folders import RUN_KEY
from memvelope_tools._sources import Input, resolve
from memvelope_tools._tables import read_tables, stream_to_parquet
from memvelope_tools.cli import main


def held(sources: list[object], folder: Path, *, dedupe: bool = False) -> dict[str, Path]:
    """The files of the tables read whole, then written."""
    tables = read_tables(sources, dedupe=dedupe, with_whole=True)
    return tables.to_parquet(folder)


def assert_same_files(folder: Path, expected: Path) -> dict[str, pa.Table]:
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted(p.name for p in expected.iterdir())  # no file of the stream's left behind
    tables = {}
    for name in names:
        got, want = pq.ParquetFile(folder / name), pq.ParquetFile(expected / name)
        table, other = got.read(), want.read()
        assert table.equals(other), name
        meta, other_meta = dict(table.schema.metadata), dict(other.schema.metadata)
        assert meta.pop(RUN_KEY) != other_meta.pop(RUN_KEY)
        assert meta == other_meta, name
        groups = [got.metadata.row_group(i).num_rows for i in range(got.num_row_groups)]
        assert groups == [want.metadata.row_group(i).num_rows for i in range(want.num_row_groups)], name
        tables[name] = table
    return tables


@pytest.fixture
def small_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    """Row groups of 16 rows, so that the messages are written as several, the last one partly full."""
    monkeypatch.setattr(_parquet, "_ROW_GROUP", 16)


@pytest.fixture
def envelope_file(tmp_path: Path) -> Path:
    path = tmp_path / "chatgpt.mve.json"
    mv.write_envelope(mv.convert(mv.sample_path("chatgpt")), path)
    return path


@pytest.mark.parametrize(
    "names",
    [["chatgpt"], ["claude"], ["facts-claude"], ["chatgpt", "facts-chatgpt", "claude"]],
    ids=lambda names: "+".join(names),
)
def test_the_files_of_the_stream_are_those_of_the_tables_read_whole(tmp_path, small_groups, names):
    sources = [mv.sample_path(name) for name in names]
    mv.to_parquet(sources, tmp_path / "streamed")
    held(sources, tmp_path / "held")
    tables = assert_same_files(tmp_path / "streamed", tmp_path / "held")
    if "chatgpt" in names:
        messages = tables["messages.parquet"]
        labels = messages.column("source").to_pylist()
        assert labels.count("chatgpt-export.zip") == 114  # the sample's messages, as messages_frame counts them
        assert pq.ParquetFile(tmp_path / "streamed" / "messages.parquet").num_row_groups > 2


def test_the_files_do_not_depend_on_how_the_stream_cuts_its_batches(tmp_path, small_groups, monkeypatch, envelope_file):
    sources = [envelope_file, mv.sample_path("claude")]
    monkeypatch.setattr(_tables, "stream", functools.partial(_stream.stream, rows=3, window=2048))
    mv.to_parquet(sources, tmp_path / "streamed")
    held(sources, tmp_path / "held")
    assert_same_files(tmp_path / "streamed", tmp_path / "held")


def test_dedupe_drops_the_repeated_conversations_and_their_messages(tmp_path, small_groups, monkeypatch, envelope_file):
    # the envelope converted from the export holds the export's conversations: the second copy goes
    sources = [envelope_file, mv.sample_path("chatgpt")]
    monkeypatch.setattr(_tables, "stream", functools.partial(_stream.stream, rows=5, window=2048))
    mv.to_parquet(sources, tmp_path / "streamed", dedupe=True)
    held(sources, tmp_path / "held", dedupe=True)
    tables = assert_same_files(tmp_path / "streamed", tmp_path / "held")
    assert tables["conversations.parquet"].num_rows == 40
    assert tables["messages.parquet"].num_rows == 114


def test_the_command_writes_the_files_of_the_tables_read_whole(tmp_path, small_groups, capsys):
    export = mv.sample_path("chatgpt")
    assert main(["parquet", str(export), mv.sample_path("facts-claude").as_posix(), "-o", str(tmp_path / "cli")]) == 0
    held([export, mv.sample_path("facts-claude")], tmp_path / "held")
    assert_same_files(tmp_path / "cli", tmp_path / "held")
    assert "memvelope: wrote" in capsys.readouterr().err


def test_a_facts_document_taken_for_an_envelope_is_read_as_facts(tmp_path):
    facts = mv.sample_path("facts-claude")
    taken_for_an_envelope = Input("envelope", facts.name, facts.name, path=facts)
    found = [*resolve([mv.sample_path("claude")], "frames", list_means="documents"), taken_for_an_envelope]
    written = stream_to_parquet(found, tmp_path / "streamed")
    assert sorted(written) == ["assets", "conversations", "facts", "messages", "nodes", "projects"]
    assert pq.read_table(written["facts"]).num_rows == 7  # the sample's meta counts 7 facts
    assert pq.read_table(written["conversations"]).num_rows == 40


def test_the_messages_of_an_input_read_again_are_written_once(tmp_path):
    messages = mv.messages_frame(mv.sample_path("claude"))
    convs = mv.conversations_frame(mv.sample_path("claude"))
    conv_table = pa.Table.from_pandas(convs, preserve_index=False)
    msg_table = pa.Table.from_pandas(messages, preserve_index=False)
    first = int(convs["n_messages"].iloc[:10].sum())
    with _tables._Spool(tmp_path) as spool:
        spool.begin()
        spool.add(conv_table.slice(0, 10), msg_table.slice(0, first))
        spool.restart()  # the input is read again from its start
        spool.add(conv_table.slice(0, 10), msg_table.slice(0, first))
        spool.add(conv_table.slice(10), msg_table.slice(first))
        conversations, chunks = spool.tables(dedupe=False)
        read = pa.concat_tables(list(chunks.pieces))
    assert conversations.num_rows == 40 and chunks.num_rows == read.num_rows == len(messages) == 91
    assert read.column("message_id").to_pylist() == messages["message_id"].tolist()
    assert list(tmp_path.iterdir()) == []  # the file of the messages is gone with the block


def test_a_broken_input_leaves_no_folder_and_no_file(tmp_path, envelope_file):
    broken = tmp_path / "broken.mve.json"
    text = envelope_file.read_text(encoding="utf-8")
    broken.write_text(text.replace('"role": "assistant"', '"role": "robot"', 1), encoding="utf-8")
    with pytest.raises(mv.FormatError, match="robot"):
        mv.to_parquet([mv.sample_path("claude"), broken], tmp_path / "out" / "pq")
    assert not (tmp_path / "out").exists()


def row_bytes(table: pa.Table) -> list[int]:
    """Each row's bytes of text: of its string columns' values, in UTF-8."""
    strings = [name for name, kind in zip(table.column_names, table.schema.types, strict=True) if kind == pa.string()]
    rows = table.select(strings).to_pylist()
    return [sum(len(v.encode("utf-8")) for v in row.values() if v is not None) for row in rows]


def test_a_row_group_ends_where_its_text_reaches_the_bound_however_the_rows_came(tmp_path, monkeypatch):
    monkeypatch.setattr(_parquet, "_GROUP_BYTES", 3000)
    monkeypatch.setattr(_tables, "stream", functools.partial(_stream.stream, rows=4, window=2048))
    sources = [mv.sample_path("chatgpt")]
    mv.to_parquet(sources, tmp_path / "streamed")
    held(sources, tmp_path / "held")  # the rows in one piece: the same groups
    assert_same_files(tmp_path / "streamed", tmp_path / "held")
    file = pq.ParquetFile(tmp_path / "streamed" / "messages.parquet")
    assert file.num_row_groups > 3
    for i in range(file.num_row_groups):
        sizes = row_bytes(file.read_row_group(i))
        assert sum(sizes[:-1]) < 3000  # it ended at the row that reached the bound, not later
        if i < file.num_row_groups - 1:
            assert sum(sizes) >= 3000  # nor before
