"""The drawing behind the charts of how an export was used (:func:`memvelope_tools.plot.models_over_time`,
:func:`~memvelope_tools.plot.features_over_time`, :func:`~memvelope_tools.plot.branching`), whose docstrings
say what each shows: stacked bars of a nodes frame's rows per period, in the look of the other charts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from matplotlib.ticker import MaxNLocator

from ._chart_axes import date_axis, freq_unit, get_ax, local, no_data, palette, period_start, tidy
from ._frames.columns import require_columns
from ._providers.nodes import KINDS

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: One colour per kind of node, the same in every chart.
KIND_COLORS: dict[str, str] = {
    "prose": "#4C72B0",
    "code": "#DD8452",
    "tool_output": "#E6B17E",
    "reasoning": "#8172B3",
    "browsing": "#55A868",
    "research": "#2E7D4F",
    "image": "#C44E52",
    "file": "#937860",
    "audio": "#DA8BC3",
    "memory": "#CCB974",
    "canvas": "#64B5CD",
    "context": "#8C8C8C",
    "system": "#B0B0B0",
    "other": "#D0D0D0",
}
#: The kinds :func:`features_over_time` shows: the features used besides talking.
FEATURE_KINDS: tuple[str, ...] = tuple(k for k in KINDS if k not in ("prose", "context", "system", "other"))
BRANCH_COLORS: dict[str, str] = {"edited prompts": "#4C72B0", "regenerated replies": "#DD8452"}
_OTHERS_COLOR = "#B0B0B0"
_WIDTH = {"week": 5.5, "month": 24.0, "year": 300.0}
_FREQ = {"week": "W-MON", "month": "MS", "year": "YS"}
_COLUMNS = ("ts", "role", "kind", "model", "tools", "sibling")


def charted(nodes: pa.RecordBatch | pa.Table) -> pa.Table:
    """Of nodes in Arrow (the columns of the nodes table), the columns the charts read and the rows one of
    them shows (dated nodes that are an assistant's naming a model, of a kind of :data:`FEATURE_KINDS`,
    calling a tool, or an edited prompt or regenerated reply), in order: what each chart draws of these is
    what it draws of all the nodes, so a report keeps only these of each batch."""
    table = pa.Table.from_batches([nodes]) if isinstance(nodes, pa.RecordBatch) else nodes
    role = pc.cast(table["role"], pa.string())
    kind = pc.cast(table["kind"], pa.string())
    shown = pc.or_(
        pc.or_(
            pc.and_(pc.equal(role, "assistant"), pc.is_valid(table["model"])),
            pc.is_in(kind, pa.array(FEATURE_KINDS, pa.string())),
        ),
        pc.or_(
            pc.greater(pc.list_value_length(table["tools"]), 0),
            pc.and_(pc.greater(table["sibling"], 1), pc.is_in(role, pa.array(["user", "assistant"]))),
        ),
    )
    keep = pc.and_(pc.is_valid(table["ts"]), pc.fill_null(shown, False))
    return table.select(list(_COLUMNS)).filter(keep)


def nodes_of(frame: Any) -> pd.DataFrame:
    """``frame`` when it is a nodes frame (FormatError naming the columns it lacks otherwise)."""
    require_columns(frame, _COLUMNS, "a nodes frame")
    return frame  # type: ignore[no-any-return]


def _stacked(
    ax: Axes,
    times: pd.Series,
    series: pd.Series,
    names: Sequence[str],
    colors: Sequence[Any],
    unit: str,
    tz: str,
    title: str,
    ylabel: str,
    **kwargs: Any,
) -> Axes:
    """Bars per period from the first to the last, stacked by ``series`` (in the order of ``names``)."""
    start = period_start(local(times, tz), unit)
    periods = pd.date_range(start.min(), start.max(), freq=_FREQ[unit])
    counts = pd.crosstab(start.to_numpy(), series.to_numpy()).reindex(index=periods, columns=list(names), fill_value=0)
    x = mdates.date2num(periods.to_pydatetime())
    width = _WIDTH[unit]
    bottom = np.zeros(len(periods))
    for name, color in zip(names, colors, strict=True):
        heights = counts[name].to_numpy(dtype=float)
        ax.bar(x, heights, width=width, bottom=bottom, align="edge", color=color, label=name, **kwargs)
        bottom += heights
    ax.set_ylim(top=max(1.0, float(bottom.max())) * 1.3)  # headroom for the legend
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(x[0] - width, x[-1] + 2 * width)
    date_axis(ax, x, unit)
    ax.legend(loc="upper left", frameon=False, ncols=3, fontsize="small")
    ax.set_title(title if tz == "UTC" else f"{title} ({tz})")
    ax.set_xlabel(unit)
    ax.set_ylabel(ylabel)
    tidy(ax)
    return ax


def _ranked(values: pd.Series, top: int, rest: str) -> tuple[pd.Series, list[str]]:
    """``values`` with all but the ``top`` most frequent replaced by ``rest``, and the names in order."""
    ranked = values.value_counts(sort=True).index.tolist()
    kept = ranked[: max(0, top)]
    shown = values.where(values.isin(kept), rest)
    return shown, kept + ([rest] if len(ranked) > len(kept) else [])


def models_over_time(
    nodes: pd.DataFrame, *, ax: Axes | None = None, tz: str = "UTC", freq: str = "month", top: int = 8, **kwargs: Any
) -> Axes:
    """Assistant nodes per period, stacked by model (the ``top`` models, the rest together)."""
    unit = freq_unit(freq, ("week", "month", "year"))
    frame = nodes_of(nodes)
    ax = get_ax(ax)
    title = f"Assistant nodes per {unit}, by model"
    answers = frame[(frame["role"] == "assistant") & frame["ts"].notna() & frame["model"].notna()]
    if answers.empty:
        return no_data(ax, title, "no dated assistant node names a model")
    models, names = _ranked(answers["model"].astype(str), top, "other models")
    colors = [_OTHERS_COLOR if n == "other models" else c for n, c in zip(names, _cycle(len(names)), strict=True)]
    return _stacked(ax, answers["ts"], models, names, colors, unit, tz, title, "assistant nodes", **kwargs)


def features_over_time(
    nodes: pd.DataFrame,
    *,
    ax: Axes | None = None,
    tz: str = "UTC",
    freq: str = "month",
    by: str = "kind",
    top: int = 8,
    **kwargs: Any,
) -> Axes:
    """Nodes per period of the kinds in :data:`FEATURE_KINDS` (``by="kind"``), or tool calls per period by
    tool (``by="tool"``, the ``top`` tools, the rest together)."""
    unit = freq_unit(freq, ("week", "month", "year"))
    frame = nodes_of(nodes)
    ax = get_ax(ax)
    dated = frame[frame["ts"].notna()]
    if by == "kind":
        title = f"Features used per {unit}"
        used = dated[dated["kind"].astype(str).isin(FEATURE_KINDS)]
        if used.empty:
            note = "no dated node of code, tools, reasoning, search, images, files, voice, memory or canvas"
            return no_data(ax, title, note)
        kinds = used["kind"].astype(str)
        names = [k for k in FEATURE_KINDS if (kinds == k).any()]
        colors = [KIND_COLORS[k] for k in names]
        return _stacked(ax, used["ts"], kinds, names, colors, unit, tz, title, "nodes", **kwargs)
    if by != "tool":
        raise ValueError(f"by must be 'kind' or 'tool', got {by!r}")
    title = f"Tool calls per {unit}"
    calls = dated[["ts", "tools"]].explode("tools").dropna(subset=["tools"])
    if calls.empty:
        return no_data(ax, title, "no dated node calls a tool")
    tools, names = _ranked(calls["tools"].astype(str), top, "other tools")
    colors = [_OTHERS_COLOR if n == "other tools" else c for n, c in zip(names, _cycle(len(names)), strict=True)]
    return _stacked(ax, calls["ts"], tools, names, colors, unit, tz, title, "calls", **kwargs)


def branching(
    nodes: pd.DataFrame, *, ax: Axes | None = None, tz: str = "UTC", freq: str = "month", **kwargs: Any
) -> Axes:
    """Edited prompts (user nodes after the first among their siblings) and regenerated replies (assistant
    nodes after the first) per period, stacked."""
    unit = freq_unit(freq, ("week", "month", "year"))
    frame = nodes_of(nodes)
    ax = get_ax(ax)
    title = f"Edited prompts and regenerated replies per {unit}"
    later = frame[(frame["sibling"] > 1) & frame["ts"].notna() & frame["role"].isin(["user", "assistant"])]
    if later.empty:
        return no_data(ax, title, "no prompt was edited and no reply regenerated (or none is dated)")
    what = later["role"].astype(str).map({"user": "edited prompts", "assistant": "regenerated replies"})
    names = list(BRANCH_COLORS)
    return _stacked(ax, later["ts"], what, names, [BRANCH_COLORS[n] for n in names], unit, tz, title, "nodes", **kwargs)


def _cycle(n: int) -> list[Any]:
    colors = palette()
    return [colors[i % len(colors)] for i in range(n)]
