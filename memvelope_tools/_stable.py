"""Inputs that cannot change under a reader: a file's bytes copied into this process's own memory, and
the check that the file was not truncated, replaced or rewritten while they were copied.

The parsers (orjson, the C helpers) only ever see memory no other process can write, so a file changed
while it is read gives either its content as it was when reading began or a clean error (reason
``changed``), never a signal or memory read past its end.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
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
    """A zeroed, writable buffer of ``size`` bytes that belongs to this process alone (an anonymous map
    where the system has them, so a large one costs no memory until written)."""
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


#: Bytes read at a time by :class:`Windows` (each window holds about this many, unless one element is larger).
WINDOW = 16 << 20


class Windows:
    """An input's bytes a window at a time, each window copied into a private buffer (see
    :func:`private_buffer`) reused once given back, so memory stays a few windows whatever the
    input's size.

    :meth:`advance` gives the next window: the current one's bytes from a given position on (an
    element not yet whole), then as many new bytes as fit. It may reuse the buffer of any earlier window,
    except one lent out (:meth:`lend`) and not yet given back (:meth:`give_back`). ``fill(view, at)``
    copies the input's bytes from offset ``at`` into ``view`` and returns how many (0 at its end; its
    ``size`` is the number of bytes it has, None when unknown until then);
    ``check`` (called once everything was read) raises :class:`Changed` when the input changed meanwhile.
    With ``read_ahead`` (a ``fill`` that may run on another thread, one call at a time), windows given
    inside :meth:`reading_ahead` have their new bytes copied meanwhile, while the current one is used.
    """

    def __init__(
        self,
        fill: Callable[[memoryview, int], int],
        size: int | None,
        *,
        window: int | None = None,
        check: Callable[[], Any] | None = None,
        on_bytes: Callable[[int], Any] | None = None,
        read_ahead: bool = False,
    ) -> None:
        self.size, self.window = size, max(1, WINDOW if window is None else window)
        self.start = 0  # where the current window begins in the input
        self._fill, self._check = fill, check
        self.on_bytes = on_bytes  # called with the number of bytes each time some are read
        self._read = 0
        self._ended = False
        self._free: list[mmap.mmap | bytearray] = []
        self._lent: dict[int, mmap.mmap | bytearray] = {}
        self._buf: mmap.mmap | bytearray | None = None
        self._view = memoryview(b"")
        self._may_read_ahead = read_ahead and size is not None
        self._head = min(_HEAD_ROOM, self.window)  # at most a window: a long element carried still doubles it
        self._reading_ahead = False
        self._ahead: _Ahead | None = None

    @property
    def eof(self) -> bool:
        """Whether the current window ends where the input does."""
        return self._ended or (self.size is not None and self._read >= self.size)

    def lend(self) -> memoryview:
        """The current window, whose bytes stay as they are until it is given back."""
        if self._buf is not None:
            self._lent[id(self._buf)] = self._buf
        return self._view

    def give_back(self, view: memoryview) -> None:
        """Let :meth:`advance` reuse the buffer of a window :meth:`lend` gave."""
        buf = self._lent.pop(id(view.obj), None)
        if buf is not None and buf is not self._buf:
            self._free.append(buf)

    @contextlib.contextmanager
    def reading_ahead(self) -> Iterator[None]:
        """Within this, each window's successor is copied on another thread while the window is used
        (when the windows were made with ``read_ahead``); on leaving, no copy is still going on."""
        self._reading_ahead = self._may_read_ahead
        try:
            yield
        finally:
            self._reading_ahead = False
            self._drop_ahead()

    def advance(self, keep: int) -> memoryview:
        """The next window, beginning with the current one's bytes from ``keep`` on; raises
        :class:`Changed` when the input ends before its size (see :meth:`finish` for the rest)."""
        old, old_buf = self._view, self._buf
        carry = len(old) - keep
        ahead = self._take_ahead()
        if ahead is not None and carry <= self._head:
            buf = ahead.buf
            view = memoryview(buf)[self._head - carry : self._head + ahead.done]
            view[:carry] = old[keep:]
            self._got(ahead.done)
        else:
            buf, view = self._read_here(old[keep:], ahead)
        self.start += len(old) - carry
        self._buf, self._view = buf, view
        if old_buf is not None and id(old_buf) not in self._lent:
            self._free.append(old_buf)
        if self._reading_ahead and not self.eof:
            self._start_ahead()
        return self._view

    def _read_here(self, carried: memoryview, ahead: _Ahead | None) -> tuple[mmap.mmap | bytearray, memoryview]:
        """A window of the bytes ``carried``, those read ahead (if any), then new bytes read on this thread."""
        carry, before = len(carried), 0 if ahead is None else ahead.done
        room = max(self.window, 2 * carry, carry + before)
        if self.size is not None:
            room = min(room, carry + self.size - self._read)
        buf = self._buffer(room)
        view = memoryview(buf)
        view[:carry] = carried
        done = carry
        if ahead is not None:
            view[done : done + before] = memoryview(ahead.buf)[self._head : self._head + before]
            done += before
            self._got(before)
            self._free.append(ahead.buf)
        while done < room:
            n = self._fill(view[done:room], self._read)
            if not n and self.size is None:
                self._ended = True
                break
            if not n:
                raise Changed(CHANGED)
            done += n
            self._got(n)
        return buf, view[:done]

    def _got(self, n: int) -> None:
        self._read += n
        if self.on_bytes is not None:
            self.on_bytes(n)

    def _buffer(self, room: int) -> mmap.mmap | bytearray:
        """A free buffer of at least ``room`` bytes (a new one when none is), taken off the free list."""
        fits = [buf for buf in self._free if len(buf) >= room]
        least = self.window + (self._head if self._may_read_ahead else 0)  # any buffer may later be read ahead into
        buf = fits[0] if fits else _reused_buffer(max(room, least))
        self._free = [other for other in self._free if other is not buf and len(other) >= least][:1]
        return buf

    def _start_ahead(self) -> None:
        assert self.size is not None
        want = min(self.window, self.size - self._read)
        self._ahead = _Ahead(self._fill, self._buffer(self._head + self.window), self._head, self._read, want)

    def _take_ahead(self) -> _Ahead | None:
        """The bytes read ahead, once they are; raises :class:`Changed` when the input ended before them."""
        ahead = self._ahead
        if ahead is not None:
            ahead.wait()  # when this raises (a stop among others), reading_ahead() still waits for the thread
            self._ahead = None
        return ahead

    def _drop_ahead(self) -> None:
        ahead = self._ahead
        if ahead is not None:
            ahead.end()
            self._ahead = None
            self._free.append(ahead.buf)

    def finish(self) -> None:
        """Raise :class:`Changed` when the input changed while it was read (once all of it was)."""
        self._drop_ahead()
        if self._check is not None:
            self._check()

    @classmethod
    def of_pieces(cls, pieces: Iterable[Any], size: int | None = None, *, window: int | None = None) -> Windows:
        """Windows over the bytes-like ``pieces``, in order, as the iterable gives them (it may wait for
        the next); ``size`` is their total when known. Each piece is let go once copied."""
        source = iter(pieces)
        head = memoryview(b"")

        def fill(view: memoryview, _at: int) -> int:
            nonlocal head
            done = 0
            while done < len(view):
                if not head:
                    piece = next(source, None)
                    if piece is None:
                        break
                    head = memoryview(piece).cast("B")
                    continue
                n = min(len(head), len(view) - done)
                view[done : done + n] = head[:n]
                head = head[n:]
                done += n
            return done

        return cls(fill, size, window=window)


#: Bytes free before the new bytes of a window read ahead (at most one window's), where the element the
#: window before left unfinished is put; a longer one makes that window be read the ordinary way.
_HEAD_ROOM: Final = 2 << 20


class _Ahead:
    """``want`` bytes of an input from offset ``at`` on, copied by ``fill`` into ``buf[head:]`` on a thread
    of their own (``fill`` releases the GIL while it copies)."""

    def __init__(
        self, fill: Callable[[memoryview, int], int], buf: mmap.mmap | bytearray, head: int, at: int, want: int
    ) -> None:
        self.buf, self.done, self._head = buf, 0, head
        self._fill, self._at, self._want = fill, at, want
        self._error: BaseException | None = None
        # Waited for with an event: Thread.join interrupted by a signal may take the thread for ended.
        self._ended = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memvelope-read-ahead", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            with memoryview(self.buf) as view:
                while self.done < self._want:
                    n = self._fill(view[self._head + self.done : self._head + self._want], self._at + self.done)
                    if not n:
                        raise Changed(CHANGED)
                    self.done += n
        except BaseException as exc:  # raised on the thread that waits for these bytes
            self._error = exc
        finally:
            self._ended.set()

    def end(self) -> None:
        """Wait until the thread has ended."""
        self._ended.wait()
        self._thread.join()

    def wait(self) -> None:
        """Wait until the bytes are read; raise what reading them raised."""
        self.end()
        if self._error is not None:
            raise self._error


def _reused_buffer(size: int) -> mmap.mmap | bytearray:
    """A :func:`private_buffer` for windows: read over and over, so huge pages (where the system has them)
    save more than the one compaction they cost."""
    buf = private_buffer(size)
    if isinstance(buf, mmap.mmap) and hasattr(mmap, "MADV_HUGEPAGE"):
        with contextlib.suppress(OSError):  # a kernel without them
            buf.madvise(mmap.MADV_HUGEPAGE)
    return buf


def file_windows(fh: Any, *, window: int | None = None) -> Windows | None:
    """:class:`Windows` over the regular file open as ``fh`` (read with ``pread``, so the file must stay
    open while they are used), or None when it is no regular file. Once all of it was read,
    :meth:`Windows.finish` raises :class:`Changed` when the file changed since this call."""
    fd = fh.fileno()
    before = stamp(fd)
    if before is None:
        return None

    def fill(view: memoryview, at: int) -> int:
        if hasattr(os, "preadv"):
            return os.preadv(fd, [view], at)
        data = os.pread(fd, len(view), at)  # pragma: no cover - systems without preadv
        view[: len(data)] = data  # pragma: no cover
        return len(data)  # pragma: no cover

    def check() -> None:
        if os.pread(fd, 1, before[2]) or changed(fd, before):
            raise Changed(CHANGED)

    return Windows(fill, before[2], window=window, check=check, read_ahead=True)
