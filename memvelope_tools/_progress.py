"""Progress bars for long reads and writes: tqdm, notebook-aware, silent when nobody is watching."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, Protocol


class Bar(Protocol):
    """What callers may do with a bar: advance it, and set its total once it is known (then refresh)."""

    total: float | None

    def update(self, n: float | None = 1) -> Any: ...

    def refresh(self) -> Any: ...


class _NoBar:
    def __init__(self) -> None:
        self.total: float | None = None

    def update(self, n: float | None = 1) -> None:
        return None

    def refresh(self) -> None:
        return None


def _in_notebook() -> bool:
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _stderr_is_terminal() -> bool:
    try:
        return bool(sys.stderr is not None and sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


def wanted(enabled: bool | None) -> bool:
    """Whether a bar should show: ``enabled`` if given, else on a terminal or in a notebook."""
    if enabled is not None:
        return enabled
    return _stderr_is_terminal() or _in_notebook()


#: Seconds of work before a bar shows in a notebook: a cell that finishes sooner keeps no bar in its output.
NOTEBOOK_DELAY = 1.0


@contextlib.contextmanager
def progress_bar(total: int | None, *, desc: str, unit: str = "it", enabled: bool | None = None) -> Iterator[Bar]:
    """Yield an object with ``update(n)``: a tqdm bar when wanted (see :func:`wanted`), else a no-op.

    In a notebook the bar is the ipywidgets bar, shown once the work has taken :data:`NOTEBOOK_DELAY`
    seconds and hidden when it ends; without ipywidgets there is no bar at all, since a text bar
    saves its first state (``0%``) in the cell's output. Work that ends without an error fills its bar.
    """
    if not wanted(enabled):
        yield _NoBar()
        return
    bar_cls: Any
    delay = 0.0
    if _in_notebook():
        try:
            import ipywidgets  # noqa: F401
            from tqdm.notebook import tqdm as bar_cls
        except ImportError:
            yield _NoBar()
            return
        delay = NOTEBOOK_DELAY
    else:
        from tqdm.std import tqdm as bar_cls
    bar = bar_cls(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=unit == "B",
        leave=False,
        file=sys.stderr,
        dynamic_ncols=True,
        delay=delay,
    )
    try:
        yield bar
        if bar.total and bar.n < bar.total:
            bar.update(bar.total - bar.n)
    finally:
        bar.close()
