"""What a file is (:func:`sniff`), and the one line for a file given to the wrong command
(:func:`wrong_file`, :func:`explained`). Below :mod:`memvelope_tools._convert`, so that the conversion
itself can word its errors this way (see :mod:`memvelope_tools._load`, which re-exports all of it)."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from ._read import parse_source
from .errors import ConversionError, MemvelopeError

__all__ = [
    "HEAD_BYTES",
    "Kind",
    "Sniffed",
    "classify",
    "document_file",
    "explained",
    "kind_from_head",
    "sniff",
    "sniff_value",
    "wrong_file",
]

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
    return sniff_value(source)[0]


def sniff_value(source: Any) -> tuple[Sniffed, Any]:
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
        return classify(value, path.name), value
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        kind = _from_head(data[:_HEAD])
        if kind is not None:
            return Sniffed(kind), None
        try:
            value, _ = parse_source(data)
        except MemvelopeError:
            return Sniffed("json"), None
        return classify(value, None), value
    return classify(source, None), source


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


#: How many of a file's first bytes :func:`kind_from_head` needs.
HEAD_BYTES: Final = _HEAD


def kind_from_head(head: bytes) -> Kind | None:
    """What a file is from its first :data:`HEAD_BYTES` bytes alone; ``None`` when the whole value must be parsed.

    Parameters
    ----------
    head : bytes
        The file's first bytes.

    Returns
    -------
    Kind or None
        ``zip``, ``parquet``, ``export``, ``envelope``, ``ir`` or ``binary``, else ``None``.

    Examples
    --------
    >>> kind_from_head(b"PK\\x03\\x04..."), kind_from_head(b"[{}]"), kind_from_head(b"hello")
    ('zip', 'export', None)
    """
    return _from_head(head)


def document_file(source: Any) -> Path | None:
    """The file ``source`` names when its first bytes show a Memvelope document (for readers that
    stream the file themselves); ``None`` when ``source`` is to go through :func:`memvelope_tools._load`."""
    if not isinstance(source, str | os.PathLike):
        return None
    path = Path(os.path.expanduser(os.fspath(source)))
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD)
    except OSError:
        return None
    return path if _from_head(head) in ("envelope", "ir") else None


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


def classify(value: Any, name: str | None) -> Sniffed:
    """What a parsed JSON ``value`` is (``name``, the file's name, tells a manifest by its name)."""
    from ._convert import chatgpt, claude

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
