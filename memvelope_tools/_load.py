"""Whatever a user has, as a Memvelope document: the front door of every frame, chart, report and command.

:func:`load` takes an export as downloaded (zip, folder, a ``conversations*.json`` part, or a list
of parts of one export), an envelope, a Facts IR document, a parsed ``dict``, bytes or a binary file
object. An export is converted exactly as :func:`memvelope_tools._convert` converts it (the same
bytes); a Memvelope document is read by its in-document tags, as :func:`memvelope_tools._read` reads
it. :func:`sniff` says what a file is, and a file that fits neither use gets one line saying what it
is and which command fits (see :func:`wrong_file`).
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ._read import check, parse_source
from ._sniffing import Kind, Sniffed, classify, document_file, explained, sniff, sniff_value, wrong_file
from .errors import ConversionError, FormatError, MemvelopeError

if TYPE_CHECKING:
    from ._convert import ConversionLog

__all__ = ["Kind", "LoadSource", "Sniffed", "document_file", "explained", "load", "sniff", "wrong_file"]


#: What :func:`load` accepts.
LoadSource = (
    str
    | os.PathLike[str]
    | bytes
    | bytearray
    | memoryview
    | BinaryIO
    | dict[str, Any]
    | Sequence[str | os.PathLike[str]]
)


# ---- loading -------------------------------------------------------------------------------------


def load(
    source: LoadSource, *, report: ConversionLog | None = None, progress: bool | None = None, conversations: bool = True
) -> dict[str, Any]:
    """The Memvelope document in ``source``: an export converted, an envelope or Facts IR read.

    ``source`` is an export as downloaded (its zip, its folder or a ``conversations*.json`` part),
    a list of paths that are the parts of ONE export (in order, as ``memvelope convert`` takes
    them), an envelope or Facts IR file, a parsed ``dict``, the bytes of any of these files, or a
    binary file object. A leading ``~`` in a path is expanded. An export gives exactly the envelope
    :func:`memvelope_tools._convert` gives; pass a :class:`memvelope_tools._convert.ConversionLog` as
    ``report`` to learn what its conversion read and left out. A document is checked as
    :func:`memvelope_tools._read` checks it (``conversations=False`` leaves an envelope's
    conversations to a caller that checks them as it goes, as :func:`memvelope_tools._read.check`
    does). A file that is neither raises a :class:`~memvelope_tools.errors.MemvelopeError` saying
    what it is.
    """
    if isinstance(source, dict):
        return _document(source, None, conversations)
    if isinstance(source, list | tuple):
        paths = [_expand_user(p) for p in source]
        if not all(isinstance(p, str | os.PathLike) for p in source):
            raise FormatError(
                "a list given to load() is the parts of one export, as paths; load each document separately",
                reason="bad-source",
            )
        return _convert(paths, report, progress)
    if isinstance(source, str | os.PathLike):
        path = _expand_user(source)
        found, value = sniff_value(path)
        name = os.fspath(path)
        if found.kind in _EXPORT_KINDS:
            return _convert([path], report, progress)
        _refuse(found, name)
        if value is None:
            value, _ = parse_source(path, progress=progress)
        return _document(value, name, conversations)
    if isinstance(source, bytes | bytearray | memoryview):
        return _from_bytes(bytes(source), None, report, progress, conversations)
    if hasattr(source, "read"):
        data = source.read()
        name = getattr(source, "name", None)
        name = os.path.basename(name) if isinstance(name, str) else None
        if isinstance(data, str):
            raise FormatError(
                "file object is in text mode; open it in binary mode, e.g. open(path, 'rb')",
                reason="text-mode",
                source=name,
            )
        return _from_bytes(bytes(data), name, report, progress, conversations)
    raise FormatError(
        f"cannot load a {type(source).__name__}: expected a path, a list of paths, bytes, a binary file object "
        "or a dict",
        reason="bad-source",
    )


_EXPORT_KINDS = ("zip", "folder", "export", "missing")  # a path converted as an export (a missing one says so)


def export_bytes(source: object, *, progress: bool | None = None) -> bytearray | None:
    """The canonical bytes of the envelope that the export at path ``source`` converts to, or None.

    The bytes are those ``memvelope convert`` writes (``convert_stream``), built in memory; None when
    ``source`` is not a path that :func:`load` converts as an export. Errors are :func:`load`'s.
    """
    if not isinstance(source, str | os.PathLike):
        return None
    path = _expand_user(source)
    if sniff(path).kind not in _EXPORT_KINDS:
        return None
    from ._convert import convert_stream

    target = _Collected()
    with explained([path]):
        convert_stream(path, None, stdout=target, in_memory=True, workers=1, progress=progress)
    return target.joined()


class _Collected:
    """A binary stream that keeps what is written, then hands it over as one buffer."""

    def __init__(self) -> None:
        self.pieces: list[bytes | None] = []
        self.size = 0

    def write(self, data: bytes) -> int:
        self.pieces.append(bytes(data))
        self.size += len(data)
        return len(data)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        pass

    def joined(self) -> bytearray:
        """Everything written, in one buffer; each piece is let go once copied (so never held twice)."""
        out = bytearray(self.size)
        pos = 0
        for i, piece in enumerate(self.pieces):
            assert piece is not None
            out[pos : pos + len(piece)] = piece
            pos += len(piece)
            self.pieces[i] = None
        self.pieces = []
        return out


def _expand_user(path: Any) -> Any:
    return Path(os.path.expanduser(os.fspath(path))) if isinstance(path, str | os.PathLike) else path


def _refuse(found: Sniffed, name: str | None) -> None:
    message = wrong_file(found, "any")
    if message is None:
        return
    if found.kind in ("parquet", "binary"):
        raise FormatError(message, reason="invalid-json", source=name)
    raise ConversionError(message, reason="no-provider", source=name)


def _document(value: Any, name: str | None, conversations: bool) -> dict[str, Any]:
    found = classify(value, name)
    if found.kind in ("conversation", "manifest"):
        _refuse(found, name)
    check(value, source_name=name, conversations=conversations)
    return value  # type: ignore[no-any-return]


def _convert(paths: list[Any], report: ConversionLog | None, progress: bool | None) -> dict[str, Any]:
    from ._convert import convert

    with explained(paths):
        return convert(*paths, report=report, progress=progress)


def _from_bytes(
    data: bytes, name: str | None, report: ConversionLog | None, progress: bool | None, conversations: bool
) -> dict[str, Any]:
    from ._convert import Part, convert_parts

    found, value = sniff_value(data)
    label = name or "<bytes>"
    if found.kind == "zip":
        with tempfile.TemporaryDirectory(prefix="memvelope-") as tmp:
            path = Path(tmp) / (name if name and name.lower().endswith(".zip") else "export.zip")
            path.write_bytes(data)
            try:
                return _convert([path], report, progress)
            except MemvelopeError as exc:
                raise _renamed(exc, f"{tmp}{os.sep}") from None
    if found.kind == "export":
        part = Part(label, lambda: io.BytesIO(data), len(data))
        return convert_parts([part], report, progress=progress)
    _refuse(found, name)
    if value is None:
        value, _ = parse_source(data)
    return _document(value, name, conversations)


def _renamed(exc: MemvelopeError, prefix: str) -> MemvelopeError:
    """``exc`` with a temporary folder's path taken out of the file it names."""
    source = exc.source.replace(prefix, "") if exc.source else exc.source
    return type(exc)(exc.msg, reason=exc.reason, source=source, path=exc.path)
