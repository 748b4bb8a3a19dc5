"""Benchmark: search indexing and query latency, and topics, on generated histories.

Prints, in one run, each stage in a fresh process (so each peak is its own):

* **index**: ``SearchIndex.build`` over ``--messages`` messages (default 1,000,000), in two parts
  built side by side: messages/s by the clock (target: at least 100,000/s) and per CPU second of
  all processes, peak memory of the process and of the one building the second part; and, as the
  baseline, the same index in one part by one process;
* **query**: latency of ``index.search(...)`` on that index for a rare word, a planted phrase, a
  common word, a prefix, a boolean query and a rare word with a role filter, median of ``--repeat``
  runs (target: under 100 ms) and its CPU time in all threads (above the clock time when the
  parts ran at once), with each part ranked in a thread of its own and, as the baseline,
  all parts ranked in one statement on one connection, and the first part alone, what a query
  takes when each part has a core of its own (runs interleaved); and of a whole
  ``mv.search(frame, ...)`` call once the index is cached (it recognises the frame); peak memory
  while querying;
* **topics**: ``mv.topics`` over ``--conversations`` conversations (default 50,000) with planted
  topics: seconds (target: under 60 s), peak memory, and how many planted topics were recovered.

The baseline for memory is the process after imports and after the input frame was built; the
figure is the extra peak (VmHWM) on top of it. The data are generated, seeded: words from a Zipf
vocabulary, texts of user (~40 words) and assistant (~150 words) length, a few planted phrases.

Usage: ``python benchmarks/search_topics.py [--messages 1000000] [--conversations 50000] [--repeat 7]``
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PLANTED = "aurora borealis expedition"
INDEX_TARGET = 100_000  # messages/s
QUERY_TARGET_MS = 100
TOPICS_TARGET_S = 60
TOPIC_WORDS = {
    "gardening": "tomato compost seedling mulch pruning greenhouse trellis basil soil harvest",
    "finance": "mortgage dividend portfolio inflation budget savings pension equity bond interest",
    "cooking": "recipe simmer saute garlic oven dough braise marinade skillet spatula",
    "travel": "itinerary passport layover hostel luggage museum ferry visa airport backpack",
    "fitness": "squat deadlift cardio protein stretching treadmill kettlebell marathon sprint rowing",
    "music": "chord melody guitar tempo rhythm piano harmony chorus verse drummer",
}


def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096


def _peak_rss_bytes() -> int:
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent through fork and exec.
    with open("/proc/self/status") as fh:
        line = next(line for line in fh if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


class ChildPeaks:
    """The peak memory (VmHWM) of this process's children, sampled while they run: the last
    sample of each (before its exec a child shows its parent's memory), the largest of them."""

    def __init__(self) -> None:
        self.last: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> ChildPeaks:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            for task in Path("/proc/self/task").iterdir():
                for pid in (task / "children").read_text().split():
                    try:
                        status = Path(f"/proc/{pid}/status").read_text()
                    except OSError:
                        continue
                    for line in status.splitlines():
                        if line.startswith("VmHWM:"):
                            self.last[pid] = int(line.split()[1]) * 1024

    @property
    def peak(self) -> int:
        return max(self.last.values(), default=0)


def _cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as fh:  # resets VmHWM to the current RSS
        fh.write("5")


def vocabulary(rng: np.random.Generator, size: int = 20_000) -> np.ndarray:
    """Pronounceable made-up words, the first ones the most frequent (Zipf)."""
    consonants, vowels = list("bcdfghklmnprstvz"), list("aeiou")
    words = set()
    while len(words) < size:
        n = int(rng.integers(1, 4))
        words.add("".join(str(rng.choice(consonants)) + str(rng.choice(vowels)) for _ in range(n + 1)))
    return np.array(sorted(words, key=lambda w: (len(w), w)))  # not set order, which varies by run


def history(n_messages: int, seed: int, topics: bool) -> Any:
    """A history frame of about ``n_messages`` messages in conversations of 2-20 messages."""
    import pandas as pd

    from memvelope_tools import corpus

    rng = np.random.default_rng(seed)
    vocab = vocabulary(rng)
    weights = 1.0 / np.arange(1, len(vocab) + 1)
    weights /= weights.sum()
    names = list(TOPIC_WORDS)
    topic_vocab = {k: np.array(v.split()) for k, v in TOPIC_WORDS.items()}
    sizes = rng.integers(2, 21, size=n_messages // 11 + 1)
    sizes = sizes[: int(np.searchsorted(np.cumsum(sizes), n_messages)) + 1]
    n_conv = len(sizes)
    conv_topic = rng.integers(0, len(names), size=n_conv)
    total = int(sizes.sum())
    conv_index = np.repeat(np.arange(n_conv), sizes)
    position = np.arange(total) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    role = np.where(position % 2 == 0, "user", "assistant")
    lengths = np.where(role == "user", rng.poisson(40, total), rng.poisson(150, total)) + 1
    ids = rng.choice(len(vocab), size=int(lengths.sum()), p=weights)
    words = vocab[ids].astype(object)  # planted words may be longer than any generated one
    if topics:  # a fifth of the words of each message come from its conversation's topic
        topic_of_word = np.repeat(conv_topic[conv_index], lengths)
        planted = rng.random(len(words)) < 0.2
        for t, name in enumerate(names):
            where = planted & (topic_of_word == t)
            words[where] = rng.choice(topic_vocab[name], size=int(where.sum()))
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    texts = [" ".join(words[bounds[i] : bounds[i + 1]]) for i in range(total)]
    for i in rng.choice(total, size=20, replace=False):
        texts[i] = texts[i] + f" We planned the {PLANTED} for March."
    start = np.datetime64("2022-01-01T00:00:00", "ms").astype(np.int64)
    ts = np.sort(rng.integers(start, start + 3 * 365 * 86_400_000, size=total))
    frame = pd.DataFrame(
        {
            "source": "bench",
            "conv_index": conv_index,
            "conversation_id": [f"c{i}" for i in conv_index],
            "position": position,
            "role": role,
            "ts": pd.to_datetime(ts, unit="ms", utc=True),
            "text": texts,
            "title": [f"conversation {i}" for i in conv_index],
        }
    )
    return corpus.from_messages(frame), conv_topic, names, vocab


def stage_search(n_messages: int, seed: int, repeat: int) -> dict[str, Any]:
    import memvelope_tools as mv
    from memvelope_tools.search import SearchIndex, fts_query

    frame, _, _, vocab = history(n_messages, seed, topics=False)
    gc.collect()
    base = _rss_bytes()
    _reset_peak()
    t0, c0 = time.perf_counter(), _cpu_seconds()
    with ChildPeaks() as children:
        index = SearchIndex.build(frame)
    seconds, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    peak = _peak_rss_bytes() - base
    gc.collect()
    base_query = _rss_bytes()
    _reset_peak()
    queries = {
        "rare word": str(vocab[5000]),
        "planted phrase": f'"{PLANTED}"',
        "common word": str(vocab[0]),
        "prefix": str(vocab[300])[:3] + "*",
        "boolean": f"({vocab[1]} OR {vocab[2]}) NOT {vocab[3]}",
        "rare, role=user": str(vocab[5000]),
    }
    latency: dict[str, Any] = {}
    parts_file = index._file  # None: every part ranked in one statement on one connection (the baseline)
    for name, query in queries.items():
        runs, cpu_runs, together, first_part = [], [], [], []
        role = "user" if "role=" in name else None
        # The first part alone, as its thread ranks it: the clock time of a query when each part has a core.
        alone = "SELECT fts.rowid AS id, bm25(fts) AS score FROM main.fts WHERE fts MATCH ? ORDER BY score, id LIMIT 50"
        for _ in range(repeat):  # interleaved, so that both see the same load
            t, c = time.perf_counter(), time.process_time()
            hits = index.search(query, role=role)
            runs.append(time.perf_counter() - t)
            cpu_runs.append(time.process_time() - c)
            index._file = None
            t = time.perf_counter()
            index.search(query, role=role)
            together.append(time.perf_counter() - t)
            index._file = parts_file
            t = time.perf_counter()
            index._db.execute(alone, (fts_query(query),)).fetchall()
            first_part.append(time.perf_counter() - t)
        matches = index.count(query, role=role)
        latency[name] = {
            "query": query,
            "ms": statistics.median(runs) * 1000,
            "cpu_ms": statistics.median(cpu_runs) * 1000,
            "one_statement_ms": statistics.median(together) * 1000,
            "first_part_ms": None if role else statistics.median(first_part) * 1000,
            "hits": len(hits),
            "matches": matches,
        }
    query_peak = max(0, _peak_rss_bytes() - base_query)
    mv.search(frame, "warm")  # builds the cached index once
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        mv.search(frame, f'"{PLANTED}"')
        runs.append(time.perf_counter() - t)
    index.close()
    search_module = importlib.import_module("memvelope_tools.search")
    search_module.clear_cache()
    search_module.SHARD_MIN = len(frame) + 1  # the baseline: the same index in one part, by one process
    t0, c0 = time.perf_counter(), _cpu_seconds()
    SearchIndex.build(frame).close()
    one_part, one_part_cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    return {
        "messages": len(frame),
        "one_part_seconds": one_part,
        "one_part_cpu": one_part_cpu,
        "text_mb": float(frame["text"].str.len().sum()) / 1e6,
        "seconds": seconds,
        "cpu": cpu,
        "peak_extra": peak,
        "child_peak": children.peak,
        "latency": latency,
        "cached_call_ms": statistics.median(runs) * 1000,
        "query_peak_extra": query_peak,
    }


def stage_topics(n_conversations: int, seed: int) -> dict[str, Any]:
    import memvelope_tools as mv

    frame, conv_topic, names, _ = history(n_conversations * 11, seed, topics=True)
    gc.collect()
    base = _rss_bytes()
    _reset_peak()
    t0 = time.perf_counter()
    found = mv.topics(frame, n_topics=len(names), seed=seed)
    seconds = time.perf_counter() - t0
    peak = _peak_rss_bytes() - base
    main = found.assignments["topic"].to_numpy(dtype=np.int64)
    recovered = 0
    for t in range(len(names)):
        counts = np.bincount(main[conv_topic == t], minlength=len(names))
        recovered += counts.max() >= 0.8 * counts.sum()
    return {
        "conversations": int(frame["conv_index"].nunique()),
        "messages": len(frame),
        "seconds": seconds,
        "peak_extra": peak,
        "recovered": int(recovered),
        "planted": len(names),
        "labels": list(found.labels),
    }


def _child(stage: str, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [
        sys.executable,
        __file__,
        "--child",
        stage,
        "--messages",
        str(args.messages),
        "--conversations",
        str(args.conversations),
        "--repeat",
        str(args.repeat),
        "--seed",
        str(args.seed),
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--conversations", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--child", choices=("search", "topics"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "search":
        print(json.dumps(stage_search(args.messages, args.seed, args.repeat)))
        return
    if args.child == "topics":
        print(json.dumps(stage_topics(args.conversations, args.seed)))
        return

    import sqlite3

    import sklearn

    print(
        f"python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}, scikit-learn {sklearn.__version__}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start"
    )
    s = _child("search", args)
    rate, cpu_rate = s["messages"] / s["seconds"], s["messages"] / s["cpu"]
    print(
        f"index:  {s['messages']:,} messages ({s['text_mb']:,.0f} MB of text) in {s['seconds']:.1f} s = "
        f"{rate:,.0f} messages/s = {rate / INDEX_TARGET:.2f}x the target ({INDEX_TARGET:,}/s); "
        f"CPU {s['cpu']:.1f} s over all processes = {cpu_rate:,.0f}/s per CPU = {cpu_rate / INDEX_TARGET:.2f}x; "
        f"peak memory +{s['peak_extra'] / 1e6:,.0f} MB, and {s['child_peak'] / 1e6:,.0f} MB in the process "
        "building the second part"
    )
    base_rate = s["messages"] / s["one_part_seconds"]
    print(
        f"index:  baseline, the same in one part by one process: {s['one_part_seconds']:.1f} s = "
        f"{base_rate:,.0f} messages/s = {base_rate / INDEX_TARGET:.2f}x the target "
        f"(CPU {s['one_part_cpu']:.1f} s); two parts are {rate / base_rate:.2f}x as fast by the clock"
    )
    for name, q in s["latency"].items():
        print(
            f"query:  {name:<15} {q['query']!r:<26} {q['ms']:>7.1f} ms = {q['ms'] / QUERY_TARGET_MS:5.2f}x the "
            f"target ({QUERY_TARGET_MS} ms), CPU {q['cpu_ms']:.1f} ms in all threads; {q['matches']:,} matches, "
            f"{q['hits']} shown; baseline, the parts ranked in one statement: {q['one_statement_ms']:.1f} ms, "
            f"{q['one_statement_ms'] / q['ms']:.2f}x as long"
            + ("" if q["first_part_ms"] is None else f"; the first part alone {q['first_part_ms']:.1f} ms")
        )
    print(
        f"query:  mv.search(frame, ...) with the index cached: {s['cached_call_ms']:.0f} ms "
        f"(recognising the frame, then the planted phrase); peak memory while querying "
        f"+{s['query_peak_extra'] / 1e6:,.0f} MB"
    )
    t = _child("topics", args)
    print(
        f"topics: {t['conversations']:,} conversations ({t['messages']:,} messages) in {t['seconds']:.1f} s "
        f"= {t['seconds'] / TOPICS_TARGET_S:.2f}x the target ({TOPICS_TARGET_S} s); "
        f"peak memory +{t['peak_extra'] / 1e6:,.0f} MB; planted topics recovered {t['recovered']} of {t['planted']}"
    )
    print("        " + "; ".join(t["labels"]))


if __name__ == "__main__":
    main()
