"""Start-up time of the package and of the ``memvelope`` command, beside ``python -c pass``.

Each case runs in a fresh process, several times; the median wall time is printed with its ratio to
the baseline (``python -c pass``, the same interpreter), beside the median CPU time (user +
system), which other processes on a busy machine disturb less than the wall time. The commands work on small files: a
three-conversation ChatGPT part and the envelope converted from it, written to a temporary folder;
``report`` also works on the bundled sample export (110 messages), and four commands are given a file
that does not exist, which they should say before importing anything heavy.
Also printed for each case: which of the heavy modules (pandas, pyarrow, numpy, matplotlib,
jsonschema) the process imported.

The probes are run with ``python -c``, which imports the package from the current folder first, then
from PYTHONPATH: to time another tree (say a checkout of an older commit), run this script from a folder
outside both, with PYTHONPATH set to that tree.

Example:
  python benchmarks/startup.py            # 7 runs per case
  python benchmarks/startup.py --runs 15
  python benchmarks/startup.py --only report topics missing   # the cases whose names hold these words
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("pandas", "pyarrow", "numpy", "matplotlib", "jsonschema", "sklearn", "tantivy")

# Runs the command in-process, then prints which heavy modules were imported on the way.
_PROBE = (
    "import sys\n"
    "argv = sys.argv[1:]\n"
    "try:\n"
    "    if argv:\n"
    "        from memvelope_tools.cli import main\n"
    "        main(argv)\n"
    "    else:\n"
    "        import memvelope_tools\n"
    "except SystemExit:\n"
    "    pass\n"
    f"print('heavy:', ' '.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n"
)


def _small_export(folder: Path) -> tuple[Path, Path]:
    """A three-conversation ChatGPT part and its envelope."""
    conversations = [
        {
            "id": f"c{i}",
            "title": f"Conversation {i}",
            "create_time": 1_700_000_000 + i,
            "update_time": 1_700_000_100 + i,
            "mapping": {
                "a": {
                    "id": "a",
                    "message": {
                        "author": {"role": "user"},
                        "create_time": 1_700_000_000 + i,
                        "content": {"content_type": "text", "parts": ["Hello there"]},
                    },
                    "parent": None,
                    "children": ["b"],
                },
                "b": {
                    "id": "b",
                    "message": {
                        "author": {"role": "assistant"},
                        "create_time": 1_700_000_050 + i,
                        "content": {"content_type": "text", "parts": ["Hi!"]},
                    },
                    "parent": "a",
                    "children": [],
                },
            },
            "current_node": "b",
        }
        for i in range(3)
    ]
    part = folder / "conversations.json"
    part.write_text(json.dumps(conversations), encoding="utf-8")
    envelope = folder / "small.mve.json"
    subprocess.run([sys.executable, "-m", "memvelope_tools", "convert", str(part), "-o", str(envelope)], check=True)
    return part, envelope


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(argv: list[str], runs: int) -> tuple[float, float, str]:
    """Median wall time, median CPU time (user + system: less disturbed by other processes), heavy modules."""
    times, cpu = [], []
    heavy = ""
    for _ in range(runs):
        started, cpu_before = time.perf_counter(), _cpu()
        done = subprocess.run(argv, capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        cpu.append(_cpu() - cpu_before)
        said = [line for line in done.stderr.splitlines() if line.startswith("heavy:")]
        heavy = said[-1].removeprefix("heavy:").strip() if said else heavy
    return statistics.median(times), statistics.median(cpu), heavy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="runs per case (default %(default)s)")
    parser.add_argument("--only", nargs="+", metavar="WORD", help="run only the cases whose names hold a WORD")
    args = parser.parse_args()
    import memvelope_tools

    sample = str(Path(memvelope_tools.__file__).parent / "samples" / "chatgpt-export.zip")
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        part, envelope = _small_export(Path(tmp))
        out = str(Path(tmp) / "out.mve.json")
        cases: list[tuple[str, list[str]]] = [
            ("python -c pass", [py, "-c", "pass"]),
            ("import memvelope_tools", [py, "-c", _PROBE]),
            ("memvelope --help", [py, "-c", _PROBE, "--help"]),
            ("memvelope convert (3 conversations)", [py, "-c", _PROBE, "convert", str(part), "-o", out]),
            ("memvelope doctor (3 conversations)", [py, "-c", _PROBE, "doctor", str(part)]),
            ("memvelope validate (3 conversations)", [py, "-c", _PROBE, "validate", str(envelope)]),
            ("memvelope report (bundled sample)", [py, "-c", _PROBE, "report", sample, "-o", f"{tmp}/r.html"]),
            ("memvelope topics (3 conversations)", [py, "-c", _PROBE, "topics", str(envelope)]),
            ("memvelope report (missing file)", [py, "-c", _PROBE, "report", f"{tmp}/no.json", "-o", f"{tmp}/r.html"]),
            ("memvelope topics (missing file)", [py, "-c", _PROBE, "topics", f"{tmp}/no.json"]),
            ("memvelope search (missing file)", [py, "-c", _PROBE, "search", f"{tmp}/no.json", "hello"]),
            ("memvelope parquet (missing file)", [py, "-c", _PROBE, "parquet", f"{tmp}/no.json", "-o", f"{tmp}/pq"]),
        ]
        if args.only:
            cases = cases[:1] + [c for c in cases[1:] if any(word in c[0] for word in args.only)]
        baseline: tuple[float, float] | None = None
        print(f"{sys.version.split()[0]} · median of {args.runs} runs · the machine may be shared: figures are noisy")
        print(f"{'case':40} {'wall':>9} {'x pass':>7} {'cpu':>9} {'x pass':>7}  heavy modules imported")
        for name, argv in cases:
            wall, cpu, heavy = _time(argv, args.runs)
            base_wall, base_cpu = baseline = baseline or (wall, cpu)
            print(
                f"{name:40} {wall * 1000:6.0f} ms {wall / base_wall:6.1f}x {cpu * 1000:6.0f} ms "
                f"{cpu / base_cpu:6.1f}x  {heavy or '-'}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
