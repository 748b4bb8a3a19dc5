"""Each zip opened once per call: inside :func:`kept_open`, every reader that opens the same zip (the
resolver listing it, the conversion reading its conversations, the readers of the files beside them) is
given the one archive opened first, its listing read once, and the archive is closed when the call ends.

Outside :func:`kept_open` each opening is an archive of its own, closed by its reader. A zip is the same
zip when its path names the same file, unchanged (device, inode, size and modification time): a file
replaced during the call is opened anew, and its readers say that it changed.
"""

from __future__ import annotations

import contextlib
import os
import threading
import zipfile
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["kept_open", "open_nested", "open_zip"]

_lock = threading.Lock()
_depth = 0
_kept: dict[Hashable, tuple[_Kept, IO[bytes] | None]] = {}


class _Kept(zipfile.ZipFile):
    """An archive kept open until the call ends: a reader closing it (a ``with`` block's end) leaves it open."""

    keep = True

    def close(self) -> None:
        if not self.keep:
            super().close()


@contextlib.contextmanager
def kept_open() -> Iterator[None]:
    """Within the block (and any block it runs inside), each zip is opened once and kept open; all are
    closed when the outermost block ends."""
    global _depth
    with _lock:
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            done = list(_kept.values()) if _depth == 0 else []
            if _depth == 0:
                _kept.clear()
        for archive, held in done:
            archive.keep = False
            archive.close()
            if held is not None:
                held.close()


def open_zip(path: Path) -> zipfile.ZipFile:
    """The zip at ``path``: the archive already opened in this call, else a newly opened one (errors are
    :class:`zipfile.ZipFile`'s)."""
    try:
        st = os.stat(path)
    except OSError:
        return zipfile.ZipFile(path)  # raises the error its reader words
    key = ("file", os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    return _shared(key, lambda: (zipfile.ZipFile(path), None), lambda: (_Kept(path), None))


def open_nested(key: Hashable, copy: Callable[[], IO[bytes]]) -> zipfile.ZipFile:
    """The zip a member of another zip holds (``key`` names that member): the archive already opened in
    this call, else one over ``copy()``, the member's bytes copied (closed with the archive once the
    call ends; outside :func:`kept_open`, when the archive is let go of)."""

    def kept() -> tuple[_Kept, IO[bytes]]:
        held = copy()
        try:
            return _Kept(held), held
        except BaseException:
            held.close()
            raise

    def once() -> tuple[zipfile.ZipFile, None]:
        held = copy()
        try:
            return zipfile.ZipFile(held), None
        except BaseException:
            held.close()
            raise

    return _shared(("member", key), once, kept)


def _shared(
    key: Hashable,
    once: Callable[[], tuple[zipfile.ZipFile, Any]],
    kept: Callable[[], tuple[_Kept, IO[bytes] | None]],
) -> zipfile.ZipFile:
    with _lock:
        if _depth == 0:
            return once()[0]
        found = _kept.get(key)
        if found is None:
            found = _kept[key] = kept()
        return found[0]
