"""Which engine does the work that has a compiled and a pure-Python twin: ``"c"`` or ``"python"``.

Three pieces of work come in both: scanning JSON text (``memvelope_tools._json._scan`` and its
Python twin in :mod:`memvelope_tools._json.elements`), the text columns of the frames
(``memvelope_tools._frames._textscan`` and its NumPy twin in :mod:`memvelope_tools._frames.text`,
which also reads conversations straight from their JSON text), and the words topics counts (the same
compiled module, and the Arrow kernels of :mod:`memvelope_tools._topic_units`, which are the rule).
Both twins give the same results; this module is the one place that chooses between them.

The engine is ``"c"`` where the compiled helpers are built, else ``"python"``; the environment
variable ``MEMVELOPE_ENGINE=python`` chooses the Python twins for a whole process, and
:func:`engine` for a block of code. The choice holds for the whole process, worker threads
included. :func:`ran` counts, per kind of work, which engine did it, so a test can tell that the
engine it asked for is the one that ran.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Final, Literal

Engine = Literal["c", "python"]
ENGINES: Final[tuple[Engine, ...]] = ("c", "python")
#: The kinds of work with two engines: JSON scanning, text columns, conversations read from JSON text, the
#: words topics counts.
WORK: Final = ("scan", "text", "columns", "words")

_lock = threading.Lock()
_counts: Counter[tuple[str, Engine]] = Counter()


def _from_environment() -> Engine:
    value = os.environ.get("MEMVELOPE_ENGINE", "c").strip().lower() or "c"
    if value not in ENGINES:
        raise ValueError(f"MEMVELOPE_ENGINE={value!r}: expected one of {', '.join(ENGINES)}")
    return value


_chosen: Engine = _from_environment()


def chosen() -> Engine:
    """The engine asked for (``"c"`` by default); a twin without a compiled helper runs in Python anyway."""
    return _chosen


@contextlib.contextmanager
def engine(name: Engine) -> Iterator[None]:
    """Do the work inside the block with the engine ``name`` (``"c"`` or ``"python"``).

    Parameters
    ----------
    name : {"c", "python"}
        The engine to use.

    Yields
    ------
    None

    Raises
    ------
    ValueError
        ``name`` is no engine.

    Examples
    --------
    >>> from memvelope_tools._engine import engine, chosen
    >>> with engine("python"):
    ...     chosen()
    'python'
    """
    global _chosen
    if name not in ENGINES:
        raise ValueError(f"unknown engine {name!r}: expected one of {', '.join(ENGINES)}")
    before, _chosen = _chosen, name
    try:
        yield
    finally:
        _chosen = before


def use_c(compiled: object) -> bool:
    """Whether work whose compiled helper is ``compiled`` (None when not built) runs in C."""
    return compiled is not None and _chosen == "c"


def record(work: str, name: Engine, times: int = 1) -> None:
    """Count that ``work`` (one of :data:`WORK`) was done by the engine ``name``."""
    with _lock:
        _counts[work, name] += times


def ran() -> dict[tuple[str, Engine], int]:
    """How many times each ``(work, engine)`` ran in this process so far."""
    with _lock:
        return dict(_counts)
