"""Stopping cleanly: SIGTERM ends a command as Ctrl-C does, and worker processes never outlive their parent.

A command run under :func:`terminate_as_interrupt` turns the first SIGTERM into :class:`Terminated` (a
``KeyboardInterrupt``), raised in the main thread, so the same clean-up runs as for Ctrl-C: temporary
files are removed, the target is left as it was and worker processes are stopped. :func:`bind_to_parent`,
run first in a worker process, makes the system stop the worker when its parent dies, even when the
parent is killed outright. :func:`held` makes a stop wait until a short step (the rename that puts an
output in place) has run whole.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Final

#: The exit status of a command stopped by SIGTERM (128 + the signal's number, as shells report it).
TERMINATED_STATUS: Final = 128 + signal.SIGTERM
_PR_SET_PDEATHSIG: Final = 1
#: The signals that ask a command to stop.
_STOPS: Final = frozenset(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if s)


class Terminated(KeyboardInterrupt):
    """The process was asked to stop (SIGTERM); handled wherever an interrupt is."""


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, the first SIGTERM raises :class:`Terminated` in the main thread (later ones are
    ignored while the clean-up runs). Does nothing outside the main thread."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM wait: a stop asked for meanwhile takes effect as the block ends,
    so the block runs whole or not at all. Python runs signal handlers in the main thread only, so only
    the main thread holds them; elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    asked: list[int] = []

    def wait(signum: int, frame: FrameType | None) -> None:
        asked.append(signum)

    before = {signum: signal.signal(signum, wait) for signum in _STOPS}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(asked):
            signal.raise_signal(signum)  # the handler the block found runs now, as it would have then


def _take_stops() -> None:
    """Give SIGINT and SIGTERM their usual meaning in a worker process (one may be forked inside :func:`held`,
    whose handlers it inherits)."""
    for signum in _STOPS:
        signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)


def bind_to_parent(parent: int | None) -> None:
    """Stop this (worker) process when its parent process dies: on Linux the system sends SIGKILL
    (``PR_SET_PDEATHSIG``); elsewhere a thread watches the parent's id. ``parent`` is the parent's id
    when known: a parent already gone by now stops this process at once. Ctrl-C and SIGTERM then act on
    this process as on any other, whatever handlers it inherited."""
    _take_stops()
    if sys.platform.startswith("linux") and _pdeathsig(signal.SIGKILL):
        if parent is not None and os.getppid() != parent:
            os._exit(1)
        return
    expected = os.getppid() if parent is None else parent

    def watch() -> None:
        while os.getppid() == expected:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _pdeathsig(signum: int) -> bool:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
