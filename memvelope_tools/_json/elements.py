"""The one JSON reader: every document this package reads goes through it.

A scanner checks the bytes against ``JSON.parse``'s grammar and reports where the top-level
container's children begin and end (natively, in ``memvelope_tools._json._scan``, or in its
pure-Python twin below when the C helper is not built; both give the same answer). Each child is
then parsed by orjson, or by the reference parser (:mod:`.parse`) where orjson would read it
differently: a surrogate escape that is not half of a pair, an integer of 19 digits or more, invalid
UTF-8, a number past the double range. The scanner enforces the nesting limit (1024 levels, the
top-level container counting as one) itself, so the outcome never depends on the interpreter's
recursion limit. Read in batches, memory is bounded by the batch and the largest child.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import mmap
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .._engine import record, use_c
from .._progress import progress_bar
from .._stable import CHANGED, Changed, Stamp, Windows, changed, file_windows, read_whole, stamp
from ..errors import ConversionError, FormatError, InputError
from .parse import reference_loads
from .wording import EMPTY_FILE, invalid_json

if TYPE_CHECKING:
    from .._convert.sources import Part

try:
    import orjson
except ImportError:  # pragma: no cover - exercised when the fast extra is absent
    orjson = None  # type: ignore[assignment]

try:
    from . import _scan as _native  # type: ignore[attr-defined,unused-ignore]
except ImportError:  # pragma: no cover - exercised when the C helper is not built
    from .._native import missing

    missing("_json._scan")
    _native = None

LIMIT: Final = 1024
BEGIN, ARR_FIRST, ARR_VALUE, ARR_NEXT, OBJ_FIRST, OBJ_KEY, OBJ_NEXT, END = range(8)
LONE: Final = 1  # a surrogate escape that is not half of a pair
BIG_INT: Final = 2  # an integer literal of 19 digits or more
FIELDS: Final = 6  # ints per child: key_start, key_end, start, end, flags, depth

(E_VALUE, E_ARRAY_DELIM, E_COLON, E_KEY, E_UNTERMINATED, E_CONTROL, E_ESCAPE, E_UESCAPE, E_EXTRA, E_DEEP,
 E_OBJECT_DELIM) = range(1, 12)  # fmt: skip
MESSAGES: Final = {
    E_VALUE: "Expecting value",
    E_ARRAY_DELIM: "Expecting ',' delimiter",
    E_COLON: "Expecting ':' delimiter",
    E_KEY: "Expecting property name enclosed in double quotes",
    E_UNTERMINATED: "Unterminated string starting",
    E_CONTROL: "Invalid control character",
    E_ESCAPE: "Invalid \\escape",
    E_UESCAPE: "Invalid \\uXXXX escape",
    E_EXTRA: "Extra data",
    E_DEEP: "JSON nested too deeply to parse",
    E_OBJECT_DELIM: "Expecting ',' delimiter",
}
_NO_STOP: Final = 1 << 62

ScanResult = tuple[int, int, list[int], "tuple[int, int] | None"]


class Refused(Exception):
    """The text is not what ``JSON.parse`` accepts (or, read strictly, not UTF-8): ``reason`` is
    ``invalid-json``, ``too-deep`` or ``not-utf8``; ``offset`` the byte where the problem is."""

    def __init__(self, reason: str, detail: str, offset: int) -> None:
        super().__init__(detail)
        self.reason, self.detail, self.offset = reason, detail, offset


def native() -> bool:
    """True when the C scanner scans: built, and the engine is ``"c"`` (else the Python twin, same results)."""
    return use_c(_native)


# ---- the pure-Python twin of _scan.c -------------------------------------------------------------

_WS: Final = re.compile(rb"[ \t\n\r]*")
_STRING: Final = re.compile(rb'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"')
_ESCAPE: Final = re.compile(rb"\\(?:u([0-9a-fA-F]{4})|.)")
_MAYBE_SURROGATE: Final = re.compile(rb"\\u[dD][89a-fA-F]")
_NUMBER: Final = re.compile(rb"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_NUMBER_GOES_ON: Final = (b"e", b"E", b"e+", b"e-", b"E+", b"E-")
_HEX: Final = frozenset(b"0123456789abcdefABCDEF")
_SIMPLE_ESCAPES: Final = frozenset(b'"\\/bfnrt')
_LITERALS: Final = {0x74: b"true", 0x66: b"false", 0x6E: b"null"}
_OK, _MORE, _FAIL = range(3)


class _Fail(Exception):
    def __init__(self, code: int, pos: int) -> None:
        self.code, self.pos = code, pos


class _More(Exception):
    pass


def _ws(b: bytes, i: int, n: int) -> int:
    m = _WS.match(b, i, n)
    assert m is not None
    return m.end()


def skip_ws(buf: bytes, pos: int) -> int:
    """The position of the first byte at or after ``pos`` that is not JSON whitespace."""
    return _ws(buf, pos, len(buf))


def _surrogate_flags(token: bytes) -> int:
    escapes = [(m.start(), m.end(), m.group(1)) for m in _ESCAPE.finditer(token)]
    k = 0
    while k < len(escapes):
        _, end, digits = escapes[k]
        k += 1
        if digits is None:
            continue
        u = int(digits, 16)
        if 0xD800 <= u < 0xDC00:
            low = escapes[k][2] if k < len(escapes) and escapes[k][0] == end else None
            if low is not None and 0xDC00 <= int(low, 16) <= 0xDFFF:
                k += 1
                continue
            return LONE
        if 0xDC00 <= u <= 0xDFFF:
            return LONE
    return 0


def _string(b: bytes, i: int, n: int, final: bool) -> tuple[int, int]:
    m = _STRING.match(b, i, n)
    if m is not None:
        token = m.group()
        return m.end(), _surrogate_flags(token) if _MAYBE_SURROGATE.search(token) else 0
    return _string_slow(b, i, n, final)


def _hex4(b: bytes, i: int) -> int:
    digits = bytes(b[i : i + 4])  # int() takes no memoryview
    return int(digits, 16) if all(c in _HEX for c in digits) else -1


def _string_slow(b: bytes, i: int, n: int, final: bool) -> tuple[int, int]:
    start, flags = i, 0
    i += 1
    while True:
        while i < n and b[i] >= 0x20 and b[i] != 0x22 and b[i] != 0x5C:
            i += 1
        if i >= n:
            raise _Fail(E_UNTERMINATED, start) if final else _More
        c = b[i]
        if c == 0x22:
            return i + 1, flags
        if c < 0x20:
            raise _Fail(E_CONTROL, i)
        if i + 1 >= n:
            raise _Fail(E_UNTERMINATED, start) if final else _More
        c = b[i + 1]
        if c != 0x75:
            if c in _SIMPLE_ESCAPES:
                i += 2
                continue
            raise _Fail(E_ESCAPE, i)
        if i + 6 > n:
            raise _Fail(E_UESCAPE, i) if final else _More
        u = _hex4(b, i + 2)
        if u < 0:
            raise _Fail(E_UESCAPE, i)
        if 0xD800 <= u < 0xDC00:
            j = i + 6
            if j >= n or (b[j] == 0x5C and (j + 1 >= n or (b[j + 1] == 0x75 and j + 6 > n))):
                if not final:
                    raise _More
            elif b[j] == 0x5C and b[j + 1] == 0x75 and 0xDC00 <= _hex4(b, j + 2) <= 0xDFFF:
                i = j + 6
                continue
            flags |= LONE
        elif 0xDC00 <= u <= 0xDFFF:
            flags |= LONE
        i += 6


def _number(b: bytes, i: int, n: int, final: bool) -> tuple[int, int]:
    m = _NUMBER.match(b, i, n)
    if m is None:
        if b[i : i + 1] == b"-" and i + 1 >= n and not final:
            raise _More
        raise _Fail(E_VALUE, i)
    end = m.end()
    if not final:
        rest = b[end:n]
        if end == n or (m.group(3) is None and ((m.group(2) is None and rest == b".") or rest in _NUMBER_GOES_ON)):
            raise _More
    big = m.group(2) is None and m.group(3) is None and len(m.group(1)) >= 19
    return end, BIG_INT if big else 0


def _scalar(b: bytes, i: int, n: int, final: bool) -> tuple[int, int]:
    c = b[i]
    if c == 0x22:
        return _string(b, i, n, final)
    if c == 0x2D or 0x30 <= c <= 0x39:
        return _number(b, i, n, final)
    word = _LITERALS.get(c)
    if word is None:
        raise _Fail(E_VALUE, i)
    got = b[i : i + len(word)]
    if got == word:
        return i + len(word), 0
    if len(got) < len(word) and word.startswith(got) and i + len(got) >= n:
        raise _Fail(E_VALUE, i) if final else _More
    raise _Fail(E_VALUE, i)


def _value(b: bytes, i: int, n: int, final: bool, base: int) -> tuple[int, int, int]:
    """One whole value at ``b[i]``: (end, flags, depth)."""
    stack: list[int] = []
    deepest = flags = 0
    mode = "value"
    while True:
        if mode == "value":
            c = b[i]
            if c == 0x5B or c == 0x7B:
                if base + len(stack) + 1 > LIMIT:
                    raise _Fail(E_DEEP, i)
                stack.append(c)
                deepest = max(deepest, len(stack))
                i = _ws(b, i + 1, n)
                if i >= n:
                    raise _Fail(E_VALUE if c == 0x5B else E_KEY, i) if final else _More
                if b[i] == c + 2:  # ] is [ + 2, } is { + 2
                    i += 1
                    stack.pop()
                    mode = "after"
                else:
                    mode = "value" if c == 0x5B else "key"
                continue
            i, f = _scalar(b, i, n, final)
            flags |= f
            mode = "after"
        elif mode == "after":
            if not stack:
                return i, flags, deepest
            i = _ws(b, i, n)
            c = stack[-1]
            delim = E_ARRAY_DELIM if c == 0x5B else E_OBJECT_DELIM
            if i >= n:
                raise _Fail(delim, i) if final else _More
            if b[i] == 0x2C:
                i = _ws(b, i + 1, n)
                if i >= n:
                    raise _Fail(E_VALUE if c == 0x5B else E_KEY, i) if final else _More
                mode = "value" if c == 0x5B else "key"
            elif b[i] == c + 2:
                i += 1
                stack.pop()
            else:
                raise _Fail(delim, i)
        else:  # key
            if b[i] != 0x22:
                raise _Fail(E_KEY, i)
            i, f = _string(b, i, n, final)
            flags |= f
            i = _ws(b, i, n)
            if i >= n:
                raise _Fail(E_COLON, i) if final else _More
            if b[i] != 0x3A:
                raise _Fail(E_COLON, i)
            i = _ws(b, i + 1, n)
            if i >= n:
                raise _Fail(E_VALUE, i) if final else _More
            mode = "value"


def py_scan(buf: bytes, pos: int, state: int, final: bool, stop: int, base: int) -> ScanResult:
    """The pure-Python twin of the C scanner (see ``_scan.c`` for the contract)."""
    b, n, i = buf, len(buf), pos
    children: list[int] = []
    try:
        while True:
            i = _ws(b, i, n)
            pos = i
            if state == BEGIN:
                if i >= n:
                    raise _Fail(E_VALUE, i) if final else _More
                if b[i] == 0x5B or b[i] == 0x7B:
                    if base + 1 > LIMIT:
                        raise _Fail(E_DEEP, i)
                    state = ARR_FIRST if b[i] == 0x5B else OBJ_FIRST
                    i += 1
                    continue
                end, flags = _scalar(b, i, n, final)
                children += (-1, -1, i, end, flags, 0)
                state, i = END, end
            elif state in (ARR_FIRST, ARR_VALUE):
                if i >= n:
                    raise _Fail(E_VALUE, i) if final else _More
                if state == ARR_FIRST and b[i] == 0x5D:
                    return i + 1, END, children, None
                end, flags, depth = _value(b, i, n, final, base + 1)
                children += (-1, -1, i, end, flags, depth)
                state, pos = ARR_NEXT, end
                i = end
                if end >= stop:
                    return pos, state, children, None
            elif state in (ARR_NEXT, OBJ_NEXT):
                delim = E_ARRAY_DELIM if state == ARR_NEXT else E_OBJECT_DELIM
                if i >= n:
                    raise _Fail(delim, i) if final else _More
                if b[i] == 0x2C:
                    state = ARR_VALUE if state == ARR_NEXT else OBJ_KEY
                    i += 1
                elif b[i] == (0x5D if state == ARR_NEXT else 0x7D):
                    return i + 1, END, children, None
                else:
                    raise _Fail(delim, i)
            elif state in (OBJ_FIRST, OBJ_KEY):
                if i >= n:
                    raise _Fail(E_KEY, i) if final else _More
                if state == OBJ_FIRST and b[i] == 0x7D:
                    return i + 1, END, children, None
                if b[i] != 0x22:
                    raise _Fail(E_KEY, i)
                key_end, flags = _string(b, i, n, final)
                j = _ws(b, key_end, n)
                if j >= n:
                    raise _Fail(E_COLON, j) if final else _More
                if b[j] != 0x3A:
                    raise _Fail(E_COLON, j)
                j = _ws(b, j + 1, n)
                if j >= n:
                    raise _Fail(E_VALUE, j) if final else _More
                end, more_flags, depth = _value(b, j, n, final, base + 1)
                children += (i, key_end, j, end, flags | more_flags, depth)
                state, pos = OBJ_NEXT, end
                i = end
                if end >= stop:
                    return pos, state, children, None
            else:  # END
                if i < n:
                    raise _Fail(E_EXTRA, i)
                return pos, state, children, None
    except _More:
        return pos, state, children, None
    except _Fail as exc:
        return pos, state, children, (exc.code, exc.pos)


def scan(buf: bytes, pos: int, state: int, final: bool, stop: int = _NO_STOP, base: int = 0) -> ScanResult:
    """``(pos, state, children, error)``: see ``_scan.c``. Natively when the C helper is built."""
    if use_c(_native):
        record("scan", "c")
        result: ScanResult = _native.scan(buf, pos, state, final, stop, base)
        return result
    record("scan", "python")
    return py_scan(buf, pos, state, final, stop, base)


# ---- parsing children ----------------------------------------------------------------------------

_REPLACEMENT: Final = b"\xef\xbf\xbd"


@dataclass(frozen=True)
class Semantics:
    """How values are read: ``strict`` refuses invalid UTF-8 (else it becomes U+FFFD, as a browser
    decodes); ``reference`` parses text the scanner accepted where orjson would differ."""

    strict: bool
    reference: Callable[[str], Any]


def _python_loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:  # CPython refuses int() of an integer literal of more than 4300 digits
        raise Refused("invalid-json", "an integer with more than 4300 digits", 0) from None


JS: Final = Semantics(strict=False, reference=reference_loads)  # JSON.parse after WHATWG decoding
PYTHON: Final = Semantics(strict=True, reference=_python_loads)  # the standard library's json


@contextlib.contextmanager
def _headroom(depth: int) -> Iterator[None]:
    """Room on the interpreter's stack for the reference parser to go ``depth`` levels deep (within
    the nesting limit, which the scanner has already enforced)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(old + 2 * depth + 100)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


