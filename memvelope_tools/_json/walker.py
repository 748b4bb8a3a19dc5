"""The envelope walker: an envelope's conversations, a window of bytes at a time, so that neither the
whole tree nor the whole text ever exists at once; the first, spec-ordered reader of envelope documents
after the element reader.

:func:`stream_envelope` finds the spans of the conversations; :func:`parse_spans` gives their values, the
same values :func:`memvelope_tools.read` gives. Anything out of the ordinary raises :class:`Fallback`,
and the caller reads the input whole instead.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from typing import Any

from .._stable import Windows
from .._tags import ENVELOPE_TAG
from .elements import ARR_FIRST, END, OBJ_FIRST, OBJ_KEY, OBJ_NEXT, PYTHON, Reader, Refused, scan, skip_ws

__all__ = ["Fallback", "parse_spans", "stream_envelope"]


class Fallback(Exception):
    """The file is not a plain envelope that :func:`stream_envelope` reads batch by batch: read it whole."""


_CONVERSATIONS_KEY = re.compile(rb'"conversations"[ \t\n\r]*:[ \t\n\r]*\[')


def stream_envelope(windows: Windows) -> Iterator[tuple[str, Any]]:
    """Yield ``("head", {top-level keys before the conversations})`` when the conversations begin, then
    ``("spans", (window, found))`` for each window of an envelope's bytes that holds conversations,
    then ``("members", {other top-level keys})``, so that neither the whole tree nor the whole text ever
    exists at once.

    ``found`` lists the conversations whole in ``window`` as :func:`memvelope_tools._json.elements.scan`
    reports the children of an array (six ints each: the third and fourth are where the value starts
    and ends in ``window``, the fifth its flags); :func:`parse_spans` gives their values, those of
    :func:`read`. A window's bytes stay as they are until the caller gives it back
    (:meth:`memvelope_tools._stable.Windows.give_back`). Anything unusual
    (the top level not an object, ``conversations`` before the ``memvelope`` tag or not an array, a
    repeated key, any error) raises :class:`Fallback`, and the caller reads the input whole, which gives
    the ordinary result or error; an input that changed while it was read raises
    :class:`memvelope_tools._stable.Changed`."""
    try:
        yield from _envelope_members(windows, Reader(PYTHON))
    except Refused:
        raise Fallback from None


def parse_spans(data: Any, found: list[int]) -> list[Any]:
    """The values of the conversations in a ``("spans", (data, found))`` of :func:`stream_envelope`, as
    :func:`read` reads them; :class:`Fallback` when they are not what it accepts (reading the input whole
    says why)."""
    try:
        return [value for _, value in Reader(PYTHON).children(data, found)]
    except Refused:
        raise Fallback from None


_KEY_ROOM = 256  # bytes after a member's start that must be in the window to tell whether it is the conversations


def _more(windows: Windows, pos: int) -> tuple[memoryview, int]:
    """The next window, from ``pos`` of the current one on; Fallback when the input has no more."""
    if windows.eof:
        raise Fallback
    return windows.advance(pos), 0


def _token(windows: Windows, data: memoryview, pos: int) -> tuple[memoryview, int]:
    """``data`` and the position of the first byte at or after ``pos`` that is not whitespace (read on as needed)."""
    pos = skip_ws(data, pos)  # type: ignore[arg-type]
    while pos >= len(data):
        data, pos = _more(windows, pos)
        pos = skip_ws(data, pos)  # type: ignore[arg-type]
    return data, pos


def _envelope_members(windows: Windows, reader: Reader) -> Iterator[tuple[str, Any]]:
    data = windows.advance(0)
    while len(data) < 3 and not windows.eof:
        data = windows.advance(0)
    start = 3 if bytes(data[:3]) == b"\xef\xbb\xbf" else 0
    data, pos = _token(windows, data, start)
    if bytes(data[pos : pos + 1]) != b"{":
        raise Fallback
    pos, state = pos + 1, OBJ_FIRST
    members: dict[str, Any] = {}
    while state != END:
        data, pos = _token(windows, data, pos)
        if state == OBJ_NEXT:
            if bytes(data[pos : pos + 1]) not in (b",", b"}"):
                raise Fallback
            state = OBJ_KEY if data[pos] == 0x2C else END
            pos += 1
            continue
        while len(data) - pos < _KEY_ROOM and not windows.eof:
            data, pos = windows.advance(pos), 0
        key = _CONVERSATIONS_KEY.match(data, pos, len(data))
        if key is not None:
            if members.get("memvelope") != ENVELOPE_TAG or "conversations" in members:
                raise Fallback
            yield "head", dict(members)
            members["conversations"] = None
            data, pos = yield from _spans(windows, data, key.end())
            state = OBJ_NEXT
            continue
        end, after, found, error = scan(data, pos, state, windows.eof, 0)  # type: ignore[arg-type]
        if error is not None:
            raise Fallback
        if not found and after == state:  # the member goes on past the window
            data, pos = _more(windows, pos)
            continue
        for name, value in reader.children(data, found):  # type: ignore[arg-type]
            if name in members or name == "conversations":
                raise Fallback
            members[name] = value
        pos, state = end, after
    _rest_is_whitespace(windows, data, pos)
    if "conversations" not in members:
        raise Fallback
    del members["conversations"]
    yield "members", members


def _rest_is_whitespace(windows: Windows, data: memoryview, pos: int) -> None:
    """Read to the end: Fallback unless only whitespace follows ``pos``; then :meth:`Windows.finish`."""
    while True:
        if scan(data, pos, END, windows.eof)[3] is not None:  # type: ignore[arg-type]
            raise Fallback
        if windows.eof:
            break
        data, pos = windows.advance(len(data)), 0
    windows.finish()


def _spans(windows: Windows, data: memoryview, pos: int) -> Generator[tuple[str, Any], None, tuple[memoryview, int]]:
    """The conversations array whose ``[`` ends before ``pos``, a window at a time; returns the window and
    the position where the array ends."""
    state = ARR_FIRST
    while True:
        pos, state, found, error = scan(data, pos, state, windows.eof, base=1)  # type: ignore[arg-type]
        if error is not None:
            raise Fallback
        if found:
            yield "spans", (windows.lend(), found)
        if state == END:
            return data, pos
        data, pos = _more(windows, pos)
