"""Every node of a generated export (``mv.nodes_frame``) and its inventory, against converting it.

Generates (or reuses) a seeded ChatGPT export with branches, tool calls, reasoning, memory writes and
snapshots (``generate.py --memory``), then runs, each in a fresh process and the fastest of ``--repeat`` runs
(interleaved, so every measure sees the same load), timed from outside (interpreter start and imports
included):

* ``convert``: ``memvelope convert PARTS -o OUT -q`` (the baseline: one worker per core, streamed);
* ``nodes_frame``: ``mv.nodes_frame(PARTS)``, the whole pandas frame (worker processes as convert chooses);
* ``nodes_frame_1``: the same frame read in one process, for comparison;
* ``inventory``: ``memvelope inventory PARTS --json -q``, the counts only.

It prints wall time, CPU time (the process and its workers together: the steadier figure on a loaded
machine), peak RSS (the largest of the process and its workers), MB/s and the ratios to the baseline and to
the export's size, with the load average, and the targets: ``nodes_frame`` at most 1.5x
``convert``'s time with a peak of at most 1.5x the export's JSON size, ``inventory`` at most 1.2x ``convert``.

Examples:
  python benchmarks/nodes.py                    # a 200 MB export
  python benchmarks/nodes.py --size 20MB --repeat 1
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import generate, parse_size  # noqa: E402

_PROBE = """
import json, resource, sys
what, parts, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
if what == "convert":
    from memvelope_tools.cli import main
    assert main(["convert", *parts, "-o", out, "-q"]) == 0
    rows = None
elif what == "nodes_frame":
    import memvelope_tools as mv
    rows = len(mv.nodes_frame(parts, progress=False))
elif what == "nodes_frame_1":
    from memvelope_tools._frames.columns import NODE_COLUMNS, to_pandas
    from memvelope_tools._whole.export import export_input
    from memvelope_tools._whole.nodes import nodes_table
    table, _ = nodes_table(export_input(parts, "benchmark"), workers=1, progress=False)
    rows = len(to_pandas(table, NODE_COLUMNS, None))
else:
    import io, contextlib
    from memvelope_tools.cli import main
    with contextlib.redirect_stdout(io.StringIO()) as said:
        assert main(["inventory", *parts, "--json", "-q"]) == 0
    rows = json.loads(said.getvalue())["nodes"]
me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime
print(json.dumps({"rss_mb": max(me.ru_maxrss, children.ru_maxrss) / 1024, "rows": rows, "cpu": cpu}))
"""

MEASURES = ("convert", "nodes_frame", "nodes_frame_1", "inventory")


def _run(what: str, parts: list[str], out: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, what, json.dumps(parts), out], capture_output=True, text=True, env=env
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{what} failed: {done.stderr.strip().splitlines()[-1] if done.stderr else done.returncode}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    found["wall"] = wall
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="200MB", help="size of the generated export (default: %(default)s)")
    parser.add_argument("--folder", help="where the export is generated (default: a folder in the temp dir)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measure, the fastest counts")
    args = parser.parse_args()
    size = parse_size(args.size)
    folder = Path(args.folder or Path(tempfile.gettempdir()) / f"memvelope-bench-nodes-{args.size}")
    parts = sorted(folder.glob("conversations*.json"))
    if not parts:
        print(f"generating a {args.size} ChatGPT export with branches and tools in {folder} ...", flush=True)
        parts = generate(folder, "chatgpt", size, seed=0, memory=True)
    total = sum(p.stat().st_size for p in parts)
    names = [str(p) for p in parts]
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "envelope.mve.json")
        runs: dict[str, list[dict[str, Any]]] = {what: [] for what in MEASURES}
        load = [os.getloadavg()[0]]
        for _ in range(args.repeat):  # interleaved, so that each measure sees the same load
            for what in MEASURES:
                runs[what].append(_run(what, names, out))
            load.append(os.getloadavg()[0])
        results = {what: min(found, key=lambda r: r["wall"]) for what, found in runs.items()}
    mb = total / 1e6
    base = results["convert"]["wall"]
    print(f"export: {mb:,.0f} MB in {len(parts)} part(s), {results['nodes_frame']['rows']:,} nodes")
    cpu = min(r["cpu"] for r in runs["convert"])
    print(
        f"{'measure':<14} {'wall s':>8} {'MB/s':>8} {'CPU s':>7} {'peak RSS MB':>12} {'time / convert':>15} "
        f"{'CPU / convert':>14} {'peak / export':>14}"
    )
    for what, r in results.items():
        least = min(x["cpu"] for x in runs[what])
        print(
            f"{what:<14} {r['wall']:>8.2f} {mb / r['wall']:>8.1f} {least:>7.2f} {r['rss_mb']:>12.0f} "
            f"{r['wall'] / base:>15.2f} {least / cpu:>14.2f} {r['rss_mb'] * 1024 * 1024 / total:>14.2f}"
        )
    print(f"load average (1 min) while measuring: {min(load):.1f}-{max(load):.1f}, on {os.cpu_count()} cores")
    frame = results["nodes_frame"]
    checks = [
        ("nodes_frame time <= 1.5x convert", frame["wall"] / base, 1.5),
        ("nodes_frame peak <= 1.5x the export's JSON", frame["rss_mb"] * 1024 * 1024 / total, 1.5),
        ("inventory time <= 1.2x convert", results["inventory"]["wall"] / base, 1.2),
    ]
    for what, ratio, limit in checks:
        print(f"target: {what}: {ratio:.2f}, {'met' if ratio <= limit else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
