"""Inputs that cannot change under a reader: a file's bytes copied into this process's own memory, and
the check that the file was not truncated, replaced or rewritten while they were copied.

The parsers (orjson, the C helpers) only ever see memory no other process can write, so a file changed
while it is read gives either its content as it was when reading began or a clean error (reason
``changed``), never a signal or memory read past its end.
"""

from __future__ import annotations

import mmap
import os
import stat
from collections.abc import Callable
from typing import Any, Final

#: The words every reader uses for a file that changed while it was read.
CHANGED: Final = (
    "the file changed while it was read (truncated, replaced or rewritten); read it again once it is written"
)

Stamp = tuple[int, int, int, int, int]

_CHUNK: Final = 16 << 20


def stamp(fd: int) -> Stamp | None:
    """What identifies the content of the regular file open as ``fd`` (device, inode, size, modification
    and change times), or None when it is no regular file (a pipe, a device: nothing to compare)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def changed(fd: int, before: Stamp | None) -> bool:
    """True when the file open as ``fd`` no longer has the stamp ``before`` (see :func:`stamp`)."""
    return before is not None and stamp(fd) != before


def private_buffer(size: int) -> mmap.mmap | bytearray:
    """A zeroed, writable buffer of ``size`` bytes that belongs to this process alone; where the system
    allows, its pages can be given back once read (see :func:`memvelope_tools._json.elements.release`)."""
    private = getattr(mmap, "MAP_PRIVATE", None)
    if size == 0 or private is None:
        return bytearray(size)
    return mmap.mmap(-1, size, flags=private)


class Changed(Exception):
    """The file changed while it was read (see :data:`CHANGED`); callers raise their own error type."""


def read_whole(fh: Any, on_bytes: Callable[[int], Any] | None = None) -> mmap.mmap | bytearray | None:
    """The bytes of the regular file open as ``fh``, copied into a :func:`private_buffer`; None when it is
    no regular file (the caller reads it as a stream). Raises :class:`Changed` when the file changed
    while it was read."""
    fd = fh.fileno()
    before = stamp(fd)
    if before is None:
        return None
    size = before[2]
    buf = private_buffer(size)
    view = memoryview(buf)
    done = 0
    try:
        while done < size:
            n = os.preadv(fd, [view[done : done + _CHUNK]], done) if hasattr(os, "preadv") else _pread(fd, view, done)
            if not n:
                break
            done += n
            if on_bytes is not None:
                on_bytes(n)
    finally:
        view.release()
    if done != size or os.pread(fd, 1, size) or changed(fd, before):
        if isinstance(buf, mmap.mmap):
            buf.close()
        raise Changed(CHANGED)
    return buf


def _pread(fd: int, view: memoryview, at: int) -> int:
    data = os.pread(fd, _CHUNK, at)
    view[at : at + len(data)] = data
    return len(data)
