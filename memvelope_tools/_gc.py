"""The cyclic garbage collector held off while many objects are made that leave no garbage behind."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while objects are made by the hundred thousand and none is let go
    (an export's parse trees, a library's import, a figure until it is drawn): each batch of new objects would otherwise
    set it off, and each of its full runs goes through every object the process holds (a third of the
    parse time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
