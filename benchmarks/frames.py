"""Benchmark: messages_frame against pd.json_normalize, and peak memory against the file size.

Builds a synthetic, seeded envelope of at least 1,000,000 messages in memory, writes it to a temp
file (ensure_ascii=False, indent=2, like a converter's output) and prints, in one run:

* rows/s of ``messages_frame`` starting from the parsed dict, and starting from the file path;
* rows/s of ``pd.json_normalize(env["conversations"], record_path="messages", meta=[...])``;
* the ratio (target: at least 5x), of the best of ``--repeat`` runs each, and of the first runs
  (a process's first large allocations cost more here: the kernel zeroes and compacts pages);
* from the path, in a fresh process each: rows/s (target: at least 300,000) and peak memory (peak RSS
  minus the RSS after imports) against the file size (target: at most 2x), of the frames as they read
  a file (conversations straight from their JSON text into columns) and of the general path they take
  for what is not the plain case (every conversation parsed into Python objects first), with the ratios.

With ``--export ZIP`` (an export made by ``benchmarks/generate.py`` and zipped) it measures instead,
each in a fresh process, best of ``--repeat``:

* ``messages_frame(zip)`` in rows/s, against converting the zip to an envelope file
  (``convert_stream``) plus ``messages_frame`` of that file (target: at most their sum);
* ``messages_frame`` of the envelope with the lone surrogates the generator puts in (about one per
  10 MB), against the same file with each lone surrogate escape replaced by ``\\u263a`` (same size)
  (target: at most 1.1x);
* ``messages_frame`` of the envelope file against ``json.load`` of it (target: at most half).

The runs are interleaved (one of each per round), so that the machine's load falls on all alike.

With ``--against DIR`` (a checkout of another version of the package, its C helpers built, such as
a worktree of the previous release) it measures instead ``messages_frame(path)`` of this checkout and
of that one, each in a fresh process, one of each per round for ``--repeat`` rounds: best and median
rows/s, CPU time (user + system, all threads) and peak memory, with the ratios and the load average.
``--file PATH`` reads that envelope instead of generating one (generating 1,000,000 messages takes
most of a minute).

Usage: ``python benchmarks/frames.py [--messages 1000000] [--seed 7] [--emoji-share 0.01] [--repeat 3]
[--numpy] [--export ZIP] [--against DIR [--file PATH]]`` (``--numpy``: the engine ``"python"``, used when the C helper
``memvelope_tools._frames._textscan`` was not built).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, os.environ.get("MEMVELOPE_BENCHMARK_ROOT", str(ROOT)))  # --against: the other checkout

_VOCABULARY = """the a of to and in is it that for you with on this be are as can or not your have we at
roadmap plan data model export python function value table result error test meeting budget draft
review idea question answer because however which would could should café naïve façade résumé — ’
“quoted” déjà"""
WORDS = _VOCABULARY.split()


def build_envelope(n_messages: int, seed: int, emoji_share: float) -> dict:
    """A synthetic envelope: conversations of 1–60 messages, user ~200 and assistant ~900 chars."""
    rng = random.Random(seed)
    pool = []
    for _ in range(2000):
        words = rng.choices(WORDS, k=700)
        if rng.random() < emoji_share * 20:  # a share of paragraphs contains an emoji somewhere
            words[rng.randrange(len(words))] = "🙂"
        pool.append(" ".join(words))
    conversations = []
    t = np.datetime64("2023-01-01T00:00:00.000", "ms").astype(np.int64)
    made = 0
    while made < n_messages:
        n = min(rng.randint(1, 60), n_messages - made)
        steps = np.cumsum(np.array([rng.randint(1000, 600_000) for _ in range(n)], dtype=np.int64)) + t
        stamps = [s + "Z" for s in np.datetime_as_string(steps.astype("datetime64[ms]"), unit="ms")]
        messages = []
        for j in range(n):
            role = "user" if j % 2 == 0 else "assistant"
            size = int(rng.lognormvariate(5.0, 0.6)) if role == "user" else int(rng.lognormvariate(6.6, 0.5))
            para = pool[rng.randrange(len(pool))]
            start = rng.randrange(max(1, len(para) - size))
            text = para[start : start + max(1, size)].strip() or "ok"
            messages.append(
                {"id": f"m{j + 1}", "role": role, "ts": None if rng.random() < 0.01 else stamps[j], "text": text}
            )
        cid = None if rng.random() < 0.01 else f"{rng.getrandbits(128):032x}"
        conversations.append(
            {
                "id": cid,
                "title": " ".join(rng.choices(WORDS, k=4)),
                "created_at": stamps[0],
                "updated_at": stamps[-1],
                "messages": messages,
            }
        )
        t = int(steps[-1]) + rng.randint(0, 86_400_000)
        made += n
    return {
        "memvelope": "envelope-v0",
        "meta": {"source_provider": "chatgpt", "conversation_count": len(conversations), "message_count": made},
        "conversations": conversations,
    }


def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss_bytes() -> int:
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent through fork and exec.
    with open("/proc/self/status") as fh:
        line = next(line for line in fh if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def child(path: str, general: bool) -> None:
    """Run in a fresh process: time messages_frame(path) and report its peak memory as JSON."""
    import resource

    import pandas  # noqa: F401 - imports are part of the baseline, not of the load
    import pyarrow  # noqa: F401

    try:
        from memvelope_tools._frames import text as _text
        from memvelope_tools._frames.envelopes import messages_frame
    except ImportError:  # a checkout of an earlier release (--against), whose frames were public modules
        from memvelope_tools.frames import text as _text  # type: ignore[import-not-found,no-redef]
        from memvelope_tools.frames.envelopes import messages_frame  # type: ignore[import-not-found,no-redef]

    if general:
        _text.conversation_columns = lambda *_: None  # type: ignore[assignment]

    gc.collect()
    base = _rss_bytes()
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    frame = messages_frame(path, progress=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    peak = _peak_rss_bytes()
    print(
        json.dumps(
            {
                "rows": len(frame),
                "seconds": seconds,
                "cpu": after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime,
                "peak_extra": peak - base,
                "frame_bytes": int(frame.memory_usage(deep=False).sum()),
                "load": os.getloadavg()[0],
                "package": str(Path(sys.modules["memvelope_tools"].__file__ or "").parent),
            }
        )
    )


def against_figures(path: str, other: str, repeat: int) -> None:
    """The figures of ``--against`` (see the module docstring): this checkout and ``other``, interleaved."""
    import statistics

    size = os.path.getsize(path)
    checkouts = {"this": str(ROOT), "other": str(Path(other).resolve())}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
    for _ in range(repeat):
        for name, root in checkouts.items():
            env = {**os.environ, "PYTHONPATH": root, "MEMVELOPE_BENCHMARK_ROOT": root}
            command = [sys.executable, __file__, "--child", path]
            run = json.loads(subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout)
            assert Path(run["package"]).is_relative_to(root), (run["package"], root)
            runs[name].append(run)
    rows = {run["rows"] for results in runs.values() for run in results}
    assert len(rows) == 1, "the frames differ in length"
    n = rows.pop()
    print(f"file: {path} ({size / 1e6:,.1f} MB, {n:,} messages), {repeat} rounds, one run of each per round")
    rates = {name: [n / run["seconds"] for run in results] for name, results in runs.items()}
    for name, results in runs.items():
        cpu = [run["cpu"] for run in results]
        peak = [run["peak_extra"] / size for run in results]
        print(
            f"{name:5} {checkouts[name]}: best {max(rates[name]):>10,.0f} rows/s, median "
            f"{statistics.median(rates[name]):>10,.0f}; CPU {min(cpu):.2f}-{max(cpu):.2f} s (median "
            f"{statistics.median(cpu):.2f}); peak memory {min(peak):.2f}-{max(peak):.2f}x the file"
        )
    loads = [run["load"] for results in runs.values() for run in results]
    cpu_ratio = statistics.median(r["cpu"] for r in runs["this"]) / statistics.median(r["cpu"] for r in runs["other"])
    print(
        f"this / other: {max(rates['this']) / max(rates['other']):.2f}x at best, "
        f"{statistics.median(rates['this']) / statistics.median(rates['other']):.2f}x at the median; median CPU "
        f"{cpu_ratio:.2f}x; load average {min(loads):.2f}-{max(loads):.2f} during the runs"
    )


_LONE_ESCAPE = re.compile(rb"(?<!\\)\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def timed_child(task: str, *paths: str) -> dict[str, Any]:
    """Run one ``--task`` in a fresh process; its JSON report."""
    out = subprocess.run(
        [sys.executable, __file__, "--task", task, *paths], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out)  # type: ignore[no-any-return]


def task(name: str, paths: list[str]) -> None:
    """In a fresh process: do ``name`` once and print its seconds (and rows) as JSON."""
    import pandas  # noqa: F401 - imports are part of the baseline, not of the work
    import pyarrow  # noqa: F401

    from memvelope_tools._convert import convert_stream
    from memvelope_tools._frames.envelopes import messages_frame

    gc.collect()
    start = time.perf_counter()
    rows = 0
    if name == "convert":
        convert_stream(paths[0], paths[1], workers=1, progress=False)
    elif name == "frame":
        rows = len(messages_frame(paths[0], progress=False))
    elif name == "json.load":
        with open(paths[0], "rb") as fh:
            rows = len(json.load(fh)["conversations"])
    print(json.dumps({"seconds": time.perf_counter() - start, "rows": rows}))


def export_figures(zip_path: str, repeat: int) -> None:
    """The figures of ``--export`` (see the module docstring), with their ratios."""

    with tempfile.TemporaryDirectory() as tmp:
        envelope = str(Path(tmp) / "export.mve.json")
        clean = str(Path(tmp) / "clean.mve.json")
        timed_child("convert", zip_path, envelope)
        data = Path(envelope).read_bytes()
        lone = len(_LONE_ESCAPE.findall(data))
        Path(clean).write_bytes(_LONE_ESCAPE.sub(rb"\\u263a", data))
        del data
        jobs = [
            ("convert", zip_path, str(Path(tmp) / "again.mve.json")),
            ("frame", zip_path),
            ("frame", envelope),
            ("frame", clean),
            ("json.load", envelope),
        ]
        # Round after round, each job once per round: a change in the machine's load between runs
        # falls on every job alike rather than on the jobs that happened to run then.
        runs: list[list[dict[str, Any]]] = [[] for _ in jobs]
        for _ in range(repeat):
            for job, results in zip(jobs, runs, strict=True):
                results.append(timed_child(*job))
        converted, from_zip, from_file, from_clean, loaded = (min(r, key=lambda x: x["seconds"]) for r in runs)
    rows, size = from_zip["rows"], os.path.getsize(zip_path)
    assert rows == from_file["rows"] == from_clean["rows"], "the frames differ in length"
    both = converted["seconds"] + from_file["seconds"]
    print(f"export: {zip_path} ({size / 1e6:,.1f} MB zipped), {rows:,} messages, {lone} lone surrogate escape(s)")
    print(f"convert zip -> file:       {converted['seconds']:>7.2f} s")
    print(f"messages_frame(file):      {from_file['seconds']:>7.2f} s  ({rows / from_file['seconds']:>10,.0f} rows/s)")
    print(
        f"messages_frame(zip):       {from_zip['seconds']:>7.2f} s  ({rows / from_zip['seconds']:>10,.0f} rows/s); "
        f"{from_zip['seconds'] / both:.2f}x convert + frame(file) = {both:.2f} s "
        f"(target <= 1x: {'met' if from_zip['seconds'] <= both else 'NOT met'})"
    )
    odd = from_file["seconds"] / from_clean["seconds"]
    print(
        f"frame(file without lone surrogates): {from_clean['seconds']:.2f} s; with them "
        f"{odd:.2f}x (target <= 1.1x: {'met' if odd <= 1.1 else 'NOT met'})"
    )
    half = from_file["seconds"] / loaded["seconds"]
    print(
        f"json.load(file):           {loaded['seconds']:>7.2f} s; messages_frame(file) is {half:.2f}x of it "
        f"(target <= 0.5x: {'met' if half <= 0.5 else 'NOT met'})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--emoji-share", type=float, default=0.01, help="share of pool paragraphs' weight given an emoji (default 0.01)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs of each contender; the best counts (default 3)")
    parser.add_argument(
        "--numpy", action="store_true", help="measure the NumPy path that stands in when the C helper was not built"
    )
    parser.add_argument("--export", help="a zipped export: measure the export and envelope figures instead")
    parser.add_argument("--against", help="a checkout of another version: compare messages_frame(path) with it")
    parser.add_argument("--file", help="with --against: the envelope file to read (else one is generated)")
    parser.add_argument("--task", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--general", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.numpy:
        os.environ["MEMVELOPE_ENGINE"] = "python"  # read when the package is imported, here and in the children
    if args.child:
        child(args.child, args.general)
        return
    if args.task:
        task(args.task[0], args.task[1:])
        return
    if args.export:
        export_figures(args.export, args.repeat)
        return
    if args.against and args.file:
        against_figures(args.file, args.against, args.repeat)
        return

    import pandas as pd

    from memvelope_tools._frames import text as _text
    from memvelope_tools._frames.envelopes import messages_frame
    from memvelope_tools._workers.threads import text_threads

    t0 = time.perf_counter()
    env = build_envelope(args.messages, args.seed, args.emoji_share)
    n = env["meta"]["message_count"]
    print(
        f"built envelope: {len(env['conversations']):,} conversations, {n:,} messages "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.mve.json"
        path.write_bytes(json.dumps(env, ensure_ascii=False, indent=2).encode("utf-8"))
        size = path.stat().st_size
        print(f"file size: {size / 1e6:,.1f} MB")
        if args.against:
            del env  # freed before the child processes run
            gc.collect()
            against_figures(str(path), args.against, args.repeat)
            return

        def timed(run: Callable[[], Any]) -> list[float]:
            seconds = []
            for _ in range(args.repeat):
                gc.collect()
                t0 = time.perf_counter()
                result = run()
                seconds.append(time.perf_counter() - t0)
                assert len(result) == n
                del result
            return seconds

        ours = timed(lambda: messages_frame(env, progress=False))
        theirs = timed(
            lambda: pd.json_normalize(
                env["conversations"],
                record_path="messages",
                meta=["id", "title", "created_at", "updated_at"],
                meta_prefix="conversation_",
            )
        )
        env = None  # freed before the child process measures memory
        gc.collect()

        def from_path(*extra: str) -> dict[str, Any]:
            child_args = [sys.executable, __file__, "--child", str(path), *(["--numpy"] if args.numpy else []), *extra]
            return json.loads(subprocess.run(child_args, check=True, capture_output=True, text=True).stdout)

        measured = from_path()
        general = from_path("--general")

    best, first = min(ours), ours[0]
    print(
        f"messages_frame(dict):   {n / best:>12,.0f} rows/s  (best of {args.repeat}: {best:.2f} s; "
        f"first run {first:.2f} s)"
    )
    print(
        f"pd.json_normalize:      {n / min(theirs):>12,.0f} rows/s  (best of {args.repeat}: {min(theirs):.2f} s; "
        f"first run {theirs[0]:.2f} s)"
    )
    print(f"ratio (dict):           {min(theirs) / best:>12.1f}x  (target >= 5x; first runs: {theirs[0] / first:.1f}x)")
    print(
        f"text helper:            {'compiled (_textscan)' if _text.native() else 'NumPy (engine python)'}, "
        f"{text_threads()} thread(s)"
    )
    rate, general_rate = n / measured["seconds"], n / general["seconds"]
    memory, general_memory = measured["peak_extra"] / size, general["peak_extra"] / size
    print(
        f"messages_frame(path):   {rate:>12,.0f} rows/s  ({measured['seconds']:.2f} s, read + parse + frame, "
        f"fresh process; target >= 300,000: {'met' if rate >= 300_000 else 'NOT met'})"
    )
    print(
        f"  general path:         {general_rate:>12,.0f} rows/s  ({general['seconds']:.2f} s, every conversation "
        f"parsed first; {rate / general_rate:.1f}x slower than straight into columns)"
    )
    print(
        f"peak memory, from path: {measured['peak_extra'] / 1e6:>12,.0f} MB = {memory:.2f}x the file size "
        f"(target <= 2x: {'met' if memory <= 2 else 'NOT met'}); final frame {measured['frame_bytes'] / 1e6:,.0f} MB"
    )
    print(
        f"  general path:         {general['peak_extra'] / 1e6:>12,.0f} MB = {general_memory:.2f}x the file size "
        f"({general_memory / memory:.2f}x the memory of straight into columns)"
    )


if __name__ == "__main__":
    main()
