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

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import _charts, _usage_charts
from ._chart_axes import freq_unit
from ._charts import (
    CATEGORY_COLORS,
    CHANGE_COLORS,
    FACT_FREQS,
    FALLBACK_FONTS,
    ROLE_COLORS,
    SUBJECT_COLORS,
    TIMELINE_FREQS,
    text_fonts,
    topic_colors,
)
from ._frames.envelopes import conversations_frame, messages_frame
from ._frames.facts import facts_frame
from ._load import open_input
from ._sources import resolve_one
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


def activity_timeline(
    messages: Any, *, ax: Axes | None = None, tz: str = "UTC", freq: str = "month", **kwargs: Any
) -> Axes:
    """Messages per week or month (``freq="week"``/``"month"``), stacked by role, with a line for the
    number of conversations active in each period on a twin axis.

    One stacked bar per period from the first to the last (empty periods get empty bars). The twin
    Axes is ``ax.right_ax`` and carries the legend, so it stays on top. ``kwargs`` go to ``ax.bar``.
    """
    freq_unit(freq, TIMELINE_FREQS)  # a wrong frequency fails before anything is read
    return _charts.activity_timeline(_frame(messages, messages_frame), ax=ax, tz=tz, freq=freq, **kwargs)


def activity_heatmap(
    messages: Any, *, ax: Axes | None = None, tz: str = "UTC", cmap: str = "YlGnBu", cbar: bool = True, **kwargs: Any
) -> Axes:
    """Messages by weekday (rows, Monday first) and hour of day (columns) on the wall clock of ``tz``.

    The counts are the image's array, ``ax.images[0].get_array()``, shape (7, 24). ``kwargs`` go to
    ``ax.imshow``.
    """
    return _charts.activity_heatmap(_frame(messages, messages_frame), ax=ax, tz=tz, cmap=cmap, cbar=cbar, **kwargs)


def conversation_lengths(
    data: Any, *, ax: Axes | None = None, tz: str = "UTC", bins: int = 20, log: bool | None = None, **kwargs: Any
) -> Axes:
    """Histogram of messages per conversation, with the median marked.

    ``data`` is a conversations frame (``n_messages``), a messages frame, or documents. ``log=None``
    uses a log x axis (with log-spaced bins) when the data are skewed: the longest conversation is
    at least ten times the median. ``tz`` is accepted for a uniform signature and has no effect.
    ``kwargs`` go to ``ax.hist``.
    """
    return _charts.conversation_lengths(_frame(data, conversations_frame), ax=ax, tz=tz, bins=bins, log=log, **kwargs)


def fact_categories(
    facts: Any, *, ax: Axes | None = None, tz: str = "UTC", hue: str | None = None, **kwargs: Any
) -> Axes:
    """Facts per category as horizontal bars, most frequent on top, every spec category listed.

    ``hue="subject_type"`` splits each bar by who the facts are about; ``hue="source"`` by document.
    Facts without a category are the ``uncategorised`` bar. With fewer than :data:`FEW_FACTS` facts the
    chart says how many were found and how to find more (with none, it says only that). ``tz`` has no
    effect. ``kwargs`` go to ``ax.barh``.
    """
    return _charts.fact_categories(_frame(facts, facts_frame), ax=ax, tz=tz, hue=hue, **kwargs)


def facts_over_time(facts: Any, *, ax: Axes | None = None, tz: str = "UTC", freq: str = "year", **kwargs: Any) -> Axes:
    """Facts per year or month of their ``effective_date``, stacked by category.

    ``effective_date`` is ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``. With ``freq="month"`` a fact dated
    only to a year has no month and is left out; facts without a date are always left out. What was
    left out is said under the title. With fewer than :data:`FEW_FACTS` facts the chart says how many
    were found and how to find more. ``tz`` has no effect (these are calendar dates, not instants).
    ``kwargs`` go to ``ax.bar``.
    """
    freq_unit(freq, FACT_FREQS)  # a wrong frequency fails before anything is read
    return _charts.facts_over_time(_frame(facts, facts_frame), ax=ax, tz=tz, freq=freq, **kwargs)


