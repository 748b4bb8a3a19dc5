"""The one layer that starts worker processes: one rule for how they start, pools that keep the order
of their tasks, and a Dask cluster's failed task said in its place."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memvelope_tools._workers.processes import Lost, each_done, fork_context, worker_context
from memvelope_tools._workers.threads import run_on_threads

ROOT = Path(__file__).resolve().parent.parent


def test_a_process_running_threads_forks_nothing() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert fork_context() is None
        assert worker_context().get_start_method() in {"forkserver", "spawn"}
    finally:
        stop.set()
        other.join()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a single thread is seen in /proc on Linux")
def test_a_process_of_one_thread_forks_its_workers_and_children_alike() -> None:
    probe = (
        "from memvelope_tools._workers.processes import fork_context, worker_context\n"
        "print(fork_context().get_start_method(), worker_context().get_start_method())"
    )
    env = {**os.environ, "PYTHONPATH": os.fspath(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["fork", "fork"]


def _square(n: int) -> int:
    return n * n


def test_tasks_run_in_worker_processes_each_come_back_with_its_item() -> None:
    done = list(each_done(_square, iter(range(10)), workers=2, window=3))
    assert sorted(done) == [(n, n * n) for n in range(10)]
    assert list(each_done(_square, [7, 8], workers=1)) == [(7, 49), (8, 64)]  # here, in order
    assert list(each_done(_square, [], workers=2)) == []


def _halve(n: int) -> int:
    if n % 2:
        raise ValueError(f"{n} is odd")
    return n // 2


def _halve_or_fail(n: int) -> int:
    if n == 3:
        time.sleep(0.5)  # the other task is done by then
        os._exit(1)  # the worker process dies
    return _halve(n)


def test_a_task_whose_worker_process_dies_is_lost_beside_the_others() -> None:
    done = dict(each_done(_halve_or_fail, [4, 3], workers=2))
    assert done[4] == 2 and isinstance(done[3], Lost) and done[3].error.startswith("BrokenProcessPool: ")


@pytest.mark.slow
def test_a_task_that_fails_on_a_dask_cluster_says_why() -> None:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        done = dict(each_done(_halve, iter([4, 3, 8, 10, 12]), workers=None, client=client, window=2))
    assert done == {4: 2, 3: Lost("ValueError: 3 is odd"), 8: 4, 10: 5, 12: 6}


def test_calls_on_threads_run_on_threads_of_their_own_and_the_first_error_is_raised() -> None:
    names: list[str] = []

    def record() -> None:
        names.append(threading.current_thread().name)

    run_on_threads([record], 2, name="memvelope-test")
    assert names == [threading.current_thread().name]  # one call: run here
    names.clear()
    run_on_threads([record, record, record], 2, name="memvelope-test")
    assert len(names) == 3 and all(n.startswith("memvelope-test") for n in names)

    def fail() -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        run_on_threads([record, fail, record], 2, name="memvelope-test")
