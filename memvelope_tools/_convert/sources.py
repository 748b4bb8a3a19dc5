"""Inputs to an ordered list of export parts: files, folders and zip archives (conformance A18, B1, B2).

A folder expands to the regular, non-hidden ``*.json`` files directly inside it; when any of them is a
conversation part (``conversations.json`` or ``conversations-*.json``), only the conversation parts are
taken. Names sort by UTF-16 code units. A zip is read in memory, never extracted: its members are chosen
by the same rule applied to member paths at any depth (``__MACOSX/`` and directories ignored), sorted by
full member path. A member or folder entry that is itself a zip named ``conversations*.zip`` (today's
Claude layout) counts as a conversation part and is opened, one level deep, by the same rule (a large
one is first copied to an unnamed temporary file, never held whole in memory). Limits bound what each
member and all the members of one zip together inflate to (:class:`ZipLimits`).
Across several arguments the rule applies once more: when some folder or zip argument holds conversation
parts, a folder or zip argument holding none (``projects-000.zip``) contributes nothing; a file argument
is always a part.
"""

from __future__ import annotations

import contextlib
import io
import lzma
import os
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO, Final

from .._plural import count
from .._printable import printable
from ..errors import ConversionError, InputError
from .zips import open_nested, open_zip

_ZIP_MAGIC: Final = (b"PK\x03\x04", b"PK\x05\x06")
# What a damaged deflate, bzip2 (an OSError) or LZMA stream raises while a member is read.
_DECOMPRESSION_ERRORS: Final[tuple[type[Exception], ...]] = (zlib.error, lzma.LZMAError)


@dataclass(frozen=True)
class ZipLimits:
    """Limits that stop a zip bomb; raise them with the matching ``memvelope convert`` options."""

    max_member_bytes: int = 8 * 1024**3
    max_ratio: float = 400.0
    ratio_floor_bytes: int = 64 * 1024**2  # members smaller than this are never refused for ratio
    #: What all the members of one zip (nested zips included) may inflate to together; the ratio
    #: limit also applies to that sum against the zip's size on disk.
    max_total_bytes: int = 16 * 1024**3


@dataclass
class Part:
    """One export part: a JSON file on disk (its ``path``) or a member of a (possibly nested) zip."""

    name: str
    opener: Callable[[], BinaryIO] = field(repr=False)
    size: int | None = None
    path: str | None = None

    def open(self) -> BinaryIO:
        """A fresh binary stream of the part's bytes; its read errors (an I/O error, a corrupt zip
        member) are raised as ConversionError naming the part."""
        return _ReadGuard(self.opener(), self.name)  # type: ignore[return-value]

    def read(self) -> bytes:
        """The part's bytes; ConversionError when they cannot be read (I/O error, corrupt zip member)."""
        with self.open() as fh:
            return fh.read()


class _ReadGuard:
    """A binary stream whose read errors become one clear ConversionError (never a traceback)."""

    def __init__(self, raw: BinaryIO, name: str) -> None:
        self._raw, self._name = raw, name

    def read(self, size: int = -1) -> bytes:
        try:
            return self._raw.read(size)
        except OSError as exc:
            raise InputError(
                f"cannot read file: {exc.strerror or exc}", reason="unreadable", source=self._name
            ) from None
        except (zipfile.BadZipFile, EOFError, *_DECOMPRESSION_ERRORS) as exc:  # type: ignore[misc]
            raise InputError(f"zip member is corrupt: {exc}", reason="bad-zip", source=self._name) from None

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> _ReadGuard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Expansion:
    """The parts an input list expands to, and what was passed over (for ``--verbose`` and doctor)."""

    parts: list[Part]
    ignored: list[tuple[str, str]]  # (name, why)
    chose: bool  # True when a folder or zip held files that were not taken
    #: The zips and folders given, when none of them holds a conversation part (their other .json files
    #: were read instead, as B1 says).
    bare: list[str] = field(default_factory=list)

    def without_conversations(self, read: bool = False) -> InputError | None:
        """The error for an input that gave no conversation and whose zips and folders hold no
        conversation part: the first such zip or folder, named with the files it holds (``read``: its
        other .json files were read and gave none, the conversion's ``no-provider``); None when some zip
        or folder given holds one (or none was given)."""
        if not self.bare:
            return None
        label = self.bare[0]
        where = Path(label)
        names = [e.name for e in os.scandir(where) if e.is_file()] if where.is_dir() else listed_files(where)
        if read:
            return InputError(no_conversation_part(names, where), reason="no-provider", source=label)
        return InputError(no_conversation_part(names, where), reason="no-parts", source=label)

    @contextlib.contextmanager
    def explained(self) -> Iterator[None]:
        """Raise :meth:`without_conversations` in place of a conversion's "no provider" error."""
        try:
            yield
        except ConversionError as exc:
            if exc.reason != "no-provider" or (better := self.without_conversations(read=True)) is None:
                raise
            raise better from None


