"""Read any Memvelope document: an ``envelope-v0`` envelope or a ``memvelope-ir-v0`` Facts IR.

The layer is identified from in-document tags only, in the spec's order: the top-level
``memvelope`` field, then ``meta.format``; the file name never matters. Unknown fields are
tolerated at every level. Anything else raises :class:`~memvelope_tools.errors.FormatError`
with the JSON path of the problem, what was found and what is supported.

Reading choices (the spec leaves them to readers):

* A ``str`` source is a path, never JSON text; pass ``bytes`` for text in memory.
* UTF-8 only: a leading BOM is skipped, invalid UTF-8 is refused (``reason="not-utf8"``).
* JSON as ``JSON.parse`` accepts it (so no ``NaN``), nested at most 1024 levels (``too-deep``);
  values are those of the standard library ``json``: lone surrogate escapes such as ``"\\ud800"``
  survive as they are, integers keep every digit (orjson, when installed, only speeds reading up).
* When a top-level ``memvelope`` key is present it decides the layer, whatever ``meta.format``
  says; a non-string value there is refused as "not a Memvelope document".
* Shape checks cover what the loaders rely on: every field of the spec's tables with its JSON
  type, ``role`` in ``user``/``assistant``, ``subject_type``/``category`` in the spec's lists.
  Timestamp *strings* are checked when frames parse them, not here.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
from bisect import bisect_right
from collections.abc import Callable, Generator, Iterator, Sequence
from itertools import accumulate, chain
from operator import itemgetter
from pathlib import Path
from typing import Any, BinaryIO, Literal, cast

from ._json.elements import (
    ARR_FIRST,
    END,
    OBJ_FIRST,
    OBJ_KEY,
    OBJ_NEXT,
    PYTHON,
    Reader,
    Refused,
    line_column,
    map_open,
    scan,
    skip_ws,
)
from ._json.parse import json_error_message as json_error_message
from ._progress import progress_bar
from ._tags import ENVELOPE_TAG, IR_TAG, RESERVED_TAGS, SUPPORTED_TAGS
from .errors import FormatError

ROLES = ("user", "assistant")
SUBJECT_TYPES = ("self", "person", "company", "project", "other")
CATEGORIES = ("identity", "career", "projects", "preferences", "instructions", "relationship")

Layer = Literal["envelope", "ir"]
Source = str | os.PathLike[str] | bytes | bytearray | memoryview | BinaryIO | dict[str, Any]

_CHUNK = 16 << 20
_BAR_MIN_BYTES = 64 << 20

# Field checks: (name, allowed JSON types, allowed values or None).
_STR = (str,)
_STR_NULL = (str, type(None))
_CONV_FIELDS = (
    ("id", _STR_NULL),
    ("title", _STR),
    ("created_at", _STR_NULL),
    ("updated_at", _STR_NULL),
    ("messages", (list,)),
)
_MSG_FIELDS = (("id", _STR), ("role", _STR), ("ts", _STR_NULL), ("text", _STR))
_FACT_FIELDS = (
    ("subject", _STR_NULL),
    ("subject_type", _STR_NULL),
    ("category", _STR_NULL),
    ("content", _STR),
    ("effective_date", _STR_NULL),
    ("in_text_date", _STR_NULL),
    ("provenance", _STR),
    ("convo_id", _STR_NULL),
)
_ENUMS = {"role": ROLES, "subject_type": SUBJECT_TYPES, "category": CATEGORIES}
_JSON_NAMES = {
    str: "a string",
    type(None): "null",
    list: "an array",
    dict: "an object",
    bool: "a boolean",
    int: "a number",
    float: "a number",
}


def read(source: Source, *, progress: bool | None = None) -> dict[str, Any]:
    """Return the envelope or Facts IR document in ``source``, after checking its tag and shape.

    ``source`` is a path (``str`` or path-like), the document's bytes, a binary file object, or an
    already-parsed ``dict`` (checked and returned as is). ``progress`` shows a bar while a large
    file is read (``None``: only on a terminal or in a notebook).
    """
    doc, name = parse_source(source, progress=progress)
    check(doc, source_name=name)
    return cast("dict[str, Any]", doc)


def layer_of(doc: Any, *, source_name: str | None = None) -> Layer:
    """Return ``"envelope"`` or ``"ir"`` from the document's tags alone (its shape is not checked)."""
    if not isinstance(doc, dict):
        raise FormatError(
            f"not a Memvelope document: the top level is {_json_name(doc)}, expected an object",
            reason="not-memvelope",
            source=source_name,
            path="$",
        )
    if "memvelope" in doc:
        return _tag_layer(doc["memvelope"], "$.memvelope", source_name)
    meta = doc.get("meta")
    if isinstance(meta, dict) and "format" in meta:
        return _tag_layer(meta["format"], "$.meta.format", source_name)
    raise FormatError(
        f"not a Memvelope document: no top-level 'memvelope' tag and no 'meta.format' tag (supported: {_supported()})",
        reason="not-memvelope",
        source=source_name,
        path="$",
    )


