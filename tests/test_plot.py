"""The plot helpers draw what the data says: bar heights, points, labels and titles checked by hand."""

from __future__ import annotations

import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import memvelope_tools as mv
from memvelope_tools._ir import build_ir


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def msg(i: int, role: str, ts: str | None) -> dict:
    return {"id": f"m{i}", "role": role, "ts": ts, "text": f"text {i}"}


def conv(cid: str, *messages: dict) -> dict:
    return {"id": cid, "title": cid, "created_at": messages[0]["ts"], "updated_at": None, "messages": list(messages)}


def envelope(*convs: dict) -> dict:
    return {
        "memvelope": "envelope-v0",
        "meta": {
            "source_provider": "claude",
            "conversation_count": len(convs),
            "message_count": sum(len(c["messages"]) for c in convs),
        },
        "conversations": list(convs),
    }


# Two conversations: A has 3 user + 1 assistant messages in January 2024; B has one user message in
# January and one assistant message in March (nothing in February); one undated message in B.
ENV = envelope(
    conv(
        "A",
        msg(1, "user", "2024-01-02T10:00:00.000Z"),
        msg(2, "assistant", "2024-01-02T10:01:00.000Z"),
        msg(3, "user", "2024-01-03T11:00:00.000Z"),
        msg(4, "user", "2024-01-20T09:00:00.000Z"),
    ),
    conv(
        "B",
        msg(1, "user", "2024-01-31T23:30:00.000Z"),
        msg(2, "assistant", "2024-03-05T08:00:00.000Z"),
        msg(3, "user", None),
    ),
)


def fact(
    category: str | None, subject_type: str | None = "self", date: str | None = "2024", subject: str | None = "self"
) -> dict:
    return {
        "subject": subject,
        "subject_type": subject_type,
        "category": category,
        "content": "a fact",
        "effective_date": date,
        "in_text_date": None,
        "provenance": "imported:claude-export:2024-01",
        "convo_id": "A",
    }


def ir(*facts: dict) -> dict:
    return build_ir(
        "claude",
        "structured (zero-LLM)",
        list(facts),
        clock=lambda: pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime(),
    )


def bar_heights(container) -> list[float]:
    return [p.get_height() for p in container.patches]


def bar_widths(container) -> list[float]:
    return [p.get_width() for p in container.patches]


# ---- activity_timeline ---------------------------------------------------------------------------


def test_timeline_monthly_stacks_roles_and_counts_conversations():
    ax = mv.plot.activity_timeline(mv.messages_frame(ENV), freq="month")
    user, assistant = ax.containers
    assert bar_heights(user) == [4, 0, 0]  # Jan, Feb (empty), Mar; the undated message is left out
    assert bar_heights(assistant) == [1, 0, 1]
    assert [p.get_y() for p in assistant.patches] == [4, 0, 0]  # stacked on the user bars
    starts = [mdates.num2date(p.get_x()).strftime("%Y-%m-%d") for p in user.patches]
    assert starts == ["2024-01-01", "2024-02-01", "2024-03-01"]
    (line,) = ax.right_ax.lines
    assert list(line.get_ydata()) == [2, 0, 1]
    assert ax.get_title() == "Messages per month"
    assert ax.get_ylabel() == "messages" and ax.right_ax.get_ylabel() == "conversations"
    labels = [t.get_text() for t in ax.right_ax.get_legend().get_texts()]
    assert labels == ["user messages", "assistant messages", "conversations"]


def test_timeline_accepts_the_document_and_a_path(tmp_path):
    path = tmp_path / "h.mve.json"
    mv.write_envelope(ENV, path)
    for data in (ENV, path):
        _fig, ax = plt.subplots()
        assert mv.plot.activity_timeline(data) is ax  # draws into the current Axes
        assert bar_heights(ax.containers[0]) == [4, 0, 0]


