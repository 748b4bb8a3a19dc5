"""Whatever a user has, as a Memvelope document: the front door of every frame, chart, report and command.

:func:`load` takes an export as downloaded (zip, folder, a ``conversations*.json`` part, or a list
of parts of one export), an envelope, a Facts IR document, a parsed ``dict``, bytes or a binary file
object, resolved by :mod:`memvelope_tools._sources`. An export is converted exactly as
:func:`memvelope_tools.convert` converts it (the same bytes); a Memvelope document is read by its
in-document tags, as :func:`memvelope_tools.read` reads it.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from ._convert.log import ConversionLog
from ._convert.pipeline import convert_body, convert_parts
from ._convert.sources import Part, ZipLimits, expand
from ._read import Source, check
from ._sources import Found, Input, explained, identify, resolve, resolve_one
from .errors import InputError, MemvelopeError

__all__ = ["LoadSource", "convert", "convert_export", "load", "open_export", "open_input", "read", "sniff"]


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


def load(
    source: LoadSource, *, report: ConversionLog | None = None, progress: bool | None = None, conversations: bool = True
) -> dict[str, Any]:
    """The Memvelope document in ``source``: an export converted, an envelope or Facts IR read.

    Parameters
    ----------
    source
        An export as downloaded (its zip, its folder or a ``conversations*.json`` part), a list of
        paths that are the parts of ONE export (in order, as ``memvelope convert`` takes them), an
        envelope or Facts IR file, a parsed ``dict``, the bytes of any of these files, or a binary
        file object. A leading ``~`` in a path is expanded.
    report
        A :class:`~memvelope_tools._convert.ConversionLog` to learn what an export's conversion read
        and left out.
    progress
        Show a bar on long work (``None``: only on a terminal or in a notebook).
    conversations
        ``False`` leaves an envelope's conversations unchecked, for a caller that checks them as it goes.

    Returns
    -------
    dict
        The envelope or Facts IR document; an export gives exactly the envelope :func:`convert` gives.

    Raises
    ------
    memvelope_tools.errors.InputError
        The source is missing, empty, not JSON or a file of another kind (the message says which).
    memvelope_tools.errors.MemvelopeError
        The export does not convert, or the document is not one the reader supports.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> env = mv.load(mv.sample_path("claude"))
    >>> env["memvelope"]
    'envelope-v0'
    """
    [found] = resolve(source, "any", list_means="parts", caller="load()")
    return open_input(found, report=report, progress=progress, conversations=conversations)


def open_input(
    found: Input, *, report: ConversionLog | None = None, progress: bool | None = None, conversations: bool = True
) -> dict[str, Any]:
    """The document a resolved input holds: an export converted, a document parsed and checked."""
    if found.kind == "export":
        return open_export(found, report=report, progress=progress)
    doc = found.document(progress)
    check(doc, source_name=found.name, conversations=conversations)
    return doc  # type: ignore[no-any-return]


def open_export(
    found: Input,
    *,
    report: ConversionLog | None = None,
    progress: bool | None = None,
    zip_limits: ZipLimits | None = None,
    fast: bool | None = None,
) -> dict[str, Any]:
    """The envelope of a resolved export, converted from its parts in order."""
    if len(found.parts) == 1 and isinstance(found.parts[0], bytes):
        return _from_bytes(found.parts[0], found.name, report, progress)
    with explained(found.parts):
        expansion = expand(found.parts, zip_limits)
        if report is not None:
            report.ignored = expansion.ignored
            report.chose = expansion.chose
        return convert_parts(expansion.parts, report, fast=fast, progress=progress)


def convert_export(
    found: Input, write: Callable[[bytes], Any], *, progress: bool | None = None
) -> dict[str, Any] | None:
    """Convert a resolved export, giving ``write`` the text of its envelope's conversations array a piece
    at a time (see :func:`memvelope_tools._convert.convert_body`); returns the envelope's meta, or None,
    writing nothing, for an export given as bytes.

    The conversations are those ``memvelope convert`` writes, in the same bytes. Errors are
    :func:`open_export`'s.
    """
    if not found.parts or not all(isinstance(part, str | os.PathLike) for part in found.parts):
        return None
    with explained(found.parts):
        return convert_body(list(found.parts), write, progress=progress)


def _from_bytes(data: bytes, name: str | None, report: ConversionLog | None, progress: bool | None) -> dict[str, Any]:
    if data[:2] != b"PK":
        part = Part(name or "<bytes>", lambda: io.BytesIO(data), len(data))
        return convert_parts([part], report, progress=progress)
    with tempfile.TemporaryDirectory(prefix="memvelope-") as tmp:
        path = Path(tmp) / (name if name and name.lower().endswith(".zip") else "export.zip")
        path.write_bytes(data)
        try:
            return open_export(
                Input("export", path.name, os.fspath(path), parts=(path,)), report=report, progress=progress
            )
        except MemvelopeError as exc:
            raise _renamed(exc, f"{tmp}{os.sep}") from None


def _renamed(exc: MemvelopeError, prefix: str) -> MemvelopeError:
    """``exc`` with a temporary folder's path taken out of the file it names."""
    source = exc.source.replace(prefix, "") if exc.source else exc.source
    return type(exc)(exc.msg, reason=exc.reason, source=source, path=exc.path)


