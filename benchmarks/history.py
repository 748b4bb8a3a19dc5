"""History across exports: ``memvelope diff`` and ``memvelope history add`` against converting the exports.

Generates (or reuses) a seeded ChatGPT export A of ``--size`` with ``generate.py``, and B, a later export
of the same account: A's conversations with some grown (two more messages on the active path), some
edited (a regenerated last reply that becomes the active path), some deleted, and new ones. Then, each
in a fresh process, it measures wall time, CPU time (user + system of the process and the
processes it waited for: a conversion's workers started through a fork server are not among them, so
the CPU of those commands reads low) and peak memory: the resident size of the largest process, and the
proportional set size of all its processes together, sampled every 50 ms, and beside it their anonymous memory
(``RssAnon``: what the command allocated, without the pages of files it maps, such as its libraries or a file
it reads mapped; pages of a mapped file are the page cache's, counted in the resident size only while mapped), of:

* ``memvelope convert A`` + ``memvelope convert B`` (the baseline) against ``memvelope diff A B``
  (target: at most 1.3x);
* ``memvelope convert B`` (the baseline) against ``memvelope history add B`` into a folder that already
  holds ``--snapshots`` snapshots of A (dated one day apart; target: at most 1.5x, and peak memory under
  half the export's size, the issue's 500 MB at 1 GB). The add includes bringing the folder's search
  index up to date; a first search of the folder follows (it should find the index up to date), then the same add
  again (it should change no file, the index's included).

Usage: ``python benchmarks/history.py [--size 100MB] [--snapshots 10] [--work DIR] [--repeat 1]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import _conversations, generate, parse_size  # noqa: E402

GROW, EDIT, DELETE, NEW = 0.10, 0.03, 0.02, 0.05  # shares of A's conversations


def _node(template: dict[str, Any], parent: str, role: str, text: str, when: float, rng: random.Random) -> dict:
    key = f"{rng.getrandbits(128):032x}"
    message = {
        **template,
        "id": key,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": when,
        "content": {"content_type": "text", "parts": [text]},
    }
    return {"id": key, "message": message, "parent": parent, "children": []}


def _later(conv: dict[str, Any], rng: random.Random, action: str) -> dict[str, Any] | None:
    """The conversation as the later export holds it (None: deleted)."""
    if action == "delete":
        return None
    mapping = conv["mapping"]
    leaf = conv.get("current_node")
    if leaf not in mapping or not isinstance(mapping[leaf].get("message"), dict):
        return conv
    template = mapping[leaf]["message"]
    when = (template.get("create_time") or 1.7e9) + 86_400 * 30
    if action == "grow":
        ask = _node(template, leaf, "user", "And one more question about the plan " + str(rng.random()), when, rng)
        reply = _node(template, ask["id"], "assistant", "Here is the answer " + str(rng.random()), when + 9, rng)
        mapping[leaf]["children"].append(ask["id"])
        ask["children"].append(reply["id"])
        mapping[ask["id"]], mapping[reply["id"]] = ask, reply
        conv["current_node"] = reply["id"]
    elif action == "edit":
        parent = mapping[leaf]["parent"]
        if parent is None:
            return conv
        again = _node(template, parent, "assistant", "A regenerated reply " + str(rng.random()), when, rng)
        mapping[parent]["children"].append(again["id"])
        mapping[again["id"]] = again
        conv["current_node"] = again["id"]
    conv["update_time"] = when + 10
    return conv


def build_pair(folder: Path, size: int, seed: int) -> tuple[Path, Path]:
    """Export A (``generate.py``) and export B (A changed as the module docstring says)."""
    a_dir, b_dir = folder / "a", folder / "b"
    a = a_dir / "conversations.json"
    b = b_dir / "conversations.json"
    if a.is_file() and b.is_file():
        return a, b
    generate(a_dir, "chatgpt", size, seed=seed)
    b_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed + 1)
    stream = _conversations("chatgpt", seed, 10 * 1024 * 1024)
    conv, _ = next(stream)
    total = 0
    extra: list[dict[str, Any]] = []
    with open(b, "wb") as fh:
        fh.write(b"[")
        first = True
        while first or total < size:
            blob = json.dumps(conv, separators=(",", ":")).encode("utf-8", "backslashreplace")
            total += len(blob) + 1  # as generate.py counts A, so the stream gives A's conversations
            roll = rng.random()
            action = (
                "grow"
                if roll < GROW
                else "edit"
                if roll < GROW + EDIT
                else "delete"
                if roll < GROW + EDIT + DELETE
                else "keep"
            )
            if rng.random() < NEW:
                extra.append(json.loads(blob))
            later = _later(conv, rng, action)
            if later is not None:
                fh.write(b"" if first else b",")
                fh.write(json.dumps(later, separators=(",", ":")).encode("utf-8", "backslashreplace"))
                first = False
            conv, _ = stream.send(total)
        for copy in extra:  # new conversations: copies under new ids, a month later
            copy["id"] = copy["conversation_id"] = f"{rng.getrandbits(128):032x}"
            copy["title"] = f"New: {copy.get('title')}"
            fh.write(b",")
            fh.write(json.dumps(copy, separators=(",", ":")).encode("utf-8", "backslashreplace"))
        fh.write(b"]")
    return a, b


def _tree_memory(root: int) -> tuple[float, float]:
    """Memory (MB) of the process ``root`` and all its descendants together, from /proc (0 elsewhere):
    the sum of their proportional set sizes, so pages that forked processes share count once, and the sum
    of their anonymous resident memory."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as fh:
                parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
    total, anonymous, todo = 0, 0, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/smaps_rollup", encoding="utf-8") as fh:
                total += next(int(line.split()[1]) for line in fh if line.startswith("Pss:")) * 1024
            with open(f"/proc/{pid}/status", encoding="utf-8") as fh:
                anonymous += next(int(line.split()[1]) for line in fh if line.startswith("RssAnon:")) * 1024
        except (OSError, StopIteration):
            pass
        todo += [child for child, parent in parents.items() if parent == pid]
    return total / 1e6, anonymous / 1e6


