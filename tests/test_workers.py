"""The one layer that starts worker processes: one rule for how they start, pools that keep the order
of their tasks, and a Dask cluster's failed task said in its place."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memvelope_tools._workers.processes import fork_context, run_each, worker_context
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


def test_tasks_run_in_worker_processes_come_back_in_order() -> None:
    assert run_each(divmod, [7, 9, 11, 13], [2, 4, 3, 5], workers=2) == [(3, 1), (2, 1), (3, 2), (2, 3)]
    assert run_each(divmod, [7], [2], workers=None) == [(3, 1)]  # one task: run here
    assert run_each(divmod, [], [], workers=2) == []


def _halve(n: int) -> int:
    if n % 2:
        raise ValueError(f"{n} is odd")
    return n // 2


@pytest.mark.slow
def test_a_task_that_fails_on_a_dask_cluster_is_none_in_its_place() -> None:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert run_each(_halve, [4, 3, 8], workers=None, client=client) == [2, None, 4]


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
