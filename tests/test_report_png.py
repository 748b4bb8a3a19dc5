"""The report's charts are the pixels ``savefig`` gives, drawn once instead of twice, without an alpha channel
where every pixel is opaque; each figure is freed as soon as it is drawn."""

from __future__ import annotations

import gc
import io
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image
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
def test_png_has_the_pixels_savefig_gives(charts: dict[str, Draw], name: str) -> None:
    png = _report._png(_drawn(charts[name]))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    buf = io.BytesIO()
    _drawn(charts[name]).savefig(buf, format="png", dpi=_report._DPI, metadata={"Software": None})
    saved = Image.open(buf)
    ours = Image.open(io.BytesIO(png))
    assert saved.mode == "RGBA" and ours.mode == "RGB"  # the figure is opaque: its alpha says nothing
    assert np.asarray(saved)[..., 3].min() == 255
    assert np.array_equal(np.asarray(ours), np.asarray(saved)[..., :3])
    assert ours.info["dpi"] == saved.info["dpi"]  # the same resolution chunk
    assert "Software" not in ours.info


def test_a_see_through_figure_keeps_its_alpha(charts: dict[str, Draw]) -> None:
    fig = _drawn(charts["lengths"])
    fig.patch.set_alpha(0.0)
    ours = Image.open(io.BytesIO(_report._png(fig)))
    assert ours.mode == "RGBA"
    assert np.asarray(ours)[..., 3].min() == 0  # the corners are the see-through background


def test_a_figure_is_freed_once_drawn_and_the_collector_left_as_it_was() -> None:
    drawn: list[weakref.ref[Figure]] = []

    def draw(fig: Figure) -> None:
        drawn.append(weakref.ref(fig))
        fig.add_subplot().plot([0, 1, 2], [2, 0, 1])

    assert gc.isenabled()
    page = _report._figure(draw, "a line", (3.0, 2.0))
    assert 'alt="a line" src="data:image/png;base64,' in page
    assert drawn[0]() is None  # freed without waiting for the collector's next run
    assert gc.isenabled()
