"""The report and topics on the bundled samples are what they were before their inputs were streamed:
the page (its chart images and the version aside) and each topic's label, terms and units."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import report_cases
import topic_cases


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize("case", list(report_cases.CASES))
def test_the_report_on_the_samples_is_the_page_it_was(case):
    expected = report_cases.fixture(case).read_text(encoding="utf-8")
    assert report_cases.page(case) == expected


@pytest.mark.parametrize("case", list(topic_cases.CASES))
def test_topics_on_the_samples_are_those_found_before(case):
    expected = json.loads(topic_cases.fixture(case).read_text(encoding="utf-8"))
    assert topic_cases.found(case) == expected
