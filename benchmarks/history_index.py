"""Opening the search index a history folder keeps, with every file of it checked first.

Generates (or reuses) a seeded ChatGPT export of ``--size`` with ``generate.py`` and adds it to a
history folder, which indexes it. Then, with the files in the page cache, it measures the median of
``--repeat`` runs of:

* opening the index as a search does (the in-memory cache cleared first): the files of the index
  looked at (``os.lstat``), ``parts.json`` read and its sha256 checked, each part's file compared
  with what was indexed, each rows file memory-mapped, its sha256 checked and its values' ranges,
  the folder's conversations and state read, the order of equal scores worked out, the engine opened;
* of which: checking ``parts.json`` and the parts, and checking the rows files (against reading
  them memory-mapped without a check, which costs next to nothing: the pages are read when used);
* ``memvelope search FOLDER the --limit 1`` in a fresh process, wall seconds.

Usage: ``python benchmarks/history_index.py [--size 100MB] [--work DIR] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import generate, parse_size  # noqa: E402


def _median(runs: list[float]) -> float:
    return statistics.median(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="100MB")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--work", type=Path, help="folder for the export and the history (kept; default: temporary)")
    opts = parser.parse_args()

    import pyarrow as pa

    from memvelope_tools._frames.folders import INDEX_FOLDER
    from memvelope_tools._history_folder import add_to_history
    from memvelope_tools._search import history as search_history
    from memvelope_tools._search import parts as search_parts
    from memvelope_tools._search.cache import clear_cache

    work = opts.work or Path(tempfile.mkdtemp(prefix="memvelope-history-index-"))
    export = work / "export" / "conversations.json"
    if not export.is_file():
        generate(export.parent, "chatgpt", parse_size(opts.size), seed=opts.seed)
    folder = work / "history"
    if not (folder / "state.parquet").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        add_to_history(export, folder, date="2025-01-01")
    index = folder / INDEX_FOLDER
    rows_files = sorted(index.glob("rows-*.arrow"))
    rows_mb = sum(p.stat().st_size for p in rows_files) / 1e6
    messages = len(search_history.open_history_index(folder))
    print(f"export {export.stat().st_size / 1e6:.0f} MB: {messages:,} messages, rows files {rows_mb:.0f} MB")

    spent = {"parts": 0.0, "rows": 0.0}

    def timed(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any) -> Any:
            start = time.perf_counter()
            try:
                return real(*args)
            finally:
                spent[name] += time.perf_counter() - start

        return run

    # Timed where open_history_index looks them up.
    search_history.read_parts_file = timed("parts", search_parts.read_parts_file)  # type: ignore[method-assign]
    search_history.rows_table = timed("rows", search_parts.rows_table)  # type: ignore[method-assign]

    def checked() -> tuple[float, float, float]:
        clear_cache()
        spent.update(parts=0.0, rows=0.0)
        start = time.perf_counter()
        search_history.open_history_index(folder).close()
        return time.perf_counter() - start, spent["parts"], spent["rows"]

    def unchecked() -> float:
        start = time.perf_counter()
        tables = [pa.ipc.open_file(pa.memory_map(os.fspath(p))).read_all() for p in rows_files]
        del tables
        return time.perf_counter() - start

    checked()  # the files into the page cache
    runs = [checked() for _ in range(opts.repeat)]
    open_s, parts_s, rows_s = (_median([run[i] for run in runs]) for i in range(3))
    plain_s = _median([unchecked() for _ in range(opts.repeat)])
    print(
        f"open, every file checked: {open_s * 1000:.0f} ms, of which parts.json and the parts "
        f"{parts_s * 1000:.1f} ms, the rows files {rows_s * 1000:.0f} ms ({rows_mb / rows_s:,.0f} MB/s; "
        f"read unchecked: {plain_s * 1000:.1f} ms)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    walls = []
    for _ in range(opts.repeat):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "memvelope_tools", "search", str(folder), "the", "--limit", "1"],
            check=True,
            stdout=subprocess.DEVNULL,
            env=env,
        )
        walls.append(time.perf_counter() - start)
    print(f"memvelope search (fresh process, index opened once): {_median(walls):.2f} s")
    if not opts.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
