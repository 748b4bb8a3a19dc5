"""Every input, resolved once per public call: what it is, its label, and how to open it.

A *source* is what a caller hands a public function or a command:

* a path (``str`` or path-like; a ``str`` is always a path, never JSON text; a leading ``~`` is
  expanded) to an export as downloaded (its zip, its folder or a ``conversations*.json`` part), an
  envelope, a Facts IR document, or a folder written by :func:`memvelope_tools.to_parquet`;
* a parsed ``dict`` (an envelope or a Facts IR document);
* ``bytes`` (or ``bytearray``, ``memoryview``) or a binary file object holding any of those files;
* for search and topics, also a messages frame or the dict of frames ``read_parquet`` returns.

What a list means is decided here, once (:data:`ListMeans`):

* ``"parts"`` (``load``, ``convert``): the paths of the parts of ONE export, in order;
* ``"documents"`` (frames, Parquet, report, search, topics): several inputs, each with its own label.
  Export part files that belong together (``conversations-000.json``, ``conversations-001.json``)
  given as several documents could mean either, so they are refused with a line saying so.

Labels (:func:`labels_of`): a path's file (or folder) name; the path as given when two inputs have the
same name; ``doc<i>`` for an input without a name (``i`` its position in the list).

A source that is none of these gets one line saying what it is (:func:`wrong_file`), raised as
:class:`~memvelope_tools.errors.InputError` with one ``reason``, the same at every door. Only the
standard library and the light reader modules are imported here, so a command reports a wrong
input at once.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal

from ._convert.sources import check_listing, is_conversation_part, listed_files
from ._json.elements import parse_json, read_file
from ._json.wording import EMPTY_FILE, EXPECTED, UTF16_FILE, is_utf16
from ._plural import count
from ._providers import registry
from ._tags import ENVELOPE_TAG, IR_TAG
from .errors import ConversionError, InputError, MemvelopeError, Reason

__all__ = [
    "Found",
    "Input",
    "Kind",
    "ListMeans",
    "Use",
    "explained",
    "identify",
    "labels_of",
    "refuse",
    "resolve",
    "resolve_one",
    "wrong_file",
]

Kind = Literal[
    "envelope",  # an envelope-v0 document
    "ir",  # a memvelope-ir-v0 (Facts IR) document
    "zip",  # a zip archive: an export as downloaded
    "folder",  # a folder: an unzipped export
    "parquet-folder",  # a folder written by to_parquet (holds messages.parquet)
    "export",  # a JSON array: one part of an export (conversations.json)
    "conversation",  # one ChatGPT or Claude conversation object, not inside an array
    "unsupported",  # an export (or one conversation) of a provider the spec does not define
    "wrapped",  # an object holding a "conversations" array but no Memvelope tag
    "manifest",  # an export's list of its files
    "parquet",  # an Apache Parquet file
    "image",  # a picture or PDF (named in Found.detail)
    "binary",  # some other file that is not text
    "utf16",  # UTF-16 (or UTF-32) text
    "empty",  # no bytes, or only whitespace
    "json",  # any other JSON value
    "missing",  # no such file or folder
]

#: What the caller takes: an export only (convert, doctor), a Memvelope document only (read,
#: validate, distill), either (load, Parquet, report), either or a Parquet folder (the frames and the
#: tables read from documents), or a history (search, topics: also a Parquet folder or frames), or an
#: export to diagnose (doctor: any JSON, which it explains).
Use = Literal["export", "document", "any", "frames", "history", "diagnose"]

#: What a list means: the parts of one export, or several documents (see the module docstring).
ListMeans = Literal["parts", "documents"]

_HEAD: Final = 64 * 1024
_TAIL: Final = 256
_WS: Final = b" \t\n\r"
_BOM: Final = b"\xef\xbb\xbf"
_ZIP_MAGIC: Final = (b"PK\x03\x04", b"PK\x05\x06")
_PARQUET_MAGIC: Final = b"PAR1"
_IMAGES: Final = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
)
_ENVELOPE_RE: Final = re.compile(rb'"memvelope"\s*:\s*"' + ENVELOPE_TAG.encode() + rb'"')
_IR_RE: Final = re.compile(rb'"format"\s*:\s*"' + IR_TAG.encode() + rb'"')
_PART_NAME: Final = re.compile(r"conversations-\d+\.json$", re.IGNORECASE)
_NOT_JSON: Final = ("missing", "empty", "utf16", "parquet", "image", "binary", "parquet-folder")
_DOCUMENT_COMMANDS: Final = "info, parquet or report"


@dataclass(frozen=True)
class Found:
    """What a source is (:data:`Kind`); ``detail`` names an image's format or the provider of a
    conversation or an unsupported export, ``value`` is the parsed value when the source had to be
    parsed to tell."""

    kind: Kind
    detail: str | None = None
    value: Any = field(default=None, repr=False, compare=False)

    @property
    def provider(self) -> str | None:
        """The provider of a single conversation object (``chatgpt``/``claude``) or of an export the
        toolkit does not convert (``deepseek``, ``grok``, ...)."""
        return self.detail if self.kind in ("conversation", "unsupported") else None


@dataclass(frozen=True)
class Input:
    """One input, resolved: what it is, its one label, what errors cite, and how to open it.

    ``kind`` is ``export`` (``parts``: the paths, or one ``bytes``, of one export), ``envelope`` or
    ``ir`` (a file at ``path``, or ``value``: its bytes or parsed dict), ``parquet`` (a folder at
    ``path``), ``frame`` or ``tables`` (``value``: a messages frame, or a dict of frames).
    """

    kind: Literal["export", "envelope", "ir", "parquet", "frame", "tables"]
    label: str
    name: str | None = None
    path: Path | None = None
    parts: tuple[Any, ...] = ()
    value: Any = field(default=None, repr=False)

    def files(self) -> list[Path] | None:
        """The parts of an export given wholly as files on disk, else None (not an export, or bytes)."""
        if self.kind != "export" or not self.parts or not all(isinstance(p, Path) for p in self.parts):
            return None
        return list(self.parts)

    def read_bytes(self, progress: bool | None = None) -> bytes | bytearray | mmap.mmap:
        """The bytes of a document given as a file or as bytes."""
        if self.path is not None:
            return read_file(os.fspath(self.path), progress)
        if isinstance(self.value, bytes | bytearray):
            return self.value
        raise TypeError(f"a {self.kind} input given as {type(self.value).__name__} has no bytes")

    def document(self, progress: bool | None = None) -> Any:
        """The parsed document (envelope or Facts IR; its shape is not checked here)."""
        if isinstance(self.value, dict):
            return self.value
        return parse_json(self.read_bytes(progress), self.name)


# ---- what a source is ----------------------------------------------------------------------------

#: The folder of a history folder's parts of messages (see :mod:`memvelope_tools._frames.folders`).
HISTORY_PARTS: Final = "messages"


#: The file that makes a folder a partitioned dataset of many donations (see :mod:`memvelope_tools._partitions`).
DATASET_MANIFEST: Final = "_manifest.json"


def is_partitioned_dataset(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a partitioned dataset written by :func:`memvelope_tools.convert_many` (it
    holds its manifest)."""
    return (expand_user(path) / DATASET_MANIFEST).is_file()