def archetype_chart(ir: Any, *, ax: Axes | None = None, tz: str = "UTC", **kwargs: Any) -> Axes:
    """The archetype at a glance: ``self_ratio``, ``belief_ratio`` and the category mix (each as a
    share of all facts, 0-100 %), with ``style``, the number of facts and ``distinct_entities`` in
    the title (one document) or the legend (several, side by side).

    ``ir`` is one Facts IR document (or its ``archetype`` block), a list of them, or a dict
    ``{label: document}``. A figure the producer left ``null`` is drawn as ``n/a``. With fewer than
    :data:`FEW_FACTS` facts in all, the chart says how many were found and how to find more (with none,
    it says only that). ``tz`` has no effect. ``kwargs`` go to ``ax.barh``.
    """
    return _charts.archetype_chart(_documents(ir), ax=ax, tz=tz, **kwargs)


def history_changes(data: Any, *, ax: Axes | None = None, tz: str = "UTC", **kwargs: Any) -> Axes:
    """What each export changed: conversations new, grown and edited (up) and missing (down), one bar per export.

    ``data`` is a history (the dict :func:`memvelope_tools.history` returns), its ``snapshots``
    frame, or a history folder. Each export is compared with the history before it; the first
    export's conversations are all new. ``tz`` sets the time zone of the export dates shown.
    ``kwargs`` go to ``ax.bar``.

    Parameters
    ----------
    data
        A history, its ``snapshots`` frame, or a history folder.
    ax
        The Axes to draw into (None: the current one).
    tz
        The time zone the export dates are shown in.
    **kwargs
        Passed to ``ax.bar``.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``.

    Raises
    ------
    memvelope_tools.errors.FormatError
        When ``data`` is a frame without the snapshots' counts, or a folder that is not a history folder.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> mv.plot.history_changes(mv.history(["old.zip", "new.zip"]))  # doctest: +SKIP
    """
    return _charts.history_changes(_snapshots(data), ax=ax, tz=tz, **kwargs)


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


def _frame(data: Any, build: Callable[[Any], pd.DataFrame]) -> pd.DataFrame:
    """``data`` when it is a frame, else the frame ``build`` reads from it."""
    return data if isinstance(data, pd.DataFrame) else build(data)


def _documents(ir: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """``(label, document)`` for each Facts IR document (or ``archetype`` block) of ``ir``, those given as
    paths or bytes read."""

    def one(doc: Any, label: str) -> tuple[str, Mapping[str, Any]]:
        if isinstance(doc, Mapping):
            return label, doc
        found = resolve_one(doc, "any", label=None if label.startswith("doc") else label)
        return found.label, open_input(found)

    if isinstance(ir, Mapping) and ("archetype" in ir or "self_ratio" in ir or "meta" in ir):
        return [one(ir, "facts")]
    if isinstance(ir, Mapping):
        return [one(doc, str(name)) for name, doc in ir.items()]
    if isinstance(ir, list | tuple):
        return [one(doc, f"doc{i}") for i, doc in enumerate(ir)]
    return [one(ir, "doc0")]


def _snapshots(data: Any) -> pd.DataFrame | Mapping[str, Any]:
    """``data`` when it is a history's ``snapshots`` frame or the history, else the snapshots of the history
    folder ``data``."""
    if isinstance(data, pd.DataFrame) or (
        isinstance(data, Mapping) and isinstance(data.get("snapshots"), pd.DataFrame)
    ):
        return data
    from ._history.folder import read_history

    snapshots: pd.DataFrame = read_history(data)["snapshots"]
    return snapshots


def _nodes(data: Any) -> pd.DataFrame:
    from ._whole.nodes import nodes_frame

    return data if isinstance(data, pd.DataFrame) else nodes_frame(data)


def _found(data: Any) -> Topics:
    from ._topics import Topics, topics

    return data if isinstance(data, Topics) else topics(data)
