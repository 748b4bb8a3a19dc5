"""memvelope_tools._parquet: round trips equal to the frames, explicit schema, metadata, DuckDB and Polars."""

from __future__ import annotations

import base64
import importlib
import json
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from memvelope_tools._frames import FACT_COLUMNS, MESSAGE_COLUMNS, arrow_schema
from memvelope_tools._frames.envelopes import conversations_frame, messages_frame
from memvelope_tools._frames.facts import archetype_frame, facts_frame
from memvelope_tools._tables import read_parquet, to_parquet
from memvelope_tools.errors import FormatError, OutputError

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
HAND = Path(__file__).resolve().parent / "data" / "hand.mve.json"
SAMPLE = FIXTURES / "sample.mve.json"
IR = sorted((FIXTURES / "ir" / "valid").glob("*.mv.json"))
ENVELOPES = sorted((FIXTURES / "envelope").glob("*/expected.mve.json"))
assert IR and ENVELOPES, "fixtures not found"

pytestmark = pytest.mark.filterwarnings("ignore::UnicodeWarning")  # fixtures with lone surrogates

# Parquet has no dictionary index width of its own: pyarrow 20 and later take it from the Arrow schema
# stored in the file, older releases read every dictionary column back with int32 indices.
READ_INDEX = pa.int8() if int(pa.__version__.split(".")[0]) >= 20 else pa.int32()


def _as_read(schema: pa.Schema) -> pa.Schema:
    """``schema`` as this pyarrow reads it back from Parquet."""
    return pa.schema(
        [
            pa.field(f.name, pa.dictionary(READ_INDEX, f.type.value_type)) if pa.types.is_dictionary(f.type) else f
            for f in schema
        ]
    )


def _written_schema(path: Path) -> pa.Schema:
    """The Arrow schema exactly as written, from the copy Arrow keeps in the file's metadata."""
    stored = pq.read_metadata(path).metadata[b"ARROW:schema"]
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(stored))).remove_metadata()


@pytest.mark.slow
def test_round_trip_gives_back_equal_frames_dtypes_included(tmp_path: Path) -> None:
    envs = [HAND, SAMPLE, *ENVELOPES]
    labels = [f"doc-{i}" for i in range(len(envs) + len(IR))]
    written = to_parquet([*envs, *IR], tmp_path / "out", sources=labels)
    assert set(written) == {"conversations", "messages", "facts"}
    back = read_parquet(tmp_path / "out")
    pd.testing.assert_frame_equal(back["messages"], messages_frame(envs, sources=labels[: len(envs)]))
    pd.testing.assert_frame_equal(back["conversations"], conversations_frame(envs, sources=labels[: len(envs)]))
    pd.testing.assert_frame_equal(back["facts"], facts_frame(IR, sources=labels[len(envs) :]))
    pd.testing.assert_frame_equal(back["archetype"], archetype_frame(IR, sources=labels[len(envs) :]))
    assert back["messages"]["ts"].notna().sum() > 100 and back["facts"]["category"].notna().any()


def test_files_with_the_same_name_keep_their_paths_as_labels(tmp_path: Path) -> None:
    to_parquet(ENVELOPES[:2], tmp_path)
    sources = read_parquet(tmp_path)["conversations"]["source"].unique().tolist()
    assert sources == [str(ENVELOPES[0]), str(ENVELOPES[1])]


def test_round_trip_of_dicts_with_null_and_duplicate_ids(tmp_path: Path) -> None:
    doc = json.loads(HAND.read_bytes())
    to_parquet([doc, doc], tmp_path)
    back = read_parquet(tmp_path)
    assert back["conversations"]["conversation_id"].isna().sum() == 2
    assert (back["conversations"]["conversation_id"] == "c1").sum() == 4
    assert back["messages"]["source"].unique().tolist() == ["doc0", "doc1"]
    pd.testing.assert_frame_equal(back["messages"], messages_frame([doc, doc]))


def test_schema_is_the_declared_one_with_zstd_and_the_tags_in_metadata(tmp_path: Path) -> None:
    to_parquet([HAND, SAMPLE, IR[0]], tmp_path)
    assert _written_schema(tmp_path / "messages.parquet").equals(arrow_schema(MESSAGE_COLUMNS))
    assert _written_schema(tmp_path / "messages.parquet").field("role").type == pa.dictionary(pa.int8(), pa.string())
    schema = pq.read_schema(tmp_path / "messages.parquet")
    assert schema.remove_metadata().equals(_as_read(arrow_schema(MESSAGE_COLUMNS)))
    assert schema.field("ts").type == pa.timestamp("ms", tz="UTC")
    assert schema.field("role").type == pa.dictionary(READ_INDEX, pa.string())
    meta = schema.metadata
    assert meta[b"memvelope.format"] == b"envelope-v0"
    assert meta[b"memvelope.provider"] == b"claude,chatgpt"  # hand.mve.json is claude, the sample chatgpt
    assert json.loads(meta[b"memvelope.sources"]) == [
        {"source": "hand.mve.json", "format": "envelope-v0", "provider": "claude"},
        {"source": "sample.mve.json", "format": "envelope-v0", "provider": "chatgpt"},
    ]
    facts = pq.read_schema(tmp_path / "facts.parquet")
    assert facts.remove_metadata().equals(_as_read(arrow_schema(FACT_COLUMNS)))
    assert _written_schema(tmp_path / "facts.parquet").equals(arrow_schema(FACT_COLUMNS))
    assert facts.metadata[b"memvelope.format"] == b"memvelope-ir-v0"
    assert facts.metadata[b"memvelope.provider"] == json.loads(IR[0].read_bytes())["meta"]["provider"].encode()
    file = pq.ParquetFile(tmp_path / "messages.parquet")
    assert {file.metadata.row_group(0).column(i).compression for i in range(len(MESSAGE_COLUMNS))} == {"ZSTD"}


