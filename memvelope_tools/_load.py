"""Whatever a user has, as a Memvelope document: the front door of the charts, the report and the commands.

:func:`load` takes an export as downloaded (zip, folder, a ``conversations*.json`` part, or a list
of parts of one export), an envelope, a Facts IR document, a parsed ``dict``, bytes or a binary file
object, resolved by :mod:`memvelope_tools._sources`. An export is converted exactly as
:func:`memvelope_tools.convert` converts it (the same bytes, by
:func:`memvelope_tools._convert.pipeline.open_export`, which the frames call too); a Memvelope document
is read by its in-document tags, as :func:`memvelope_tools.read` reads it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, BinaryIO

from ._convert.log import ConversionLog
from ._convert.pipeline import open_export
from ._convert.sources import ZipLimits
from ._read import Source, check
from ._sources import Found, Input, identify, resolve, resolve_one
from .errors import InputError

__all__ = ["LoadSource", "convert", "load", "open_input", "read", "sniff"]


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
        ``unsupported``, ``parquet``, ``utf16``, ``empty``, ``missing``, ...) and, for a single
        conversation or another provider's export (``unsupported``), its ``provider``.

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