def test_timeline_weekly_periods_follow_the_display_timezone():
    # B's first message is Wednesday 2024-01-31 23:30 UTC = Thursday 00:30 in Berlin (same week), and
    # 2024-01-07T23:30Z is Sunday in UTC but Monday 2024-01-08 in Berlin: a different week.
    env = envelope(conv("C", msg(1, "user", "2024-01-07T23:30:00.000Z")))
    _, ax = plt.subplots()
    assert mv.plot.activity_timeline(env, freq="week", ax=ax) is ax
    assert mdates.num2date(ax.containers[0].patches[0].get_x()).strftime("%Y-%m-%d") == "2024-01-01"
    _fig, ax = plt.subplots()
    mv.plot.activity_timeline(env, freq="week", ax=ax, tz="Europe/Berlin")
    assert mdates.num2date(ax.containers[0].patches[0].get_x()).strftime("%Y-%m-%d") == "2024-01-08"
    assert ax.get_title() == "Messages per week (Europe/Berlin)"


def test_timeline_weekly_fills_empty_weeks():
    ax = mv.plot.activity_timeline(ENV, freq="week")
    # Weeks of Jan 1 .. Mar 4 2024: ten Mondays.
    assert len(ax.containers[0].patches) == 10
    assert sum(bar_heights(ax.containers[0])) == 4 and sum(bar_heights(ax.containers[1])) == 2


def test_timeline_refuses_unknown_freq_and_wrong_frames():
    with pytest.raises(ValueError, match="freq"):
        mv.plot.activity_timeline(ENV, freq="fortnight")
    with pytest.raises(mv.FormatError, match="messages frame") as info:
        mv.plot.activity_timeline(pd.DataFrame({"x": [1]}))
    assert info.value.reason == "wrong-frame"


def test_timeline_without_dated_messages_says_so():
    ax = mv.plot.activity_timeline(envelope(conv("D", msg(1, "user", None))))
    assert [t.get_text() for t in ax.texts] == ["no dated messages: 1 message has no date"]
    assert not ax.containers


# ---- activity_heatmap ----------------------------------------------------------------------------


def test_heatmap_counts_weekday_by_hour():
    ax = mv.plot.activity_heatmap(ENV)
    grid = np.asarray(ax.images[0].get_array())
    assert grid.shape == (7, 24)
    assert grid.sum() == 6  # six dated messages
    assert grid[1, 10] == 2  # Tuesday 2024-01-02, 10:00 and 10:01
    assert grid[2, 11] == 1 and grid[5, 9] == 1 and grid[2, 23] == 1 and grid[1, 8] == 1
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["00:00", "03:00", "06:00"]
    assert ax.get_title() == "Messages by weekday and hour (UTC)"


def test_heatmap_shifts_cells_to_the_timezone_given():
    env = envelope(conv("C", msg(1, "user", "2024-01-07T23:30:00.000Z")))  # Sunday 23:30 UTC
    utc = np.asarray(mv.plot.activity_heatmap(env, ax=plt.subplots()[1]).images[0].get_array())
    assert utc[6, 23] == 1 and utc.sum() == 1
    fig, ax = plt.subplots()
    berlin = np.asarray(mv.plot.activity_heatmap(env, ax=ax, tz="Europe/Berlin", cbar=False).images[0].get_array())
    assert berlin[0, 0] == 1 and berlin.sum() == 1  # Monday 00:30 in Berlin
    assert ax.get_title() == "Messages by weekday and hour (Europe/Berlin)"
    assert len(fig.axes) == 1  # no colour bar when cbar=False
    ny = np.asarray(mv.plot.activity_heatmap(env, ax=plt.subplots()[1], tz="America/New_York").images[0].get_array())
    assert ny[6, 18] == 1  # Sunday 18:30 in New York


# ---- conversation_lengths ------------------------------------------------------------------------


