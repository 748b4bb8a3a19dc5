"""Many donations into one partitioned dataset (`memvelope convert-many --parquet`), on a local Dask cluster.

It generates (or reuses) ``--donations`` seeded exports of about ``--size`` each (ChatGPT and Claude by
turns, ``generate.py``), then, each run writing a fresh dataset:

* on a ``LocalCluster`` of 1 and of 2 worker processes (one thread each), the command run as a client
  process of its own (``--scheduler``): wall time, the client's peak RSS, the largest worker's peak RSS,
  donations per second and per second per worker;
* the same with a quarter of the donations, so the client's peak can be compared (it should not grow);
* the same in local worker processes (``-j 2``, no Dask);
* on the 2-worker cluster, a run killed (SIGKILL) once half the donations are finished, then run again:
  how many the second run converted and found unchanged, and its wall time.

Every run's dataset is checked against the first's (the same rows per donation, read by pyarrow.dataset).
The client starts the cluster in this process (so the scheduler is not in the client's memory) and the
command in a child process, its peak taken from the kernel's accounting of the child.

Example: python benchmarks/many.py --donations 200 --size 300KB
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import generate, parse_size  # noqa: E402

_SUMMARY = re.compile(r"memvelope: (\d+) converted, (\d+) unchanged, (\d+) failed")


def donations(folder: Path, count: int, size: int) -> list[Path]:
    """``count`` seeded donations of about ``size`` bytes in ``folder`` (made once, then reused)."""
    made = []
    for i in range(count):
        provider = "chatgpt" if i % 2 == 0 else "claude"
        path = folder / f"d{i:05d}-{provider}.json"
        if not path.is_file():
            where = folder / f".gen-{i}"
            (part,) = generate(where, provider, size, seed=1000 + i)
            part.rename(path)
            shutil.rmtree(where)
        made.append(path)
    return made


def run_client(
    inputs: list[Path], dataset: Path, *, scheduler: str | None, kill_at: int | None = None
) -> dict[str, Any]:
    """Run ``memvelope convert-many`` in a child process; its wall time, peak RSS and summary, or, with
    ``kill_at``, kill it once that many donations are finished."""
    command = [sys.executable, "-m", "memvelope_tools", "convert-many", *map(str, inputs), "--parquet", str(dataset)]
    command += ["--scheduler", scheduler] if scheduler else ["-j", "2"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    child = subprocess.Popen([*command, "-q"], env=env, stderr=subprocess.PIPE, text=True)
    killed = False
    if kill_at is not None:
        while child.poll() is None and len(list(dataset.glob("conversations/source=*"))) < kill_at:
            time.sleep(0.01)
        if child.poll() is None:
            child.send_signal(signal.SIGKILL)
            killed = True
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    err = child.stderr.read() if child.stderr else ""
    found = _SUMMARY.search(err)
    if not killed and (child.returncode != 0 or found is None):
        raise SystemExit(f"convert-many failed ({child.returncode}):\n{err[-2000:]}")
    converted, unchanged, failed = map(int, found.groups()) if found else (0, 0, 0)
    return {
        "wall": wall,
        "client_rss_mb": usage.ru_maxrss / 1024,
        "converted": converted,
        "unchanged": unchanged,
        "failed": failed,
        "killed": killed,
    }


def rows_by_donation(dataset: Path) -> dict[str, int]:
    import pyarrow.dataset as ds

    table = ds.dataset(dataset / "messages", format="parquet", partitioning="hive").to_table(columns=["source"])
    counts = table.group_by("source").aggregate([("source", "count")]).to_pydict()
    return dict(zip(counts["source"], counts["source_count"], strict=True))


def _mb(value: float | None) -> str:
    return "  (in the client's)" if value is None else f"{value:6.0f} MB"


def _worker_peak_mb(client: Any) -> float:
    peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return max(peaks.values())


def _idle(client: Any) -> None:
    """Wait until the cluster runs no task (those of a killed client finish or are dropped)."""
    while any(client.processing().values()):
        time.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--donations", type=int, default=200)
    parser.add_argument("--size", default="300KB", help="about this much per donation (e.g. 300KB, 2MB)")
    parser.add_argument("--workers", default="1,2", help="cluster sizes to run, comma-separated")
    parser.add_argument("--workdir", default="/tmp/memvelope-bench-many")
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    work = Path(args.workdir)
    size = parse_size(args.size)
    start = time.perf_counter()
    inputs = donations(work / f"donations-{args.size}", args.donations, size)
    total_mb = sum(p.stat().st_size for p in inputs) / 1e6
    print(f"{len(inputs)} donations, {total_mb:.1f} MB ({time.perf_counter() - start:.1f} s to generate or find)")
    results: dict[str, Any] = {"donations": len(inputs), "input_mb": round(total_mb, 1), "runs": {}}
    reference: dict[str, int] | None = None

    def record(name: str, figures: dict[str, Any], dataset: Path, workers: int) -> None:
        nonlocal reference
        found = rows_by_donation(dataset)
        if reference is None:
            reference = found
        if found != reference:
            raise SystemExit(f"{name}: the dataset differs from the first run's")
        done = figures["converted"] + figures["unchanged"]
        figures["per_s"] = done / figures["wall"]
        figures["per_s_per_worker"] = figures["per_s"] / workers
        results["runs"][name] = figures
        print(
            f"{name:<34} {figures['wall']:7.1f} s  {figures['per_s']:6.2f} donations/s "
            f"({figures['per_s_per_worker']:5.2f} per worker)  client peak {figures['client_rss_mb']:6.0f} MB  "
            f"worker peak {_mb(figures.get('worker_rss_mb'))}  "
            f"[{figures['converted']} converted, {figures['unchanged']} unchanged, {figures['failed']} failed]"
        )

    for workers in [int(w) for w in args.workers.split(",")]:
        with (
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
            Client(cluster) as client,
        ):
            dataset = work / f"dataset-{workers}w"
            shutil.rmtree(dataset, ignore_errors=True)
            figures = run_client(inputs, dataset, scheduler=cluster.scheduler_address)
            figures["worker_rss_mb"] = _worker_peak_mb(client)
            record(f"dask, {workers} worker(s)", figures, dataset, workers)
            if workers == 2:
                quarter = inputs[: len(inputs) // 4]
                small = work / "dataset-quarter"
                shutil.rmtree(small, ignore_errors=True)
                figures = run_client(quarter, small, scheduler=cluster.scheduler_address)
                figures["per_s"] = figures["converted"] / figures["wall"]
                results["runs"]["dask, 2 workers, a quarter"] = figures
                print(
                    f"{'dask, 2 workers, a quarter':<34} {figures['wall']:7.1f} s  client peak "
                    f"{figures['client_rss_mb']:6.0f} MB ({len(quarter)} donations)"
                )
                resumed = work / "dataset-resumed"
                shutil.rmtree(resumed, ignore_errors=True)
                first = run_client(inputs, resumed, scheduler=cluster.scheduler_address, kill_at=len(inputs) // 2)
                _idle(client)
                finished = len(list(resumed.glob("conversations/source=*")))
                print(f"{'dask, 2 workers, killed':<34} {first['wall']:7.1f} s  ({finished} donations finished)")
                second = run_client(inputs, resumed, scheduler=cluster.scheduler_address)
                second["finished_before"] = finished
                second["killed_after_s"] = first["wall"]
                second["worker_rss_mb"] = _worker_peak_mb(client)
                record("dask, 2 workers, resumed", second, resumed, workers)
    dataset = work / "dataset-processes"
    shutil.rmtree(dataset, ignore_errors=True)
    figures = run_client(inputs, dataset, scheduler=None)
    record("local processes (-j 2)", figures, dataset, 2)
    results["machine"] = (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
