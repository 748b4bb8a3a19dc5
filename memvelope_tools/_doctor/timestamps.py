"""Names for the forms of source timestamps the envelope profile does not accept (they render null).

Acceptance is decided by :func:`memvelope_tools._convert.timestamps.render_timestamp` alone; this module
only describes a value that was already refused, e.g. ``"string: naive with trailing +"``.
"""

from __future__ import annotations

import math
import re
from typing import Final

from .._convert.timestamps import to_double
from .._jsontypes import json_type

_DATE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
_DATETIME_PREFIX: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?)?", re.ASCII
)
_NUMBERISH: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_SHORT_OFFSET: Final = re.compile(r"[+-][0-9]{1,2}", re.ASCII)
_ODD_OFFSET: Final = re.compile(r"[+-][0-9:]+", re.ASCII)
_ZONE_NAME: Final = re.compile(r" ?[A-Za-z]{2,5}", re.ASCII)


def unaccepted_form(value: object) -> str:
    """A short name for the form of a timestamp value that renders null (and is not null itself)."""
    if type(value) is bool:
        return "boolean"
    if type(value) in (int, float):
        number = to_double(value)  # type: ignore[arg-type]
        return "number: not finite" if not math.isfinite(number) else "number: outside years 0001-9999"
    if type(value) is not str:
        return json_type(value)
    return "string: " + _string_form(value)


def _string_form(text: str) -> str:
    if text == "":
        return "empty"
    if text != text.strip():
        return "surrounding whitespace"
    if _NUMBERISH.fullmatch(text):
        return "number-like but not a bare number (sign, exponent or dot)"
    if _DATE.match(text) is None:
        return "unrecognised form"
    prefix = _DATETIME_PREFIX.match(text)
    rest = text[prefix.end() :] if prefix else text[10:]
    if rest == "":
        return "impossible date or time, or outside years 0001-9999"
    naive = prefix is not None and prefix.end() > 10
    if rest in ("+", "-"):
        return f"naive with trailing {rest}" if naive else f"date with trailing {rest}"
    if rest == "z":
        return "lowercase z"
    if rest[0] in "tT" and not naive:
        return "lowercase t separator" if rest[0] == "t" else "time not HH:mm[:ss[.fff]]"
    if rest in ("Z", "+00:00") or re.fullmatch(r"[+-][0-9]{2}:?[0-9]{2}", rest, re.ASCII):
        return "impossible date or time, or outside years 0001-9999"
    if _SHORT_OFFSET.fullmatch(rest):
        return "offset without minutes"
    if _ODD_OFFSET.fullmatch(rest):
        return "malformed offset"
    if _ZONE_NAME.fullmatch(rest):
        return "zone name instead of offset"
    if rest.startswith("."):
        return "empty or malformed fraction"
    return "unrecognised suffix"
