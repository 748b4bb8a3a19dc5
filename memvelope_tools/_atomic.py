"""Atomic file output: write to a temporary file in the target folder, then rename over the target."""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from ._signals import held
from .errors import OutputError

#: Every file this process put in place through this module, in order: what a stopped command has written.
_written: list[Path] = []


def written_count() -> int:
    """How many files this process has put in place so far (see :func:`written_since`)."""
    return len(_written)


def written_since(count: int) -> list[Path]:
    """The files put in place after the first ``count`` (a :func:`written_count`), in order."""
    return _written[count:]


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Yield a binary file; on success it replaces ``path`` at once, on any failure nothing changes.

    The temporary file lives in the target's folder so the final rename never crosses filesystems.
    """
    target = Path(path)
    if target.exists() and not target.is_file() and not target.is_dir():
        # A device or pipe (/dev/stdout, /dev/full, a FIFO): it cannot be replaced, only written to.
        yield from _direct_output(target)
        return
    if target.is_dir():
        raise OutputError("output path is a folder", reason="output", source=str(target))
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"output folder does not exist: {folder}", reason="output", source=str(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(f"cannot write output: {exc.strerror}", reason="output", source=str(target)) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(OSError):
            os.chmod(tmp, new_file_mode(target))
        with held():  # a stop lands before the rename or after it is recorded, never between
            os.replace(tmp, target)
            _written.append(target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OutputError(
                f"cannot write output: {exc.strerror or exc}", reason="output", source=str(target)
            ) from exc
        raise


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield the path of an empty temporary file beside ``path``, for a writer that opens files by name
    (a database); as :func:`atomic_output`, on success it is synced and replaces ``path`` at once, on any
    failure it is removed and ``path`` is unchanged. Files the writer made beside it, named after it
    with a suffix (a journal), are removed too."""
    target = Path(path)
    check_output_file(target)
    if target.exists() and not target.is_file():
        raise OutputError("output path is not a regular file", reason="output", source=str(target))
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
        os.close(fd)
    except OSError as exc:
        raise OutputError(f"cannot write output: {exc.strerror}", reason="output", source=str(target)) from exc
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        with contextlib.suppress(OSError):
            os.chmod(tmp, new_file_mode(target))
        with held():
            os.replace(tmp, target)
            _written.append(target)
    except BaseException as exc:
        for leftover in [tmp, *(str(p) for p in folder.glob(f"{glob.escape(Path(tmp).name)}-*"))]:
            with contextlib.suppress(OSError):
                os.unlink(leftover)
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise OutputError(
                f"cannot write output: {exc.strerror or exc}", reason="output", source=str(target)
            ) from exc
        raise


def _direct_output(target: Path) -> Iterator[BinaryIO]:
    try:
        with open(target, "wb") as fh:
            yield fh
    except OSError as exc:
        raise OutputError(f"cannot write output: {exc.strerror or exc}", reason="output", source=str(target)) from exc


def output_folder(path: str | os.PathLike[str]) -> Path:
    """Create the output folder ``path`` (and its parents) if missing; an OutputError if it cannot be."""
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"cannot create output folder: {exc.strerror or exc}", reason="output", source=str(out)
        ) from None
    return out


def check_output_file(path: str | os.PathLike[str]) -> None:
    """An OutputError now, before any work, when ``path`` could not be written atomically later:
    its folder is missing or not writable, or it is a folder itself."""
    target = Path(path)
    if target.exists() and not target.is_file() and not target.is_dir():
        return  # a device or pipe, written to directly
    if target.is_dir():
        raise OutputError("output path is a folder", reason="output", source=str(target))
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"output folder does not exist: {folder}", reason="output", source=str(target))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"output folder is not writable: {folder}", reason="output", source=str(target))


def check_output_folder(path: str | os.PathLike[str]) -> None:
    """An OutputError now, before any work, when the output folder ``path`` could not be created or
    written to later (see :func:`output_folder`)."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise OutputError("output path is not a folder", reason="output", source=str(out))
    existing = out
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OutputError(f"cannot create output folder: {existing} is not a folder", reason="output", source=str(out))
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OutputError(f"output folder is not writable: {existing}", reason="output", source=str(out))


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_output`)."""
    with atomic_output(path) as fh:
        fh.write(data)


def new_file_mode(target: Path) -> int:
    """The mode a file written to replace ``target`` gets: ``target``'s own when it is a file, else what
    the umask gives a new file (a temporary file is made private, 0600, until then)."""
    with contextlib.suppress(OSError):
        if target.is_file():
            return target.stat().st_mode & 0o7777
    return 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_outputs(
    folder: Path, names: Sequence[str], *, also: Sequence[tuple[Path, Path]] = ()
) -> Iterator[Callable[[str], BinaryIO]]:
    """Files of one folder replaced together: yields ``open_file(name)`` (a binary file for each of
    ``names``, written to a temporary file beside its target); on success every target is replaced at
    once, under a lock on the folder, so two writers of the same folder never leave a mix of their
    files; on any failure nothing changes. ``also`` are ``(written, target)`` pairs of files the
    caller wrote and synced itself, each renamed to its target first, with the others; on failure
    they are removed."""
    made: dict[str, tuple[str, BinaryIO]] = {}

    def open_file(name: str) -> BinaryIO:
        if name not in names or name in made:
            raise ValueError(f"{name!r} is not one of the files still to write")
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise OutputError(
                f"cannot write output: {exc.strerror}", reason="output", source=str(folder / name)
            ) from exc
        made[name] = (tmp, os.fdopen(fd, "wb"))
        return made[name][1]

    try:
        yield open_file
        for name, (tmp, fh) in made.items():
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
            with contextlib.suppress(OSError):
                os.chmod(tmp, new_file_mode(folder / name))
        for written, target in also:
            with contextlib.suppress(OSError):
                os.chmod(written, new_file_mode(target))
        with folder_lock(folder), held():
            for written, target in also:
                os.replace(written, target)
            for name, (tmp, _) in made.items():
                os.replace(tmp, folder / name)
                _written.append(folder / name)
    except BaseException as exc:
        for tmp, fh in made.values():
            with contextlib.suppress(OSError):  # a full disk fails the close too: remove the file all the same
                fh.close()
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for written, _ in also:
            with contextlib.suppress(OSError):
                os.unlink(written)
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise OutputError(
                f"cannot write output: {exc.strerror or exc}", reason="output", source=str(folder)
            ) from exc
        raise


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock between processes on ``folder`` (where the system has ``flock``), held for the
    block. Taken again by the process that holds it (by any thread of it), it is already held: the
    block runs at once and the lock is released only when the outermost block ends."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: renames are still atomic one by one
        yield
        return
    key = os.path.realpath(folder)
    with _locks_guard:
        depth = _locks_held.get(key)
        if depth is not None:
            _locks_held[key] = (depth[0], depth[1] + 1)
    if depth is not None:
        try:
            yield
        finally:
            with _locks_guard:
                fd, count = _locks_held[key]
                _locks_held[key] = (fd, count - 1)
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with _locks_guard:
            _locks_held[key] = (fd, 1)
        try:
            yield
        finally:
            with _locks_guard:
                del _locks_held[key]
    finally:
        os.close(fd)  # closing the descriptor releases the lock


#: The folder locks this process holds: the real path, the descriptor holding it and how many blocks hold it.
_locks_held: dict[str, tuple[int, int]] = {}
_locks_guard = threading.Lock()
