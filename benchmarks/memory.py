"""What the provider remembered, read from a generated export holding memory writes, against converting it.

Generates (or reuses) a seeded ChatGPT export with memory writes, snapshots and custom instructions
(``generate.py --memory``), then runs, each in a fresh process and the fastest of ``--repeat`` runs
(interleaved, so every measure sees the same load), timed from outside (interpreter start and
imports included):

* ``convert``: ``memvelope convert PARTS -o OUT --no-stream -q`` (the baseline, one worker per core);
* ``memory_frame``: ``mv.memory_frame(PARTS)``, the whole frame;
* ``memory_frame_1``: the same frame read in one process (no worker processes), for comparison;
* ``read_memory``: the items without pandas (what ``memvelope memory`` prints from).

It prints wall time, peak RSS, MB/s, the ratio to the baseline and the load average, with the target:
``memory_frame`` at
least as fast as ``convert`` (ratio <= 1).

Examples:
  python benchmarks/memory.py                    # a 200 MB export
  python benchmarks/memory.py --size 1GB --repeat 1
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
import json, resource, sys, time
what, parts, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
if what == "convert":
    from memvelope_tools.cli import main
    assert main(["convert", *parts, "-o", out, "--no-stream", "-q"]) == 0
    items = None
elif what == "memory_frame":
    import memvelope_tools as mv
    items = len(mv.memory_frame(*parts))
elif what == "memory_frame_1":
    from memvelope_tools._memory.frame import items_frame
    from memvelope_tools._memory.read import read_memory_of
    items = len(items_frame(read_memory_of(parts, None, None, workers=1)))
else:
    from memvelope_tools._memory.read import read_memory
    items = len(read_memory(*parts).items)
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"rss_mb": peak / 1024, "items": items}))
"""


MEASURES = ("convert", "memory_frame", "memory_frame_1", "read_memory")


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
    folder = Path(args.folder or Path(tempfile.gettempdir()) / f"memvelope-bench-memory-{args.size}")
    parts = sorted(folder.glob("conversations*.json"))
    if not parts:
        print(f"generating a {args.size} ChatGPT export with memory writes in {folder} ...", flush=True)
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
    print(f"export: {mb:,.0f} MB in {len(parts)} part(s), {results['memory_frame']['items']:,} remembered items")
    print(f"{'measure':<15} {'wall s':>8} {'MB/s':>8} {'peak RSS MB':>12} {'ratio to convert':>17}")
    for what, r in results.items():
        print(f"{what:<15} {r['wall']:>8.2f} {mb / r['wall']:>8.1f} {r['rss_mb']:>12.0f} {r['wall'] / base:>17.2f}")
    print(f"load average (1 min) while measuring: {min(load):.1f}-{max(load):.1f}, on {os.cpu_count()} cores")
    ratio = results["memory_frame"]["wall"] / base
    verdict = "met" if ratio <= 1 else "NOT met"
    print(f"target: memory_frame at least as fast as convert (ratio <= 1): {ratio:.2f}, {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