def lengths_env(*lengths: int) -> dict:
    convs = [
        conv(f"c{i}", *[msg(j, "user", "2024-01-01T00:00:00.000Z") for j in range(n)]) for i, n in enumerate(lengths)
    ]
    return envelope(*convs)


def test_lengths_skewed_uses_a_log_axis():
    env = lengths_env(1, 1, 2, 3, 60)
    ax = mv.plot.conversation_lengths(mv.conversations_frame(env))
    assert ax.get_xscale() == "log"
    heights = [p.get_height() for p in ax.patches]
    assert sum(heights) == 5
    assert heights[0] == 2  # the first log bin holds the two one-message conversations
    (median,) = ax.lines
    assert list(median.get_xdata()) == [2, 2]
    assert ax.get_title() == "Messages per conversation (5 conversations)"
    assert ax.get_xlabel().endswith("(log scale)")


def test_lengths_even_stays_linear_and_messages_frame_gives_the_same_bars():
    env = lengths_env(2, 3, 3, 4)
    a = mv.plot.conversation_lengths(mv.conversations_frame(env), ax=plt.subplots()[1])
    b = mv.plot.conversation_lengths(mv.messages_frame(env), ax=plt.subplots()[1])
    assert a.get_xscale() == b.get_xscale() == "linear"
    ha = [p.get_height() for p in a.patches]
    assert ha == [p.get_height() for p in b.patches]
    assert ha == [1, 2, 1]  # one bar per length when there are few: 2, 3 (twice), 4
    assert mv.plot.conversation_lengths(env, ax=plt.subplots()[1], log=True).get_xscale() == "log"


# ---- fact_categories -----------------------------------------------------------------------------

FACTS_IR = ir(
    fact("career"),
    fact("career", "company", subject="Acme"),
    fact("career"),
    fact("identity"),
    fact(None, "person", subject="Ana"),
)


def test_fact_categories_counts_every_category_most_frequent_on_top():
    ax = mv.plot.fact_categories(mv.facts_frame(FACTS_IR))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    widths = dict(zip(labels, bar_widths(ax.containers[0]), strict=True))
    assert widths == {
        "career": 3,
        "identity": 1,
        "uncategorised": 1,
        "projects": 0,
        "preferences": 0,
        "instructions": 0,
        "relationship": 0,
    }
    assert labels[-1] == "career"  # barh draws bottom-up: the top row is the largest
    assert ax.get_title() == "Facts per category (5 facts)"
    assert [t.get_text() for t in ax.texts][-1] == "3"


def test_fact_categories_split_by_subject_type():
    ax = mv.plot.fact_categories(FACTS_IR, hue="subject_type")
    labels = [t.get_text() for t in ax.get_yticklabels()]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["self", "person", "company"]
    per = {name: dict(zip(labels, bar_widths(c), strict=True)) for name, c in zip(legend, ax.containers, strict=True)}
    assert per["self"]["career"] == 2 and per["company"]["career"] == 1
    assert per["person"]["uncategorised"] == 1 and per["self"]["identity"] == 1
    with pytest.raises(ValueError, match="hue"):
        mv.plot.fact_categories(FACTS_IR, hue="colour")


# ---- facts_over_time -----------------------------------------------------------------------------

DATED_IR = ir(
    fact("career", date="2023"),
    fact("career", date="2023-05"),
    fact("identity", date="2023-05-02"),
    fact("identity", date="2024-01"),
    fact("identity", date=None),
)


def test_facts_over_time_per_year_stacked_by_category():
    ax = mv.plot.facts_over_time(DATED_IR)
    identity, career = ax.containers  # stacked in the spec's category order
    assert [p.get_x() + p.get_width() / 2 for p in career.patches] == [2023, 2024]
    assert bar_heights(career) == [2, 0] and bar_heights(identity) == [1, 1]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["identity", "career"]
    assert ax.get_title() == "Facts per year of their effective date\n(not shown: 1 without a date)"