def convert(
    *paths: str | os.PathLike[str],
    report: ConversionLog | None = None,
    zip_limits: ZipLimits | None = None,
    progress: bool | None = None,
    fast: bool | None = None,
) -> dict[str, Any]:
    """Convert one export, given as part files, folders and/or zips in order, to an envelope.

    Parameters
    ----------
    *paths
        The export as downloaded (its zip or folder), or its ``conversations*.json`` parts in order.
    report
        A :class:`~memvelope_tools._convert.ConversionLog` to learn which parts were read and which
        files were passed over.
    zip_limits
        Limits against zip bombs (:class:`~memvelope_tools._convert.ZipLimits`).
    progress
        Show a bar on stderr (``None``: only on a terminal or in a notebook).
    fast
        Parse with orjson (``None``: when installed).

    Returns
    -------
    dict
        The ``envelope-v0`` document, the same for every option.

    Raises
    ------
    memvelope_tools.errors.InputError
        A path is missing, empty, not JSON or a file of another kind (the message says which).
    memvelope_tools.errors.ConversionError
        The export does not convert (no provider detected, no conversation kept, a zip limit).

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> env = mv.convert(mv.sample_path("chatgpt"))
    >>> env["meta"]["source_provider"]
    'chatgpt'
    """
    if not paths:
        raise InputError("no input given", reason="not-found")
    found = resolve(list(paths), "export", list_means="parts", caller="convert()")[0]
    return open_export(found, report=report, progress=progress, zip_limits=zip_limits, fast=fast)


def read(source: Source, *, progress: bool | None = None) -> dict[str, Any]:
    """The envelope or Facts IR document in ``source``, after checking its tag and shape.

    Parameters
    ----------
    source
        A path (``str`` or path-like), the document's bytes, a binary file object, or an already
        parsed ``dict`` (checked and returned as is).
    progress
        Show a bar while a large file is read (``None``: only on a terminal or in a notebook).

    Returns
    -------
    dict
        The document.

    Raises
    ------
    memvelope_tools.errors.InputError
        The source is missing, empty, not JSON, an export or a file of another kind.
    memvelope_tools.errors.FormatError
        The document's tag or shape is not one the reader supports (the message gives the JSON path).

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> env = mv.read(mv.convert(mv.sample_path("claude")))
    >>> sorted(env)[:2]
    ['conversations', 'memvelope']
    """
    found = resolve_one(source, "document")
    doc = found.document(progress)
    check(doc, source_name=found.name)
    return doc  # type: ignore[no-any-return]


def sniff(source: Any) -> Found:
    """What ``source`` (a path, bytes or a parsed value) is.

    Parameters
    ----------
    source
        A path, bytes, or a parsed JSON value.

    Returns
    -------
    Found
        Its ``kind`` (``zip``, ``folder``, ``export``, ``envelope``, ``ir``, ``conversation``,
        ``parquet``, ``utf16``, ``empty``, ``missing``, ...) and, for a single conversation, its ``provider``.

    Raises
    ------
    memvelope_tools.errors.InputError
        A file that exists but cannot be read or parsed (the message says why).

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> mv.sniff(mv.sample_path("claude")).kind
    'zip'
    """
    try:
        return identify(source)
    except InputError as exc:
        if exc.reason == "not-found":
            return Found("missing")
        raise
