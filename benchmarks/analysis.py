"""Every command that reads an export, against converting it: time and peak memory of ``report``, ``topics``,
``parquet``, ``search``, ``doctor``, ``memory``, ``inventory``, ``history add`` and ``sqlite``.

Generates (or reuses) a seeded ChatGPT export with themes (``generate.py --themes``) of ``--size`` and zips
it as a download is zipped, then runs each command in a fresh process, timed from outside (interpreter start and imports
included), fastest of ``--repeat`` runs, interleaved so that each sees the same load, each writing into a
folder of its own that is removed once it is measured:

* ``convert``: ``memvelope convert EXPORT.zip -o OUT -q`` (the baseline);
* ``report``: ``memvelope report EXPORT.zip -o OUT.html -q``;
* ``topics``: ``memvelope topics EXPORT.zip`` (its output thrown away);
* ``parquet``: ``memvelope parquet EXPORT.zip -o OUT/ -q``;
* ``search``: ``memvelope search EXPORT.zip QUERY`` (a word most messages hold; its output thrown away);
* ``doctor``: ``memvelope doctor EXPORT.zip`` (its output thrown away);
* ``memory``: ``memvelope memory EXPORT.zip -q`` (its output thrown away);
* ``inventory``: ``memvelope inventory EXPORT.zip -q`` (its output thrown away);
* ``history``: ``memvelope history add EXPORT.zip --to OUT/ -q``, into a new folder each time;
* ``sqlite``: ``memvelope sqlite EXPORT.zip -o OUT.db -q``.

CPU time is the command's and that of the processes it started (user and system), the steadier figure on
a machine loaded by other work. Peak memory is the largest sum of the resident memory of the process and
every process it started, sampled every 20 ms (with psutil), or, without psutil, the largest resident memory
of any one of them. It prints one table: wall time, CPU time and peak memory, each as a ratio (times to
converting's, memory to the export's JSON), then each command's targets: ``report`` and ``topics`` within
3x converting's time, ``search`` and ``doctor`` within 2x, ``parquet`` within 1.5x, and for every command
peak memory at most 1.5x the export's JSON. ``--only`` measures some of them (with ``convert`` always).

``--growth`` also measures every command on an export ten times smaller, to show how peak memory grows
with the number of conversations (the target: less than 2x for 10x the conversations).

Examples:
  python benchmarks/analysis.py                         # a 200 MB export
  python benchmarks/analysis.py --size 1GB --repeat 1
  python benchmarks/analysis.py --growth --repeat 1
  python benchmarks/analysis.py --only search doctor --repeat 1
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import generate, parse_size  # noqa: E402

MEASURES = ("convert", "report", "topics", "parquet", "search", "doctor", "memory", "inventory", "history", "sqlite")
#: Each measure's time at most, as a multiple of converting's (where the issue sets one).
TARGET_TIME = {"report": 3.0, "topics": 3.0, "parquet": 1.5, "search": 2.0, "doctor": 2.0}
QUERY = "the"
#: Every measure's peak memory at most, as a multiple of the export's JSON.
TARGET_MEMORY = 1.5
#: Peak memory on ten times the conversations at most, as a multiple of the peak on the export ten times smaller.
TARGET_GROWTH = 2.0


def export_zip(size_text: str, folder: Path | None) -> tuple[Path, int]:
    """The zipped generated export of ``size_text`` (made once, then reused), and the size of its JSON."""
    where = folder or Path(tempfile.gettempdir()) / f"memvelope-bench-analysis-{size_text}"
    where.mkdir(parents=True, exist_ok=True)
    zipped = where / "chatgpt-export.zip"
    if not zipped.is_file():
        print(f"generating a {size_text} ChatGPT export in {where} ...", flush=True)
        parts = generate(where / "json", "chatgpt", parse_size(size_text), seed=0, themes=True)
        partial = zipped.with_suffix(".partial")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
            for part in parts:
                archive.write(part, part.name)
        partial.rename(zipped)
    with zipfile.ZipFile(zipped) as archive:
        return zipped, sum(i.file_size for i in archive.infolist() if i.filename.endswith(".json"))


def command(what: str, export: Path, out: Path) -> list[str]:
    """The command line of measure ``what``, writing into the folder ``out``."""
    base = [sys.executable, "-m", "memvelope_tools"]
    given = str(export)
    lines = {
        "convert": ["convert", given, "-o", str(out / "export.mve.json"), "-q"],
        "report": ["report", given, "-o", str(out / "report.html"), "-q"],
        "topics": ["topics", given],
        "parquet": ["parquet", given, "-o", str(out / "parquet"), "-q"],
        "search": ["search", given, QUERY],
        "doctor": ["doctor", given],
        "memory": ["memory", given, "-q"],
        "inventory": ["inventory", given, "-q"],
        "history": ["history", "add", given, "--to", str(out / "history"), "-q"],
        "sqlite": ["sqlite", given, "-o", str(out / "export.db"), "-q"],
    }
    return [*base, *lines[what]]


def measure(argv: list[str]) -> dict[str, Any]:
    """Wall time and peak memory (MB) of ``argv`` run to its end in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    try:
        import psutil
    except ImportError:
        psutil = None
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    peak = 0
    if psutil is not None:
        proc = psutil.Process(child.pid)
        while child.poll() is None:
            total = 0
            with contextlib.suppress(psutil.Error):
                for p in [proc, *proc.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):  # a process that ended meanwhile
                        total += p.memory_info().rss
            peak = max(peak, total)
            time.sleep(0.02)
    _, stderr = child.communicate()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command's and its own children's, once ended
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if child.returncode != 0:
        last = stderr.decode(errors="replace").strip().splitlines()[-1:] or [str(child.returncode)]
        raise SystemExit(f"{' '.join(argv[3:6])} failed: {last[0]}")
    if psutil is None:
        peak = after.ru_maxrss * 1024
    return {"wall": wall, "cpu": cpu, "mb": peak / 1e6}


