"""The envelope walker: an envelope file's conversations, a window of bytes at a time, so that the whole
tree never exists at once; the first, spec-ordered reader of envelope documents after the element reader.

:func:`stream_envelope` finds the spans of the conversations; :func:`parse_spans` gives their values, the
same values :func:`memvelope_tools.read` gives. Anything out of the ordinary raises :class:`Fallback`,
and the caller reads the file whole instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Iterator
from typing import Any

from .._tags import ENVELOPE_TAG
from .elements import ARR_FIRST, END, OBJ_FIRST, OBJ_KEY, OBJ_NEXT, PYTHON, Reader, Refused, scan, skip_ws

__all__ = ["Fallback", "parse_spans", "stream_envelope"]


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
