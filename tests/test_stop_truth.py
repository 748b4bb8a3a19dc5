"""A stop (Ctrl-C or SIGTERM) says truly what the command left: nothing, or the files it had put in place
whole; the rename that puts an output in place is never cut from the record of it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memvelope_tools import _atomic
from memvelope_tools._atomic import atomic_write, written_count, written_since
from memvelope_tools._signals import TERMINATED_STATUS, Terminated, held, terminate_as_interrupt
from memvelope_tools.cli import main
from memvelope_tools.cli import sample as cli_sample

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="the system has no SIGTERM")


def test_a_stop_asked_for_while_held_lands_as_the_block_ends() -> None:
    ran: list[str] = []
    done = threading.Event()
    other = threading.Thread(target=done.wait)  # the system may hand the signal to any thread
    other.start()
    try:
        with pytest.raises(Terminated), terminate_as_interrupt():
            with held():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)  # a handler that ran now would raise here
                ran.append("the rest of the block")
            ran.append("after the block")
    finally:
        done.set()
        other.join()
    assert ran == ["the rest of the block"]


def test_a_stop_during_the_rename_lands_after_the_file_is_recorded(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "out.json"
    target.write_bytes(b"old")
    rename = os.replace

    def rename_then_stop(src: str, dst: Path) -> None:
        rename(src, dst)
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(_atomic.os, "replace", rename_then_stop)
    first = written_count()
    with pytest.raises(Terminated), terminate_as_interrupt():
        atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
    assert written_since(first) == [target]
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left


@pytest.mark.parametrize(
    ("stop", "status", "word"), [(KeyboardInterrupt, 130, "interrupted"), (Terminated, TERMINATED_STATUS, "terminated")]
)
def test_a_command_stopped_after_writing_its_output_says_so(
    tmp_path: Path, monkeypatch, capsys, stop: type[BaseException], status: int, word: str
) -> None:
    def write_then_stop(path: str, data: bytes) -> None:
        atomic_write(path, data)
        raise stop

    monkeypatch.setattr(cli_sample, "atomic_write", write_then_stop)
    out = tmp_path / "sample.zip"
    assert main(["sample", "chatgpt", "-o", str(out)]) == status
    captured = capsys.readouterr()
    assert captured.err == f"memvelope: {word} after writing {out} whole; nothing else was written\n"
    assert captured.out == ""
    assert out.stat().st_size > 1000


def test_a_command_stopped_before_writing_says_nothing_was_written(tmp_path: Path, monkeypatch, capsys) -> None:
    def stop(path: str, data: bytes) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_sample, "atomic_write", stop)
    out = tmp_path / "sample.zip"
    assert main(["sample", "chatgpt", "-o", str(out)]) == 130
    assert capsys.readouterr().err == "memvelope: interrupted; no output was written\n"
    assert list(tmp_path.iterdir()) == []


def test_files_written_by_an_earlier_command_are_not_counted(tmp_path: Path, monkeypatch, capsys) -> None:
    assert main(["sample", "chatgpt", "-o", str(tmp_path / "first.zip")]) == 0

    def stop(path: str, data: bytes) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_sample, "atomic_write", stop)
    capsys.readouterr()
    assert main(["sample", "chatgpt", "-o", str(tmp_path / "second.zip")]) == 130
    assert capsys.readouterr().err.endswith("; no output was written\n")
    assert [p.name for p in tmp_path.iterdir()] == ["first.zip"]


_FORK_PROBE = """
import os, signal
from memvelope_tools._workers.processes import start_pool, worker_context
from memvelope_tools._signals import Terminated, terminate_as_interrupt

armed = [1]


def stop_after_fork():
    if armed:
        armed.clear()
        os.kill(os.getpid(), signal.SIGTERM)


os.register_at_fork(after_in_parent=stop_after_fork)
assert worker_context().get_start_method() == "fork", "workers are not forked here"
try:
    with terminate_as_interrupt():
        start_pool(2)
    print("the stop was lost")
except Terminated:
    print("stopped", "armed" if armed else "after the fork")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux")
def test_a_stop_while_the_workers_are_forked_is_not_lost() -> None:
    """Python drops an exception raised in its after-fork callbacks: a stop landing there must wait.
    Run in a process of its own, which has one thread, so that its workers are forked."""
    env = {**os.environ, "PYTHONPATH": os.fspath(Path(__file__).resolve().parent.parent)}
    done = subprocess.run([sys.executable, "-c", _FORK_PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "stopped after the fork"