def run_all(export: Path, measures: tuple[str, ...], repeat: int) -> tuple[dict[str, dict[str, Any]], list[float]]:
    """The fastest run of each measure, and the load averages seen meanwhile."""
    runs: dict[str, list[dict[str, Any]]] = {what: [] for what in measures}
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            for what in measures:
                with tempfile.TemporaryDirectory(dir=tmp) as out:  # a new folder each time: history adds to none
                    runs[what].append(measure(command(what, export, Path(out))))
            load.append(os.getloadavg()[0])
    return {what: min(found, key=lambda r: r["wall"]) for what, found in runs.items()}, load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="200MB", help="size of the export's JSON (default: %(default)s)")
    parser.add_argument("--folder", type=Path, help="where the export is generated (default: the temp dir)")
    parser.add_argument("--repeat", type=int, default=2, help="runs per measure, the fastest counts")
    parser.add_argument("--growth", action="store_true", help="also measure on an export ten times smaller")
    parser.add_argument("--only", nargs="+", choices=MEASURES[1:], help="measure only these (and convert)")
    args = parser.parse_args()
    export, size = export_zip(args.size, args.folder)
    mb = size / 1e6
    measures = MEASURES if not args.only else ("convert", *(m for m in MEASURES if m in args.only))
    results, load = run_all(export, measures, args.repeat)
    smaller: dict[str, dict[str, Any]] = {}
    if args.growth:
        small_size = f"{parse_size(args.size) / 10 / 1e6:g}MB"
        small, small_json = export_zip(small_size, None if args.folder is None else args.folder / "small")
        smaller, more_load = run_all(small, measures, args.repeat)
        load += more_load
    base = results["convert"]["wall"]
    cpu_base = results["convert"]["cpu"]
    print(f"export: {export} ({export.stat().st_size / 1e6:,.0f} MB zipped, {mb:,.0f} MB of JSON)")
    if smaller:
        print(f"smaller export: {small} ({small_json / 1e6:,.1f} MB of JSON)")
    heads = ["wall s", "x convert", "CPU s", "x convert", "peak MB", "x JSON"]
    widths = [8, 10, 7, 10, 9, 7]
    if smaller:
        heads += ["peak MB 1/10", "growth"]
        widths += [13, 7]
    print(f"{'measure':<10} " + " ".join(f"{h:>{w}}" for h, w in zip(heads, widths, strict=True)))
    for what, r in results.items():
        line = (
            f"{what:<10} {r['wall']:>8.2f} {r['wall'] / base:>10.2f} {r['cpu']:>7.2f} {r['cpu'] / cpu_base:>10.2f} "
            f"{r['mb']:>9.0f} {r['mb'] / mb:>7.2f}"
        )
        if smaller:
            line += f" {smaller[what]['mb']:>13.0f} {r['mb'] / smaller[what]['mb']:>7.2f}"
        print(line)
    for what, r in results.items():
        if what == "convert":
            continue
        said = []
        if what in TARGET_TIME:
            ratio = r["wall"] / base
            said.append(
                f"within {TARGET_TIME[what]:g}x converting ({ratio:.2f}, {_verdict(ratio <= TARGET_TIME[what])})"
            )
        ratio = r["mb"] / mb
        said.append(f"peak at most {TARGET_MEMORY:g}x the JSON ({ratio:.2f}, {_verdict(ratio <= TARGET_MEMORY)})")
        if smaller:
            grown = r["mb"] / smaller[what]["mb"]
            said.append(
                f"growth: less than {TARGET_GROWTH:g}x for 10x the conversations ({grown:.2f}, "
                f"{_verdict(grown < TARGET_GROWTH)})"
            )
        print(f"target {what}: " + "; ".join(said))
    print(f"load average (1 min) while measuring: {min(load):.1f}-{max(load):.1f}, on {os.cpu_count()} cores")
    return 0


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


if __name__ == "__main__":
    raise SystemExit(main())
