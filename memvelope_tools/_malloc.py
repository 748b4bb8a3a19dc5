"""The C library's allocator (glibc's, on Linux): one arena for a command's process, and what it holds freed
given back to the system."""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from typing import Final

__all__ = ["arrow_jemalloc", "one_arena", "trim"]

_M_ARENA_MAX: Final = -8  # mallopt's parameter for the number of arenas (glibc's malloc.h)


def one_arena() -> None:
    """Make every thread of this process allocate from one arena of the C library's allocator, unless the
    environment chose their number (``MALLOC_ARENA_MAX``). By default each thread that allocates gets an arena
    of its own, and what the stream's threads freed in theirs stayed with the process (about 20 MB of a
    report's peak at 200 MB). Process-wide and lasting: for the command line's own process, not a library call."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return
    with contextlib.suppress(OSError, AttributeError):  # another C library than glibc
        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, 1)


def arrow_jemalloc() -> None:
    """Make Arrow allocate from jemalloc in this process and the processes it starts, unless the environment
    chose Arrow's pool (``ARROW_DEFAULT_MEMORY_POOL``) or Arrow is already loaded (it chooses once, as it
    loads). Parts of Arrow allocate from the pool it chose whatever pool the caller sets (a Parquet writer's
    pages), and mimalloc, its default, kept much of what they freed resident until the process ended (about 45
    MB of a history add's peak at 1 GB). Linux only, where Arrow's builds have jemalloc. Process-wide and
    lasting: for the command line's own process, not a library call."""
    if not sys.platform.startswith("linux") or "ARROW_DEFAULT_MEMORY_POOL" in os.environ or "pyarrow" in sys.modules:
        return
    os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "jemalloc"


def trim() -> None:
    """Give what the C library's allocator holds freed back to the system, where it can."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).malloc_trim(0)
