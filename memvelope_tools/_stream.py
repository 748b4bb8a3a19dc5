"""Read an envelope file conversation by conversation, so a loader never holds the whole parsed tree.

Values are parsed by the standard library's ``json`` (``raw_decode`` over a sliding decoded window),
so they are exactly what :func:`memvelope_tools.read` returns. Anything unusual — the top level not
an object, ``conversations`` before the ``memvelope`` tag or not an array, a repeated top-level key,
a syntax error, invalid UTF-8, deep nesting — raises :class:`Fallback`, and the caller reads the
file the ordinary way, which gives the ordinary result or error.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from typing import Any

_CHUNK = 4 << 20
_WS = " \t\n\r"
_DECODER = json.JSONDecoder()


class Fallback(Exception):
    """The file is not a plain envelope this reader can stream: read it whole instead."""


class _Text:
    """A decoded window over UTF-8 bytes, refilled from the bytes as the reader advances."""

    def __init__(self, data: bytes | bytearray, on_bytes: Callable[[int], Any]) -> None:
        self.data = memoryview(data)
        self.next = 3 if bytes(self.data[:3]) == b"\xef\xbb\xbf" else 0
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.text = ""
        self.i = 0
        self.on_bytes = on_bytes

    @property
    def at_eof(self) -> bool:
        return self.next >= len(self.data)

    def more(self, size: int = _CHUNK) -> bool:
        """Append the next ``size`` bytes to the window (dropping what was consumed)."""
        if self.at_eof:
            return False
        with self.data[self.next : self.next + size] as chunk:
            self.next += len(chunk)
            try:
                new = self.decoder.decode(chunk, final=self.at_eof)
            except UnicodeDecodeError:
                new = None
            n = len(chunk)
        if new is None:
            raise Fallback
        self.text = self.text[self.i :] + new
        self.i = 0
        self.on_bytes(n)
        return True

    def skip_ws(self) -> str:
        """Skip whitespace and return the next character ('' at the end)."""
        while True:
            text, i = self.text, self.i
            while i < len(text) and text[i] in _WS:
                i += 1
            self.i = i
            if i < len(text):
                return text[i]
            if not self.more():
                return ""

    def punct(self, allowed: str) -> str:
        ch = self.skip_ws()
        if not ch or ch not in allowed:
            raise Fallback
        self.i += 1
        return ch

    def value(self) -> Any:
        self.skip_ws()
        size = _CHUNK
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.text, self.i)
            except (ValueError, RecursionError):  # JSONDecodeError, or an int() past 4300 digits
                obj, end = None, -1
            # A value that fails, or ends right at the window's edge (a number may go on), needs more.
            if end != -1 and (end < len(self.text) or self.at_eof):
                self.i = end
                return obj
            if not self.more(size):
                raise Fallback
            size *= 2


def stream_envelope(
    data: bytes | bytearray, *, batch_messages: int, on_bytes: Callable[[int], Any] = lambda n: None
) -> Iterator[tuple[str, Any]]:
    """Yield ``("conversations", [conv, ...])`` batches, then ``("members", {other top-level keys})``."""
    t = _Text(data, on_bytes)
    try:
        yield from _envelope(t, batch_messages)
    finally:
        t.data.release()  # the caller may resize or free ``data`` after a Fallback


def _envelope(t: _Text, batch_messages: int) -> Iterator[tuple[str, Any]]:
    t.punct("{")
    members: dict[str, Any] = {}
    if t.skip_ws() == "}":
        raise Fallback
    while True:
        key = t.value()
        if not isinstance(key, str) or key in members:
            raise Fallback
        t.punct(":")
        if key == "conversations":
            if members.get("memvelope") != "envelope-v0":
                raise Fallback
            members[key] = None
            yield from _conversations(t, batch_messages)
        else:
            members[key] = t.value()
        if t.punct(",}") == "}":
            break
    if t.skip_ws() != "" or "conversations" not in members:
        raise Fallback
    del members["conversations"]
    yield "members", members


def _conversations(t: _Text, batch_messages: int) -> Iterator[tuple[str, Any]]:
    t.punct("[")
    batch: list[Any] = []
    size = 0
    if t.skip_ws() == "]":
        t.i += 1
        return
    while True:
        conv = t.value()
        batch.append(conv)
        messages = conv.get("messages") if isinstance(conv, dict) else None
        size += len(messages) if isinstance(messages, list) else 1
        if size >= batch_messages:
            yield "conversations", batch
            batch, size = [], 0
        if t.punct(",]") == "]":
            break
    if batch:
        yield "conversations", batch
