"""Benchmark: search indexing and query latency, and topics, on generated histories.

Prints, in one run, each stage in a fresh process (so each peak is its own), with its ratio to a
target and, for search, to a named baseline:

* **index**: ``SearchIndex.build(frame)`` over ``--messages`` messages (default 1,000,000; from
  ``DISK_MIN`` messages the engine keeps that index in a temporary folder): seconds, messages/s by
  the clock (target: at least 100,000/s), CPU seconds of all its threads, extra peak memory; and
  ``SearchIndex.build(frame, path=...)``, the index a Parquet folder keeps beside its files: seconds
  and messages/s;
* **baseline**: SQLite FTS5 from Python's standard library, the engine search used before, built
  here only: one table ``fts5(text, tokenize = 'unicode61 remove_diacritics 2')`` holding the same
  texts in the same order (rowid = row), inserted with ``executemany`` in one transaction, then
  ``optimize``; in memory below ``DISK_MIN`` messages, in a temporary file from it (journal and
  sync off), as the engine keeps its index. Its build seconds and messages/s, and the engine's
  time over its time;
* **query**: median of ``--repeat`` runs of ``index.search(query, ...)`` (50 results) for a rare
  word, a planted phrase, the most common word (in ~99% of messages), a mid-frequency word, a
  prefix, a one-letter prefix (over a thousand words), a boolean query, two common words, a phrase
  of two common words, a rare word with ``role="user"`` and the common word with ``since``/``until``
  covering a year: milliseconds (target: under 100 ms), how many messages match
  (``index.count``), and the baseline, ``SELECT rowid, bm25(fts) AS s FROM fts WHERE fts MATCH ?
  ORDER BY s, rowid LIMIT 50`` with the same query in FTS5 syntax (runs interleaved, so that both
  see the same load), in ms and as the engine's time over its time (n/a with a role or time filter,
  which that table cannot apply). The engine's time includes making the result frame with its
  snippets, the baseline's only ranking row ids. Also a whole ``mv.search(frame, ...)`` call once
  the index is cached (it recognises the frame), and the extra peak memory while the engine runs
  each query once;
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
import sqlite3
import statistics
import subprocess
import sys
import tempfile
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
# The baseline's query.
FTS5_QUERY = "SELECT rowid, bm25(fts) AS s FROM fts WHERE fts MATCH ? ORDER BY s, rowid LIMIT 50"
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


def _anon_bytes() -> int:
    """Resident memory that is not pages of mapped files (which the kernel can drop and read again)."""
    with open("/proc/self/status") as fh:
        line = next(line for line in fh if line.startswith("RssAnon:"))
    return int(line.split()[1]) * 1024


def _cpu_seconds() -> float:
    """CPU time of this process, all its threads, and of its children that have ended."""
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

    from memvelope_tools import _corpus as corpus

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


def _rank(index: Any, query: str, filters: dict[str, str]) -> list[tuple[int, float]]:
    """What a search does before it reads the rows it shows: the best 50 rows of the messages' texts and
    their scores, like for like with the baseline's statement (the titles' index apart)."""
    engine = importlib.import_module("memvelope_tools._search.engine")
    tree = importlib.import_module("memvelope_tools._search.query").parse_query(query)
    matching = engine.filtered(
        engine.engine_query(tree, index._searcher), filters.get("role"), filters.get("since"), filters.get("until")
    )
    return index._best(matching, 50, index._searcher, index._row_of)  # type: ignore[no-any-return]


def _fts5_build(frame: Any, path: Path | None) -> tuple[sqlite3.Connection, float, float]:
    """The baseline: the frame's texts in one FTS5 table, rowid = row; with its seconds and CPU seconds."""
    t0, c0 = time.perf_counter(), _cpu_seconds()
    db = sqlite3.connect(":memory:" if path is None else path, isolation_level=None)
    for pragma in ("journal_mode = OFF", "synchronous = OFF", "temp_store = MEMORY"):
        db.execute(f"PRAGMA {pragma}")
    db.execute("CREATE VIRTUAL TABLE fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 2')")
    db.execute("BEGIN")
    db.executemany("INSERT INTO fts(rowid, text) VALUES (?, ?)", enumerate(frame["text"].tolist()))
    db.execute("INSERT INTO fts(fts) VALUES ('optimize')")
    db.execute("COMMIT")
    return db, time.perf_counter() - t0, _cpu_seconds() - c0