def check(doc: Any, *, source_name: str | None = None, conversations: bool = True) -> Layer:
    """Check ``doc``'s tag and the shape the loaders rely on; return its layer or raise FormatError.

    ``conversations=False`` skips the envelope's conversations and their messages, only making sure
    they are an array (for callers that check them as they go, see :func:`check_conversations` and
    :func:`check_messages`).
    """
    layer = layer_of(doc, source_name=source_name)
    if layer == "envelope":
        _check_envelope(doc, source_name, conversations=conversations)
    else:
        _check_ir(doc, source_name)
    return layer


def source_label(source: object, index: int) -> str:
    """The default ``source`` label of the ``index``-th input: a path's file name, else ``doc<index>``."""
    if isinstance(source, str | os.PathLike):
        return Path(source).name
    return f"doc{index}"


# ---- loading -------------------------------------------------------------------------------------


def parse_source(source: Source, *, progress: bool | None = None) -> tuple[Any, str | None]:
    """The JSON value in ``source`` (as :func:`read` takes it) and the name to cite in errors.

    Nothing about the value is checked; FormatError when it cannot be read or parsed.
    """
    if isinstance(source, dict):
        return source, None
    if isinstance(source, str | os.PathLike):
        path = os.fspath(source)
        return parse_json(read_file(path, progress), path), path
    if isinstance(source, bytes | bytearray | memoryview):
        return parse_json(bytearray(source), None), None
    if hasattr(source, "read"):
        raw_name = getattr(source, "name", None)
        name = raw_name if isinstance(raw_name, str) else None
        data = source.read()
        if isinstance(data, str):
            raise FormatError(
                "file object is in text mode; open it in binary mode, e.g. open(path, 'rb')",
                reason="text-mode",
                source=name,
            )
        return parse_json(bytearray(data), name), name
    raise FormatError(
        f"cannot read a {type(source).__name__}: expected a path, bytes, a binary file object or a dict",
        reason="bad-source",
    )


