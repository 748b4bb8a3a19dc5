"""The envelope-v0 timestamp profile: accepted source values in, ``YYYY-MM-DDTHH:mm:ss.sssZ`` or None out.

Accepted source values (spec Rule 3, conformance A11-A14, A23): a finite number; a bare-numeric string
(``-?[0-9]+(\\.[0-9]+)?``, A12); a date-only ``YYYY-MM-DD``; or
``YYYY-MM-DD[T or SPACE]HH:mm[:ss[.fraction]][Z|[+-]hh:mm|[+-]hhmm]``. Everything else renders None.
No host date parser is ever consulted, and nothing depends on the machine's time zone or locale.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta
from typing import Final

_SECONDS_LIMIT: Final = 1e12  # below: unix seconds; at or above: unix milliseconds
_MS_PER_DAY: Final = 86_400_000
# 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z as milliseconds since the epoch.
_MIN_MS: Final = -62_135_596_800_000
_MAX_MS: Final = 253_402_300_799_999

_BARE_NUMBER: Final = re.compile(r"-?[0-9]+(?:\.[0-9]+)?", re.ASCII)
_DATETIME: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?"
    r"(Z|[+-][0-9]{2}:[0-9]{2}|[+-][0-9]{4})?)?",
    re.ASCII,
)
_DAYS_IN_MONTH: Final = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_EPOCH: Final = datetime(1970, 1, 1)  # naive: only its arithmetic is used, never a time zone


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic-Gregorian date (no year remapping, unlike Date.UTC)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def render_ms(ms: int) -> str | None:
    """Render integer milliseconds since the epoch; None outside years 0001-9999."""
    if ms < _MIN_MS or ms > _MAX_MS:
        return None
    # integer arithmetic throughout: a timedelta of whole milliseconds, years 1-9999 printed as 4 digits
    return (_EPOCH + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds") + "Z"


def _from_number(value: float) -> str | None:
    ms = _number_ms(value)
    return None if ms is None else render_ms(ms)


def _number_ms(value: float) -> int | None:
    if not math.isfinite(value):
        return None
    # IEEE-754 double multiplication, then truncation toward zero (conformance A13), never rounding.
    ms = value * 1000.0 if value < _SECONDS_LIMIT else value
    if not math.isfinite(ms):
        return None
    return math.trunc(ms)


def number_ms(value: object) -> int | None:
    """The milliseconds since the epoch that :func:`render_timestamp` renders a JSON number as (so
    ``render_ms(number_ms(v)) == render_timestamp(v)``); None for anything else, and for a number it
    renders None."""
    kind = type(value)
    if kind is float:
        ms = _number_ms(value)  # type: ignore[arg-type]
    elif kind is int:
        ms = _number_ms(to_double(value))  # type: ignore[arg-type]
    else:
        return None
    return ms if ms is not None and _MIN_MS <= ms <= _MAX_MS else None


def month_of_ms(ms: int) -> str:
    """``YYYY-MM`` of the instant ``ms`` milliseconds after the epoch (in years 0001-9999), as
    :func:`render_ms` renders it."""
    day = ms // _MS_PER_DAY
    month = _MONTHS.get(day)
    if month is None:
        month = _MONTHS[day] = (_EPOCH + timedelta(days=day)).isoformat()[:7]
    return month


_MONTHS: dict[int, str] = {}  # month of each day since the epoch, as asked


def _from_string(text: str) -> str | None:
    if text[4:5] != "-" and _BARE_NUMBER.fullmatch(text):
        return _from_number(float(text))
    match = _DATETIME.fullmatch(text)
    if match is None:
        return None
    ys, mos, ds, hs, mis, ss, frac, zone = match.groups()
    year, month, day = int(ys), int(mos), int(ds)
    if not 1 <= month <= 12:
        return None
    limit = 29 if month == 2 and _is_leap(year) else _DAYS_IN_MONTH[month - 1]
    if not 1 <= day <= limit:
        return None
    if hs is None:
        return f"{ys}-{mos}-{ds}T00:00:00.000Z" if year else None
    hour, minute, second = int(hs), int(mis), int(ss or 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    milli = (frac or "")[:3].ljust(3, "0")
    offset = 0
    if zone and zone != "Z":
        digits = zone[1:].replace(":", "")
        oh, om = int(digits[:2]), int(digits[2:])
        if oh > 23 or om > 59:
            return None
        offset = (oh * 60 + om) * 60_000
    if not offset:  # the text already names the instant: no arithmetic (year 0000 is out of range)
        return f"{ys}-{mos}-{ds}T{hs}:{mis}:{ss or '00'}.{milli}Z" if year else None
    ms = _days_from_civil(year, month, day) * _MS_PER_DAY
    ms += ((hour * 60 + minute) * 60 + second) * 1000 + int(milli)
    return render_ms(ms - offset if zone[0] == "+" else ms + offset)


def render_timestamp(value: object) -> str | None:
    """Render a source timestamp value per the envelope-v0 profile, or None when not accepted."""
    kind = type(value)
    if kind is float:
        return _from_number(value)  # type: ignore[arg-type]
    if kind is int:
        return _from_number(to_double(value))  # type: ignore[arg-type]
    if kind is str:
        return _from_string(value)  # type: ignore[arg-type]
    return None


def to_double(value: int | float) -> float:
    """The IEEE double JavaScript would hold for a JSON number (huge integers become infinities)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def is_number(value: object) -> bool:
    """``typeof value === "number"`` for a value parsed from JSON (bool is not a number)."""
    kind = type(value)
    return kind is float or kind is int