def run(args: list[str]) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) of the largest process and CPU seconds of ``memvelope ARGS`` in a fresh
    process; the peaks of all its processes together (see :func:`_tree_memory`), sampled, go to :data:`TOGETHER`
    and :data:`ANONYMOUS`."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-W", "ignore::UnicodeWarning", "-m", "memvelope_tools", *args], stdout=subprocess.DEVNULL
    )
    together = anonymous = 0.0
    # Sampled until it ends, without reaping it: wait4 below reaps it and reads its usage.
    while os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        pss, anon = _tree_memory(proc.pid)
        together, anonymous = max(together, pss), max(anonymous, anon)
        time.sleep(0.05)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"memvelope {' '.join(args)} failed with status {status}")
    TOGETHER.append(together)
    ANONYMOUS.append(anonymous)
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


#: The peak of each run's processes together, in order (see :func:`run`).
TOGETHER: list[float] = []
#: The peak of each run's anonymous memory, its processes together, in order (see :func:`run`).
ANONYMOUS: list[float] = []


def best(args: list[str], repeat: int) -> tuple[float, float, float]:
    runs = [run(args) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs), min(r[2] for r in runs)


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def _contents(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="100MB")
    parser.add_argument("--snapshots", type=int, default=10)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--work", type=Path, help="folder for the exports (kept; default: a temporary one)")
    opts = parser.parse_args()
    size = parse_size(opts.size)
    work = opts.work or Path(tempfile.mkdtemp(prefix="memvelope-history-"))
    work.mkdir(parents=True, exist_ok=True)
    a, b = build_pair(work, size, opts.seed)
    mb = b.stat().st_size / 1e6
    print(f"exports: A {a.stat().st_size / 1e6:.0f} MB, B {mb:.0f} MB (ChatGPT, seed {opts.seed}) in {work}")
    out = work / "out.mve.json"

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    conv_a, rss_a, cpu_a = best(["convert", str(a), "-o", str(out), "-q"], opts.repeat)
    conv_b, rss_b, cpu_b = best(["convert", str(b), "-o", str(out), "-q"], opts.repeat)
    tree_b, anon_b = max(TOGETHER[-opts.repeat :]), max(ANONYMOUS[-opts.repeat :])
    diff_t, diff_rss, diff_cpu = best(["diff", str(a), str(b), "--json"], opts.repeat)
    both = conv_a + conv_b
    print(
        f"convert A: {conv_a:.1f} s (CPU {cpu_a:.1f} s), {rss_a:.0f} MB peak; "
        f"convert B: {conv_b:.1f} s (CPU {cpu_b:.1f} s), {rss_b:.0f} MB peak"
    )
    print(
        f"diff A B: {diff_t:.1f} s (CPU {diff_cpu:.1f} s), {diff_rss:.0f} MB peak; ratio to converting both "
        f"{diff_t / both:.2f}x (target <= 1.3x), CPU {diff_cpu / (cpu_a + cpu_b):.2f}x"
    )

    folder = work / "history"
    shutil.rmtree(folder, ignore_errors=True)
    for day in range(opts.snapshots):
        run(["history", "add", str(a), "--to", str(folder), "--date", f"2025-01-{day + 1:02d}", "-q"])
    files = {p.name: _size(p) for p in folder.iterdir()}
    print(
        f"history folder after {opts.snapshots} snapshots: "
        + ", ".join(f"{k} {v / 1e6:.0f} MB" for k, v in files.items())
    )
    add_t, add_rss, add_cpu = run(["history", "add", str(b), "--to", str(folder), "--date", "2025-03-01", "-q"])
    add_tree, add_anon = TOGETHER[-1], ANONYMOUS[-1]
    print(
        f"history add B into it: {add_t:.1f} s (CPU {add_cpu:.1f} s), {add_rss:.0f} MB peak; ratio to converting "
        f"B {add_t / conv_b:.2f}x (target <= 1.5x), CPU {add_cpu / cpu_b:.2f}x; peak / export size "
        f"{add_rss / mb:.2f} (target < 0.5)"
    )
    print(
        f"  all processes together (sampled): history add {add_tree:.0f} MB ({add_tree / mb:.2f} of the export), "
        f"convert B {tree_b:.0f} MB; anonymous memory (sampled): history add {add_anon:.0f} MB "
        f"({add_anon / mb:.2f} of the export), convert B {anon_b:.0f} MB"
    )
    search_t, _, _ = run(["search", str(folder), "the", "--limit", "1"])
    print(f"first search of the folder after the add: {search_t:.1f} s (the add left its index up to date)")
    before = _contents(folder)
    again_t, _, _ = run(["history", "add", str(b), "--to", str(folder), "--date", "2025-03-01", "-q"])
    same = before == _contents(folder)
    print(f"history add B again: {again_t:.1f} s, every file's bytes (the search index's too) unchanged: {same}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not opts.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