_LISTED: Final = 5  # files named by the error for a zip or folder without a conversation part


def no_conversation_part(names: Sequence[str], where: Path) -> str:
    """The one line for the zip or folder ``where`` that gives no conversation and holds no
    ``conversations.json``, naming the files it holds (``names``: the first few, then how many more).

    Parameters
    ----------
    names : sequence of str
        The files the zip holds (member paths) or the folder holds (names).
    where : Path
        The zip or folder.

    Returns
    -------
    str
        One line, without the path (the error's ``source`` names it).

    Examples
    --------
    >>> no_conversation_part(["user.json", "chat.html"], Path("export.zip"))[:62]
    'a zip without conversations.json: it holds chat.html, user.js'
    """
    kind = "folder" if where.is_dir() else "zip"
    shown = sorted(names, key=utf16_key)
    held = ", ".join(printable(n) for n in shown[:_LISTED]) + (
        f" and {len(shown) - _LISTED} more" if len(shown) > _LISTED else ""
    )
    what = f"it holds {held}" if shown else "it holds no file"
    hint = _in_subfolders(where) if kind == "folder" else ""
    return (
        f"a {kind} without conversations.json: {what}; expected an export as downloaded "
        f"(a ChatGPT or Claude export holds conversations.json){hint}"
    )


class _Budget:
    """What the members of one zip argument (nested zips included) have inflated to together: each
    member counts once, at the most it was ever read to."""

    def __init__(self, label: str, archive_bytes: int, limits: ZipLimits) -> None:
        self.label, self.archive_bytes, self.limits = label, archive_bytes, limits
        self.read: dict[str, int] = {}
        self.total = 0

    def add(self, member: str, count: int) -> None:
        """Member ``member`` has now inflated to ``count`` bytes; ConversionError past a limit."""
        before = self.read.get(member, 0)
        if count > before:
            self.read[member] = count
            self.total += count - before
            self.check(self.total)

    def check(self, total: int) -> None:
        """ConversionError when the members inflating to ``total`` bytes together is past a limit."""
        limits = self.limits
        if total > limits.max_total_bytes:
            raise ConversionError(
                f"zip archive's members inflate past {limits.max_total_bytes:,} bytes in all (a zip bomb?); if the "
                "export is genuine, raise the limit with --zip-max-total-bytes",
                reason="zip-limit",
                source=self.label,
            )
        if total > limits.ratio_floor_bytes and total > limits.max_ratio * max(self.archive_bytes, 1):
            raise ConversionError(
                f"zip archive's members together inflate more than {limits.max_ratio:g} times its size (a zip "
                "bomb?); if the export is genuine, raise the limit with --zip-max-ratio",
                reason="zip-limit",
                source=self.label,
            )


def utf16_key(name: str) -> bytes:
    """Sort key giving JavaScript's default string order (UTF-16 code units)."""
    return name.encode("utf-16-be", "surrogatepass")


def is_conversation_part(name: str) -> bool:
    """``conversations.json`` or ``conversations-*.json`` (the base name decides)."""
    base = PurePosixPath(name).name
    return base == "conversations.json" or (base.startswith("conversations-") and base.endswith(".json"))


def _is_conversation_zip(name: str) -> bool:
    base = PurePosixPath(name).name
    return base.startswith("conversations") and base.endswith(".zip")