class Reader:
    """Parses the children a scan found in ``buf`` (the bytes a scan was given), counting the invalid
    UTF-8 sequences replaced (``replaced``) when not strict."""

    def __init__(self, semantics: Semantics = JS, *, use_orjson: bool = True) -> None:
        self.semantics = semantics
        self.use_orjson = use_orjson and orjson is not None
        self.replaced = 0

    def value(self, buf: bytes, start: int, end: int, flags: int = 0, depth: int = 0, offset: int = 0) -> Any:
        """The value of ``buf[start:end]``, which the scanner accepted (``flags`` and ``depth`` as it
        reported them; ``offset`` is added to byte positions in errors)."""
        fast = self.use_orjson and not flags
        if fast:
            try:
                return orjson.loads(memoryview(buf)[start:end])
            except orjson.JSONDecodeError:
                pass  # invalid UTF-8, or a number past the double range
        raw = bytes(buf[start:end])
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if self.semantics.strict:
                at = offset + start + exc.start
                raise Refused("not-utf8", f"invalid byte sequence at byte offset {at}", at) from None
            text = raw.decode("utf-8", "replace")
            self.replaced += text.count("\ufffd") - raw.count(_REPLACEMENT)
            if fast:
                with contextlib.suppress(orjson.JSONDecodeError):
                    return orjson.loads(text)
        try:
            if depth > 64:
                with _headroom(depth):
                    return self.semantics.reference(text)
            return self.semantics.reference(text)
        except Refused as exc:
            raise Refused(exc.reason, exc.detail, offset + start) from None

    def children(self, buf: bytes, found: list[int], offset: int = 0) -> Iterator[tuple[Any, Any]]:
        """``(key, value)`` for each child in ``found`` (a scan's list; key None for array elements)."""
        value = self.value
        for k in range(0, len(found), FIELDS):
            key_start, key_end, start, end, flags, depth = found[k : k + FIELDS]
            key = None if key_start < 0 else value(buf, key_start, key_end, flags, 0, offset)
            yield key, value(buf, start, end, flags, depth, offset)

    def load(self, buf: bytes, start: int = 0, base: int = 0) -> Any:
        """The whole document in ``buf[start:]``; raises :class:`Refused`."""
        pos, state, found, error = scan(buf, start, BEGIN, True, _NO_STOP, base)
        if error is None and state == END:
            error = scan(buf, pos, END, True, _NO_STOP, base)[3]
        if error is not None:
            raise refusal(error)
        if self.use_orjson and not any(found[4::FIELDS]):
            with contextlib.suppress(orjson.JSONDecodeError):
                return orjson.loads(memoryview(buf)[start:])
        first = buf[_ws(buf, start, len(buf))]
        if first == 0x5B:
            return [self._child(buf, found, k, base) for k in range(0, len(found), FIELDS)]
        if first == 0x7B:
            doc = {}
            for k in range(0, len(found), FIELDS):
                key_start, key_end, _, _, flags, _ = found[k : k + FIELDS]
                doc[self.value(buf, key_start, key_end, flags)] = self._child(buf, found, k, base)
            return doc
        return self.value(buf, found[2], found[3], found[4], 0)

    def _child(self, buf: bytes, found: list[int], k: int, base: int) -> Any:
        _, _, start, end, flags, depth = found[k : k + FIELDS]
        if flags and depth and end - start > _SPLIT_BYTES:  # a large container: only its flagged parts go slow
            view = memoryview(buf)[start:end]
            try:
                return _Shifted(self, start).load(view, base + 1)
            finally:
                view.release()
        return self.value(buf, start, end, flags, depth)


