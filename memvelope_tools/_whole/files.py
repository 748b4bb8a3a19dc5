"""The files of an export as downloaded: listed (a zip's listing, a folder's entries; no file is read
but the small JSON files beside the conversations), what each is, those the spec does not convert, and
whether the download still holds what its manifest lists.

A file's ``name`` is its path inside the export: a zip member's name, a path under the export's folder
(``/``-separated), or, for a file given on its own, its file name.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .._convert.sources import (
    Part,
    ZipLimits,
    expand,
    looks_like_zip,
    side_parts,
    utf16_key,
    zip_sizes,
)
from .._json.elements import JS, PartElements, Reader, Refused
from .._plural import count
from .._printable import printable
from .._providers import files as known
from ..errors import FormatError, InputError

__all__ = [
    "Listed",
    "Listing",
    "children",
    "inside",
    "list_export",
    "side_files",
    "unconverted_in",
    "unconverted_note",
    "verify_in",
]

_SHOWN: Final = 5  # names a note shows before "and N more"


@dataclass(frozen=True)
class Listed:
    """One file of an export: its path inside the export and its size in bytes (as a zip declares it)."""

    name: str
    size: int


@dataclass
class Listing:
    """Every file of an export, sorted by name (UTF-16 order), and how to name a part inside it."""

    inputs: tuple[Path, ...]
    files: list[Listed]
    _by_name: dict[str, Listed] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for listed in self.files:
            self._by_name.setdefault(listed.name, listed)

    def get(self, name: str) -> Listed | None:
        """The file at ``name`` (a path inside the export), else None."""
        return self._by_name.get(name)

    def relative(self, part_name: str) -> str:
        """The path inside the export of a part (see :func:`inside`)."""
        return inside(self.inputs, part_name)


def inside(inputs: Sequence[Path], part_name: str) -> str:
    """The path inside the export whose files are ``inputs`` of a part (as
    :mod:`memvelope_tools._convert.sources` names it: ``zip!member``, a path under a folder, a file given)."""
    found = _placed(inputs, part_name)
    return known.base_name(part_name) if found is None else found[1]


def input_of(inputs: Sequence[str | os.PathLike[str]], part_name: str) -> int | None:
    """Which of ``inputs`` (the paths of one export) a part is in (named as for :func:`inside`), else None."""
    found = _placed(inputs, part_name)
    return None if found is None else found[0]


def _placed(inputs: Sequence[str | os.PathLike[str]], part_name: str) -> tuple[int, str] | None:
    """The input a part is in, by its position in ``inputs``, and its path inside that input."""
    for n, path in enumerate(inputs):
        label = os.fspath(path)
        if part_name.startswith(label + "!"):
            return n, part_name[len(label) + 1 :]
        if part_name.startswith(label + os.sep):
            return n, Path(part_name[len(label) + 1 :]).as_posix()
        if part_name == label:
            return n, Path(path).name
    return None


def list_export(inputs: Sequence[Path]) -> Listing:
    """The files of an export: a zip's members (its listing only), a folder's files at any depth
    (hidden ones and ``__MACOSX`` left out), a file given on its own."""
    found: list[Listed] = []
    for path in inputs:
        if path.is_dir():
            found += _walk(path)
        elif looks_like_zip(path):
            found += [Listed(name, size) for name, size in zip_sizes(path)]
        else:
            try:
                found.append(Listed(path.name, path.stat().st_size))
            except OSError as exc:
                raise InputError(f"cannot read: {exc.strerror or exc}", reason="unreadable", source=str(path)) from None
    found.sort(key=lambda listed: utf16_key(listed.name))
    return Listing(tuple(inputs), found)


def _walk(root: Path) -> list[Listed]:
    found: list[Listed] = []

    def refused(exc: OSError) -> None:
        raise InputError(f"cannot list folder: {exc.strerror or exc}", reason="unreadable", source=exc.filename)

    for folder, subfolders, names in os.walk(root, onerror=refused):
        subfolders[:] = [d for d in subfolders if not d.startswith(".") and d != "__MACOSX"]
        under = Path(folder).relative_to(root)
        for name in names:
            if name.startswith("."):
                continue
            try:
                info = os.stat(os.path.join(folder, name))
            except OSError:
                continue  # a dangling link: nothing is there
            if stat.S_ISREG(info.st_mode):
                found.append(Listed((under / name).as_posix(), info.st_size))
    return found


def side_files(inputs: Sequence[Path], name: str, zip_start: str | None = None) -> list[Part]:
    """The files called ``name`` in the export (at any depth of a zip, one folder deep in a folder), also
    inside zips whose names start with ``zip_start`` and in conversation zips."""

    def wanted(path: str) -> bool:
        return known.base_name(path) == name

    def wanted_zip(path: str) -> bool:
        base = known.base_name(path)
        return zip_start is not None and base.startswith(zip_start) and base.endswith(".zip")

    return side_parts(list(inputs), wanted, wanted_zip, ZipLimits())


def children(part: Part) -> Iterator[tuple[Any, Any]]:
    """``(key, value)`` for each member of the JSON file ``part``'s top-level object, or ``(None, value)``
    for each element of its array, read a batch at a time; InputError naming the part when it is no JSON."""
    elements = PartElements(part, Reader(JS))
    for buf, found, offset in elements.ranges():
        try:
            batch = list(elements.reader.children(buf, found, offset))
        except Refused as exc:
            raise elements.error(exc) from None
        yield from batch


# ---- what the spec does not convert --------------------------------------------------------------


def unconverted_in(inputs: Sequence[Path], listing: Listing, limits: ZipLimits | None = None) -> list[dict[str, Any]]:
    """The files of an export (``inputs``, listed in ``listing``, its zips read within ``limits``) the spec
    does not convert (see :func:`memvelope_tools._whole.sections.unconverted_files`)."""
    taken = {listing.relative(part.name) for part in expand(list(inputs), limits).parts}
    converted = taken | {name.split("!", 1)[0] for name in taken}  # a conversations zip is converted too
    return [
        {
            "name": listed.name,
            "size": listed.size,
            "what": known.what_file(listed.name),
            "asset": known.is_asset(listed.name),
        }
        for listed in listing.files
        if printable(listed.name) not in converted
    ]


def unconverted_note(files: Sequence[dict[str, Any]]) -> str | None:
    """The one note ``memvelope convert`` gives about ``files`` (what :func:`unconverted_in` found): how
    many, the first names, the uploaded and generated files counted apart; None when there are none.

    Parameters
    ----------
    files : sequence of dict
        What :func:`unconverted_in` returned.

    Returns
    -------
    str or None
        The note, without the ``memvelope: note:`` prefix.

    Examples
    --------
    >>> unconverted_note([{"name": "group_chats.json", "asset": False}, {"name": "file-a.dat", "asset": True}])
    '2 files the spec does not convert: group_chats.json and 1 uploaded or generated file'
    """
    if not files:
        return None
    named = [f["name"] for f in files if not f["asset"]]
    assets = len(files) - len(named)
    shown = named[:_SHOWN]
    bits = [", ".join(shown)] if shown else []
    if len(named) > len(shown):
        bits.append(f"{count(len(named) - len(shown), 'more file')}")
    if assets:
        bits.append(count(assets, "uploaded or generated file"))
    listed = " and ".join(bits) if len(bits) <= 2 else f"{bits[0]}, {bits[1]} and {bits[2]}"
    return f"{count(len(files), 'file')} the spec does not convert: {listed}"


# ---- the manifest ----------------------------------------------------------------------------------


def verify_in(inputs: Sequence[Path], listing: Listing) -> dict[str, Any]:
    """What checking an export (``inputs``, listed in ``listing``) against its manifest finds (see
    :func:`memvelope_tools._whole.sections.verify_manifest`)."""
    manifests = side_files(inputs, known.MANIFEST)
    found: dict[str, Any] = {"manifest": None, "checked": 0, "missing": [], "size_mismatch": []}
    if not manifests:
        return found
    part = manifests[0]
    where = listing.relative(part.name)
    folder = where[: -len(known.base_name(where))]
    listed = _manifest_files(part)
    found["manifest"] = where
    found["checked"] = len(listed)
    for path, size in listed.items():
        held = listing.get(folder + path)
        if held is None:
            found["missing"].append({"path": path, "size_bytes": size})
        elif size is not None and held.size != size:
            found["size_mismatch"].append({"path": path, "expected": size, "actual": held.size})
    return found


def _manifest_files(part: Part) -> dict[str, int | None]:
    """The files a manifest lists, each with its size (None when only ``logical_files`` names it)."""
    members = dict(children(part))
    if None in members:
        raise FormatError("an export manifest is a JSON object, not an array", reason="bad-shape", source=part.name)
    listed: dict[str, int | None] = {}
    entries = members.get("export_files")
    entries = [] if entries is None else entries
    if type(entries) is not list:
        raise FormatError("'export_files' is not an array", reason="bad-shape", source=part.name, path="export_files")
    for i, entry in enumerate(entries):
        path = entry.get("path") if type(entry) is dict else None
        size = entry.get("size_bytes") if type(entry) is dict else None
        if type(path) is not str or not path:
            raise FormatError(
                "a listed file has no path", reason="bad-shape", source=part.name, path=f"export_files[{i}]"
            )
        listed[path] = size if type(size) is int else None
    logical = members.get("logical_files")
    for name, entry in logical.items() if type(logical) is dict else ():
        names = entry.get("files") if type(entry) is dict else None
        for path in names if type(names) is list else [name]:
            if type(path) is str and path and path not in listed:
                listed[path] = None
    return listed
