"""The cyclic garbage collector held off while large parse trees are built."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: parse trees hold no cycles, and the millions of containers a
    large export creates would otherwise set it off over and over (a third of the parse time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
