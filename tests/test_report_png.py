"""The report's charts are the PNG bytes ``savefig`` gives, drawn once instead of twice."""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from matplotlib.figure import Figure
from test_topics import planted

import memvelope_tools as mv
from memvelope_tools import _report, plot

Draw = Callable[[Figure], Any]


@pytest.fixture(scope="module")
def charts() -> dict[str, Draw]:
    env = planted(per_topic=4)[0]
    msgs = mv.messages_frame(env)
    convs = mv.conversations_frame(env)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        found = mv.topics(env, n_topics=4)
    return {
        "timeline": lambda fig: plot.activity_timeline(msgs, ax=fig.add_subplot()),
        "heatmap": lambda fig: plot.activity_heatmap(msgs, ax=fig.add_subplot(), tz="Asia/Tokyo"),
        "lengths": lambda fig: plot.conversation_lengths(convs, ax=fig.add_subplot()),
        "topic terms": lambda fig: plot.topic_terms(found, fig=fig, n_terms=6, ncols=4),
    }


def _drawn(draw: Draw) -> Figure:
    fig = Figure(figsize=(7.2, 3.9), dpi=_report._DPI, layout="constrained")
    draw(fig)
    return fig


@pytest.mark.parametrize("name", ["timeline", "heatmap", "lengths", "topic terms"])
def test_png_is_what_savefig_gives(charts: dict[str, Draw], name: str) -> None:
    png = _report._png(_drawn(charts[name]))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    buf = io.BytesIO()
    _drawn(charts[name]).savefig(buf, format="png", dpi=_report._DPI, metadata={"Software": None})
    assert png == buf.getvalue()
