"""Arrow's memory while batches stream through a process: a pool that gives back what a batch freed, and the
call that returns freed memory to the system."""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Iterator

import pyarrow as pa

__all__ = ["give_back_memory", "lean_pool"]

_lent: pa.MemoryPool | None = None  # the pool streams allocate from, once one has


@contextlib.contextmanager
def lean_pool() -> Iterator[None]:
    """For the block, Arrow allocates from jemalloc where pyarrow has it and no pool was chosen
    (``ARROW_DEFAULT_MEMORY_POOL``): mimalloc, its default on Linux, keeps much of what a batch freed until
    asked, so the batches' memory piled up between two :func:`give_back_memory` calls. The caller's pool is
    the default again once the block ends (a buffer keeps the pool that allocated it, and is freed there)."""
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        yield
        return
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without it
        yield
        return
    global _lent
    _lent = pool
    before = pa.default_memory_pool()
    pa.set_memory_pool(pool)
    try:
        yield
    finally:
        pa.set_memory_pool(before)


def give_back_memory() -> None:
    """Return the memory freed so far to the system: Arrow's pools (its default and the streams'), and the
    C library's where it can."""
    pa.default_memory_pool().release_unused()
    if _lent is not None:
        _lent.release_unused()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).malloc_trim(0)
