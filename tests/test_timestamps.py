"""The timestamp profile (spec Rule 3; NOTES A8, A11-A14, A23, A27)."""

from __future__ import annotations

import math

import pytest

from memvelope_tools._convert.timestamps import month_of_ms, number_ms, render_ms
from memvelope_tools._convert.timestamps import render_timestamp as ts

NUMBERS = [
    (0, "1970-01-01T00:00:00.000Z"),
    (1700000000, "2023-11-14T22:13:20.000Z"),
    (1700000000.123456, "2023-11-14T22:13:20.123Z"),
    (1700000000.9999, "2023-11-14T22:13:20.999Z"),  # truncated, never rounded
    (1.005, "1970-01-01T00:00:01.004Z"),  # 1.005 * 1000 == 1004.9999999999999 as a double
    (1700000000.0005, "2023-11-14T22:13:20.000Z"),
    (999_999_999_999, None),  # seconds (< 10^12): year 33658, out of range
    (1_000_000_000_000, "2001-09-09T01:46:40.000Z"),  # 10^12 itself is milliseconds
    (1_700_000_000_123, "2023-11-14T22:13:20.123Z"),
    (1.7e9, "2023-11-14T22:13:20.000Z"),  # an exponent is just a number
    (-1, "1969-12-31T23:59:59.000Z"),
    (-0.0005, "1970-01-01T00:00:00.000Z"),  # A13: Math.trunc(-0.5) is -0
    (-0.0015, "1969-12-31T23:59:59.999Z"),  # trunc(-1.5) = -1 ms
    (-62135596800, "0001-01-01T00:00:00.000Z"),
    (-62135596801, None),
    (253402300799.999, "9999-12-31T23:59:59.999Z"),
    (253402300800, None),
    (math.inf, None),
    (-math.inf, None),
    (10**400, None),  # a huge integer literal is Infinity as a double
    (True, None),
    (None, None),
    ([], None),
    ({}, None),
]


@pytest.mark.parametrize(("value", "expected"), NUMBERS)
def test_numbers(value: object, expected: str | None) -> None:
    assert ts(value) == expected


@pytest.mark.parametrize(("value", "expected"), NUMBERS)
def test_numbers_as_milliseconds_and_months(value: object, expected: str | None) -> None:
    # the milliseconds a number renders as, and its month, agree with its rendering
    ms = number_ms(value)
    assert (None if ms is None else render_ms(ms)) == expected
    assert (None if ms is None else month_of_ms(ms)) == (expected and expected[:7])


def test_a_text_is_no_number() -> None:
    assert number_ms("1700000000") is None  # texts are rendered as texts


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1700000000", "2023-11-14T22:13:20.000Z"),  # A12 bare-numeric strings
        ("1700000000.5", "2023-11-14T22:13:20.500Z"),
        ("-1.5", "1969-12-31T23:59:58.500Z"),
        ("0001700000000", "2023-11-14T22:13:20.000Z"),
        ("1700000000123", "2023-11-14T22:13:20.123Z"),
        ("2024", "1970-01-01T00:33:44.000Z"),  # a bare number, not a year
        ("20240101", "1970-08-23T06:15:01.000Z"),  # a bare number, not a date
        ("+1", None),
        ("1e9", None),
        (" 1", None),
        ("1 ", None),
        (".5", None),
        ("5.", None),
        ("0x10", None),
        ("Infinity", None),
        ("", None),
        ("١٢٣", None),  # non-ASCII digits are not digits here
        ("9" * 400, None),  # overflows to Infinity
    ],
)
def test_bare_numeric_strings(value: str, expected: str | None) -> None:
    assert ts(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-03-05", "2024-03-05T00:00:00.000Z"),
        ("2024-03-05T14:31", "2024-03-05T14:31:00.000Z"),
        ("2024-03-05 14:31", "2024-03-05T14:31:00.000Z"),
        ("2024-03-05T14:31:09", "2024-03-05T14:31:09.000Z"),  # naive = UTC
        ("2024-03-05T14:31:09Z", "2024-03-05T14:31:09.000Z"),
        ("2024-03-05T14:31:09.1Z", "2024-03-05T14:31:09.100Z"),
        ("2024-03-05T14:31:09.12Z", "2024-03-05T14:31:09.120Z"),
        ("2024-03-05T14:31:09.123Z", "2024-03-05T14:31:09.123Z"),
        ("2024-03-05T14:31:09.123999Z", "2024-03-05T14:31:09.123Z"),
        ("2024-03-05T14:31:09.999999999", "2024-03-05T14:31:09.999Z"),
        ("2024-03-05T14:31:09+05:30", "2024-03-05T09:01:09.000Z"),
        ("2024-03-05T14:31:09-0800", "2024-03-05T22:31:09.000Z"),
        ("2024-03-05T14:31+01:00", "2024-03-05T13:31:00.000Z"),
        ("2024-01-01T00:30:00+01:00", "2023-12-31T23:30:00.000Z"),
        ("2024-02-29", "2024-02-29T00:00:00.000Z"),
        ("2000-02-29", "2000-02-29T00:00:00.000Z"),
        ("0099-05-01", "0099-05-01T00:00:00.000Z"),  # never remapped to 1999
        ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z"),
        ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"),
        ("2024-03-05T14:31:09+23:59", "2024-03-04T14:32:09.000Z"),
    ],
)
def test_accepted_strings(value: str, expected: str) -> None:
    assert ts(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        # A11: no real instant
        "2023-02-29",
        "1900-02-29",
        "2024-02-30",
        "2024-04-31",
        "2024-13-01",
        "2024-00-10",
        "2024-01-00",
        "2024-01-01T24:00",
        "2024-01-01T23:60",
        "2024-01-01T23:59:60",
        "2024-01-01T10:00+24:00",
        "2024-01-01T10:00+05:60",
        # A14: empty fraction
        "2024-01-01T12:00:00.",
        "2024-01-01T12:00:00.Z",
        # A23: near misses
        "2024-01-01T12:00:00z",
        "2024-01-01T12:00:00+05",
        "2024-01-01T12:00:00+5:30",
        "2024-01-01T12:00:00 Z",
        "2024-01-01T12:00:00 GMT",
        "2024-01-01T12:00:00 UTC",
        "2024-01-01t12:00:00Z",
        " 2024-01-01",
        "2024-01-01 ",
        "2024-01-01T12",
        "2024-01",
        "2024-1-01",
        "2024-01-01T1:00",
        "2024-01-01Z",
        "2024-01-01T12:00:00.123456+",
        "2024-01-01\n",
        "2024-01-01T12:00:00,5Z",
        "Mon, 01 Jan 2024 12:00:00 GMT",
        "January 1, 2024",
        # out of range after the offset
        "0001-01-01T00:30:00+01:00",
        "9999-12-31T23:30:00-01:00",
        "0000-12-31",
    ],
)
def test_rejected_strings(value: str) -> None:
    assert ts(value) is None
