"""Every benchmark script runs to its end on a tiny input, so the figures in the README can be taken again.

The scripts reach into the package's private modules; a rename there breaks them without any other
test noticing. Each runs here in a fresh process at its smallest size and must exit 0 and print its
figures. Speed itself is never judged here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"

pytestmark = pytest.mark.slow


def _run(script: str, *args: str, cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{script} {' '.join(args)} failed:\n{done.stderr[-3000:]}"
    return done.stdout


def test_search_stage_indexes_and_queries(tmp_path: Path) -> None:
    out = _run(
        "search_topics.py", "--child", "search", "--messages", "3000", "--repeat", "1", "--seed", "7", cwd=tmp_path
    )
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["messages"] >= 3000
    assert figures["latency"], "no query was timed"


def test_topics_stage_finds_the_planted_topics(tmp_path: Path) -> None:
    out = _run(
        "search_topics.py",
        "--child",
        "topics",
        "--conversations",
        "400",
        "--repeat",
        "1",
        "--seed",
        "7",
        cwd=tmp_path,
    )
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["recovered"] == figures["planted"]


def test_convert_benchmark_checks_its_outputs_agree(tmp_path: Path) -> None:
    out = _run(
        "convert.py",
        "--size",
        "2MB",
        "--provider",
        "claude",
        "--shards",
        "1",
        "--repeat",
        "1",
        "--only",
        "fast,stream",
        "--workdir",
        str(tmp_path / "work"),
        cwd=tmp_path,
    )
    assert "bytes identical (fast, stream): True" in out


def test_frames_benchmark_runs(tmp_path: Path) -> None:
    out = _run("frames.py", "--messages", "3000", "--repeat", "1", cwd=tmp_path)
    assert "rows/s" in out


def test_memory_benchmark_runs(tmp_path: Path) -> None:
    out = _run("memory.py", "--size", "2MB", "--repeat", "1", "--folder", str(tmp_path / "work"), cwd=tmp_path)
    assert "memory_frame" in out


def test_nodes_benchmark_runs(tmp_path: Path) -> None:
    out = _run("nodes.py", "--size", "2MB", "--repeat", "1", "--folder", str(tmp_path / "work"), cwd=tmp_path)
    assert "nodes_frame" in out and "inventory" in out and out.count("target:") == 3


def test_analysis_benchmark_runs(tmp_path: Path) -> None:
    out = _run(
        "analysis.py", "--size", "2MB", "--repeat", "1", "--growth", "--folder", str(tmp_path / "work"), cwd=tmp_path
    )
    assert "target report:" in out and "target topics:" in out and "target parquet:" in out and "growth:" in out
    for what in ("search", "doctor", "memory", "inventory", "history", "sqlite"):
        assert f"target {what}:" in out
    assert "CPU s" in out


def test_history_benchmark_runs_and_the_second_add_changes_nothing(tmp_path: Path) -> None:
    out = _run("history.py", "--size", "2MB", "--snapshots", "2", "--work", str(tmp_path / "work"), cwd=tmp_path)
    assert "every file's bytes (the search index's too) unchanged: True" in out
    assert re.search(r"anonymous memory \(sampled\): history add [1-9]\d* MB", out)  # beside the headline peaks


def test_many_benchmark_resumes_a_killed_run_to_the_same_dataset(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    out = _run(
        "many.py",
        "--donations",
        "6",
        "--size",
        "20KB",
        "--workers",
        "2",
        "--workdir",
        str(tmp_path / "w"),
        cwd=tmp_path,
    )
    figures = json.loads(out.strip().splitlines()[-1])
    resumed = figures["runs"]["dask, 2 workers, resumed"]
    assert resumed["converted"] + resumed["unchanged"] == 6 and resumed["unchanged"] >= 3


def test_sqlite_benchmark_runs(tmp_path: Path) -> None:
    out = _run("sqlite.py", "--messages", "3000", "--repeat", "1", cwd=tmp_path)
    assert "peak memory to_sqlite / to_parquet:" in out
