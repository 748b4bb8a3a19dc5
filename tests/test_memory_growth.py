"""Bounded memory: no command's peak memory grows with the number of conversations. Each command runs on
a generated export of 10 MB of JSON and on one ten times larger (the same generator, so ten times the
conversations), each time in a fresh process, first on the bundled ChatGPT sample (so that what it imports
and caches is in place), then on the export. For ten times the conversations the process's peak memory
must grow less than twofold: a command that held the export (as Python objects, several times the JSON)
would take several hundred MB more for the larger one. What the peak adds to the libraries is in the
message. (At a few MB the bounded buffers of reading, indexing and writing are not yet full, so the
exports are not smaller; benchmarks/analysis.py --growth measures the same at 20 and 200 MB.)"""

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

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads the process's memory from /proc"),
]

SAMPLE = ROOT / "memvelope_tools" / "samples" / "chatgpt-export.zip"
SMALL, LARGE = 10_000_000, 100_000_000

#: Each command's arguments: EXPORT is the export, OUT a folder of the run's own.
COMMANDS = {
    "report": ["report", "EXPORT", "-o", "OUT/report.html", "-q"],
    "topics": ["topics", "EXPORT"],
    "search": ["search", "EXPORT", "the"],
    "parquet": ["parquet", "EXPORT", "-o", "OUT/parquet", "-q"],
    "doctor": ["doctor", "EXPORT"],
    "memory": ["memory", "EXPORT", "-q"],
    "inventory": ["inventory", "EXPORT", "-q"],
    "history add": ["history", "add", "EXPORT", "--to", "OUT/history", "-q"],
}

_PROBE = """
import contextlib, json, os, resource, sys
from memvelope_tools.cli import main

def run(argv):
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        return main(argv)

warm, argv = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert run(warm) == 0, "the warm-up run failed"
with open("/proc/self/statm") as fh:
    libraries = int(fh.read().split()[1]) * resource.getpagesize() / 2**20
code = run(argv)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"code": code, "libraries_mb": libraries, "peak_mb": peak}))
"""


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """The small and the large export, zipped as a download is, made once for every command."""
    folder = tmp_path_factory.mktemp("growth")
    found = {}
    for size in (SMALL, LARGE):
        parts = generate(folder / str(size), "chatgpt", size, seed=1, themes=True, memory=True)
        found[size] = folder / f"export-{size}.zip"
        with zipfile.ZipFile(found[size], "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
            for part in parts:
                archive.write(part, part.name)
    return found


def _arguments(name: str, export: Path, out: Path) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    return [a.replace("EXPORT", str(export)).replace("OUT", str(out)) for a in COMMANDS[name]]


def memory_taken(name: str, export: Path, out: Path) -> tuple[float, float]:
    """The peak memory (MB) of command ``name`` on ``export``, and what it holds after a first run on the
    bundled sample (its libraries)."""
    warm = _arguments(name, SAMPLE, out / "warm")
    argv = _arguments(name, export, out / "run")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(warm), json.dumps(argv)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["code"] == 0, done.stderr[-2000:]
    return float(found["peak_mb"]), float(found["libraries_mb"])


@pytest.mark.parametrize("name", list(COMMANDS))
def test_ten_times_the_conversations_raise_memory_by_less_than_two_times(
    name: str, exports: dict[int, Path], tmp_path: Path
) -> None:
    small, small_libraries = memory_taken(name, exports[SMALL], tmp_path / "small")
    large, large_libraries = memory_taken(name, exports[LARGE], tmp_path / "large")
    assert small > small_libraries > 0
    assert large < 2 * small, (
        f"{name}: a peak of {small:.0f} MB for {SMALL / 1e6:g} MB of JSON, {large:.0f} MB for {LARGE / 1e6:g} MB "
        f"({large / small:.2f}x; +{small - small_libraries:.0f} and +{large - large_libraries:.0f} MB beyond "
        "the libraries)"
    )
