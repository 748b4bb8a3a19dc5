"""Conversion speed and memory on generated exports, against the floor and the Node.js reference core.

For each provider it generates (or reuses) a seeded export, then measures, each in a fresh process and
the fastest of ``--repeat`` runs: ours (``memvelope convert --no-stream``: the envelope's bytes held
in memory), ours streaming (``--stream``: bounded memory), both with one worker process per core, the
reference path without orjson (once), the floor (``orjson.loads`` of the parts, the stdlib parser
where orjson refuses one, plus writing as many bytes as the envelope has), the orjson-only floor (as
if orjson took lone surrogates: one core), and Node's ``JSON.parse`` of the parts +
``JSON.stringify(envelope, null, 2)``. It checks that the plain, fast and streaming outputs (and
Node's stringify) are byte-identical, and prints wall time, peak RSS (the converting process's VmHWM,
and the largest worker's), MB/s, the ratios, and each target with its figure, baseline and ratio.

Examples:
  python benchmarks/convert.py                            # 200 MB ChatGPT and Claude exports, 1 and 4 parts
  python benchmarks/convert.py --size 2GB --only stream   # streaming memory on a 2 GB export
  python benchmarks/convert.py --rss-sizes 50MB,200MB,500MB --only stream
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import parse_size  # noqa: E402

MEASURES = ("fast", "stream", "plain", "floor", "orjson-floor", "node")


# ---- one measurement, run in its own process ---------------------------------------------------------


def _measure(what: str, parts: list[str], out: str, envelope_bytes: int) -> dict[str, Any]:
    start, start_cpu = time.perf_counter(), _cpu()
    if what in ("fast", "stream"):
        from memvelope_tools.cli import main

        flag = "--stream" if what == "stream" else "--no-stream"
        status = main(["convert", *parts, "-o", out, flag, "-q"])
        assert status == 0
        wall = time.perf_counter() - start
        workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest worker's peak
        return {"wall": wall, "rss_mb": _peak_mb(), "workers_rss_mb": workers, "cpu": _cpu() - start_cpu}
    elif what == "plain":
        from memvelope_tools._convert import convert, dumps_canonical

        data = dumps_canonical(convert(*parts, fast=False, progress=False))
        Path(out).write_bytes(data)
    elif what in ("floor", "orjson-floor"):
        import re

        import orjson

        surrogate_escape = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
        elapsed = 0.0
        untimed_cpu = _cpu()  # the start-up and imports, and below the surrogate swap
        for part in parts:
            t0 = time.perf_counter()
            data = Path(part).read_bytes()
            if what == "orjson-floor":  # untimed: as if orjson took lone surrogates
                elapsed += time.perf_counter() - t0
                c0 = _cpu()
                data = surrogate_escape.sub(rb"\\u0020", data)
                untimed_cpu += _cpu() - c0
                t0 = time.perf_counter()
            try:
                value = orjson.loads(data)
            except orjson.JSONDecodeError:
                value = json.loads(data)
            del data, value
            elapsed += time.perf_counter() - t0
        t0 = time.perf_counter()
        with open(out, "wb") as fh:
            block = b"x" * (1 << 20)
            left = envelope_bytes
            while left > 0:
                fh.write(block[: min(left, len(block))])
                left -= len(block)
        elapsed += time.perf_counter() - t0
        return {"wall": elapsed, "rss_mb": _peak_mb(), "cpu": _cpu() - untimed_cpu}
    else:
        raise ValueError(what)
    wall = time.perf_counter() - start
    return {"wall": wall, "rss_mb": _peak_mb(), "cpu": _cpu() - start_cpu}


def _cpu() -> float:
    """CPU seconds of this process and of its finished child processes (the workers), user + system;
    measures report what they spent from their start (the floors: in their timed sections only)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _peak_mb() -> float:
    """This process's peak RSS. VmHWM, not ru_maxrss: Linux carries the parent's ru_maxrss through fork
    and exec, so a child would report at least its parent's peak."""
    try:
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest run (the machine is shared: the least disturbed run is the one to compare), with the
    highest peak RSS of them all."""
    if not runs or not runs[0]:
        return {}
    best = dict(min(runs, key=lambda r: r["wall"]))
    for key in ("rss_mb", "workers_rss_mb"):
        if key in best:
            best[key] = max(r[key] for r in runs)
    return best


def _once(what: str, parts: list[str], out: str, envelope_bytes: int) -> dict[str, float]:
    if what == "node":
        node = shutil.which("node")
        if node is None:
            return {}
        result = subprocess.run(
            [node, str(Path(__file__).parent / "node_floor.mjs"), out, *parts],
            capture_output=True,
            text=True,
            check=True,
        )
        figures = json.loads(result.stdout)
        return {
            "wall": figures["total_ms"] / 1000,
            "rss_mb": figures["max_rss_kb"] / 1024,
            "parse": figures["parse_ms"] / 1000,
            "stringify": figures["stringify_ms"] / 1000,
            "identical": figures["identical"],
        }
    cmd = [sys.executable, __file__, "--measure", what, "--out", out, "--envelope-bytes", str(envelope_bytes), *parts]
    result = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if result.returncode:
        raise SystemExit(f"{what} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


# ---- the report ---------------------------------------------------------------------------------------


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _export(workdir: Path, provider: str, size: int, shards: int, seed: int) -> list[str]:
    from generate import generate

    folder = workdir / f"{provider}-{size}-{shards}-{seed}"
    done = folder / ".complete"
    if not done.exists():
        shutil.rmtree(folder, ignore_errors=True)
        t0 = time.perf_counter()
        generate(folder, provider, size, seed=seed, shards=shards)
        done.write_text("ok")
        print(f"  generated {folder} in {time.perf_counter() - t0:.1f} s", flush=True)
    return [str(p) for p in sorted(folder.glob("conversations*.json"))]


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    node = shutil.which("node")
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip() if node else "-"
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3
    return (
        f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB RAM, Python {platform.python_version()}, "
        f"Node {node_version}, {platform.system()} {platform.release()}"
    )


TARGETS = (
    ("wall <= 1.0x Node JSON.parse + JSON.stringify", "wall", "node", 1.0),
    ("wall <= 1.0x single-core orjson floor", "wall", "orjson-floor", 1.0),
)
IN_MEMORY_RSS = 1.5  # peak RSS at most this times the input, converting in memory
BOUNDED_RSS_MB = 300  # peak RSS of any process when streaming, at any size


def run_provider(provider: str, args: argparse.Namespace, workdir: Path, size: int, shards: int) -> dict[str, Any]:
    print(f"\n== {provider}, {size / 1e6:.0f} MB, {shards} part(s)", flush=True)
    parts = _export(workdir, provider, size, shards, args.seed)
    input_bytes = sum(Path(p).stat().st_size for p in parts)
    outputs = {what: workdir / f"out-{provider}-{what}.mve.json" for what in ("fast", "stream", "plain")}
    wanted = args.only.split(",") if args.only else list(MEASURES)
    runs: dict[str, list[dict[str, Any]]] = {what: [] for what in MEASURES if what in wanted}
    reference: Path | None = None
    envelope_bytes = 0
    for round_ in range(args.repeat):  # round by round, so a busy spell disturbs every measure alike
        for what in runs:
            if what in ("fast", "stream", "plain"):
                if what != "plain" or not round_:
                    runs[what].append(_once(what, parts, str(outputs[what]), 0))
                    reference = reference or outputs[what]
                    envelope_bytes = reference.stat().st_size
            elif reference is not None and what in ("floor", "orjson-floor"):
                runs[what].append(_once(what, parts, str(workdir / "out-floor.bin"), envelope_bytes))
            elif reference is not None:
                runs[what].append(_once(what, parts, str(reference), envelope_bytes))
    results = {what: _best(r) for what, r in runs.items() if r}
    print(f"  input {input_bytes / 1e6:.1f} MB, envelope {envelope_bytes / 1e6:.1f} MB; best of {args.repeat} runs")
    print(f"  {'':14}{'wall s':>9}{'CPU s':>8}{'MB/s':>9}{'peak RSS MB':>13}{'RSS/input':>11}{'worker RSS MB':>15}")
    for what, r in results.items():
        if r:
            workers = f"{r['workers_rss_mb']:15.0f}" if r.get("workers_rss_mb") else f"{'-':>15}"
            cpu = f"{r['cpu']:8.2f}" if "cpu" in r else f"{'-':>8}"
            print(
                f"  {what:14}{r['wall']:9.2f}{cpu}{input_bytes / 1e6 / r['wall']:9.1f}{r['rss_mb']:13.0f}"
                f"{r['rss_mb'] * 2**20 / input_bytes:11.2f}{workers}"
            )
    if results.get("node"):
        n = results["node"]
        print(
            f"  node: JSON.parse {n['parse']:.2f} s + JSON.stringify {n['stringify']:.2f} s; "
            f"stringify bytes identical to ours: {n['identical']}"
        )
    for ours in ("fast", "stream"):
        for base in ("floor", "orjson-floor", "node"):
            if results.get(ours) and results.get(base):
                print(f"  ratio {ours}/{base}: {results[ours]['wall'] / results[base]['wall']:.2f}")
    digests = {what: _digest(path) for what, path in outputs.items() if what in results}
    same = len(set(digests.values())) <= 1
    print(f"  bytes identical ({', '.join(digests)}): {same}")
    if not same:
        raise SystemExit("outputs differ: " + json.dumps(digests))
    rows = _targets(results, input_bytes)
    for row in rows:
        print("  target " + row)
    return {"label": f"{provider}, {shards} part(s)", "rows": rows}


def _targets(results: dict[str, dict[str, Any]], input_bytes: int) -> list[str]:
    """One line per target and path: the figure, the baseline, the ratio, met or missed."""
    rows = []
    for name, key, base, limit in TARGETS:
        for ours in ("stream", "fast"):
            if results.get(ours) and results.get(base):
                ratio = results[ours][key] / results[base][key]
                rows.append(
                    f"{name}: {ours} {results[ours][key]:.2f} s vs {base} {results[base][key]:.2f} s = "
                    f"{ratio:.2f}x {'met' if ratio <= limit else 'MISSED'}"
                )
    if results.get("fast"):
        ratio = results["fast"]["rss_mb"] * 2**20 / input_bytes
        rows.append(
            f"peak RSS in memory <= {IN_MEMORY_RSS}x input: fast {results['fast']['rss_mb']:.0f} MB = "
            f"{ratio:.2f}x input {'met' if ratio <= IN_MEMORY_RSS else 'MISSED'}"
        )
    if results.get("stream"):
        peak = max(results["stream"]["rss_mb"], results["stream"].get("workers_rss_mb", 0))
        rows.append(
            f"peak RSS bounded <= {BOUNDED_RSS_MB} MB: stream {results['stream']['rss_mb']:.0f} MB, largest worker "
            f"{results['stream'].get('workers_rss_mb', 0):.0f} MB {'met' if peak <= BOUNDED_RSS_MB else 'MISSED'}"
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--envelope-bytes", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--provider", default="chatgpt,claude", help="chatgpt, claude or both (default)")
    parser.add_argument("--size", default="200MB", help="export size (default 200MB)")
    parser.add_argument("--rss-sizes", help="comma-separated sizes: repeat the run at each (RSS vs size)")
    parser.add_argument("--shards", default="1,4", help="parts per export, comma-separated (default 1,4)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5, help="rounds of measurements, the fastest kept (default 5)")
    parser.add_argument("--only", help=f"comma-separated subset of {','.join(MEASURES)}")
    parser.add_argument("--workdir", default=os.environ.get("MEMVELOPE_BENCH_DIR", "/tmp/memvelope-bench"))
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(_measure(args.measure, args.parts, args.out, args.envelope_bytes)))
        return 0
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"machine: {_machine()}")
    sizes = [parse_size(s) for s in (args.rss_sizes or args.size).split(",")]
    summary = []
    for size in sizes:
        for shards in (int(n) for n in str(args.shards).split(",")):
            for provider in args.provider.split(","):
                summary.append(run_provider(provider.strip(), args, workdir, size, shards))
    print("\n== targets")
    for entry in summary:
        for row in entry["rows"]:
            print(f"  {entry['label']:20} {row}")
    missed = sum("MISSED" in row for entry in summary for row in entry["rows"])
    print(f"  {missed} missed" if missed else "  all met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