def test_facts_over_time_per_month_leaves_out_year_only_dates_and_says_so():
    ax = mv.plot.facts_over_time(mv.facts_frame(DATED_IR), freq="month")
    identity, career = ax.containers
    months = [mdates.num2date(p.get_x() + p.get_width() / 2).strftime("%Y-%m") for p in career.patches]
    assert months == ["2023-05", "2024-01"]
    assert bar_heights(career) == [1, 0] and bar_heights(identity) == [1, 1]
    assert "1 dated only to a year" in ax.get_title() and "1 without a date" in ax.get_title()


# ---- archetype_chart -----------------------------------------------------------------------------

ARCH_IR = ir(fact("identity"), fact("preferences"), fact("career"), fact("career", "person", subject="Ana"))


def test_archetype_single_document_style_is_the_title():
    arch = ARCH_IR["archetype"]
    assert arch["style"] is not None
    ax = mv.plot.archetype_chart(ARCH_IR)
    assert ax.get_title().splitlines() == [arch["style"], "4 facts · 1 distinct entity"]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    widths = dict(zip(rows, bar_widths(ax.containers[0]), strict=True))
    assert widths["self ratio"] == pytest.approx(0.75) and widths["belief ratio"] == pytest.approx(0.5)
    assert widths["career"] == pytest.approx(0.5) and widths["identity"] == pytest.approx(0.25)
    assert widths["relationship"] == 0
    assert "75%" in [t.get_text() for t in ax.texts]


def test_archetype_several_documents_side_by_side_and_nulls_as_na():
    unknown = ir(fact(None, subject=None))  # null subject and category: every derived figure null
    ax = mv.plot.archetype_chart({"mine": ARCH_IR, "other": unknown})
    assert len(ax.containers) == 2 and all(len(c.patches) == 8 for c in ax.containers)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[0].startswith(f"mine: {ARCH_IR['archetype']['style']} (4 facts")
    assert legend[1] == "other: no style (1 fact, distinct entities: n/a)"
    assert bar_widths(ax.containers[1]) == [0] * 8
    assert [t.get_text() for t in ax.texts].count("n/a") == 8
    assert ax.get_title() == "Archetypes side by side"
    listed = mv.plot.archetype_chart([ARCH_IR, ARCH_IR], ax=plt.subplots()[1])
    assert len(listed.containers) == 2


def test_archetype_refuses_an_envelope():
    with pytest.raises(mv.FormatError, match="Facts IR"):
        mv.plot.archetype_chart([ENV])


# ---- manners -------------------------------------------------------------------------------------


def test_helpers_leave_global_state_alone(monkeypatch):
    monkeypatch.setattr(plt, "show", lambda *a, **k: pytest.fail("plt.show() called"))
    monkeypatch.setattr(plt.Figure, "savefig", lambda *a, **k: pytest.fail("savefig called"))
    before = dict(matplotlib.rcParams)
    figs = plt.get_fignums()
    fig, axes = plt.subplots(2, 3)
    calls = [
        (mv.plot.activity_timeline, ENV),
        (mv.plot.activity_heatmap, ENV),
        (mv.plot.conversation_lengths, ENV),
        (mv.plot.fact_categories, FACTS_IR),
        (mv.plot.facts_over_time, DATED_IR),
        (mv.plot.archetype_chart, ARCH_IR),
    ]
    for (fn, data), ax in zip(calls, axes.flat, strict=True):
        assert fn(data, ax=ax) is ax
        assert ax.get_title() and (ax.get_xlabel() or fn is mv.plot.archetype_chart)
    assert dict(matplotlib.rcParams) == before
    assert plt.get_fignums() == [*figs, fig.number]  # drew into the figure given, made no other


def test_importing_the_package_does_not_import_matplotlib():
    code = (
        "import sys, memvelope_tools as mv; assert 'matplotlib' not in sys.modules; "
        "mv.plot.activity_timeline; assert 'matplotlib' in sys.modules; print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
