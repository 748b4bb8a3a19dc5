"""What the index of a history folder records beside the engine's files: ``parts.json`` and a rows file per
part, each checked to be as written before it is used."""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .._frames.folders import INDEX_FOLDER, PARTS, part_digest
from .._spec import ROLES
from ..errors import SearchIndexError
from .engine import FORMAT, PARTS_FILE, ROWS, engine_stamps

# A history folder's messages come in parts that never change (see memvelope_tools._frames.folders).
# Its index holds a document per message, numbered in the parts' order, and beside the engine's
# files a rows file per part (what a result shows of its messages, and their conversation's key) and
# parts.json. An add indexes its new part only. The conversation columns of a result, and the order
# that breaks equal scores, come from the folder's conversations and state as they are when the
# index is opened.
#
# parts.json says, for each part indexed, what identifies the part's content (its name, rows and
# size, and the digest its name carries or else the sha256 of its file), and the size and sha256 of
# its rows file; and the stamp of the engine's files. It ends with the sha256 of all that. A part
# whose file is no longer the one indexed makes the index out of date; a file of the index that is
# not as written (a link, a pipe or a device in its place, or other bytes, timestamps kept or not)
# makes it damaged: it is built anew. It is written under the folder's lock, which an add holds
# from start to end, and read without it.

_PARTS_FORMAT = f"{FORMAT}+parts-2"
_PARTS_FILE_MAX = 64 << 20  # bytes of parts.json read at most: a few hundred per part
_PART_FIELDS = ("name", "rows", "size", "digest", "mtime_ns", "rows_size", "rows_sha256")
_HEX = re.compile(r"[0-9a-f]+")


class Unusable(ValueError):
    """The index of a history folder cannot be used as it is; the message says why."""


class Damaged(Unusable):
    """A file of the index of a history folder is not as it was written."""


class Stale(Unusable):
    """The index of a history folder does not hold the folder's parts as they are now, or another version wrote it."""


@dataclass(frozen=True)
class Indexed:
    """A part as the index of a history folder holds it: its name, rows, size and digest (the one its
    name carries, else the sha256 of its file), its modification time then (a part whose name carries
    no digest is hashed again only when that changed), and the size and sha256 of its rows file."""

    name: str
    rows: int
    size: int
    digest: str
    mtime_ns: int
    rows_size: int
    rows_sha256: str


def part_rows_file(name: str) -> str:
    return f"rows-{name.removesuffix('.parquet')}.arrow"


