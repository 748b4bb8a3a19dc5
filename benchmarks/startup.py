"""Start-up time of the package and of the ``memvelope`` command, beside ``python -c pass``.

Each case runs in a fresh process, several times; the median wall time is printed with its ratio to
the baseline (``python -c pass``, the same interpreter), beside the median CPU time (user +
system), which other processes on a busy machine disturb less than the wall time. The commands work on small files: a
three-conversation ChatGPT part and the envelope converted from it, written to a temporary folder;
``report`` also works on the bundled sample export (110 messages), and four commands are given a file
that does not exist, which they should say before importing anything heavy.
Also printed for each case: which of the heavy modules (pandas, pyarrow, numpy, matplotlib,
jsonschema, scipy, scikit-learn, tantivy) the process imported.

With ``--base TREE`` every case also runs with PYTHONPATH set to TREE (say a worktree of an older
commit, its C helpers built), alternating with this tree run for run so that both see the same load,
and the table adds the base's figures and this tree's ratio to them.

The probes are run with ``python -c``, which imports the package from the current folder first, then
from PYTHONPATH: to time another tree (say a checkout of an older commit), run this script from a folder
outside both, with PYTHONPATH set to that tree.

Example:
  python benchmarks/startup.py            # 7 runs per case
  python benchmarks/startup.py --runs 15
  python benchmarks/startup.py --only report topics missing   # the cases whose names hold these words
  cd /tmp && PYTHONPATH=/path/to/tree python /path/to/tree/benchmarks/startup.py --base /path/to/old-tree
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("pandas", "pyarrow", "numpy", "matplotlib", "jsonschema", "scipy", "sklearn", "tantivy")

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


Timing = tuple[float, float, str]  # median wall time, median CPU time, heavy modules imported


def _time(argv: list[str], runs: int, trees: list[str | None]) -> list[Timing]:
    """For each tree (a PYTHONPATH; None: this process's): median wall time, median CPU time (user +
    system: less disturbed by other processes) and the heavy modules imported. The trees take turns."""
    times: list[list[float]] = [[] for _ in trees]
    cpu: list[list[float]] = [[] for _ in trees]
    heavy = ["" for _ in trees]
    for _ in range(runs):
        for i, tree in enumerate(trees):
            env = None if tree is None else {**os.environ, "PYTHONPATH": tree}
            started, cpu_before = time.perf_counter(), _cpu()
            done = subprocess.run(argv, capture_output=True, text=True, env=env)
            times[i].append(time.perf_counter() - started)
            cpu[i].append(_cpu() - cpu_before)
            said = [line for line in done.stderr.splitlines() if line.startswith("heavy:")]
            heavy[i] = said[-1].removeprefix("heavy:").strip() if said else heavy[i]
    return [(statistics.median(w), statistics.median(c), h) for w, c, h in zip(times, cpu, heavy, strict=True)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="runs per case (default %(default)s)")
    parser.add_argument("--only", nargs="+", metavar="WORD", help="run only the cases whose names hold a WORD")
    parser.add_argument("--base", metavar="TREE", help="also time TREE (a PYTHONPATH), turn about with this one")
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
        trees: list[str | None] = [None] if args.base is None else [args.base, None]
        baseline: list[tuple[float, float]] = []
        print(f"{sys.version.split()[0]} · median of {args.runs} runs · the machine may be shared: figures are noisy")
        print("wall: elapsed time; cpu: user + system time of the child; x pass: ratio to `python -c pass`")
        head = f"{'wall':>9} {'x pass':>7} {'cpu':>9} {'x pass':>7}"
        if args.base:
            print(f"base: {args.base}; after: {os.environ.get('PYTHONPATH') or 'this interpreter'}")
            print(f"{'':38} {'base':^35} | {'after':^35} | after/base")
            head = f"{head} | {head} | {'wall':>5} {'cpu':>5}"
        print(f"{'case':38} {head}  heavy modules imported (after)")
        for name, argv in cases:
            timings = _time(argv, args.runs, trees)
            baseline = baseline or [(wall, cpu) for wall, cpu, _ in timings]
            cells = [
                f"{wall * 1000:6.0f} ms {wall / pass_wall:6.1f}x {cpu * 1000:6.0f} ms {cpu / pass_cpu:6.1f}x"
                for (wall, cpu, _), (pass_wall, pass_cpu) in zip(timings, baseline, strict=True)
            ]
            if args.base:
                (b_wall, b_cpu, _), (a_wall, a_cpu, _) = timings
                cells.append(f"{a_wall / b_wall:5.2f} {a_cpu / b_cpu:5.2f}")
            print(f"{name:38} {' | '.join(cells)}  {timings[-1][2] or '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
