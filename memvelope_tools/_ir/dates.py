"""The one rule that decides which dates a piece of text states.

Both distillers (to fill ``in_text_date``) and the validator (to check ``in_text_date`` and
``effective_date`` against the envelope) use this module, so "a date occurs in the text" means the same
thing everywhere.

The rule
--------
A *mention* is one of these written forms (month names are English, full or three-letter, ``Sept``
too, any letter case, an optional ``.`` after an abbreviation; day numbers may carry ``st nd rd th``):

==========================  ==================================  ====================
form                        examples                            readings
==========================  ==================================  ====================
ISO day / month             ``2019-03-14``, ``2019/03/14``,     ``2019-03-14``
                            ``2019-03``                         ``2019-03``
day month year              ``14 March 2019``, ``14th of Mar,   ``2019-03-14``
                            2019``
month day year              ``March 14, 2019``, ``Mar 14th      ``2019-03-14``
                            2019``
month year                  ``March 2019``, ``Mar. 2019``,      ``2019-03``
                            ``March of 2019``
numeric with ``/`` or ``-`` ``3/14/2019``, ``14-03-2019``       month-first and/or
                                                                day-first, each
                                                                reading that is a
                                                                real date
numeric with ``.``          ``14.03.2019``                      day-first only
bare year                   ``2019``, ``2019-2020`` (1900-2099  ``2019``
                            only, not part of a longer number,
                            not ``1990s``)
==========================  ==================================  ====================

Years in the full forms are four digits (1000-9999); days must exist in that month (``2019-02-29``
is no date, and an impossible date such as ``31 April 2020`` states nothing, not even its month or
year). Two-digit years, weekday names, relative dates ("last March") and months without a year
("March 14") are not mentions. Overlapping matches are resolved left to right, longest first, so
``14 March 2019`` is one mention, not also ``March 2019``.

A date value ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` *occurs in* a text when it equals a reading of
some mention or a coarser prefix of one: ``14 March 2019`` states ``2019-03-14``, ``2019-03`` and
``2019``. A mention with several readings (``4/5/2019``) states each of them.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass

#: The shape every Layer 2 date value has.
DATE_VALUE = re.compile(r"^[0-9]{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?)?$")

_MONTHS = {
    "jan": 1,
    "january": 1,
    "feb": 2,
    "february": 2,
    "mar": 3,
    "march": 3,
    "apr": 4,
    "april": 4,
    "may": 5,
    "jun": 6,
    "june": 6,
    "jul": 7,
    "july": 7,
    "aug": 8,
    "august": 8,
    "sep": 9,
    "sept": 9,
    "september": 9,
    "oct": 10,
    "october": 10,
    "nov": 11,
    "november": 11,
    "dec": 12,
    "december": 12,
}
_MONTH = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-9]{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>[0-9]{4})"
_L = r"(?<![0-9A-Za-z])"  # left boundary
_R = r"(?![0-9A-Za-z])"  # right boundary

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(rx, re.IGNORECASE))
    for kind, rx in (
        ("iso", _L + r"(?P<year>[0-9]{4})(?P<sep>[-/])(?P<m>[0-9]{2})(?:(?P=sep)(?P<d>[0-9]{2}))?(?![0-9])"),
        ("dmy", _L + _DAY + r"(?:\s+of)?\s+" + _MONTH + r",?\s+" + _YEAR + _R),
        ("mdy", _L + _MONTH + r"\s+" + _DAY + r",?\s+" + _YEAR + _R),
        ("my", _L + _MONTH + r"(?:,|\s+of)?\s+" + _YEAR + _R),
        (
            "num",
            r"(?<![0-9./-])(?P<a>[0-9]{1,2})(?P<sep>[/-])(?P<b>[0-9]{1,2})(?P=sep)(?P<year>[0-9]{4})"
            r"(?![0-9]|[./-][0-9])",
        ),
        ("dot", r"(?<![0-9./-])(?P<a>[0-9]{1,2})\.(?P<b>[0-9]{1,2})\.(?P<year>[0-9]{4})(?![0-9]|\.[0-9])"),
        # A year range ``2019-2020`` states both years; other digit runs around a year are no year.
        (
            "year",
            r"(?:(?<=[0-9]{4}-)|(?<![0-9A-Za-z.,/:'$€£-]))(?P<year>(?:19|20)[0-9]{2})"
            r"(?![0-9]|s\b|[.,][0-9]|[/:][0-9]|-(?![0-9]{4}(?![0-9]))[0-9])",
        ),
    )
)


@dataclass(frozen=True)
class Mention:
    """One written date: where it is, what it says, and every date value it can be read as."""

    start: int
    end: int
    text: str
    readings: tuple[str, ...]

    @property
    def value(self) -> str:
        """The most specific date all readings agree on (``4/5/2019`` -> ``2019``)."""
        common = self.readings[0]
        for other in self.readings[1:]:
            common = _common_prefix(common, other)
        return common


def _common_prefix(a: str, b: str) -> str:
    pa, pb = a.split("-"), b.split("-")
    out = []
    for x, y in zip(pa, pb, strict=False):
        if x != y:
            break
        out.append(x)
    return "-".join(out)


def _ymd(year: int, month: int, day: int | None) -> str | None:
    if not 1000 <= year <= 9999 or not 1 <= month <= 12:
        return None
    if day is None:
        return f"{year:04d}-{month:02d}"
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"


def _readings(kind: str, m: re.Match[str]) -> tuple[str, ...]:
    year = int(m.group("year"))
    if kind == "year":
        return (f"{year:04d}",)
    if kind == "iso":
        day = m.group("d")
        value = _ymd(year, int(m.group("m")), int(day) if day else None)
        return (value,) if value else ()
    if kind in ("dmy", "mdy"):
        value = _ymd(year, _MONTHS[m.group("mon").lower()], int(m.group("day")))
        return (value,) if value else ()
    if kind == "my":
        value = _ymd(year, _MONTHS[m.group("mon").lower()], None)
        return (value,) if value else ()
    a, b = int(m.group("a")), int(m.group("b"))
    candidates = [_ymd(year, b, a)] if kind == "dot" else [_ymd(year, a, b), _ymd(year, b, a)]
    out: list[str] = []
    for value in candidates:
        if value and value not in out:
            out.append(value)
    return tuple(out)


def find_mentions(text: str) -> list[Mention]:
    """Every date mention in ``text``, left to right, overlapping matches resolved longest first."""
    found: list[Mention] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            # An impossible date keeps its span (no readings) so that no part of it counts either.
            found.append(Mention(m.start(), m.end(), m.group(0), _readings(kind, m)))
    found.sort(key=lambda x: (x.start, -(x.end - x.start)))
    chosen: list[Mention] = []
    last_end = -1
    for mention in found:
        if mention.start >= last_end:
            chosen.append(mention)
            last_end = mention.end
    return [m for m in chosen if m.readings]


def _with_prefixes(value: str) -> Iterable[str]:
    yield value
    if len(value) >= 7:
        yield value[:7]
    if len(value) >= 4:
        yield value[:4]


def stated_dates(text: str) -> frozenset[str]:
    """Every date value that occurs in ``text`` by the rule above (readings and their prefixes)."""
    out: set[str] = set()
    for mention in find_mentions(text):
        for reading in mention.readings:
            out.update(_with_prefixes(reading))
    return frozenset(out)


def date_occurs(value: str, text: str) -> bool:
    """Whether the date value ``value`` (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``) occurs in ``text``."""
    return bool(DATE_VALUE.match(value)) and value in stated_dates(text)


def first_stated_date(text: str) -> str | None:
    """The value of the first date mention in ``text`` (what a distiller puts in ``in_text_date``)."""
    for mention in find_mentions(text):
        value = mention.value
        if DATE_VALUE.match(value):
            return value
    return None


def is_timestamp_prefix(value: str, timestamps: Iterable[str | None]) -> bool:
    """Whether ``value`` is a well-formed date that starts one of ``timestamps`` (``2019-03`` of
    ``2019-03-14T09:00:00.000Z``)."""
    if not DATE_VALUE.match(value):
        return False
    return any(isinstance(ts, str) and ts.startswith(value) for ts in timestamps)