def _kind(mode: int) -> str:
    """What a file of ``mode`` is, as a message says it."""
    kinds = [
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a pipe"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def check_index_place(path: Path) -> None:
    """SearchIndexError when ``path``, where a history folder keeps its index, holds something other
    than a folder of its own (a symbolic link, a file): the index is neither read nor written through it."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise SearchIndexError(f"cannot read it: {exc.strerror or exc}", source=os.fspath(path)) from None
    if not stat.S_ISDIR(info.st_mode):
        what = _kind(info.st_mode) if not stat.S_ISREG(info.st_mode) else "a file"
        raise SearchIndexError(
            f"{INDEX_FOLDER} is {what}, not a folder of its own, so the search index is not kept there; "
            "remove it and the next search builds the index",
            source=os.fspath(path),
        )


@contextlib.contextmanager
def _regular_file(path: Path) -> Iterator[int]:
    """A descriptor of the regular file ``path``, opened without following a link or waiting on a
    pipe; Damaged when it is missing, unreadable or not a regular file."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            raise Damaged(f"{path.name} is {_kind(info.st_mode)}")
        fd = os.open(path, flags)
    except OSError as exc:
        raise Damaged(f"cannot read {path.name}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since it was looked at
            raise Damaged(f"{path.name} is not a regular file")
        yield fd
    finally:
        os.close(fd)


def _sha256_file(path: Path) -> str:
    """The sha256 of the regular file ``path`` (Damaged when it is not one or cannot be read)."""
    with _regular_file(path) as fd:
        return _sha256_read(fd, path)


def _sha256_read(fd: int, path: Path) -> str:
    """The sha256 of what the descriptor ``fd`` of ``path`` reads from its start, read a block at a time: none
    of the file's pages is mapped into the process (Damaged when it cannot be read)."""
    digest = hashlib.sha256()
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        while block := os.read(fd, 1 << 20):
            digest.update(block)
    except OSError as exc:
        raise Damaged(f"cannot read {path.name}: {exc.strerror or exc}") from None
    return digest.hexdigest()


def _json_digest(told: dict[str, Any]) -> str:
    """The sha256 parts.json ends with: of what it says, but that digest, in one canonical form."""
    canonical = json.dumps({k: v for k, v in told.items() if k != "sha256"}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def write_parts_file(made: Path, parts: list[Indexed]) -> None:
    """Write parts.json into the folder ``made``, beside the engine's files and the rows files of ``parts``."""
    told: dict[str, Any] = {
        "format": _PARTS_FORMAT,
        "parts": [{field: getattr(part, field) for field in _PART_FIELDS} for part in parts],
        "files": engine_stamps(made),
    }
    told["sha256"] = _json_digest(told)
    (made / PARTS_FILE).write_text(json.dumps(told), encoding="utf-8")


def read_parts_file(path: Path) -> list[Indexed]:
    """The parts the index in the folder ``path`` holds, once each of its files is found to be a
    regular file, parts.json to be as written and the engine's files as they were then: Damaged
    otherwise, Stale when there is no index or another version wrote it."""
    try:
        entries = list(os.scandir(path))
    except FileNotFoundError:
        raise Stale("there is none") from None
    except OSError as exc:
        raise Damaged(f"cannot read it: {exc.strerror or exc}") from None
    for entry in entries:
        if not entry.is_file(follow_symlinks=False):
            try:
                what = _kind(entry.stat(follow_symlinks=False).st_mode)
            except OSError:
                what = "gone"
            raise Damaged(f"{entry.name} is {what}")
    if not os.path.lexists(path / PARTS_FILE) and os.path.lexists(path / ROWS):
        raise Stale("it is the index of a Parquet folder, not of a history folder")
    with _regular_file(path / PARTS_FILE) as fd:
        try:
            data = os.read(fd, _PARTS_FILE_MAX + 1)
        except OSError as exc:
            raise Damaged(f"cannot read {PARTS_FILE}: {exc.strerror or exc}") from None
    if len(data) > _PARTS_FILE_MAX:
        raise Damaged(f"{PARTS_FILE} is larger than {_PARTS_FILE_MAX >> 20} MiB")
    try:
        told = json.loads(data)
    except (ValueError, RecursionError):
        raise Damaged(f"{PARTS_FILE} is not JSON") from None
    if not isinstance(told, dict):
        raise Damaged(f"{PARTS_FILE} is not as written")
    if "sha256" not in told and isinstance(told.get("format"), str) and told["format"] != _PARTS_FORMAT:
        raise Stale("another version built it")
    if told.get("sha256") != _json_digest(told):
        raise Damaged(f"{PARTS_FILE} is not as written (its sha256 differs)")
    if told.get("format") != _PARTS_FORMAT:
        raise Stale("another version built it")
    if set(told) != {"format", "parts", "files", "sha256"} or not isinstance(told["parts"], list):
        raise Damaged(f"{PARTS_FILE} is not as written")
    parts = [_indexed(item) for item in told["parts"]]
    if len({part.name for part in parts}) != len(parts):
        raise Damaged(f"{PARTS_FILE} names a part twice")
    if told["files"] != engine_stamps(path):
        raise Damaged("the engine's files changed since it was written")
    return parts


def _indexed(item: Any) -> Indexed:
    """A part as parts.json says it; Damaged when it does not say one."""
    bad = Damaged(f"{PARTS_FILE} is not as written")
    if not isinstance(item, dict) or set(item) != set(_PART_FIELDS):
        raise bad
    name, digest, rows_sha256 = item["name"], item["digest"], item["rows_sha256"]
    numbers = [item[field] for field in ("rows", "size", "mtime_ns", "rows_size")]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers):
        raise bad
    if not (isinstance(name, str) and isinstance(digest, str) and isinstance(rows_sha256, str)):
        raise bad
    if os.path.basename(name) != name or not name.endswith(".parquet") or name.startswith(".") or "\0" in name:
        raise bad
    named = part_digest(name)
    if (digest != named) if named is not None else not (len(digest) == 64 and _HEX.fullmatch(digest)):
        raise bad
    if len(rows_sha256) != 64 or not _HEX.fullmatch(rows_sha256):
        raise bad
    return Indexed(**item)


def part_identity(part: Path, name: str, rows: int) -> Indexed:
    """What identifies a part's content (the rows file's fields left to fill): its size, modification
    time and digest, the one its name carries or else the sha256 of its file."""
    try:
        info = os.stat(part)
        digest = part_digest(name) or _sha256_file(part)
    except (OSError, Damaged) as exc:
        raise SearchIndexError(f"cannot read {part}: {exc}", source=os.fspath(part)) from None
    return Indexed(name, rows, info.st_size, digest, info.st_mtime_ns, 0, "")


def same_part(held: Indexed, part: Path, *, hash_all: bool = False) -> bool:
    """Whether the file ``part`` is the part ``held`` says was indexed: of its size and with the digest
    its name carries, or, for a name that carries none, of its modification time then or its sha256
    (``hash_all``: its sha256 whatever the time)."""
    try:
        info = os.stat(part)
    except OSError:
        return False
    if info.st_size != held.size:
        return False
    named = part_digest(held.name)
    if named is not None:
        return named == held.digest
    if info.st_mtime_ns == held.mtime_ns and not hash_all:
        return True
    try:
        return _sha256_file(part) == held.digest
    except Damaged:
        return False


def holds(held: list[Indexed], folder: Path, parts: list[tuple[str, int]], *, hash_all: bool = False) -> bool:
    """Whether the parts ``held`` are the first parts of the history folder ``folder`` as they are now."""
    return len(held) <= len(parts) and all(
        part.name == name and part.rows == rows and same_part(part, folder / PARTS / name, hash_all=hash_all)
        for part, (name, rows) in zip(held, parts[: len(held)], strict=True)
    )


def rows_table(path: Path, part: Indexed) -> pa.Table:
    """The rows file of ``part`` in the index in the folder ``path``, memory-mapped, once found to be
    as written; Damaged otherwise. Its sha256 is read through the file, not the mapping: a page of the
    mapping is resident only once a reader touches it (the texts of the results a search shows)."""
    file = path / part_rows_file(part.name)
    with _regular_file(file) as fd:
        size = os.fstat(fd).st_size
        if size != part.rows_size or size == 0:
            raise Damaged(f"{file.name} holds {size} bytes, {PARTS_FILE} says {part.rows_size}")
        if _sha256_read(fd, file) != part.rows_sha256:
            raise Damaged(f"{file.name} is not as written (its sha256 differs)")
        try:
            mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except OSError as exc:
            raise Damaged(f"cannot read {file.name}: {exc.strerror or exc}") from None
    try:
        rows = pa.ipc.open_file(pa.BufferReader(pa.py_buffer(mapped))).read_all()
    except (pa.ArrowException, ValueError, OSError) as exc:
        raise Damaged(f"cannot read {file.name}: {exc}") from None
    if not rows.schema.equals(part_rows_schema()) or rows.num_rows != part.rows:
        raise Damaged(f"{file.name} does not hold the rows of {part.name}")
    role = pc.min_max(rows.column("role")).as_py()
    position = pc.min(rows.column("position")).as_py()
    if (role["min"] is not None and (role["min"] < 0 or role["max"] >= len(ROLES))) or (position or 0) < 0:
        raise Damaged(f"{file.name} holds values out of range")
    return rows


def file_digest(path: Path) -> tuple[int, str]:
    """Size and sha256 of a file just written."""
    return path.stat().st_size, _sha256_file(path)


def part_rows_schema() -> pa.Schema:
    return pa.schema(
        [
            ("conversation_key", pa.string()),
            ("position", pa.int64()),
            ("role", pa.int8()),
            ("ts", pa.int64()),
            ("text", pa.string()),
        ]
    )
