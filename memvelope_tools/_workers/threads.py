"""Worker threads: the pool for the text work (one per process, started on first use), and a few calls
run at a time on threads of their own."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

_pool: ThreadPoolExecutor | None = None


def text_threads() -> int:
    """How many threads the text work uses at most (the cores this process may run on, up to 8)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def _forget_pool() -> None:
    global _pool
    _pool = None  # a forked child has none of the parent's threads: it starts its own


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def text_pool() -> ThreadPoolExecutor:
    """The pool of worker threads for the text work (started on first use, one per process)."""
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=text_threads(), thread_name_prefix="memvelope-text")
    return _pool


def run_on_threads(calls: Sequence[Callable[[], object]], at_once: int, *, name: str) -> None:
    """Run each call, ``at_once`` at a time on threads named from ``name`` (here, one after the other,
    when there is one call); the first error is raised once the calls running have ended, and the calls
    not started are dropped."""
    if len(calls) < 2:
        for call in calls:
            call()
        return
    with ThreadPoolExecutor(max_workers=at_once, thread_name_prefix=name) as pool:
        futures = [pool.submit(call) for call in calls]
        try:
            for future in futures:
                future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise
