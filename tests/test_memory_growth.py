"""Bounded memory: the report's peak memory does not grow with the number of conversations. Each export is
reported on in a fresh process, which says how much memory its libraries took once imported and its peak;
for ten times the conversations, the memory the report took beyond its libraries must grow less than
twofold (benchmarks/analysis.py --growth measures the whole peak at 200 MB)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from generate import generate  # noqa: E402

pytestmark = pytest.mark.slow

_PROBE = """
import json, resource, sys
import scipy.sparse, sklearn.decomposition, sklearn.feature_extraction.text, stop_words
import memvelope_tools._report, memvelope_tools._memory
from memvelope_tools.cli import main
with open("/proc/self/statm") as fh:
    libraries = int(fh.read().split()[1]) * resource.getpagesize() / 2**20
code = main(["report", sys.argv[1], "-o", sys.argv[2], "-q"])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"code": code, "libraries_mb": libraries, "peak_mb": peak}))
"""


def zipped_export(folder: Path, size: int) -> Path:
    parts = generate(folder / "json", "chatgpt", size, seed=1, themes=True)
    path = folder / "export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for part in parts:
            archive.write(part, part.name)
    return path


def memory_of_report(export: Path, out: Path) -> float:
    """The peak memory (MB) of a report on ``export`` beyond what its libraries take once imported."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(export), str(out)], env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["code"] == 0
    return float(found["peak_mb"]) - float(found["libraries_mb"])


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads the process's memory from /proc")
def test_ten_times_the_conversations_raise_the_reports_memory_by_less_than_two_times(tmp_path):
    small = zipped_export(tmp_path / "small", 4_000_000)
    large = zipped_export(tmp_path / "large", 40_000_000)
    small_mb = memory_of_report(small, tmp_path / "small.html")
    large_mb = memory_of_report(large, tmp_path / "large.html")
    assert small_mb > 0
    assert large_mb < 2 * small_mb, f"+{small_mb:.0f} MB for 4 MB of JSON, +{large_mb:.0f} MB for 40 MB"
