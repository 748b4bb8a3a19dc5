"""The nodes of an export in the outputs: the Parquet ``nodes`` table (API and command), the charts of models,
features and branches, and the report's "How you used it" section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

import memvelope_tools as mv
from memvelope_tools.cli import main

SAMPLE = mv.sample_path("chatgpt")


def test_to_parquet_of_an_export_writes_its_nodes(tmp_path: Path) -> None:
    written = mv.to_parquet([SAMPLE, mv.sample_path("claude")], tmp_path / "out")
    assert set(written) == {"conversations", "messages", "nodes", "assets", "projects"}
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
    assert f"memvelope: wrote {tmp_path / 'out' / 'nodes.parquet'} (206 rows)" in capsys.readouterr().err
    frames = mv.read_parquet(tmp_path / "out")
    assert set(frames["nodes"]["source"]) == {"chatgpt-export.zip"}
    assert set(frames["messages"]["source"]) == {"chatgpt-export.zip", "claude.mve.json"}
    joined = frames["nodes"].merge(frames["messages"], on=["source", "conv_index", "message_id"])
    assert len(joined) == int((frames["messages"]["source"] == "chatgpt-export.zip").sum())


# ---- charts ---------------------------------------------------------------------------------------------

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def _bars(ax: Any) -> dict[str, float]:
    """The total height of each labelled series of bars."""
    return {c.get_label(): float(sum(p.get_height() for p in c.patches)) for c in ax.containers}


def _nodes(tmp_path: Path) -> pd.DataFrame:
    from test_inventory import BRANCHED
    from test_nodes import write

    return mv.nodes_frame(write(tmp_path, BRANCHED))


def test_models_over_time_stacks_assistant_nodes_by_model(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    mv.plot.models_over_time(_nodes(tmp_path), ax=ax)
    assert _bars(ax) == {"gpt-4o": 2.0, "o3": 1.0}  # a1, a2 and a3; the code call names no model
    _, ax = plt.subplots()
    mv.plot.models_over_time(_nodes(tmp_path), ax=ax, top=1)
    assert _bars(ax) == {"gpt-4o": 2.0, "other models": 1.0}
    plt.close("all")


def test_features_over_time_by_kind_and_by_tool(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    nodes = _nodes(tmp_path)
    _, ax = plt.subplots()
    mv.plot.features_over_time(nodes, ax=ax)
    assert _bars(ax) == {"code": 1.0, "tool_output": 1.0}
    _, ax = plt.subplots()
    mv.plot.features_over_time(nodes, ax=ax, by="tool", freq="year")
    assert _bars(ax) == {"python": 1.0}
    with pytest.raises(ValueError, match="by must be"):
        mv.plot.features_over_time(nodes, by="model")
    plt.close("all")


def test_branching_counts_edits_and_regenerations_per_month(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    mv.plot.branching(_nodes(tmp_path), ax=ax)
    assert _bars(ax) == {"edited prompts": 2.0, "regenerated replies": 1.0}
    plt.close("all")


def test_charts_of_an_export_without_branches_say_so(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt
    from test_nodes import msg, tree, write

    path = write(tmp_path, tree(("u", None, msg("user", "hi", 1))))
    _, ax = plt.subplots()
    mv.plot.branching(path, ax=ax)  # an export is read for its nodes
    assert "no prompt was edited" in ax.texts[0].get_text()
    _, ax = plt.subplots()
    mv.plot.models_over_time(path, ax=ax)
    assert "names a model" in ax.texts[0].get_text()
    plt.close("all")


def test_charts_refuse_an_envelope_and_a_messages_frame(tmp_path: Path) -> None:
    envelope = tmp_path / "history.mve.json"
    mv.write_envelope(mv.convert(SAMPLE), envelope)
    with pytest.raises(mv.InputError, match="not an export"):
        mv.plot.branching(envelope)
    with pytest.raises(mv.FormatError, match="expected a nodes frame"):
        mv.plot.models_over_time(mv.messages_frame(envelope))


# ---- the report ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_report_of_an_export_says_how_it_was_used(tmp_path: Path) -> None:
    from memvelope_tools._report import build_report

    page = build_report([SAMPLE])
    assert "<h2>How you used it: ChatGPT</h2>" in page
    # the sample, counted from its nodes: 206 nodes, 4 edited prompts, 7 regenerated replies
    assert (
        "its 206 message nodes in 40 conversations" in page and "You edited 4 prompts and regenerated 7 replies" in page
    )
    assert page.count("<figure>") >= 4 + 3  # the activity charts and the four charts of use


@pytest.mark.slow
def test_report_of_an_envelope_has_no_usage_section(tmp_path: Path) -> None:
    from memvelope_tools._report import build_report

    envelope = tmp_path / "history.mve.json"
    mv.write_envelope(mv.convert(SAMPLE), envelope)
    assert "How you used it" not in build_report([envelope])


def test_usage_section_escapes_what_the_export_names(tmp_path: Path) -> None:
    from test_nodes import msg, tree, write

    from memvelope_tools._report import usage_section

    conv = tree(("a", None, msg("assistant", "x", 1, metadata={"model_slug": "<script>alert(1)</script>"})))
    html = usage_section(write(tmp_path, conv))
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