def read_file(name: str, progress: bool | None) -> bytearray:
    """The bytes of file ``name`` in one buffer (a bar when large, see :func:`read`); FormatError when unreadable."""
    with _file_errors(name), open(name, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        buf = bytearray(size)  # one buffer, filled in place: no second copy of a big file
        view = memoryview(buf)
        done = 0
        with progress_bar(
            size, desc=f"reading {Path(name).name}", unit="B", enabled=progress if size >= _BAR_MIN_BYTES else False
        ) as bar:
            while done < size and (n := fh.readinto(view[done : done + _CHUNK])):
                done += n
                bar.update(n)
        view.release()
        del buf[done:]
        if done == size:
            buf += fh.read()  # the file grew while being read
        return buf


def map_file(name: str) -> mmap.mmap | bytearray:
    """The bytes of file ``name`` mapped into memory, read-only, for readers that go through a file once:
    the pages read can be given back (see :func:`memvelope_tools._json.elements.release`). A file
    that cannot be mapped (of no size, or whose size says nothing) is read instead."""
    with _file_errors(name), open(name, "rb") as fh:
        data = map_open(fh, sequential=True)
    return read_file(name, False) if data is None else data


@contextlib.contextmanager
def _file_errors(name: str) -> Iterator[None]:
    try:
        yield
    except FileNotFoundError:
        raise FormatError("no such file or folder", reason="not-found", source=name) from None
    except IsADirectoryError:
        raise FormatError("is a folder, not a file", reason="unreadable", source=name) from None
    except OSError as exc:
        raise FormatError(f"cannot read file: {exc.strerror or exc}", reason="unreadable", source=name) from None


def parse_json(data: bytes | bytearray | mmap.mmap, name: str | None) -> Any:
    """Parse UTF-8 JSON text (a leading BOM skipped) as ``JSON.parse`` accepts it, with the standard
    library's values (see :mod:`memvelope_tools._json.elements`, the one reader)."""
    start = 3 if data[:3] == b"\xef\xbb\xbf" else 0
    try:
        return Reader(PYTHON).load(data, start)  # type: ignore[arg-type]
    except Refused as exc:
        raise format_error(exc, data, start, name) from None


def format_error(exc: Refused, data: bytes | bytearray | mmap.mmap, start: int, name: str | None) -> FormatError:
    """The FormatError for the reader's refusal ``exc`` of ``data`` (whose text begins at ``start``)."""
    if exc.reason == "not-utf8":
        return FormatError(f"not UTF-8: {exc.detail}", reason="not-utf8", source=name)
    if exc.reason == "too-deep":
        return FormatError(exc.detail, reason="too-deep", source=name)
    if exc.detail == "an integer with more than 4300 digits":
        return FormatError(f"not valid JSON for this reader: {exc.detail}", reason="invalid-json", source=name)
    head = bytes(data[start : start + 4096])
    if len(data) - start <= 4096 and not head.strip(b" \t\n\r"):
        message = "not valid JSON: the file is empty" + (" (only whitespace)" if head else "")
        return FormatError(message, reason="invalid-json", source=name)
    line, column = line_column(bytes(data), exc.offset)
    if start and line == 1:
        column -= 1  # the BOM is no character of the text
    message = f"not valid JSON: {exc.detail} at line {line} column {column}"
    if b"\x00" in head:  # ASCII saved as UTF-16 has a NUL beside every character
        message += "; the file looks like UTF-16 text, save it as UTF-8 and try again"
    return FormatError(message, reason="invalid-json", source=name)


class Fallback(Exception):
    """The file is not a plain envelope that :func:`stream_envelope` reads batch by batch: read it whole."""


_CONVERSATIONS_KEY = re.compile(rb'"conversations"[ \t\n\r]*:[ \t\n\r]*\[')


def stream_envelope(
    data: Any, *, span_bytes: int, on_bytes: Callable[[int], Any] = lambda n: None
) -> Iterator[tuple[str, Any]]:
    """Yield ``("spans", found)`` for about ``span_bytes`` of conversations at a time, then ``("members",
    {other top-level keys})``, from an envelope file's bytes, so that the whole tree never exists at once.

    ``found`` lists the conversations as :func:`memvelope_tools._json.elements.scan` reports the
    children of an array (six ints each: the third and fourth are where the value starts and ends in
    ``data``, the fifth its flags); :func:`parse_spans` gives their values, those of :func:`read`.
    Anything unusual (the top level not an object, ``conversations`` before the ``memvelope`` tag or
    not an array, a repeated key, any error) raises :class:`Fallback`, and the caller reads the file
    whole, which gives the ordinary result or error."""
    reader = Reader(PYTHON)
    view = memoryview(data)
    try:
        yield from _envelope_members(view, reader, span_bytes, on_bytes)
    except Refused:
        raise Fallback from None
    finally:
        view.release()


def parse_spans(data: Any, found: list[int]) -> list[Any]:
    """The values of the conversations in a ``("spans", found)`` of :func:`stream_envelope`, as :func:`read`
    reads them; :class:`Fallback` when they are not what it accepts (reading the file whole says why)."""
    try:
        return [value for _, value in Reader(PYTHON).children(data, found)]
    except Refused:
        raise Fallback from None


def _envelope_members(
    data: memoryview, reader: Reader, span_bytes: int, on_bytes: Callable[[int], Any]
) -> Iterator[tuple[str, Any]]:
    start = 3 if bytes(data[:3]) == b"\xef\xbb\xbf" else 0
    pos = skip_ws(data, start)  # type: ignore[arg-type]
    if bytes(data[pos : pos + 1]) != b"{":
        raise Fallback
    pos, state = pos + 1, OBJ_FIRST
    members: dict[str, Any] = {}
    done = 0
    while state != END:
        if state == OBJ_NEXT:
            pos = skip_ws(data, pos)  # type: ignore[arg-type]
            if bytes(data[pos : pos + 1]) not in (b",", b"}"):
                raise Fallback
            state = OBJ_KEY if data[pos] == 0x2C else END
            pos += 1
            continue
        key = _CONVERSATIONS_KEY.match(data, skip_ws(data, pos), len(data))  # type: ignore[arg-type]
        if key is not None:
            if members.get("memvelope") != ENVELOPE_TAG or "conversations" in members:
                raise Fallback
            members["conversations"] = None
            pos = yield from _spans(data, key.end(), span_bytes)
            state = OBJ_NEXT
        else:
            pos, state, found, error = scan(data, pos, state, True, 0)  # type: ignore[arg-type]
            if error is not None:
                raise Fallback
            for name, value in reader.children(data, found):  # type: ignore[arg-type]
                if name in members or name == "conversations":
                    raise Fallback
                members[name] = value
        on_bytes(pos - done)
        done = pos
    if scan(data, pos, END, True)[3] is not None or "conversations" not in members:  # type: ignore[arg-type]
        raise Fallback
    del members["conversations"]
    yield "members", members


def _spans(data: memoryview, pos: int, span_bytes: int) -> Generator[tuple[str, Any], None, int]:
    """The conversations array whose ``[`` ends before ``pos``, scanned ``span_bytes`` at a time; returns
    where it ends."""
    state = ARR_FIRST
    while state != END:
        pos, state, found, error = scan(data, pos, state, True, pos + span_bytes, 1)  # type: ignore[arg-type]
        if error is not None:
            raise Fallback
        if found:
            yield "spans", found
    return pos


# ---- tags ----------------------------------------------------------------------------------------


def _supported() -> str:
    return ", ".join(repr(t) for t in SUPPORTED_TAGS)


def _tag_layer(tag: Any, path: str, source_name: str | None) -> Layer:
    if not isinstance(tag, str):
        raise FormatError(
            f"not a Memvelope document: the tag is {_json_name(tag)}, not a string (supported: {_supported()})",
            reason="not-memvelope",
            source=source_name,
            path=path,
        )
    if path == "$.memvelope" and tag == ENVELOPE_TAG:
        return "envelope"
    if path == "$.meta.format" and tag == IR_TAG:
        return "ir"
    why = " (reserved for a future spec revision; no document carries it yet)" if tag in RESERVED_TAGS else ""
    raise FormatError(
        f"unsupported tag {tag!r}{why}; supported: {_supported()}",
        reason="unsupported-tag",
        source=source_name,
        path=path,
    )


# ---- shape checks --------------------------------------------------------------------------------


def _json_name(value: Any) -> str:
    return _JSON_NAMES.get(type(value), type(value).__name__)


def _expect_object(value: Any, path: str, source_name: str | None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FormatError(
            f"expected an object, found {_json_name(value)}", reason="bad-shape", source=source_name, path=path
        )
    return value


def _check_records(
    records: list[Any],
    fields: Sequence[tuple[str, tuple[type, ...]]],
    where: Callable[[int], str],
    source_name: str | None,
) -> dict[str, list[Any]]:
    """Check a list of objects column by column (fast); locate the first problem only on failure.

    ``where(i)`` is the JSON path of ``records[i]``. Returns the columns (field name to values).
    """
    columns: dict[str, list[Any]] = {}
    if not set(map(type, records)) <= {dict}:
        bad = next((i for i, r in enumerate(records) if not isinstance(r, dict)), None)
        if bad is not None:
            _expect_object(records[bad], where(bad), source_name)
    for field, types in fields:
        try:
            values = list(map(itemgetter(field), records))
        except KeyError:
            i = next(i for i, r in enumerate(records) if field not in r)
            raise FormatError(
                f"missing field {field!r}", reason="bad-shape", source=source_name, path=where(i)
            ) from None
        if not set(map(type, values)).issubset(types):
            i, v = next((i, v) for i, v in enumerate(values) if type(v) not in types)
            want = " or ".join(_JSON_NAMES[t] for t in types)
            raise FormatError(
                f"expected {want} for {field!r}, found {_json_name(v)}",
                reason="bad-shape",
                source=source_name,
                path=f"{where(i)}.{field}",
            )
        allowed = _ENUMS.get(field)
        if allowed is not None and not set(values).issubset((*allowed, None)):
            i, v = next((i, v) for i, v in enumerate(values) if v is not None and v not in allowed)
            raise FormatError(
                f"{field} {v!r} is not one of {', '.join(allowed)}",
                reason="bad-shape",
                source=source_name,
                path=f"{where(i)}.{field}",
            )
        columns[field] = values
    return columns


def _check_fields(
    obj: dict[str, Any], fields: Sequence[tuple[str, tuple[type, ...]]], path: str, source_name: str | None
) -> None:
    for field, types in fields:
        if field not in obj:
            raise FormatError(f"missing field {field!r}", reason="bad-shape", source=source_name, path=path)
        v = obj[field]
        if type(v) not in types:
            want = " or ".join(_JSON_NAMES[t] for t in types)
            raise FormatError(
                f"expected {want} for {field!r}, found {_json_name(v)}",
                reason="bad-shape",
                source=source_name,
                path=f"{path}.{field}",
            )


def _check_envelope(doc: dict[str, Any], source_name: str | None, *, conversations: bool = True) -> None:
    meta = _expect_object(doc.get("meta"), "$.meta", source_name)
    _check_fields(meta, (("source_provider", _STR),), "$.meta", source_name)
    convs = doc.get("conversations")
    if not isinstance(convs, list):
        raise FormatError(
            f"expected an array for 'conversations', found {_json_name(convs)}",
            reason="bad-shape",
            source=source_name,
            path="$.conversations",
        )
    if conversations:
        _check_records(convs, _CONV_FIELDS, lambda i: f"$.conversations[{i}]", source_name)
        check_messages(convs, 0, source_name)


def check_conversations(convs: list[Any], first: int, source_name: str | None) -> dict[str, list[Any]]:
    """Check the fields of ``convs`` (not their messages), which start at ``$.conversations[first]``.

    Returns the fields' values, one list per field.
    """
    return _check_records(convs, _CONV_FIELDS, lambda i: f"$.conversations[{first + i}]", source_name)


def check_messages(convs: list[dict[str, Any]], first: int, source_name: str | None) -> None:
    """Check the messages of ``convs``, which start at ``$.conversations[first]``."""
    # All messages at once: per-conversation checks cost more than the checks themselves.
    lists = list(map(itemgetter("messages"), convs))
    ends = list(accumulate(map(len, lists)))

    def where(k: int) -> str:
        i = bisect_right(ends, k)
        return f"$.conversations[{first + i}].messages[{k - (ends[i - 1] if i else 0)}]"

    _check_records(list(chain.from_iterable(lists)), _MSG_FIELDS, where, source_name)


def _check_ir(doc: dict[str, Any], source_name: str | None) -> None:
    meta = doc["meta"]
    _check_fields(
        meta, (("provider", _STR), ("mode", _STR), ("facts", (int,)), ("generated_at", _STR)), "$.meta", source_name
    )
    arch = _expect_object(doc.get("archetype"), "$.archetype", source_name)
    _check_fields(
        arch,
        (
            ("style", _STR_NULL),
            ("facts", (int,)),
            ("self_ratio", (int, float, type(None))),
            ("distinct_entities", (int, type(None))),
            ("categories", (dict, type(None))),
            ("belief_ratio", (int, float, type(None))),
        ),
        "$.archetype",
        source_name,
    )
    facts = doc.get("facts")
    if not isinstance(facts, list):
        raise FormatError(
            f"expected an array for 'facts', found {_json_name(facts)}",
            reason="bad-shape",
            source=source_name,
            path="$.facts",
        )
    _check_records(facts, _FACT_FIELDS, lambda i: f"$.facts[{i}]", source_name)
