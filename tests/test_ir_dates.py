"""The one date-matching rule (memvelope_tools._ir.dates) used by distillers and the validator."""

from __future__ import annotations

import pytest

from memvelope_tools._ir.dates import date_occurs, find_mentions, first_stated_date, is_timestamp_prefix, stated_dates


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I moved in 2019.", {"2019"}),
        ("since March 2019", {"2019", "2019-03"}),
        ("since Mar 2019", {"2019", "2019-03"}),
        ("since mar. 2019", {"2019", "2019-03"}),
        ("in March of 2019", {"2019", "2019-03"}),
        ("on 2019-03", {"2019", "2019-03"}),
        ("on 2019-03-14", {"2019", "2019-03", "2019-03-14"}),
        ("on 2019/03/14", {"2019", "2019-03", "2019-03-14"}),
        ("on 14 March 2019", {"2019", "2019-03", "2019-03-14"}),
        ("on the 14th of March, 2019", {"2019", "2019-03", "2019-03-14"}),
        ("on March 14, 2019", {"2019", "2019-03", "2019-03-14"}),
        ("on Sept 1st 2020", {"2020", "2020-09", "2020-09-01"}),
        ("on 3/14/2019", {"2019", "2019-03", "2019-03-14"}),
        ("on 14/3/2019", {"2019", "2019-03", "2019-03-14"}),
        ("on 14.03.2019", {"2019", "2019-03", "2019-03-14"}),
        ("on 14-03-2019", {"2019", "2019-03", "2019-03-14"}),
        # ambiguous numeric: both readings are stated
        ("on 4/5/2019", {"2019", "2019-04", "2019-04-05", "2019-05", "2019-05-04"}),
        # dots are day-first only
        ("on 04.05.2019", {"2019", "2019-05", "2019-05-04"}),
        ("from 2019-2021", {"2019", "2021"}),
    ],
)
def test_stated(text: str, expected: set[str]) -> None:
    assert stated_dates(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "the 1990s",
        "1500 words",
        "version 2.2019",
        "$2019",
        "2019-02-29",
        "31 April 2020",
        "on March 14",
        "3/14/19",
        "call 555-2019",
        "last March",
        "13/13/2019",
        "port 2019:80",
    ],
)
def test_not_dates(text: str) -> None:
    assert stated_dates(text) == frozenset()


def test_longest_mention_wins() -> None:
    mentions = find_mentions("Born 14 March 2019, moved 2021-06.")
    assert [(m.text, m.value) for m in mentions] == [("14 March 2019", "2019-03-14"), ("2021-06", "2021-06")]


def test_first_stated_date_takes_the_agreed_part_of_ambiguous_dates() -> None:
    assert first_stated_date("We met on 4/5/2019 in Porto") == "2019"
    assert first_stated_date("We met on 4/4/2019") == "2019-04-04"
    assert first_stated_date("no date here") is None


def test_occurs_and_prefix() -> None:
    assert date_occurs("2019-03", "It was 14 March 2019.")
    assert not date_occurs("2019-04", "It was 14 March 2019.")
    assert not date_occurs("March 2019", "It was March 2019.")  # not a date value
    assert is_timestamp_prefix("2019-03", ["2019-03-14T09:00:00.000Z"])
    assert not is_timestamp_prefix("2019-0", ["2019-03-14T09:00:00.000Z"])
    assert not is_timestamp_prefix("2019-03", [None, "2020-03-14T09:00:00.000Z"])
