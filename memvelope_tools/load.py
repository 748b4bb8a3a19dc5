"""Whatever a user has, as a Memvelope document: the front door of every frame, chart, report and command.

:func:`load` takes an export as downloaded (zip, folder, a ``conversations*.json`` part, or a list
of parts of one export), an envelope, a Facts IR document, a parsed ``dict``, bytes or a binary file
object. An export is converted exactly as :func:`memvelope_tools.convert` converts it (the same
bytes); a Memvelope document is read by its in-document tags, as :func:`memvelope_tools.read` reads
it. :func:`sniff` says what a file is, and a file that fits neither use gets one line saying what it
is and which command fits (see :func:`wrong_file`).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Final, Literal

from .errors import ConversionError, FormatError, MemvelopeError
from .read import check, parse_source

if TYPE_CHECKING:
    from .convert import Report

__all__ = ["Kind", "LoadSource", "Sniffed", "document_file", "explained", "load", "sniff", "wrong_file"]

Kind = Literal[
    "envelope",  # an envelope-v0 document
    "ir",  # a memvelope-ir-v0 (Facts IR) document
    "zip",  # a zip archive: an export as downloaded
    "folder",  # a folder: an unzipped export
    "export",  # a JSON array: one part of an export (conversations.json)
    "conversation",  # one ChatGPT or Claude conversation object, not inside an array
    "manifest",  # an export's list of its files
    "parquet",  # an Apache Parquet file
    "binary",  # some other file that is not text
    "json",  # any other JSON (or text that does not parse: the parser says why)
    "missing",  # no such file or folder
]

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

_HEAD: Final = 64 * 1024
_ZIP_MAGIC: Final = (b"PK\x03\x04", b"PK\x05\x06")
_PARQUET_MAGIC: Final = b"PAR1"
_BOM: Final = b"\xef\xbb\xbf"
_ENVELOPE_TAG: Final = re.compile(rb'"memvelope"\s*:\s*"envelope-v0"')
_IR_TAG: Final = re.compile(rb'"format"\s*:\s*"memvelope-ir-v0"')
_PROVIDER_NAMES: Final = {"chatgpt": "ChatGPT", "claude": "Claude"}
_DOCUMENT_COMMANDS: Final = "info, parquet or report"


@dataclass(frozen=True)
class Sniffed:
    """What a source is (:data:`Kind`), and for a conversation object whose (``chatgpt``/``claude``)."""

    kind: Kind
    provider: str | None = None


# ---- what a file is ------------------------------------------------------------------------------


def sniff(source: Any) -> Sniffed:
    """Say what ``source`` (a path, bytes, a binary file object or a parsed value) is.

    A file is judged by its first bytes: zip and Parquet by their magic numbers, JSON by its first
    character; an object by its tags when they open the file (as :func:`write_envelope` writes
    them), else by its parsed value. A tagged document still has to pass :func:`read`'s checks.
    """
    return _sniff(source)[0]


def _sniff(source: Any) -> tuple[Sniffed, Any]:
    """:func:`sniff`, and the parsed value when one had to be parsed (else ``None``)."""
    if isinstance(source, str | os.PathLike):
        path = Path(os.path.expanduser(os.fspath(source)))
        if path.is_dir():
            return Sniffed("folder"), None
        try:
            with open(path, "rb") as fh:
                head = fh.read(_HEAD)
        except FileNotFoundError:
            return Sniffed("missing"), None
        except OSError:
            return Sniffed("json"), None  # unreadable: the reader says why
        kind = _from_head(head)
        if kind is not None:
            return Sniffed(kind), None
        try:
            value, _ = parse_source(path)
        except MemvelopeError:
            return Sniffed("json"), None
        return _classify(value, path.name), value
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        kind = _from_head(data[:_HEAD])
        if kind is not None:
            return Sniffed(kind), None
        try:
            value, _ = parse_source(data)
        except MemvelopeError:
            return Sniffed("json"), None
        return _classify(value, None), value
    return _classify(source, None), source


def _from_head(head: bytes) -> Kind | None:
    """The kind of a file from its first bytes, or None when the whole value must be parsed."""
    if head[:4] in _ZIP_MAGIC:
        return "zip"
    if head[:4] == _PARQUET_MAGIC:
        return "parquet"
    text = head[3:] if head.startswith(_BOM) else head
    first = text.lstrip(b" \t\n\r")[:1]
    if first == b"[":
        return "export"
    if first == b"{":
        if _ENVELOPE_TAG.match(text.lstrip(b" \t\n\r{")):
            return "envelope"
        opening = text[:4096]
        if _ENVELOPE_TAG.search(opening) and not _IR_TAG.search(opening):
            return "envelope"
        if _IR_TAG.search(opening) and not _ENVELOPE_TAG.search(opening):
            return "ir"
        return None
    if _is_binary(head):
        return "binary"
    return None


def _is_binary(head: bytes) -> bool:
    """Neither UTF-8 text nor UTF-16/32 text (which has a NUL beside every ASCII character)."""
    sample = head[:512]
    if sample[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return False
    if b"\x00" in sample:
        even, odd = sample[0::2], sample[1::2]
        return not (even.count(0) == len(even) or odd.count(0) == len(odd) or sample.count(0) * 4 >= len(sample) * 3)
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(sample) - 3  # a character cut by the sample's end is fine
    return False


def _classify(value: Any, name: str | None) -> Sniffed:
    from .convert import chatgpt, claude

    if isinstance(value, list):
        return Sniffed("export")
    if not isinstance(value, dict):
        return Sniffed("json")
    if value.get("memvelope") == "envelope-v0":
        return Sniffed("envelope")
    meta = value.get("meta")
    if "memvelope" not in value and isinstance(meta, dict) and meta.get("format") == "memvelope-ir-v0":
        return Sniffed("ir")
    if claude.looks_like(value):
        return Sniffed("conversation", "claude")
    if chatgpt.looks_like(value):
        return Sniffed("conversation", "chatgpt")
    if "memvelope" in value or (isinstance(meta, dict) and "format" in meta):
        return Sniffed("json")  # a tag read() does not support: it says which
    listing = any(isinstance(value.get(key), list) for key in ("files", "export_files"))
    if listing or (name is not None and name.lower().endswith("manifest.json")):
        return Sniffed("manifest")
    return Sniffed("json")


def wrong_file(found: Sniffed, wanted: Literal["export", "document", "any"]) -> str | None:
    """The one-line message for a source of kind ``found`` given where ``wanted`` is needed.

    ``wanted`` is ``"export"`` (convert, doctor), ``"document"`` (an envelope or Facts IR document
    and nothing else: validate) or ``"any"`` (what :func:`load` takes). ``None`` when it fits or
    when the reader's own error says it better.
    """
    kind = found.kind
    if kind == "parquet":
        return "a Parquet file, not JSON: read its folder with mv.read_parquet(), DuckDB or Polars"
    if kind == "binary":
        return (
            "a binary file, not JSON: expected an export (zip as downloaded, its folder or a "
            "conversations*.json file), an envelope or a Facts IR document"
        )
    if kind == "conversation":
        provider = _PROVIDER_NAMES.get(found.provider or "", "")
        return (
            f"a single {provider} conversation, not an export: an export is an array of conversations; "
            "put it inside [ ] to convert it"
        )
    if kind == "manifest":
        return "an export manifest (a list of the export's files): give the export's zip or folder instead"
    if wanted == "export" and kind in ("envelope", "ir"):
        what = "envelope" if kind == "envelope" else "Facts IR document"
        return f"already a Memvelope {what}: use {_DOCUMENT_COMMANDS}"
    if wanted == "document" and kind in ("zip", "folder", "export"):
        what = {"zip": "an export zip", "folder": "an export folder", "export": "an export part"}[kind]
        return (
            f"{what}, not a Memvelope document: convert it first (memvelope convert), "
            f"or give it to {_DOCUMENT_COMMANDS}, which convert it"
        )
    return None


@contextlib.contextmanager
def explained(paths: Sequence[str | os.PathLike[str]]) -> Iterator[None]:
    """Turn a conversion's "no conversations"/"invalid JSON" error about a wrong file into the line
    :func:`wrong_file` gives for it (same exception type and reason; the spec's outcome is unchanged)."""
    try:
        yield
    except ConversionError as exc:
        if exc.reason not in ("no-provider", "invalid-json"):
            raise
        names = [os.fspath(p) for p in paths]
        culprit = exc.source if exc.source in names else names[0] if len(names) == 1 else None
        if culprit is None or Path(culprit).is_dir():
            raise
        message = wrong_file(sniff(culprit), "export")
        if message is None:
            raise
        if exc.reason == "no-provider":
            raise ConversionError(message, reason="no-provider", source=culprit) from None
        raise ConversionError(message, reason="invalid-json", source=culprit) from None


# ---- loading -------------------------------------------------------------------------------------


def load(
    source: LoadSource, *, report: Report | None = None, progress: bool | None = None, conversations: bool = True
) -> dict[str, Any]:
    """The Memvelope document in ``source``: an export converted, an envelope or Facts IR read.

    ``source`` is an export as downloaded (its zip, its folder or a ``conversations*.json`` part),
    a list of paths that are the parts of ONE export (in order, as ``memvelope convert`` takes
    them), an envelope or Facts IR file, a parsed ``dict``, the bytes of any of these files, or a
    binary file object. A leading ``~`` in a path is expanded. An export gives exactly the envelope
    :func:`memvelope_tools.convert` gives; pass a :class:`memvelope_tools.convert.Report` as
    ``report`` to learn what its conversion read and left out. A document is checked as
    :func:`memvelope_tools.read` checks it (``conversations=False`` leaves an envelope's
    conversations to a caller that checks them as it goes, as :func:`memvelope_tools.read.check`
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
        found, value = _sniff(path)
        name = os.fspath(path)
        if found.kind in ("zip", "folder", "export", "missing"):
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
    found = _classify(value, name)
    if found.kind in ("conversation", "manifest"):
        _refuse(found, name)
    check(value, source_name=name, conversations=conversations)
    return value  # type: ignore[no-any-return]


def _convert(paths: list[Any], report: Report | None, progress: bool | None) -> dict[str, Any]:
    from .convert import convert

    return convert(*paths, report=report, progress=progress)


def _from_bytes(
    data: bytes, name: str | None, report: Report | None, progress: bool | None, conversations: bool
) -> dict[str, Any]:
    from .convert import Part, convert_parts

    found, value = _sniff(data)
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


def document_file(source: Any) -> Path | None:
    """The file ``source`` names when its first bytes show a Memvelope document (for readers that
    stream the file themselves); ``None`` when ``source`` is to go through :func:`load`."""
    if not isinstance(source, str | os.PathLike):
        return None
    path = Path(os.path.expanduser(os.fspath(source)))
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD)
    except OSError:
        return None
    return path if _from_head(head) in ("envelope", "ir") else None
