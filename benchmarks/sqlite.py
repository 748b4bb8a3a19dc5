"""Benchmark: ``to_sqlite`` against ``to_parquet`` of the same envelope file, time and peak memory.

Both read the input by the same route (a stream of batches, the messages waiting in a file of Arrow
record batches beside the output); ``to_sqlite`` then inserts them a batch at a time and builds the indexes
and the full-text index. Builds a synthetic, seeded envelope (``benchmarks/frames.py``'s) of ``--messages``
messages, writes it to a temporary file, and runs each writer in a fresh process, one of each per round for
``--repeat`` rounds, printing the best of each: rows/s (messages) and peak memory (peak RSS minus the RSS
after imports) against the file size, the output's size, and the ratio of the peaks (target: ``to_sqlite``
at most 1.25x ``to_parquet``: writing SQLite holds one batch of rows as Python objects at a time).

Usage: ``python benchmarks/sqlite.py [--messages 300000] [--seed 7] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from frames import _peak_rss_bytes, _rss_bytes, build_envelope  # noqa: E402

TARGET = 1.25


def child(writer: str, path: str, out: str) -> None:
    """Run in a fresh process: time one writer on ``path`` and report its peak memory as JSON."""
    import pandas  # noqa: F401 - imports are part of the baseline, not of the load
    import pyarrow  # noqa: F401
    import sqlite_utils  # noqa: F401

    from memvelope_tools._sqlite import to_sqlite
    from memvelope_tools._tables import to_parquet

    gc.collect()
    base = _rss_bytes()
    start = time.perf_counter()
    if writer == "sqlite":
        rows = to_sqlite(path, out, progress=False)["messages"]
        size = os.path.getsize(out)
    else:
        import pyarrow.parquet as pq

        written = to_parquet(path, out, progress=False)
        rows = pq.ParquetFile(written["messages"]).metadata.num_rows
        size = sum(os.path.getsize(p) for p in written.values())
    seconds = time.perf_counter() - start
    print(json.dumps({"rows": rows, "seconds": seconds, "peak_extra": _peak_rss_bytes() - base, "size": size}))


def _run(writer: str, path: str, out: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, __file__, "--child", writer, path, out], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode:
        raise SystemExit(f"{writer} failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=300_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", nargs=3, metavar=("WRITER", "PATH", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "synthetic.mve.json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(build_envelope(args.messages, args.seed, 0.01), fh, ensure_ascii=False, indent=2)
        file_size = os.path.getsize(path)
        runs: dict[str, list[dict[str, float]]] = {"sqlite": [], "parquet": []}
        for round_ in range(args.repeat):
            for writer in runs:
                out = os.path.join(work, f"{writer}-{round_}" + (".db" if writer == "sqlite" else ""))
                runs[writer].append(_run(writer, path, out))
    print(f"envelope: {args.messages:,} messages, {file_size / 1e6:,.1f} MB; best of {args.repeat}")
    peaks = {}
    for writer, results in runs.items():
        best = min(results, key=lambda r: r["seconds"])
        peaks[writer] = min(r["peak_extra"] for r in results)
        print(
            f"to_{writer:<8} {best['rows'] / best['seconds']:>10,.0f} messages/s, peak memory "
            f"{peaks[writer] / 1e6:>8,.0f} MB = {peaks[writer] / file_size:.2f}x the file, "
            f"output {best['size'] / 1e6:,.1f} MB"
        )
    ratio = peaks["sqlite"] / peaks["parquet"]
    verdict = "met" if ratio <= TARGET else "NOT met"
    print(f"peak memory to_sqlite / to_parquet: {ratio:.2f}x (target: at most {TARGET}x: {verdict})")


if __name__ == "__main__":
    main()
