"""Charts of a chat history and its Facts IR, drawn with matplotlib into the Axes you give.

Every function is axes-level, in the seaborn manner: ``fn(data, *, ax=None, tz="UTC", **kwargs)``
draws into ``ax`` (the current Axes when ``None``) and returns it. Nothing here calls
``plt.show()`` or ``savefig`` or changes ``rcParams``, so charts compose into any figure.

``data`` is a frame from :mod:`memvelope_tools._frames` or anything those accept (an export, a
path, a parsed document, a list of them): :func:`activity_timeline` and :func:`activity_heatmap` want messages,
:func:`conversation_lengths` conversations (or messages), :func:`fact_categories` and
:func:`facts_over_time` facts, :func:`archetype_chart` Facts IR documents, :func:`topics_over_time` and
:func:`topic_terms` topics (or a history to find them in), :func:`memory_timeline` a memory frame (or the
export to read it from), :func:`models_over_time`, :func:`features_over_time` and :func:`branching` a nodes
frame (or the export to read it from: an envelope has no nodes). ``tz`` changes only what is shown: weeks,
months, weekdays and hours are those of the wall clock in ``tz``; data stays UTC. Messages without a
timestamp cannot be placed in time and are left out of the time charts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import _charts, _usage_charts
from ._charts import (
    CATEGORY_COLORS,
    CHANGE_COLORS,
    FALLBACK_FONTS,
    ROLE_COLORS,
    SUBJECT_COLORS,
    activity_heatmap,
    activity_timeline,
    archetype_chart,
    conversation_lengths,
    fact_categories,
    facts_over_time,
    history_changes,
    text_fonts,
    topic_colors,
)
from ._usage_charts import BRANCH_COLORS, KIND_COLORS

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ._topics import Topics

__all__ = [
    "BRANCH_COLORS",
    "CATEGORY_COLORS",
    "CHANGE_COLORS",
    "FALLBACK_FONTS",
    "KIND_COLORS",
    "ROLE_COLORS",
    "SUBJECT_COLORS",
    "activity_heatmap",
    "activity_timeline",
    "archetype_chart",
    "branching",
    "conversation_lengths",
    "fact_categories",
    "facts_over_time",
    "features_over_time",
    "history_changes",
    "memory_timeline",
    "models_over_time",
    "text_fonts",
    "topic_colors",
    "topic_terms",
    "topics_over_time",
]


def __dir__() -> list[str]:
    return sorted(__all__)


def topics_over_time(
    topics: Any, *, ax: Axes | None = None, tz: str = "UTC", freq: str = "month", **kwargs: Any
) -> Axes:
    """Each topic's share of the conversations (or messages) of each period, as stacked bars that
    fill 100 % in every period with any; the legend lists the topics, largest first.

    Parameters
    ----------
    topics
        What :func:`memvelope_tools.topics` returns, or a history it is called on with its defaults.
    ax
        The Axes to draw into (the current one when None).
    tz
        The time zone whose wall clock places units in periods.
    freq
        ``week``, ``month``, ``quarter`` or ``year``.
    **kwargs
        Passed to ``ax.bar``.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``. Units without a time or a topic are left out.

    Raises
    ------
    memvelope_tools.errors.TopicsError
        When topics cannot be found in the history given.

    Examples
    --------
    >>> import memvelope_tools as mv                                          # doctest: +SKIP
    >>> mv.plot.topics_over_time(mv.topics("export.zip"), freq="quarter")     # doctest: +SKIP
    """
    return _charts.topics_over_time(_found(topics), ax=ax, tz=tz, freq=freq, **kwargs)


def topic_terms(topics: Any, *, fig: Any = None, n_terms: int = 8, ncols: int = 4, **kwargs: Any) -> np.ndarray:
    """Small multiples: one horizontal bar chart per topic of its top ``n_terms`` terms by weight,
    the strongest on top, titled with the topic's number, label and size.

    Parameters
    ----------
    topics
        What :func:`memvelope_tools.topics` returns, or a history it is called on with its defaults.
    fig
        The figure to draw into (a new figure sized to the grid when None).
    n_terms
        How many terms each topic shows.
    ncols
        Charts per row.
    **kwargs
        Passed to ``ax.barh``.

    Returns
    -------
    numpy.ndarray
        The Axes, one per topic in topic order (figure-level).

    Raises
    ------
    memvelope_tools.errors.TopicsError
        When topics cannot be found in the history given.

    Examples
    --------
    >>> import memvelope_tools as mv                                          # doctest: +SKIP
    >>> axes = mv.plot.topic_terms(mv.topics("export.zip"), n_terms=6)        # doctest: +SKIP
    """
    return _charts.topic_terms(_found(topics), fig=fig, n_terms=n_terms, ncols=ncols, **kwargs)


def memory_timeline(memory: Any, *, ax: Axes | None = None, tz: str = "UTC", **kwargs: Any) -> Axes:
    """What the provider remembered, when: one row per kind, a dot where each item was written or first
    seen, a line on to where it was last seen.

    Parameters
    ----------
    memory
        A frame from :func:`memvelope_tools.memory_frame`, or the export it reads (a path).
    ax
        The Axes to draw into (the current one when None).
    tz
        The time zone dates are shown in.
    **kwargs
        Passed to ``ax.scatter``.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``. Items without a date (Claude's memory files carry none) cannot be placed; the title says
        how many were left out, and the notes of the frame (a format that keeps no memory records) are
        said in the chart.

    Raises
    ------
    ConversionError
        When ``memory`` is an export that cannot be read.

    Examples
    --------
    >>> import memvelope_tools as mv                                    # doctest: +SKIP
    >>> mv.plot.memory_timeline(mv.memory_frame(mv.sample_path("chatgpt")))  # doctest: +SKIP
    """
    from ._memory.frame import memory_frame
    from ._memory.items import KINDS

    frame = memory if isinstance(memory, pd.DataFrame) else memory_frame(memory)
    return _charts.memory_timeline(frame, KINDS, ax=ax, tz=tz, **kwargs)


def models_over_time(
    nodes: Any, *, ax: Axes | None = None, tz: str = "UTC", freq: str = "month", top: int = 8, **kwargs: Any
) -> Axes:
    """Which models answered, when: assistant nodes per period, stacked by the model they name.

    Parameters
    ----------
    nodes
        A frame from :func:`memvelope_tools.nodes_frame`, or the export it reads (a path, a list of parts).
    ax
        The Axes to draw into (the current one when None).
    tz
        The time zone whose wall clock places nodes in periods.
    freq
        ``week``, ``month`` or ``year``.
    top
        How many models get a colour of their own (the most frequent); the rest are one "other models" bar.
    **kwargs
        Passed to ``ax.bar``.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``. Assistant nodes without a time or a model are left out.

    Raises
    ------
    memvelope_tools.errors.InputError
        When ``nodes`` is no export (an envelope keeps no nodes) or cannot be read.

    Examples
    --------
    >>> import memvelope_tools as mv                                   # doctest: +SKIP
    >>> mv.plot.models_over_time(mv.nodes_frame("chatgpt-export.zip"))  # doctest: +SKIP
    """
    return _usage_charts.models_over_time(_nodes(nodes), ax=ax, tz=tz, freq=freq, top=top, **kwargs)


def features_over_time(
    nodes: Any,
    *,
    ax: Axes | None = None,
    tz: str = "UTC",
    freq: str = "month",
    by: str = "kind",
    top: int = 8,
    **kwargs: Any,
) -> Axes:
    """What was used besides talking, when: nodes per period by kind (code, tool output, reasoning,
    browsing, research, images, files, voice, memory, canvas), or tool calls per period by tool.

    Parameters
    ----------
    nodes
        A frame from :func:`memvelope_tools.nodes_frame`, or the export it reads (a path, a list of parts).
    ax
        The Axes to draw into (the current one when None).
    tz
        The time zone whose wall clock places nodes in periods.
    freq
        ``week``, ``month`` or ``year``.
    by
        ``kind`` (nodes of each kind above; prose, context, system prompts and others are left out) or
        ``tool`` (calls of each tool, by the name the export gives it).
    top
        With ``by="tool"``, how many tools get a colour of their own; the rest are one "other tools" bar.
    **kwargs
        Passed to ``ax.bar``.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``. Nodes without a time are left out.

    Raises
    ------
    ValueError
        When ``by`` is neither ``kind`` nor ``tool``.
    memvelope_tools.errors.InputError
        When ``nodes`` is no export (an envelope keeps no nodes) or cannot be read.

    Examples
    --------
    >>> import memvelope_tools as mv                                           # doctest: +SKIP
    >>> mv.plot.features_over_time(mv.nodes_frame("chatgpt-export.zip"), by="tool")  # doctest: +SKIP
    """
    return _usage_charts.features_over_time(_nodes(nodes), ax=ax, tz=tz, freq=freq, by=by, top=top, **kwargs)


def branching(nodes: Any, *, ax: Axes | None = None, tz: str = "UTC", freq: str = "month", **kwargs: Any) -> Axes:
    """How often prompts were edited and replies regenerated: per period, the user nodes and the assistant
    nodes that come after the first among their siblings (each is one edit, or one regeneration).

    Parameters
    ----------
    nodes
        A frame from :func:`memvelope_tools.nodes_frame`, or the export it reads (a path, a list of parts).
    ax
        The Axes to draw into (the current one when None).
    tz
        The time zone whose wall clock places nodes in periods.
    freq
        ``week``, ``month`` or ``year``.
    **kwargs
        Passed to ``ax.bar``.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, the two counts stacked. Nodes without a time are left out.

    Raises
    ------
    memvelope_tools.errors.InputError
        When ``nodes`` is no export (an envelope keeps no nodes) or cannot be read.

    Examples
    --------
    >>> import memvelope_tools as mv                            # doctest: +SKIP
    >>> mv.plot.branching(mv.nodes_frame("chatgpt-export.zip"))  # doctest: +SKIP
    """
    return _usage_charts.branching(_nodes(nodes), ax=ax, tz=tz, freq=freq, **kwargs)


def _nodes(data: Any) -> pd.DataFrame:
    from ._whole.nodes import nodes_frame

    return data if isinstance(data, pd.DataFrame) else nodes_frame(data)


def _found(data: Any) -> Topics:
    from ._topics import Topics, topics

    return data if isinstance(data, Topics) else topics(data)