def test_only_ir_documents_write_only_facts(tmp_path: Path) -> None:
    assert set(to_parquet(IR, tmp_path)) == {"facts"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["facts.parquet"]
    assert set(read_parquet(tmp_path)) == {"facts", "archetype"}


def test_duckdb_reads_the_folder_as_it_is(tmp_path: Path) -> None:
    to_parquet([HAND, SAMPLE], tmp_path)
    msgs = messages_frame([HAND, SAMPLE])
    rows = duckdb.sql(
        f"SELECT role, count(*) AS n FROM '{tmp_path}/messages.parquet' GROUP BY role ORDER BY role"
    ).fetchall()
    assert rows == sorted(msgs["role"].value_counts().items())
    joined = duckdb.sql(
        f"SELECT c.title, count(*) FROM '{tmp_path}/conversations.parquet' c "
        f"JOIN '{tmp_path}/messages.parquet' m ON c.source = m.source AND c.conv_index = m.conv_index "
        "WHERE c.source = 'hand.mve.json' GROUP BY c.title ORDER BY c.title"
    ).fetchall()
    assert joined == [("", 1), ("First", 3), ("First, exported again", 1)]
    first = duckdb.sql(f"SELECT min(ts) FROM '{tmp_path}/messages.parquet' WHERE source = 'hand.mve.json'").fetchall()
    assert pd.Timestamp(first[0][0]) == pd.Timestamp("2024-01-01T09:59:00.123Z")


@pytest.mark.slow
def test_polars_reads_the_folder_with_the_declared_types(tmp_path: Path) -> None:
    import polars as pl

    docs = [HAND, SAMPLE, FIXTURES / "ir" / "valid" / "offset-and-unknown-fields.mv.json"]
    to_parquet(docs, tmp_path)
    msgs = pl.read_parquet(tmp_path / "messages.parquet")
    expected = messages_frame(docs[:2])
    assert msgs.schema["ts"] == pl.Datetime("ms", "UTC") and msgs.schema["role"] == pl.Categorical
    assert msgs.schema["text"] == pl.String and msgs.schema["words"] == pl.Int64
    assert msgs["text"].to_list() == expected["text"].tolist()
    assert msgs["words"].to_list() == expected["words"].tolist()
    assert msgs.filter(pl.col("ts").is_null()).height == int(expected["ts"].isna().sum())
    facts = pl.read_parquet(tmp_path / "facts.parquet")
    assert facts.schema["category"] == pl.Categorical
    assert facts["category"].to_list() == facts_frame(docs[2])["category"].tolist()


def test_rewriting_replaces_files_atomically_and_leaves_no_temp_files(tmp_path: Path) -> None:
    to_parquet(HAND, tmp_path)
    to_parquet(SAMPLE, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conversations.parquet", "messages.parquet"]
    assert read_parquet(tmp_path)["messages"]["source"].unique().tolist() == ["sample.mve.json"]


def test_a_failed_write_keeps_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    to_parquet(HAND, tmp_path)
    before = (tmp_path / "conversations.parquet").read_bytes()
    parquet_module = importlib.import_module("memvelope_tools._parquet")

    class Boom(pq.ParquetWriter):
        def write_table(self, *args: object, **kwargs: object) -> None:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(parquet_module.pq, "ParquetWriter", Boom)
    with pytest.raises(OutputError):
        to_parquet(SAMPLE, tmp_path)
    assert (tmp_path / "conversations.parquet").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conversations.parquet", "messages.parquet"]


def test_read_parquet_refusals(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        read_parquet(tmp_path / "missing")
    assert info.value.reason == "not-found"
    with pytest.raises(FormatError) as info:
        read_parquet(tmp_path)
    assert info.value.reason == "not-found"
    (tmp_path / "messages.parquet").write_bytes(b"not parquet")
    with pytest.raises(FormatError) as info:
        read_parquet(tmp_path)
    assert info.value.reason == "bad-parquet"


def test_bad_input_document_is_a_format_error_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    shutil.copy(HAND, bad)
    bad.write_bytes(bad.read_bytes().replace(b'"role": "user"', b'"role": "system"', 1))
    out = tmp_path / "out"
    with pytest.raises(FormatError) as info:
        to_parquet([HAND, bad], out)
    assert info.value.path == "$.conversations[0].messages[0].role"
    assert not out.exists() or list(out.iterdir()) == []  # read first: nothing is written, not even the folder