def is_history_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a history folder: it holds ``snapshots.parquet``, ``state.parquet`` or a
    ``messages`` folder of parts (whether the rest is there and whole is for its readers to say), and
    is not a partitioned dataset."""
    base = expand_user(path)
    return not is_partitioned_dataset(base) and any(
        os.path.lexists(base / name) for name in ("snapshots.parquet", "state.parquet", HISTORY_PARTS)
    )


#: Called with every source :func:`identify` is asked about (tests count how often an input is resolved).
TRACE: list[Callable[[Any], object]] = []


def identify(source: Any) -> Found:
    """Say what ``source`` (a path, bytes or a parsed value) is, from its first and last bytes when
    they tell, else from its parsed value. A file that cannot be read or parsed raises InputError;
    a folder or zip is listed, so one holding no export raises InputError too."""
    for hook in TRACE:
        hook(source)
    if isinstance(source, str | os.PathLike):
        path = expand_user(source)
        name = os.fspath(source)
        if path.is_dir():
            if is_partitioned_dataset(path):
                return Found("parquet-folder")
            if is_history_folder(path):
                return Found("parquet-folder", "history")
            if (path / "messages.parquet").is_file():
                return Found("parquet-folder")
            provider = _listed(path)
            return Found("unsupported", provider) if provider is not None else Found("folder")
        try:
            with open(path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                head = fh.read(_HEAD)
                if size > _HEAD:
                    fh.seek(max(0, size - _TAIL))
                tail = fh.read() if size > _HEAD else head[-_TAIL:]
        except FileNotFoundError:
            raise _error("missing", None, name) from None
        except OSError as exc:
            raise InputError(f"cannot read file: {exc.strerror or exc}", reason="unreadable", source=name) from None
        found = _from_ends(head, tail, size <= _HEAD)
        if found == "zip" and (provider := _listed(path)) is not None:
            return Found("unsupported", provider)
        if found == "empty" and path.suffix.lower() == ".zip":
            return Found("empty", "zip")
        if found is not None:
            return Found(found, _image_name(head) if found == "image" else None)
        if (provider := registry.head_provider(head)) is not None:
            return Found("unsupported", provider)
        return _classified(parse_json(read_file(os.fspath(path), False), name), path.name)
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        found = _from_ends(data[:_HEAD], data[-_TAIL:], len(data) <= _HEAD)
        if found == "zip":
            return Found("zip")
        if found is not None:
            return Found(found, _image_name(data) if found == "image" else None)
        if (provider := registry.head_provider(data[:_HEAD])) is not None:
            return Found("unsupported", provider)
        return _classified(parse_json(data, None), None)
    return _classified(source, None)


def expand_user(path: str | os.PathLike[str]) -> Path:
    """``path`` with a leading ``~`` expanded."""
    return Path(os.path.expanduser(os.fspath(path)))


def _listed(path: Path) -> str | None:
    """The provider whose export the folder or zip ``path`` is, told by its files' names when it holds
    no conversation part (None: not told so); InputError when it holds no export part or is no
    readable zip (listings only; the conversion reads the parts)."""
    names = listed_files(path)
    if not any(is_conversation_part(n) for n in names) and (provider := registry.member_provider(names)):
        return provider
    check_listing(path, names)
    return None


def _from_ends(head: bytes, tail: bytes, whole: bool) -> Kind | None:
    """The kind of a file from its first and last bytes, or None when its value must be parsed. A JSON
    file whose end does not close its first bracket is parsed too, so that the parser says where it breaks."""
    if head[:4] in _ZIP_MAGIC:
        return "zip"
    if head[:4] == _PARQUET_MAGIC:
        return "parquet"
    if any(head.startswith(magic) for magic, _ in _IMAGES):
        return "image"
    if is_utf16(head):
        return "utf16"
    text = head[3:] if head.startswith(_BOM) else head
    stripped = text.lstrip(_WS)
    if not stripped and whole:
        return "empty"
    first, last = stripped[:1], tail.rstrip(_WS)[-1:]
    if first == b"[":
        return "export" if last == b"]" else None
    if first == b"{":
        if last != b"}":
            return None
        if _ENVELOPE_RE.match(text.lstrip(_WS + b"{")):
            return "envelope"
        opening = text[:4096]
        if _ENVELOPE_RE.search(opening) and not _IR_RE.search(opening):
            return "envelope"
        if _IR_RE.search(opening) and not _ENVELOPE_RE.search(opening):
            return "ir"
        return None
    if _is_binary(head):
        return "binary"
    return None


def _image_name(head: bytes) -> str:
    return next(name for magic, name in _IMAGES if head.startswith(magic))


def _is_binary(head: bytes) -> bool:
    """Not UTF-8 text."""
    sample = head[:512]
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(sample) - 3  # a character cut by the sample's end is fine
    return False


def _classified(value: Any, name: str | None) -> Found:
    """What a parsed JSON ``value`` is (``name``, the file's name, tells a manifest by its name)."""
    if isinstance(value, list):
        return Found("export", value=value)
    if not isinstance(value, dict):
        return Found("json", value=value)
    if value.get("memvelope") == ENVELOPE_TAG:
        return Found("envelope", value=value)
    meta = value.get("meta")
    if "memvelope" not in value and isinstance(meta, dict) and meta.get("format") == IR_TAG:
        return Found("ir", value=value)
    provider = registry.provider_of(value)
    if provider is not None:
        return Found("conversation" if provider in registry.SUPPORTED else "unsupported", provider, value)
    if "memvelope" in value or (isinstance(meta, dict) and "format" in meta):
        return Found("json", value=value)  # a tag the reader does not support: it says which
    if (provider := registry.document_provider(value)) is not None:
        return Found("unsupported", provider, value)
    if isinstance(value.get("conversations"), list) and not isinstance(meta, dict):
        return Found("wrapped", value=value)
    listing = any(isinstance(value.get(key), list) for key in ("files", "export_files"))
    if listing or (name is not None and name.lower().endswith("manifest.json")):
        return Found("manifest", value=value)
    return Found("json", value=value)


# ---- the one line for a wrong input --------------------------------------------------------------


def wrong_file(found: Found, use: Use) -> tuple[str, Reason] | None:
    """The one line and the reason for a source of kind ``found`` given where ``use`` is taken, or
    ``None`` when it fits (or when the reader's own error says it better).

    The reasons are those the conversion gives the same file (the spec's outcome): a file that is not
    JSON is ``invalid-json``, a JSON object where an export is needed adds no conversation
    (``no-provider``); a file that is no Memvelope document where one is needed is ``not-memvelope``.
    Another provider's export (or conversation) is refused wherever it is given (``unsupported-provider``).
    """
    kind = found.kind
    if kind == "missing":
        return "no such file or folder", "not-found"
    if kind == "empty":
        if found.detail == "zip":
            return "an empty file (0 bytes), not a zip archive: download the export again", "bad-zip"
        return EMPTY_FILE, "invalid-json"
    if kind == "utf16":
        return UTF16_FILE, "invalid-json"
    if kind == "parquet":
        return (
            "a Parquet file, not JSON: give the folder that holds it (written by memvelope parquet) to "
            "search or topics, or read it with mv.read_parquet()",
            "invalid-json",
        )
    if kind == "image":
        return f"{found.detail}, not JSON: {EXPECTED}", "invalid-json"
    if kind == "binary":
        return f"a binary file, not JSON: {EXPECTED}", "invalid-json"
    if kind == "unsupported":
        return registry.refusal_line(found.detail or ""), "unsupported-provider"
    if use == "diagnose" and kind in ("conversation", "wrapped", "manifest"):
        return None
    if kind == "conversation":
        provider = registry.name(found.detail, "")
        return (
            f"a single {provider} conversation, not an export: an export is an array of conversations; "
            "put it inside [ ] to convert it",
            "no-provider",
        )
    if kind == "wrapped":
        return (
            "an object holding a 'conversations' array, without the 'memvelope' tag of an envelope: "
            "to convert exported conversations, save the array alone as conversations.json",
            "no-provider",
        )
    if kind == "manifest":
        return (
            "an export manifest (a list of the export's files): give the export's zip or folder instead",
            "no-provider",
        )
    if kind == "parquet-folder" and use not in ("history", "frames") and found.detail == "history":
        return (
            "a history folder (written by memvelope history add), not an export or a Memvelope document: "
            "history show and check, search, topics and report read it; in Python, mv.read_history()",
            "no-parts",
        )
    if kind == "parquet-folder" and use not in ("history", "frames"):
        return (
            "a Parquet folder (written by memvelope parquet), not an export or a Memvelope document: "
            "search and topics read it; in Python, mv.read_parquet()",
            "no-parts",
        )
    if use in ("export", "diagnose") and kind in ("envelope", "ir"):
        what = "envelope" if kind == "envelope" else "Facts IR document"
        return f"already a Memvelope {what}, not an export: use {_DOCUMENT_COMMANDS}", "no-provider"
    if use == "document" and kind in ("zip", "folder", "export"):
        what = {"zip": "an export zip", "folder": "an export folder", "export": "an export part"}[kind]
        return (
            f"{what}, not a Memvelope document: convert it first (memvelope convert), "
            f"or give it to {_DOCUMENT_COMMANDS}, which convert it",
            "not-memvelope",
        )
    return None


def _error(kind: Kind, detail: str | None, name: str | None, use: Use = "any") -> InputError:
    said = wrong_file(Found(kind, detail), use)
    assert said is not None
    return InputError(said[0], reason=said[1], source=name)


def refuse(found: Found, name: str | None, use: Use) -> None:
    """Raise the one InputError for a source of kind ``found`` that does not fit ``use``."""
    said = wrong_file(found, use)
    if said is not None:
        raise InputError(said[0], reason=said[1], source=name)


@contextlib.contextmanager
def explained(paths: Sequence[str | os.PathLike[str]]) -> Iterator[None]:
    """Turn a conversion's "no conversations"/"invalid JSON" error about a part given by path into the
    line :func:`wrong_file` gives for that part (the conversion's outcome is unchanged)."""
    try:
        yield
    except ConversionError as exc:
        if exc.reason not in ("no-provider", "invalid-json"):
            raise
        names = [os.fspath(p) for p in paths]
        culprit = exc.source if exc.source in names else names[0] if len(names) == 1 else None
        if culprit is None or Path(culprit).is_dir():
            raise
        try:
            found = identify(culprit)
        except MemvelopeError:
            raise exc from None
        said = wrong_file(found, "export")
        if said is None:
            raise
        raise InputError(said[0], reason=said[1], source=culprit) from None


# ---- resolving -----------------------------------------------------------------------------------


def labels_of(sources: Sequence[Any]) -> list[str]:
    """Each input's one label: a path's file (or folder) name, the path as given when another input
    has the same name, ``doc<i>`` for an input without a name."""
    names = [
        os.path.basename(os.path.normpath(os.fspath(s))) or os.fspath(s) if isinstance(s, str | os.PathLike) else None
        for s in sources
    ]
    return [
        (os.fspath(s) if names.count(n) > 1 else n) if n is not None else f"doc{i}"
        for i, (s, n) in enumerate(zip(sources, names, strict=True))
    ]


def resolve(
    source: Any, use: Use, *, list_means: ListMeans, labels: Sequence[str] | None = None, caller: str = "this call"
) -> list[Input]:
    """The inputs in ``source``, each resolved once (see the module docstring for what it may be).

    ``list_means`` says what a list is; ``labels`` replaces the labels :func:`labels_of` gives (one
    per input); ``caller`` names the function in the line for a list that could mean either. An input
    already resolved (an :class:`Input`; for ``"parts"``, one export alone) is taken as it is.
    """
    if isinstance(source, list | tuple):
        items = list(source)
        if list_means == "parts":
            return [_parts(items, use, caller)]
    else:
        items = [source]
    given = [_name_of(x) for x in items]
    names = labels_of([g if g is not None else x for g, x in zip(given, items, strict=True)])
    names = [x.label if isinstance(x, Input) else n for x, n in zip(items, names, strict=True)]
    if labels is not None:
        names = [str(x) for x in labels]
        if len(names) != len(items):
            raise ValueError(f"sources= has {count(len(names), 'label')} for {count(len(items), 'document')}")
    resolved = [resolve_one(x, use, label=label) for x, label in zip(items, names, strict=True)]
    _check_not_parts(resolved, caller)
    return resolved


def _name_of(item: Any) -> Any:
    """A file object's name (as a path, for its label), else None."""
    if isinstance(item, str | os.PathLike | Input) or not hasattr(item, "read"):
        return None
    name = getattr(item, "name", None)
    return os.path.basename(name) if isinstance(name, str) else None


def _check_not_parts(inputs: list[Input], caller: str) -> None:
    parts = [i for i in inputs if i.kind == "export" and i.name and _PART_NAME.search(i.name)]
    if len(parts) > 1:
        names = ", ".join(p.label for p in parts[:3]) + (", ..." if len(parts) > 3 else "")
        raise InputError(
            f"{caller} takes a list as several documents, but {names} look like parts of one export: "
            "give their folder or zip, or convert them together first (mv.load([...]) or memvelope convert)",
            reason="bad-source",
        )


def _parts(items: list[Any], use: Use, caller: str) -> Input:
    if len(items) == 1 and isinstance(items[0], Input) and items[0].kind == "export":
        return items[0]  # resolved already: handed on as it is
    if not items:
        raise InputError("no input given", reason="not-found")
    if not all(isinstance(p, str | os.PathLike) for p in items):
        raise InputError(
            f"a list given to {caller} is the parts of one export, as paths; give each document separately",
            reason="bad-source",
        )
    for p in items:
        found = identify(p)
        if len(items) == 1:
            if use not in ("export", "diagnose") and found.kind in ("envelope", "ir"):
                return resolve_one(p, use)
            refuse(found, os.fspath(p), "diagnose" if use == "diagnose" else "export")
        elif found.kind in _NOT_JSON:  # among several parts, a JSON object is a part that adds nothing
            refuse(found, os.fspath(p), "export")
    paths = tuple(expand_user(p) for p in items)
    return Input("export", labels_of(items)[0], os.fspath(items[0]), parts=paths)


def resolve_one(source: Any, use: Use, *, label: str | None = None) -> Input:
    """One source, resolved for ``use``; InputError saying what it is when it does not fit. An input
    already resolved is taken as it is (with ``label``, when given)."""
    if isinstance(source, Input):
        return source if label is None or label == source.label else replace(source, label=label)
    if isinstance(source, str | os.PathLike):
        name = os.fspath(source)
        label = label or labels_of([source])[0]
        path = expand_user(source)
        found = identify(source)
        if use == "document" and found.kind == "export" and found.value is None:
            parse_json(read_file(os.fspath(path), False), name)  # a broken file is reported as broken
        refuse(found, name, use)
        if found.kind in ("zip", "folder", "export"):
            return Input("export", label, name, parts=(path,))
        if found.kind == "parquet-folder":
            return Input("parquet", label, name, path=path)
        if found.kind in ("envelope", "ir"):
            return Input(found.kind, label, name, path=path, value=found.value)
        return Input("envelope", label, name, path=path, value=found.value)  # the reader says what is wrong
    if use == "history" and _is_frame(source):
        return Input("frame", label or "doc0", value=source)
    if use == "history" and isinstance(source, Mapping) and _is_frame(source.get("messages")):
        return Input("tables", label or "doc0", value=source)
    if isinstance(source, dict):
        found = _classified(source, None)
        refuse(found, None, use)
        return Input("ir" if found.kind == "ir" else "envelope", label or "doc0", value=source)
    if hasattr(source, "read") and not isinstance(source, bytes | bytearray | memoryview):
        data = source.read()
        raw = getattr(source, "name", None)
        name = os.path.basename(raw) if isinstance(raw, str) else None
        if isinstance(data, str):
            raise InputError(
                "file object is in text mode; open it in binary mode, e.g. open(path, 'rb')",
                reason="text-mode",
                source=name,
            )
        return _from_bytes(bytes(data), use, label or name or "doc0", name)
    if isinstance(source, bytes | bytearray | memoryview):
        return _from_bytes(bytes(source), use, label or "doc0", None)
    raise InputError(
        f"cannot read a value of type {type(source).__name__}: expected a path, a list of paths, bytes, a binary file "
        "object or a dict",
        reason="bad-source",
    )


def _from_bytes(data: bytes, use: Use, label: str, name: str | None) -> Input:
    try:
        found = identify(data)
    except InputError as exc:
        raise type(exc)(exc.msg, reason=exc.reason, source=name, path=exc.path) from None
    if use == "document" and found.kind == "export" and found.value is None:
        parse_json(data, name)  # a broken document is reported as broken
    refuse(found, name, use)
    if found.kind in ("zip", "export"):
        return Input("export", label, name, parts=(data,))
    kind: Literal["envelope", "ir"] = "ir" if found.kind == "ir" else "envelope"
    return Input(kind, label, name, value=found.value if isinstance(found.value, dict) else data)


def _is_frame(value: Any) -> bool:
    """A pandas DataFrame, told without importing pandas."""
    return any(cls.__name__ == "DataFrame" and cls.__module__.startswith("pandas") for cls in type(value).__mro__)
