"""YAML front matter: values written so every YAML parser (Obsidian's, PyYAML, ruamel) reads them back
as they were."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Final

__all__ = ["front_matter", "quoted", "timestamp"]

Value = str | int | datetime | None

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
# Printable in YAML but better escaped: the line and paragraph separators (line breaks to YAML 1.1),
# the byte order mark, and the bidirectional controls (they reorder the text shown around them).
_ESCAPED: Final = frozenset("\u0085\u2028\u2029\ufeff\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e") | frozenset(
    "\u2066\u2067\u2068\u2069"
)
_SHORT: Final = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}


def quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar on one line: any string (colons, quotes, newlines,
    leading dashes, ``yes``, ``null``, digits) reads back as that same string. An unpaired surrogate
    (not encodable in UTF-8) becomes U+FFFD.

    >>> print(quoted('Re: "draft" - v2\\n'))
    "Re: \\"draft\\" - v2\\n"
    """
    out = ['"']
    for char in text:
        code = ord(char)
        if char in _SHORT:
            out.append(_SHORT[char])
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\uFFFD")
        elif char in _ESCAPED or not _printable(code):
            out.append(f"\\x{code:02X}" if code <= 0xFF else f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _printable(code: int) -> bool:
    """Whether YAML allows the code point as it is inside a scalar (its ``c-printable``, less ``\\x85``)."""
    return 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or code >= 0x10000


def timestamp(ms: int) -> datetime:
    """The UTC instant ``ms`` milliseconds after the epoch."""
    return _EPOCH + timedelta(milliseconds=ms)


def _iso(when: datetime) -> str:
    text = when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if when.microsecond:
        text += f".{when.microsecond // 1000:03d}"
    return text + "Z"


def _scalar(value: Value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime):
        return _iso(value)
    return quoted(value)


def front_matter(fields: dict[str, Value], plain: frozenset[str] = frozenset()) -> str:
    """The ``---`` block of ``fields`` in their order: text double-quoted (unless its key is in ``plain``,
    for words of a fixed vocabulary), numbers as they are, times in ISO 8601 UTC, None as ``null``."""
    lines = ["---"]
    for key, value in fields.items():
        shown = value if key in plain and isinstance(value, str) else _scalar(value)
        lines.append(f"{key}: {shown}")
    lines.append("---")
    return "\n".join(lines) + "\n"