def _choose(
    names: Iterable[str], ignored: list[tuple[str, str]], qualify: Callable[[str], str] = str
) -> tuple[list[str], bool]:
    """Apply the B1 rule; also say whether anything was passed over (named by ``qualify(name)``)."""
    candidates: list[str] = []
    before = len(ignored)
    for name in names:
        base = PurePosixPath(name).name
        if base.startswith("."):
            ignored.append((qualify(name), "hidden file"))
        elif base.endswith(".json") or _is_conversation_zip(name):
            candidates.append(name)
        else:
            ignored.append((qualify(name), "not a .json file"))
    parts = [n for n in candidates if is_conversation_part(n) or _is_conversation_zip(n)]
    if parts:
        ignored.extend((qualify(n), "not a conversation part") for n in candidates if n not in parts)
    else:
        parts = candidates
    return sorted(parts, key=utf16_key), len(ignored) > before


def _looks_like_zip(path: Path) -> bool:
    if path.suffix.lower() == ".zip":
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(4) in _ZIP_MAGIC
    except OSError:
        return False


class _LimitedReader(io.RawIOBase):
    """Reads a zip member, refusing to inflate past the configured limits."""

    def __init__(self, raw: BinaryIO, name: str, info: zipfile.ZipInfo, limits: ZipLimits, budget: _Budget) -> None:
        self._raw, self._name, self._info, self._limits, self._budget = raw, name, info, limits, budget
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._raw.read(len(buffer))
        self._count += len(data)
        _check_limits(self._name, self._count, self._info.compress_size, self._limits)
        self._budget.add(self._name, self._count)
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


def _check_limits(name: str, size: int, compressed: int, limits: ZipLimits) -> None:
    if size > limits.max_member_bytes:
        raise ConversionError(
            f"zip member inflates past {limits.max_member_bytes:,} bytes; if the export is genuine, raise "
            "the limit with --zip-max-bytes",
            reason="zip-limit",
            source=name,
        )
    if size > limits.ratio_floor_bytes and size > limits.max_ratio * max(compressed, 1):
        raise ConversionError(
            f"zip member's compression ratio exceeds {limits.max_ratio:g}:1 (a zip bomb?); if the export "
            "is genuine, raise the limit with --zip-max-ratio",
            reason="zip-limit",
            source=name,
        )


def _open_zip(path: Path, label: str) -> zipfile.ZipFile:
    try:
        return open_zip(path)
    except zipfile.BadZipFile as exc:
        raise InputError(f"not a readable zip archive: {exc}", reason="bad-zip", source=label) from exc
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", reason="unreadable", source=label) from exc


def _member_part(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, label: str, limits: ZipLimits, budget: _Budget
) -> Part:
    _check_limits(label, info.file_size, info.compress_size, limits)

    def opener() -> BinaryIO:
        try:
            raw = archive.open(info)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError) as exc:
            raise InputError(f"cannot read zip member: {exc}", reason="bad-zip", source=label) from exc
        return io.BufferedReader(_LimitedReader(raw, label, info, limits, budget))  # type: ignore[arg-type]

    return Part(label, opener, info.file_size)


_NESTED_IN_MEMORY: Final = 32 << 20  # a nested zip larger than this waits in an unnamed temporary file


def _open_nested(part: Part) -> zipfile.ZipFile:
    """The zip that the member ``part`` holds, copied (within the limits) into memory when small, else
    into an unnamed temporary file that the system removes once it is closed."""

    def copy() -> IO[bytes]:
        spool = tempfile.SpooledTemporaryFile(max_size=_NESTED_IN_MEMORY)  # noqa: SIM115 - lives as long as the zip
        try:
            with part.open() as fh:
                shutil.copyfileobj(fh, spool, 1 << 18)
        except BaseException:
            spool.close()
            raise
        spool.seek(0)
        return spool

    try:
        return open_nested((part.name, part.size), copy)
    except zipfile.BadZipFile as exc:
        raise InputError(f"not a readable zip archive: {exc}", reason="bad-zip", source=part.name) from exc


def _members(archive: zipfile.ZipFile) -> tuple[dict[str, zipfile.ZipInfo], set[str]]:
    """The zip's files by name, without folders and ``__MACOSX/`` entries, and the names that more than
    one member has (the first of them is kept)."""
    members: dict[str, zipfile.ZipInfo] = {}
    repeated: set[str] = set()
    for info in archive.infolist():
        name = info.filename
        if info.is_dir() or name.startswith("__MACOSX/") or "/__MACOSX/" in name:
            continue
        if name in members:
            repeated.add(name)
        else:
            members[name] = info
    return members, repeated


