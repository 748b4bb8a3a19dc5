"""The nodes of an export in the outputs: the Parquet ``nodes`` table (API and command), the charts of models,
features and branches, and the report's "How you used it" section."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import memvelope_tools as mv
from memvelope_tools.cli import main

SAMPLE = mv.sample_path("chatgpt")


def test_to_parquet_of_an_export_writes_its_nodes(tmp_path: Path) -> None:
    written = mv.to_parquet([SAMPLE, mv.sample_path("claude")], tmp_path / "out")
    assert set(written) == {"conversations", "messages", "nodes"}
    back = mv.read_parquet(tmp_path / "out")["nodes"]
    expected = pd.concat([mv.nodes_frame(SAMPLE), mv.nodes_frame(mv.sample_path("claude"))], ignore_index=True)
    pd.testing.assert_frame_equal(back, expected)
    meta = pq.read_schema(written["nodes"]).metadata
    assert meta[b"memvelope.provider"] == b"chatgpt,claude"
    assert meta[b"memvelope.run"] == pq.read_schema(written["messages"]).metadata[b"memvelope.run"]


def test_to_parquet_of_an_envelope_writes_no_nodes(tmp_path: Path) -> None:
    envelope = tmp_path / "history.mve.json"
    mv.write_envelope(mv.convert(SAMPLE), envelope)
    assert set(mv.to_parquet(envelope, tmp_path / "out")) == {"conversations", "messages"}
    assert "nodes" not in mv.read_parquet(tmp_path / "out")


def test_parquet_command_writes_the_nodes_of_the_exports_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    envelope = tmp_path / "claude.mve.json"
    mv.write_envelope(mv.convert(mv.sample_path("claude")), envelope)
    assert main(["parquet", str(SAMPLE), str(envelope), "-o", str(tmp_path / "out")]) == 0
    assert "nodes.parquet (201 rows)" in capsys.readouterr().out
    frames = mv.read_parquet(tmp_path / "out")
    assert set(frames["nodes"]["source"]) == {"chatgpt-export.zip"}
    assert set(frames["messages"]["source"]) == {"chatgpt-export.zip", "claude.mve.json"}
    joined = frames["nodes"].merge(frames["messages"], on=["source", "conv_index", "message_id"])
    assert len(joined) == int((frames["messages"]["source"] == "chatgpt-export.zip").sum())
