"""Worker processes: how they start (one rule for every pool and child), pools started at once and
bound to this process, and tasks run in them or on a Dask cluster."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._signals import bind_to_parent, held

if TYPE_CHECKING:  # multiprocessing and the pool are imported when a process starts: a command's start stays quick
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing.context import BaseContext, ForkContext


def _one_thread() -> bool:
    """True when this process runs a single thread (where the system says; else False)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def fork_context() -> ForkContext | None:
    """The context that forks a child of this process, or None where forking is not safe here.

    fork starts a process in milliseconds, and is safe while this process runs one thread: a child
    forked beside other threads can deadlock on a lock one of them held (Python 3.12+ warns about
    exactly that), and a notebook kernel runs threads.
    """
    import multiprocessing

    if "fork" in multiprocessing.get_all_start_methods() and _one_thread():
        return multiprocessing.get_context("fork")
    return None


def worker_context(preload: Sequence[str] = ()) -> BaseContext:
    """How worker processes start: forked where :func:`fork_context` allows it, else from a fork server
    (not on Windows; it imports the modules ``preload`` names once, for every worker it starts), else
    spawned."""
    import multiprocessing

    forked = fork_context()
    if forked is not None:
        return forked
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(preload))
        return context
    return multiprocessing.get_context("spawn")


def _ready() -> None:
    """A task that only makes the pool start its processes."""


def _start_worker(parent: int | None) -> None:
    """Run first in each worker process: it stops when the process that started it does."""
    bind_to_parent(parent)


def start_pool(workers: int, *, preload: Sequence[str] = ()) -> ProcessPoolExecutor:
    """``workers`` worker processes, started now (see :func:`worker_context` for ``preload``); each stops
    when this process does. A stop (Ctrl-C, SIGTERM) asked for while they are forked lands once they
    are: raised inside Python's after-fork callbacks it would be dropped, and the command would run on."""
    from concurrent.futures import ProcessPoolExecutor

    context = worker_context(preload)
    parent = os.getpid() if context.get_start_method() == "fork" else None  # else a server forks them
    executor = None
    try:
        with held():
            executor = ProcessPoolExecutor(
                max_workers=workers, mp_context=context, initializer=_start_worker, initargs=(parent,)
            )
            for _ in range(workers):
                executor.submit(_ready)
    except BaseException:
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        raise
    return executor


def each_done(
    task: Callable[[Any], Any], items: Iterable[Any], *, workers: int | None, client: Any = None, window: int = 0
) -> Iterator[tuple[Any, Any]]:
    """``task`` of each item, ``(item, result)`` yielded as each finishes (not in order): on the Dask
    cluster of a ``dask.distributed`` ``client``, in ``workers`` worker processes (None: one per
    core; for a task that raised, or whose process or worker was lost, the result is a :class:`Lost`), or here,
    one after the other, when ``workers`` is 1. At most ``window`` tasks (default: four per worker
    thread) are out at once, so neither the items nor the results pile up here."""
    pending = iter(items)
    if client is None and workers == 1:
        for item in pending:
            yield item, task(item)
        return
    if client is not None:
        yield from _each_done_on_dask(task, pending, client, window)
        return
    from concurrent.futures import FIRST_COMPLETED, wait

    count = workers or os.cpu_count() or 1
    pool = start_pool(count, preload=[task.__module__])
    try:
        out: dict[Any, Any] = {}
        for item in itertools.islice(pending, window or 4 * count):
            out[pool.submit(task, item)] = item
        while out:
            finished, _ = wait(out, return_when=FIRST_COMPLETED)
            for future in finished:
                item = out.pop(future)
                for more in itertools.islice(pending, 1):
                    out[pool.submit(task, more)] = more
                yield item, _outcome(future)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _each_done_on_dask(
    task: Callable[[Any], Any], pending: Iterator[Any], client: Any, window: int
) -> Iterator[tuple[Any, Any]]:
    from distributed import as_completed

    threads = sum(client.nthreads().values()) or 1
    out: dict[str, Any] = {}
    queue = as_completed()  # type: ignore[no-untyped-call]
    for item in itertools.islice(pending, window or 4 * threads):
        future = client.submit(task, item, pure=False)
        out[future.key] = item
        queue.add(future)  # type: ignore[no-untyped-call]
    for future in queue:
        item = out.pop(future.key)
        for more in itertools.islice(pending, 1):
            added = client.submit(task, more, pure=False)
            out[added.key] = more
            queue.add(added)  # type: ignore[no-untyped-call]
        result = _outcome(future)
        future.release()
        yield item, result


@dataclass(frozen=True)
class Lost:
    """A task that did not return: it raised, or its worker process or Dask worker was lost (``error`` says why)."""

    error: str


def _outcome(future: Any) -> Any:
    """What a finished future gives: its result, or a :class:`Lost` saying why there is none."""
    try:
        exc = future.exception()
    except BaseException as lost:  # cancelled (the scheduler dropped it)
        exc = lost
    if exc is None:
        return future.result()
    first = (str(exc).strip().splitlines() or [""])[0]
    return Lost(f"{type(exc).__name__}: {first}" if first else type(exc).__name__)