def listed_files(path: str | os.PathLike[str]) -> list[str]:
    """The files the zip or folder at ``path`` holds: a zip's members at any depth (without folders and
    ``__MACOSX/``), a folder's regular files directly inside it (as paths under ``path``); empty for
    anything else, or a folder that cannot be listed (:func:`check_listing` says why). InputError when
    a zip cannot be opened."""
    label = os.fspath(path)
    where = Path(label)
    if where.is_dir():
        try:
            return [str(where / e.name) for e in os.scandir(where) if e.is_file()]
        except OSError:
            return []
    if _looks_like_zip(where):
        with _open_zip(where, label) as archive:
            return list(_members(archive)[0])
    return []


#: Whether the file at a path is a zip (by its ``.zip`` suffix or its first bytes), as :func:`expand` tells.
looks_like_zip = _looks_like_zip


def zip_sizes(path: str | os.PathLike[str]) -> list[tuple[str, int]]:
    """The files of the zip at ``path`` as :func:`listed_files` gives them, each with the size it
    inflates to as the archive declares it (its listing only is read); InputError when it cannot be opened."""
    label = os.fspath(path)
    with _open_zip(Path(label), label) as archive:
        return [(name, info.file_size) for name, info in _members(archive)[0].items()]


def check_listing(path: str | os.PathLike[str], files: list[str] | None = None) -> None:
    """Raise what :func:`expand` raises for the zip or folder at ``path`` when it holds no part or is no
    readable zip, reading listings only (no member is inflated); ``files``, a zip's members as
    :func:`listed_files` gives them, spares reading its listing again."""
    label = os.fspath(path)
    where = Path(label)
    if where.is_dir():
        _expand_folder(where, label, ZipLimits(), [])
    elif _looks_like_zip(where):
        if files is None:
            with _open_zip(where, label) as archive:
                files = list(_members(archive)[0])
        names, _ = _choose(files, [], lambda name: f"{label}!{printable(name)}")
        if not names:
            raise InputError(no_conversation_part(files, where), reason="no-parts", source=label)


def _expand_zip(
    archive: zipfile.ZipFile,
    label: str,
    limits: ZipLimits,
    depth: int,
    ignored: list[tuple[str, str]],
    budget: _Budget | None = None,
) -> tuple[list[Part], bool]:
    if budget is None:
        budget = _Budget(label, _archive_bytes(archive), limits)
    members, repeated = _members(archive)
    names, chose = _choose(members, ignored, lambda name: f"{label}!{printable(name)}")
    for name in sorted(repeated, key=utf16_key):
        if name in names:
            raise ConversionError(
                f"zip archive holds two or more members named {printable(name)!r}: which one to read is unclear",
                reason="bad-zip",
                source=label,
            )
        ignored.append((f"{label}!{printable(name)}", "a second member with this name"))
    for name in names:  # each member's own limits first: they name the member
        _check_limits(f"{label}!{printable(name)}", members[name].file_size, members[name].compress_size, limits)
    budget.check(budget.total + sum(members[name].file_size for name in names))  # as the archive declares them
    parts: list[Part] = []
    for name in names:
        info = members[name]
        inner = f"{label}!{printable(name)}"
        if _is_conversation_zip(name):
            if depth > 0:
                ignored.append((inner, "zip nested more than one level deep"))
                continue
            nested = _open_nested(_member_part(archive, info, inner, limits, budget))
            sub, _ = _expand_zip(nested, inner, limits, depth + 1, ignored, budget)
            parts.extend(sub)
        else:
            parts.append(_member_part(archive, info, inner, limits, budget))
    if not names:
        raise InputError(no_conversation_part(list(members), Path(label)), reason="no-parts", source=label)
    return parts, chose


def _archive_bytes(archive: zipfile.ZipFile) -> int:
    """The size of the zip file itself (or, where it cannot be told, of its members compressed)."""
    fp = archive.fp
    try:
        if fp is not None:
            here = fp.tell()
            end = fp.seek(0, io.SEEK_END)
            fp.seek(here)
            return int(end)
    except (OSError, ValueError):
        pass
    return sum(info.compress_size for info in archive.infolist())