def stage_search(n_messages: int, seed: int, repeat: int) -> dict[str, Any]:
    import memvelope_tools as mv
    from memvelope_tools._search.cache import clear_cache
    from memvelope_tools._search.index import DISK_MIN, SearchIndex

    frame, _, _, vocab = history(n_messages, seed, topics=False)
    w = [str(v) for v in vocab]
    gc.collect()
    base = _rss_bytes()
    _reset_peak()
    t0, c0 = time.perf_counter(), _cpu_seconds()
    index = SearchIndex.build(frame)
    seconds, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    peak = _peak_rss_bytes() - base
    gc.collect()
    # (name, query, filters, the same query in FTS5 syntax or None when the baseline cannot filter)
    queries: list[tuple[str, str, dict[str, str], str | None]] = [
        ("rare word", w[5000], {}, w[5000]),
        ("planted phrase", f'"{PLANTED}"', {}, f'"{PLANTED}"'),
        ("common word", w[0], {}, w[0]),
        ("mid word", w[30], {}, w[30]),
        ("prefix", w[300][:3] + "*", {}, w[300][:3] + "*"),
        ("short prefix", w[300][:1] + "*", {}, w[300][:1] + "*"),
        ("boolean", f"({w[1]} OR {w[2]}) NOT {w[3]}", {}, f"({w[1]} OR {w[2]}) NOT {w[3]}"),
        ("two common", f"{w[0]} {w[1]}", {}, f"{w[0]} {w[1]}"),
        ("common phrase", f'"{w[0]} {w[1]}"', {}, f'"{w[0]} {w[1]}"'),
        ("rare, role=user", w[5000], {"role": "user"}, None),
        ("common, a year", w[0], {"since": "2023-01-01", "until": "2024-01-01"}, None),
    ]
    base_query, base_anon = _rss_bytes(), _anon_bytes()
    _reset_peak()
    for _, query, filters, _ in queries:
        index.search(query, limit=50, **filters)
    query_peak = max(0, _peak_rss_bytes() - base_query)
    query_anon = _anon_bytes() - base_anon
    with tempfile.TemporaryDirectory(prefix="search-bench-") as tmp:
        t0 = time.perf_counter()
        SearchIndex.build(frame, path=Path(tmp) / "search-index").close()
        folder_seconds = time.perf_counter() - t0
        gc.collect()
        db, fts5_seconds, fts5_cpu = _fts5_build(frame, None if len(frame) < DISK_MIN else Path(tmp) / "fts5.db")
        latency: dict[str, Any] = {}
        for name, query, filters, fts5 in queries:
            runs, ranking, baseline = [], [], []
            for _ in range(repeat):  # interleaved, so that all see the same load
                t = time.perf_counter()
                hits = index.search(query, limit=50, **filters)
                runs.append(time.perf_counter() - t)
                t = time.perf_counter()
                _rank(index, query, filters)
                ranking.append(time.perf_counter() - t)
                if fts5 is not None:
                    t = time.perf_counter()
                    db.execute(FTS5_QUERY, (fts5,)).fetchall()
                    baseline.append(time.perf_counter() - t)
            latency[name] = {
                "query": query + "".join(f", {k}={v}" for k, v in filters.items()),
                "ms": statistics.median(runs) * 1000,
                "rank_ms": statistics.median(ranking) * 1000,
                "hits": len(hits),
                "matches": index.count(query, **filters),
                "baseline_ms": statistics.median(baseline) * 1000 if baseline else None,
            }
        db.close()
    index.close()
    clear_cache()
    mv.search(frame, "warm")  # builds the cached index once
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        mv.search(frame, f'"{PLANTED}"')
        runs.append(time.perf_counter() - t)
    clear_cache()
    return {
        "messages": len(frame),
        "text_mb": float(frame["text"].str.len().sum()) / 1e6,
        "seconds": seconds,
        "cpu": cpu,
        "peak_extra": peak,
        "folder_seconds": folder_seconds,
        "fts5_seconds": fts5_seconds,
        "fts5_cpu": fts5_cpu,
        "fts5_file": len(frame) >= DISK_MIN,
        "latency": latency,
        "cached_call_ms": statistics.median(runs) * 1000,
        "query_peak_extra": query_peak,
        "query_anon_extra": query_anon,
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

    from importlib import metadata

    import sklearn
    import tantivy

    print(
        f"python {sys.version.split()[0]}, tantivy {metadata.version('tantivy')} ({tantivy.__version__}), "
        f"SQLite {sqlite3.sqlite_version}, scikit-learn {sklearn.__version__}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f} at the start"
    )
    s = _child("search", args)
    n = s["messages"]
    rate, folder_rate, fts5_rate = n / s["seconds"], n / s["folder_seconds"], n / s["fts5_seconds"]
    print(
        f"index:  {n:,} messages ({s['text_mb']:,.0f} MB of text) in {s['seconds']:.1f} s = "
        f"{rate:,.0f} messages/s = {rate / INDEX_TARGET:.2f}x the target ({INDEX_TARGET:,}/s); "
        f"CPU {s['cpu']:.1f} s in all threads; peak memory +{s['peak_extra'] / 1e6:,.0f} MB"
    )
    print(
        f"index:  into a folder (what a Parquet folder keeps): {s['folder_seconds']:.1f} s = "
        f"{folder_rate:,.0f} messages/s = {folder_rate / INDEX_TARGET:.2f}x the target"
    )
    where = "a temporary file" if s["fts5_file"] else "memory"
    print(
        f"index:  baseline, SQLite FTS5 in {where}: {s['fts5_seconds']:.1f} s = {fts5_rate:,.0f} messages/s "
        f"(CPU {s['fts5_cpu']:.1f} s); the engine takes {s['seconds'] / s['fts5_seconds']:.2f}x its time "
        f"({s['folder_seconds'] / s['fts5_seconds']:.2f}x into a folder)"
    )
    for name, q in s["latency"].items():
        baseline = (
            "FTS5 n/a"
            if q["baseline_ms"] is None
            else f"ranking alone {q['rank_ms']:6.1f} ms vs FTS5 {q['baseline_ms']:7.1f} ms = "
            f"{q['rank_ms'] / q['baseline_ms']:5.2f}x"
        )
        print(
            f"query:  {name:<16} {q['query']!r:<44} {q['ms']:7.1f} ms = {q['ms'] / QUERY_TARGET_MS:5.2f}x the "
            f"target ({QUERY_TARGET_MS} ms); {q['matches']:>9,} matches, {q['hits']:>2} shown; {baseline}"
        )
    print(
        f"query:  mv.search(frame, ...) with the index cached: {s['cached_call_ms']:.0f} ms "
        f"(recognising the frame, then the planted phrase); peak memory while querying "
        f"+{s['query_peak_extra'] / 1e6:,.0f} MB, of which +{s['query_anon_extra'] / 1e6:,.0f} MB not pages of the "
        "index's files mapped from the page cache"
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
