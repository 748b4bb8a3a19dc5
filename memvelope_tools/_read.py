"""Parse and check any Memvelope document: an ``envelope-v0`` envelope or a ``memvelope-ir-v0`` Facts IR
(what the source is, is decided before, in :mod:`memvelope_tools._sources`).

The layer is identified from in-document tags only, in the spec's order: the top-level
``memvelope`` field, then ``meta.format``; the file name never matters. Unknown fields are
tolerated at every level. Anything else raises :class:`~memvelope_tools.errors.FormatError`
with the JSON path of the problem, what was found and what is supported.

Reading choices (the spec leaves them to readers):

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
import stat
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate, chain
from operator import itemgetter
from pathlib import Path
from typing import Any, BinaryIO, Literal

from ._json.elements import (
    PYTHON,
    Reader,
    Refused,
    line_column,
)
from ._json.wording import EMPTY_FILE, invalid_json
from ._progress import progress_bar
from ._spec import CATEGORIES, ROLES, SUBJECT_TYPES, field_types
from ._stable import CHANGED, Changed, Windows, file_windows, read_whole
from ._tags import ENVELOPE_TAG, IR_TAG, RESERVED_TAGS, SUPPORTED_TAGS
from .errors import FormatError, InputError

Layer = Literal["envelope", "ir"]
Source = str | os.PathLike[str] | bytes | bytearray | memoryview | BinaryIO | dict[str, Any]

_BAR_MIN_BYTES = 64 << 20

# Field checks: (name, allowed JSON types, allowed values or None).
_STR = (str,)
_CONV_FIELDS = field_types("conversation")
_MSG_FIELDS = field_types("message")
_FACT_FIELDS = field_types("fact")
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


def layer_of(doc: Any, *, source_name: str | None = None) -> Layer:
    """Return ``"envelope"`` or ``"ir"`` from the document's tags alone (its shape is not checked).

    Parameters
    ----------
    doc
        A parsed JSON value.
    source_name
        The file to name in an error.

    Returns
    -------
    str
        ``"envelope"`` or ``"ir"``.

    Raises
    ------
    memvelope_tools.errors.FormatError
        No supported tag (``not-memvelope``, ``unsupported-tag``).

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> mv.layer_of({"memvelope": "envelope-v0"})
    'envelope'
    """
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


# ---- loading -------------------------------------------------------------------------------------


def read_file(name: str, progress: bool | None) -> bytearray | mmap.mmap:
    """The bytes of file ``name`` in one buffer of this process's own (a bar when large, see :func:`read`);
    FormatError when unreadable, or when the file changed while it was read."""
    with _file_errors(name), open(name, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        with progress_bar(
            size, desc=f"reading {Path(name).name}", unit="B", enabled=progress if size >= _BAR_MIN_BYTES else False
        ) as bar:
            try:
                data = read_whole(fh, bar.update)
            except Changed:
                raise FormatError(CHANGED, reason="changed", source=name) from None
        return bytearray(fh.read()) if data is None else data


@contextlib.contextmanager
def read_windows(name: str) -> Iterator[Windows | None]:
    """The bytes of file ``name`` a window at a time (see :class:`memvelope_tools._stable.Windows`), the
    file open meanwhile; None for a file that is no regular file (read it with :func:`read_file`).
    InputError when unreadable, FormatError (reason ``changed``) when it changed while it was read."""
    with _file_errors(name):
        regular = stat.S_ISREG(os.stat(name).st_mode)
    if not regular:  # a pipe is read once, by read_file
        yield None
        return
    with _file_errors(name), open(name, "rb") as fh:
        try:
            yield file_windows(fh)
        except Changed:
            raise FormatError(CHANGED, reason="changed", source=name) from None


@contextlib.contextmanager
def _file_errors(name: str) -> Iterator[None]:
    try:
        yield
    except FileNotFoundError:
        raise InputError("no such file or folder", reason="not-found", source=name) from None
    except IsADirectoryError:
        raise InputError("is a folder, not a file", reason="unreadable", source=name) from None
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", reason="unreadable", source=name) from None


def parse_json(data: bytes | bytearray | mmap.mmap, name: str | None) -> Any:
    """Parse UTF-8 JSON text (a leading BOM skipped) as ``JSON.parse`` accepts it, with the standard
    library's values (see :mod:`memvelope_tools._json.elements`, the one reader)."""
    start = 3 if data[:3] == b"\xef\xbb\xbf" else 0
    try:
        return Reader(PYTHON).load(data, start)  # type: ignore[arg-type]
    except Refused as exc:
        raise format_error(exc, data, start, name) from None


def format_error(exc: Refused, data: bytes | bytearray | mmap.mmap, start: int, name: str | None) -> InputError:
    """The FormatError for the reader's refusal ``exc`` of ``data`` (whose text begins at ``start``)."""
    if exc.reason == "not-utf8":
        return InputError(f"not UTF-8: {exc.detail}", reason="not-utf8", source=name)
    if exc.reason == "too-deep":
        return InputError(exc.detail, reason="too-deep", source=name)
    if exc.detail == "an integer with more than 4300 digits":
        return InputError(f"not valid JSON for this reader: {exc.detail}", reason="invalid-json", source=name)
    head = bytes(data[start : start + 4096])
    if len(data) - start <= 4096 and not head.strip(b" \t\n\r"):
        return InputError(EMPTY_FILE, reason="invalid-json", source=name)
    line, column = line_column(bytes(data), exc.offset)
    if start and line == 1:
        column -= 1  # the BOM is no character of the text
    return InputError(invalid_json(exc.detail, line, column, head), reason="invalid-json", source=name)


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
    _check_fields(meta, field_types("meta", ("provider", "mode", "facts", "generated_at")), "$.meta", source_name)
    arch = _expect_object(doc.get("archetype"), "$.archetype", source_name)
    _check_fields(arch, field_types("archetype"), "$.archetype", source_name)
    facts = doc.get("facts")
    if not isinstance(facts, list):
        raise FormatError(
            f"expected an array for 'facts', found {_json_name(facts)}",
            reason="bad-shape",
            source=source_name,
            path="$.facts",
        )
    _check_records(facts, _FACT_FIELDS, lambda i: f"$.facts[{i}]", source_name)