def _file_part(path: Path, label: str) -> Part:
    def opener() -> BinaryIO:
        try:
            return open(path, "rb")
        except OSError as exc:
            raise InputError(f"cannot read file: {exc.strerror or exc}", reason="unreadable", source=label) from exc

    try:
        size = path.stat().st_size
    except OSError:
        size = None
    return Part(label, opener, size, os.fspath(path))


def _expand_path(
    arg: str | os.PathLike[str], limits: ZipLimits, ignored: list[tuple[str, str]]
) -> tuple[list[Part], bool]:
    label = os.fspath(arg)
    path = Path(label)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError as exc:
        raise InputError("no such file or folder", reason="not-found", source=label) from exc
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", reason="unreadable", source=label) from exc
    if stat.S_ISDIR(mode):
        return _expand_folder(path, label, limits, ignored)
    if not os.access(path, os.R_OK):
        raise InputError("file is not readable (permission denied)", reason="unreadable", source=label)
    if _looks_like_zip(path):
        return _expand_zip(_open_zip(path, label), label, limits, 0, ignored)
    return [_file_part(path, label)], False


_SHOWN_SUBFOLDERS: Final = 3


def _in_subfolders(path: Path) -> str:
    """What the subfolders of a folder without parts hold, for its error: ``""`` when none holds a .json file."""
    found: list[tuple[str, int]] = []
    try:
        subfolders = sorted(e.name for e in os.scandir(path) if e.is_dir() and not e.name.startswith((".", "__")))
        for name in subfolders:
            files = [e.name for e in os.scandir(path / name) if e.is_file() and e.name.lower().endswith(".json")]
            if files:
                found.append((name, len(files)))
    except OSError:
        return ""
    if not found:
        return ""
    shown = ", ".join(f"{name}/ ({n} .json file{'s' if n != 1 else ''})" for name, n in found[:_SHOWN_SUBFOLDERS]) + (
        f" and {len(found) - _SHOWN_SUBFOLDERS} more" if len(found) > _SHOWN_SUBFOLDERS else ""
    )
    which = "a subfolder holds" if len(found) == 1 else f"{len(found)} subfolders hold"
    advice = "give that subfolder" if len(found) == 1 else "give one subfolder per export, or all to convert-many"
    return f"; {which} some: {shown}: {advice}"


def _expand_folder(
    path: Path, label: str, limits: ZipLimits, ignored: list[tuple[str, str]]
) -> tuple[list[Part], bool]:
    try:
        entries = [e for e in os.scandir(path) if e.is_file()]
    except OSError as exc:
        raise InputError(f"cannot list folder: {exc.strerror or exc}", reason="unreadable", source=label) from exc
    names, chose = _choose([e.name for e in entries], ignored, lambda name: str(path / name))
    if not names:
        raise InputError(no_conversation_part([e.name for e in entries], path), reason="no-parts", source=label)
    parts: list[Part] = []
    for name in names:
        child = path / name
        if _is_conversation_zip(name):
            parts.extend(_expand_zip(_open_zip(child, str(child)), str(child), limits, 0, ignored)[0])
        else:
            parts.append(_file_part(child, str(child)))
    return parts, chose


def expand(inputs: Sequence[str | os.PathLike[str]], limits: ZipLimits | None = None) -> Expansion:
    """Expand input paths, in argv order, into the ordered parts of one export."""
    if not inputs:
        raise InputError("no input given", reason="not-found")
    limits = limits or ZipLimits()
    ignored: list[tuple[str, str]] = []
    chose = False
    expanded: list[tuple[str, list[Part]]] = []
    for arg in inputs:
        found, did_choose = _expand_path(arg, limits, ignored)
        expanded.append((os.fspath(arg), found))
        chose = chose or did_choose

    # B1 across arguments: when some folder or zip argument holds conversation parts, a folder or zip
    # argument holding none (projects-000.zip of a multi-zip Claude download) contributes nothing.
    # A file argument is always a part.
    def is_container(label: str, found: list[Part]) -> bool:
        return any(p.name != label for p in found)

    def has_conversations(found: list[Part]) -> bool:
        return any(is_conversation_part(p.name.rsplit("!", 1)[-1]) for p in found)

    skip_bare = any(is_container(a, f) and has_conversations(f) for a, f in expanded)
    bare = [] if skip_bare else [label for label, found in expanded if is_container(label, found)]
    parts: list[Part] = []
    for label, found in expanded:
        if skip_bare and is_container(label, found) and not has_conversations(found):
            ignored.append((label, "holds no conversation part, while other inputs do"))
            chose = True
            continue
        parts.extend(found)
    return Expansion(parts, ignored, chose, bare)


