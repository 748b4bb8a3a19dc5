"""The command line's process allocates from one arena of the C library's allocator, whatever threads it
starts: an arena per thread kept what the stream's threads freed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator, on Linux")

# Starts four threads that each allocate a few small blocks from the C library, then prints the
# allocator's statistics (one "Arena N:" block per arena) on stderr.
_SCRIPT = """
import ctypes, sys, threading
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
if sys.argv[1] == "cli":
    from memvelope_tools.cli import main
    try:
        main(["--version"])
    except SystemExit as done:
        assert done.code == 0
def allocate():
    for _ in range(64):
        libc.malloc(256)
threads = [threading.Thread(target=allocate) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
libc.malloc_stats()
"""


def _arenas(how: str) -> int:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    run = subprocess.run(
        [sys.executable, "-c", _SCRIPT, how], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    if run.returncode != 0 or "Arena 0:" not in run.stderr:
        pytest.skip("this C library prints no arena statistics (not glibc)")
    return run.stderr.count("Arena ")


def test_threads_get_arenas_of_their_own_by_default() -> None:
    assert _arenas("plain") > 1  # what the command line changes


def test_the_command_lines_threads_share_one_arena() -> None:
    assert _arenas("cli") == 1


# Runs the command line (``--version``: it loads no Arrow), then prints the backend of Arrow's default pool.
_POOL = """
import sys
if sys.argv[1] == "cli":
    from memvelope_tools.cli import main
    try:
        main(["--version"])
    except SystemExit as done:
        assert done.code == 0
import pyarrow
print(pyarrow.default_memory_pool().backend_name)
"""


def _pool(how: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), environ.get("PYTHONPATH", "")])
    run = subprocess.run(
        [sys.executable, "-c", _POOL, how],
        capture_output=True,
        text=True,
        env={**environ, **env},
        timeout=120,
        check=True,
    )
    return run.stdout.split()[-1]


def test_the_command_lines_arrow_allocates_from_jemalloc() -> None:
    pa = pytest.importorskip("pyarrow")
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        pytest.skip("this pyarrow has no jemalloc")
    # Arrow's own default: mimalloc in recent releases (what the command line changes), jemalloc in older ones.
    assert _pool("plain") in ("mimalloc", "jemalloc")
    assert _pool("cli") == "jemalloc"
    assert _pool("cli", ARROW_DEFAULT_MEMORY_POOL="system") == "system"  # a pool the environment chose is kept


def test_arrow_loaded_already_keeps_its_pool_and_the_environment_is_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pyarrow  # noqa: F401  # loaded, as in a test run or a notebook that calls the command line

    from memvelope_tools._malloc import arrow_jemalloc

    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    arrow_jemalloc()
    assert "ARROW_DEFAULT_MEMORY_POOL" not in os.environ  # lean_pool would take it for the pool in use
