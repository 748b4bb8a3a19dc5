"""SIGTERM to ``memvelope convert`` stops it as Ctrl-C does, and its worker processes never outlive it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memvelope_tools._convert.parallel import PARALLEL_ABOVE

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from /proc"),
]


@pytest.fixture(scope="module")
def big_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated export just above the size from which conversion uses worker processes."""
    from generate import generate

    (path,) = generate(tmp_path_factory.mktemp("big"), "claude", PARALLEL_ABOVE + (8 << 20), seed=3)
    return path


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _start(export: Path, target: Path) -> tuple[subprocess.Popen[bytes], list[int]]:
    """``memvelope convert`` running, once its worker processes are up."""
    env = {**os.environ, "PYTHONPATH": os.fspath(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memvelope_tools", "convert", os.fspath(export), "-o", os.fspath(target), "-q"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while len(workers := _children(proc.pid)) < 2:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert time.monotonic() < deadline, "the worker processes never started"
        time.sleep(0.01)
    # Stopped at once: every batch after the first is still to be converted by the workers that just
    # started, so the output cannot be in place yet however loaded the machine is.
    assert proc.poll() is None, "the conversion ended before it could be stopped; the export is too small"
    return proc, workers


def _gone(pids: list[int], seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while any(_alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_sigterm_stops_convert_and_its_workers_and_leaves_the_target_as_it_was(big_export: Path, tmp_path: Path):
    target = tmp_path / "history.mve.json"
    target.write_bytes(b"the envelope of an earlier run")
    proc, workers = _start(big_export, target)
    proc.terminate()
    _, err = proc.communicate(timeout=60)  # returns only once every holder of its pipes is gone
    assert proc.returncode == 128 + signal.SIGTERM, err.decode()
    assert err.decode().strip() == "memvelope: terminated; no output was written"
    assert _gone(workers)
    assert target.read_bytes() == b"the envelope of an earlier run"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.mve.json"]


def test_workers_stop_when_convert_is_killed_outright(big_export: Path, tmp_path: Path):
    proc, workers = _start(big_export, tmp_path / "history.mve.json")
    proc.kill()
    proc.wait(timeout=30)
    assert _gone(workers), "a worker process outlived the converting process"
    assert proc.stdout is not None and proc.stdout.read() == b""  # EOF: no worker holds the pipe any more


def test_sigint_still_stops_convert_with_130(big_export: Path, tmp_path: Path):
    proc, workers = _start(big_export, tmp_path / "history.mve.json")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert _gone(workers)
    assert list(tmp_path.iterdir()) == []
