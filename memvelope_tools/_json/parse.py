"""Parse JSON text as JavaScript's ``JSON.parse`` would see it (after conformance A17 decoding).

Differences from Python's defaults that matter here: ``NaN``/``Infinity`` literals are not JSON;
duplicate keys keep the last value at the first key's position (Python's dict does this already).
JSON numbers stay Python ints/floats here; consumers convert with ``timestamps.to_double``.
"""

from __future__ import annotations

import json
from typing import Any, Final


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_long_int(digits: str) -> int | float:
    # CPython refuses int() of more than 4300 digits; JSON.parse holds such a number as a double.
    return int(digits) if len(digits) < 4300 else float(digits)


_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)
_LONG_INT_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_long_int)


def reference_loads(text: str) -> Any:
    """``JSON.parse(text)`` for text known to be valid JSON (numbers as Python ints and floats)."""
    try:
        return _DECODER.decode(text)
    except ValueError as exc:  # only on this rare path do integers go through a Python hook
        if type(exc) is not ValueError or "integer string conversion" not in str(exc):
            raise
        return _LONG_INT_DECODER.decode(text)
