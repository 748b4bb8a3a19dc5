"""A full disk behind standard output is one clear error line and a non-zero exit, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import memvelope_tools as mv

ROOT = Path(__file__).resolve().parent.parent
FULL = Path("/dev/full")
pytestmark = pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full (a device that is always full)")


@pytest.mark.parametrize(
    "args",
    [
        ["convert", os.fspath(mv.sample_path("chatgpt"))],
        ["info", os.fspath(ROOT / "fixtures" / "sample.mve.json")],
        ["search", os.fspath(ROOT / "fixtures" / "sample.mve.json"), "hello", "--json"],
        ["search", os.fspath(ROOT / "fixtures" / "sample.mve.json"), "zzzznothing"],
    ],
    ids=["convert", "info", "search json", "search text"],
)
def test_stdout_on_a_full_disk_is_one_error_line(args: list[str]):
    with open(FULL, "wb") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "memvelope_tools", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": os.fspath(ROOT)},
            timeout=120,
        )
    assert proc.returncode == 1
    assert proc.stderr == "memvelope: error: cannot write to standard output: No space left on device\n"
