"""The topic charts draw what the topics say: bar heights, labels, titles and the number of panels."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

import memvelope_tools as mv

WORDS = {
    "garden": "tomato compost seedling mulch pruning greenhouse",
    "money": "mortgage dividend portfolio inflation pension equity",
    "trip": "itinerary passport layover hostel luggage ferry",
}


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def envelope(*pairs: tuple[str, str]) -> dict:
    """One conversation per (timestamp, topic name), its text made of that topic's words."""
    convs = [
        {
            "id": f"c{i}",
            "title": "",
            "created_at": None,
            "updated_at": None,
            "messages": [{"id": "m1", "role": "user", "ts": ts, "text": " ".join(WORDS[name].split() * 2)}],
        }
        for i, (ts, name) in enumerate(pairs)
    ]
    return {
        "memvelope": "envelope-v0",
        "meta": {"source_provider": "claude", "conversation_count": len(convs), "message_count": len(convs)},
        "conversations": convs,
    }


# January: two garden, one money; February: nothing; March: one trip, one money.
ENV = envelope(
    ("2024-01-03T00:00:00.000Z", "garden"),
    ("2024-01-09T00:00:00.000Z", "garden"),
    ("2024-01-20T00:00:00.000Z", "money"),
    ("2024-03-02T00:00:00.000Z", "trip"),
    ("2024-03-05T00:00:00.000Z", "money"),
)


@pytest.fixture(scope="module")
def found():
    return mv.topics(ENV, n_topics=3)


def label_of(found, name: str) -> str:
    first = {"garden": 0, "money": 2, "trip": 3}[name]
    return found.assignments.loc[first, "label"]


def test_topics_over_time_stacks_shares_per_month(found):
    ax = mv.plot.topics_over_time(found)
    assert len(ax.containers) == 3  # one stack of bars per topic
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == list(found.labels)
    heights = {label: [p.get_height() for p in c.patches] for label, c in zip(legend, ax.containers, strict=True)}
    assert heights[label_of(found, "garden")] == pytest.approx([2 / 3, 0, 0])
    assert heights[label_of(found, "money")] == pytest.approx([1 / 3, 0, 0.5])
    assert heights[label_of(found, "trip")] == pytest.approx([0, 0, 0.5])
    tops = np.sum([[p.get_height() for p in c.patches] for c in ax.containers], axis=0)
    assert tops == pytest.approx([1, 0, 1])  # every month with any conversation fills 100 %
    starts = [mdates.num2date(p.get_x()).strftime("%Y-%m-%d") for p in ax.containers[0].patches]
    assert starts == ["2024-01-01", "2024-02-01", "2024-03-01"]
    assert ax.get_title() == "Topics per month: share of conversations"
    assert ax.get_ylabel() == "share of conversations" and ax.get_ylim() == (0, 1)


def test_topics_over_time_by_year_in_a_time_zone_into_the_axes_given(found):
    fig, ax = plt.subplots()
    assert mv.plot.topics_over_time(found, ax=ax, freq="year", tz="Asia/Tokyo") is ax
    assert all(len(c.patches) == 1 for c in ax.containers)
    assert ax.get_title() == "Topics per year: share of conversations (Asia/Tokyo)"
    assert plt.gca() is ax and len(fig.axes) == 1


def test_topics_over_time_without_dates_says_so():
    undated = envelope(("2024-01-01T00:00:00.000Z", "garden"))
    undated["conversations"][0]["messages"][0]["ts"] = None
    ax = mv.plot.topics_over_time(mv.topics(undated, n_topics=1))
    assert [t.get_text() for t in ax.texts] == ["no dated conversations: 1 conversation without a date"]
    assert not ax.containers


def test_topics_over_time_accepts_a_history():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = mv.plot.topics_over_time(ENV)  # topics() with its defaults: two topics for five conversations
    assert len(ax.containers) == 2


def test_topic_terms_draws_one_panel_per_topic_with_its_terms(found):
    axes = mv.plot.topic_terms(found, n_terms=5, ncols=2)
    assert len(axes) == 3
    fig = axes[0].figure
    assert len(fig.axes) == 3  # the fourth cell of the 2 x 2 grid was removed
    assert fig.get_suptitle() == "Top terms of 3 topics"
    sizes = found.assignments["topic"].value_counts()
    for t, ax in enumerate(axes):
        terms = found.terms.loc[found.terms["topic"] == t].head(5)
        shown = [label.get_text() for label in ax.get_yticklabels()]
        assert shown == list(terms["term"])[::-1]  # the strongest on top
        widths = [p.get_width() for p in ax.containers[0].patches]
        assert widths == pytest.approx(list(terms["weight"])[::-1])
        unit = "conversation" if sizes[t] == 1 else "conversations"
        assert ax.get_title() == f"{t}: {found.labels[t]}\n{sizes[t]} {unit}"


def test_topic_terms_into_a_figure_given(found):
    fig = Figure()
    axes = mv.plot.topic_terms(found, fig=fig, n_terms=3)
    assert all(ax.figure is fig for ax in axes)
    assert [len(ax.containers[0].patches) for ax in axes] == [3, 3, 3]
    assert len(fig.axes) == 3  # one row of three: ncols is lowered to the number of topics


def test_topic_charts_leave_global_state_alone(found, monkeypatch):
    monkeypatch.setattr(plt, "show", lambda *a, **k: pytest.fail("plt.show() called"))
    before = dict(matplotlib.rcParams)
    mv.plot.topics_over_time(found, ax=plt.subplots()[1])
    mv.plot.topic_terms(found, fig=Figure())
    assert dict(matplotlib.rcParams) == before