_SPLIT_BYTES: Final = 1 << 20


class _Shifted:
    """A Reader over a slice: byte positions in errors are those of the whole buffer."""

    def __init__(self, reader: Reader, shift: int) -> None:
        self.reader, self.shift = reader, shift

    def load(self, view: memoryview, base: int) -> Any:
        try:
            return self.reader.load(view, 0, base)  # type: ignore[arg-type]
        except Refused as exc:
            raise Refused(exc.reason, exc.detail, exc.offset + self.shift) from None


def refusal(error: tuple[int, int], offset: int = 0) -> Refused:
    """The :class:`Refused` for a scan's ``error`` (``offset`` added to its position)."""
    code, pos = error
    reason = "too-deep" if code == E_DEEP else "invalid-json"
    return Refused(reason, MESSAGES[code], pos + offset)


def line_column(data: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and column (in characters) of byte ``offset`` in ``data``."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    column = len(bytes(data[line_start:offset]).decode("utf-8", "replace")) + 1
    return data.count(b"\n", 0, offset) + 1, column


# ---- a part's elements, read in bounded batches -------------------------------------------------

_BOM: Final = b"\xef\xbb\xbf"
CHUNK: Final = 1 << 20  # bytes read at a time (twice that, and on, while one element is unfinished)
_MAX_CHUNK: Final = 256 << 20
BATCH: Final = 4 << 20  # bytes of elements scanned before they are handed on


class PartElements:
    """The top-level array elements of one export part, read in bounded batches.

    ``ranges()`` yields ``(buf, children, offset)``: a byte buffer, the scanned children in it (see
    :func:`scan`) and the buffer's offset in the part; ``batches()`` parses them. Whether the top level
    is an array is known (``is_array``) once the first batch is out, or once the part is read. Errors
    are :class:`~memvelope_tools.errors.ConversionError` naming the part, with ``JSON.parse``'s verdict.
    """

    def __init__(
        self, part: Part, reader: Reader, *, chunk: int | None = None, on_bytes: Callable[[int], Any] | None = None
    ) -> None:
        self.part, self.reader, self.chunk = part, reader, chunk or CHUNK
        self.on_bytes = on_bytes
        self.is_array: bool | None = None
        #: The stamp of the file read (see :func:`memvelope_tools._stable.stamp`; None: no regular
        #: file) and how many bytes of it (a BOM) come before the positions the ranges give.
        self.stamp: Stamp | None = None
        self.skip = 0

    def batches(self) -> Iterator[list[Any]]:
        """The elements' values (or, for a part whose top level is no array, its members' values)."""
        for buf, found, offset in self.ranges():
            yield self.values(buf, found, offset)

    def values(self, buf: bytes, found: list[int], offset: int = 0) -> list[Any]:
        """The values of the children ``found`` in ``buf``; errors name the part."""
        try:
            return [value for _, value in self.reader.children(buf, found, offset)]
        except Refused as exc:
            raise self.error(exc) from None

    def ranges(self) -> Iterator[tuple[bytes, list[int], int]]:
        """The scanned children, a batch at a time (see the class). Each buffer is this process's own
        copy of the part's bytes; a file that changed while it was read raises ConversionError
        (reason ``changed``) rather than giving a mix of two contents."""
        with self.part.open() as fh:
            yield from self._ranges(fh)

    def _ranges(self, fh: Any) -> Iterator[tuple[bytes, list[int], int]]:
        before = self.stamp = _file_stamp(fh)
        buf, pos, state, offset = b"", 0, BEGIN, 0
        eof, size, first, need_read = False, self.chunk, True, True
        while True:
            if need_read and not eof:
                buf, offset, pos = buf[pos:], offset + pos, 0  # the part scanned goes before more is read
                data = fh.read(size)
                if self.on_bytes is not None:
                    self.on_bytes(len(data))
                eof = not data
                if first:
                    while len(data) < len(_BOM) and not eof and (more := fh.read(size)):
                        data += more
                    self.skip = len(_BOM) if data.startswith(_BOM) else 0
                    data = data[self.skip :]
                    first = False
                buf += data
                del data  # else held beside the next chunk while it is read
            stop = pos + BATCH
            new_pos, new_state, found, error = scan(buf, pos, state, eof, stop, 0)
            if self.is_array is None and new_state != BEGIN:
                self.is_array = buf[_ws(buf, pos, len(buf))] == 0x5B
            if error is not None or (state == END and eof):
                self._unchanged(fh, before)
            if found:
                yield buf, found, offset
            if error is not None:
                raise self.error(refusal(error, offset))
            progressed = bool(found) or (new_pos, new_state) != (pos, state)
            pos, state = new_pos, new_state
            if state == END:
                if pos >= len(buf) and eof:
                    return
                need_read = pos >= len(buf)  # else: what follows is checked first
                continue
            stopped = bool(found) and found[-3] >= stop
            need_read = not stopped
            if need_read and eof:  # pragma: no cover - a final scan ends, or reports an error
                raise AssertionError("the scanner stopped before the end of the input")
            size = self.chunk if progressed else min(2 * size, _MAX_CHUNK)

    def _unchanged(self, fh: Any, before: Stamp | None) -> None:
        if before is not None and changed(fh.fileno(), before):
            raise ConversionError(CHANGED, reason="changed", source=self.part.name)

    def error(self, exc: Refused) -> InputError:
        """The InputError for ``exc``, naming the part, with the line and column (or the line for an
        empty or UTF-16 file)."""
        if exc.reason == "too-deep":
            return InputError(exc.detail, reason="too-deep", source=self.part.name)
        if exc.reason == "not-utf8":
            return InputError(exc.detail, reason="not-utf8", source=self.part.name)
        with self.part.open() as fh:
            head = fh.read(4096)
            head = head[len(_BOM) :] if head.startswith(_BOM) else head
            if len(head) < 4096 and not head.strip(b" \t\n\r"):
                return InputError(EMPTY_FILE, reason="invalid-json", source=self.part.name)
            line, column = _locate(fh, head, exc.offset)
        return InputError(invalid_json(exc.detail, line, column, head), reason="invalid-json", source=self.part.name)


def _file_stamp(fh: Any) -> Stamp | None:
    try:
        return stamp(fh.fileno())
    except (OSError, ValueError, AttributeError):  # no file descriptor: a zip member, bytes in memory
        return None


def _locate(fh: Any, head: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and column (in characters) of byte ``offset`` of a stream that began with
    ``head`` (the rest still to be read from ``fh``), holding one chunk at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    lines, column, done, data = 0, 0, 0, head
    while data:
        text = decoder.decode(data[: offset - done])
        done += len(data)
        newline = text.rfind("\n")
        lines += text.count("\n")
        column = len(text) - newline - 1 if newline >= 0 else column + len(text)
        if done >= offset:
            break
        data = fh.read(CHUNK)
    return lines + 1, column + 1


def load_part(part: Part, reader: Reader, data: bytes | None = None) -> Any:
    """A part's whole top-level value, read in memory (for tools that look at every part whole);
    ``data``: the part's bytes, when they are read already."""
    data = part.read() if data is None else data
    try:
        return reader.load(data, len(_BOM) if data.startswith(_BOM) else 0)
    except Refused as exc:
        if data.startswith(_BOM):
            exc = Refused(exc.reason, exc.detail, exc.offset - len(_BOM))
        raise PartElements(part, reader).error(exc) from None


# ---- whole files and documents ------------------------------------------------------------------

_BAR_MIN_BYTES = 64 << 20


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
def read_windows(name: str, *, window: int | None = None) -> Iterator[Windows | None]:
    """The bytes of file ``name`` a window at a time (see :class:`memvelope_tools._stable.Windows`), the
    file open meanwhile; None for a file that is no regular file (read it with :func:`read_file`).
    InputError when unreadable, FormatError (reason ``changed``) when it changed while it was read.
    ``window``: the bytes of a window (default: :data:`memvelope_tools._stable.WINDOW`)."""
    with _file_errors(name):
        regular = stat.S_ISREG(os.stat(name).st_mode)
    if not regular:  # a pipe is read once, by read_file
        yield None
        return
    with _file_errors(name), open(name, "rb") as fh:
        try:
            yield file_windows(fh, window=window)
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