# --- files beside the conversations ----------------------------------------------------------------


def side_parts(
    inputs: Sequence[str | os.PathLike[str]],
    wanted: Callable[[str], bool],
    wanted_zip: Callable[[str], bool],
    limits: ZipLimits | None = None,
) -> list[Part]:
    """Files the B1 rule passes over that a reader other than conversion wants (``memories.json``).

    ``wanted(path)`` chooses files by their path inside a folder or zip (``"memories/a.json"``) or, for a
    file argument, by its name; ``wanted_zip(name)`` chooses zips (in a folder or a zip) to look inside,
    one level deep. Conversation zips are looked inside too. Inputs that cannot be read are skipped:
    :func:`expand` names them.
    """
    limits = limits or ZipLimits()
    found: list[Part] = []
    for arg in inputs:
        label = os.fspath(arg)
        path = Path(label)
        try:
            mode = path.stat().st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            found += _side_folder(path, wanted, wanted_zip, limits)
        elif _looks_like_zip(path):
            found += _side_zip(_open_zip(path, label), label, wanted, wanted_zip, limits, 0)
        elif wanted(path.name) or wanted(f"{path.parent.name}/{path.name}"):
            found.append(_file_part(path, label))
    return found


def _side_folder(
    path: Path, wanted: Callable[[str], bool], wanted_zip: Callable[[str], bool], limits: ZipLimits
) -> list[Part]:
    found: list[Part] = []
    try:
        entries = sorted(os.scandir(path), key=lambda e: utf16_key(e.name))
    except OSError:
        return found
    for entry in entries:
        child = Path(entry.path)
        if entry.name.startswith("."):
            continue
        if entry.is_file() and wanted(entry.name):
            found.append(_file_part(child, str(child)))
        elif entry.is_file() and (wanted_zip(entry.name) or _is_conversation_zip(entry.name)):
            found += _side_zip(_open_zip(child, str(child)), str(child), wanted, wanted_zip, limits, 0)
        elif entry.is_dir():
            try:
                inner = sorted(os.scandir(child), key=lambda e: utf16_key(e.name))
            except OSError:
                continue
            for sub in inner:
                if sub.is_file() and not sub.name.startswith(".") and wanted(f"{entry.name}/{sub.name}"):
                    found.append(_file_part(Path(sub.path), sub.path))
    return found


def _side_zip(
    archive: zipfile.ZipFile,
    label: str,
    wanted: Callable[[str], bool],
    wanted_zip: Callable[[str], bool],
    limits: ZipLimits,
    depth: int,
) -> list[Part]:
    found: list[Part] = []
    budget = _Budget(label, _archive_bytes(archive), limits)
    for info in sorted(archive.infolist(), key=lambda i: utf16_key(i.filename)):
        name = info.filename
        if info.is_dir() or name.startswith("__MACOSX/") or "/__MACOSX/" in name:
            continue
        if PurePosixPath(name).name.startswith("."):
            continue
        inner = f"{label}!{printable(name)}"
        if wanted(name):
            found.append(_member_part(archive, info, inner, limits, budget))
        elif depth == 0 and (wanted_zip(name) or _is_conversation_zip(name)):
            nested = _open_nested(_member_part(archive, info, inner, limits, budget))
            found += _side_zip(nested, inner, wanted, wanted_zip, limits, depth + 1)
    return found


def describe(parts: Sequence[Part]) -> str | None:
    """How errors name a list of parts: the first part's name, and how many more there are."""
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0].name
    return f"{parts[0].name} and {count(len(parts) - 1, 'more part')}"
