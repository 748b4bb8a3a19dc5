"""What every chart module shares: wall-clock periods in a time zone, the date axis, the look of an Axes.

The chart modules (:mod:`memvelope_tools._charts` and the charts of the whole export) draw with these, so
that periods, ticks and empty charts look the same in every chart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.ticker import FuncFormatter

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: The names a ``freq`` argument may take, and the period each means.
FREQS: dict[str, str] = {
    "W": "week",
    "week": "week",
    "weekly": "week",
    "M": "month",
    "MS": "month",
    "month": "month",
    "monthly": "month",
    "Y": "year",
    "YS": "year",
    "year": "year",
    "yearly": "year",
}


def local(ts: pd.Series, tz: str) -> pd.Series:
    """Wall-clock times in ``tz`` (tz-naive), null timestamps dropped."""
    ts = ts.dropna()
    if ts.dt.tz is None:
        ts = ts.dt.tz_localize("UTC")
    shown: pd.Series = ts.dt.tz_convert(tz).dt.tz_localize(None)
    return shown


def freq_unit(freq: str, allowed: Sequence[str]) -> str:
    """The period ``freq`` names (``week``, ``month``, ``year``); ValueError unless it is one of ``allowed``."""
    unit = FREQS.get(freq)
    if unit is None or unit not in allowed:
        raise ValueError(f"freq must be one of {', '.join(allowed)}, got {freq!r}")
    return unit


def period_start(times: pd.Series, unit: str) -> pd.Series:
    """The start of the week (Monday), month or year each of the wall-clock ``times`` falls in."""
    code = {"week": "W-SUN", "month": "M", "year": "Y"}[unit]
    start: pd.Series = times.dt.to_period(code).dt.start_time
    return start


def palette() -> list[Any]:
    """The colours of matplotlib's ``tab10`` colormap, for one series per document."""
    cmap = plt.get_cmap("tab10")
    assert isinstance(cmap, ListedColormap)
    return list(cast("Sequence[Any]", cmap.colors))  # RGB tuples


def get_ax(ax: Axes | None) -> Axes:
    """``ax``, or the current Axes when None."""
    return plt.gca() if ax is None else ax


def no_data(ax: Axes, title: str, note: str = "no data") -> Axes:
    """``ax`` with ``title`` and, in place of a chart, ``note`` saying why there is none."""
    ax.set_title(title)
    ax.text(0.5, 0.5, note, ha="center", va="center", transform=ax.transAxes, color="0.4", wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def tidy(ax: Axes, grid_axis: Literal["both", "x", "y"] = "y") -> None:
    """No top or right spine, a light grid behind the data."""
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.grid(axis=grid_axis, color="0.88", linewidth=0.8)
    ax.set_axisbelow(True)


_MAX_DATE_TICKS = 8
_MONTH_STEPS = (1, 3, 6, 12, 24, 60, 120, 240, 600)  # months between ticks: 3 puts them on Jan, Apr, Jul, Oct
_WEEK_STEPS = (1, 2, 4)


def date_axis(ax: Axes, x: np.ndarray, unit: str) -> None:
    """Ticks at the starts of periods (weeks, months, quarters, years), as many as fit, labelled as
    dates, whatever the span of ``x`` (the periods' starts, as matplotlib dates)."""
    first, last = mdates.num2date(float(np.min(x))), mdates.num2date(float(np.max(x)))
    months = (last.year - first.year) * 12 + last.month - first.month + 1
    weeks = (float(np.max(x)) - float(np.min(x))) / 7 + 1
    smallest = {"week": 0, "month": 1, "quarter": 3, "year": 12}.get(unit, 1)
    locator: mdates.DateLocator
    if unit == "week" and weeks <= _MAX_DATE_TICKS * _WEEK_STEPS[-1]:
        step = next(s for s in _WEEK_STEPS if weeks / s <= _MAX_DATE_TICKS)
        locator = mdates.WeekdayLocator(byweekday=mdates.MO, interval=step)
        fmt, first_fmt = "%d %b", "%d %b %Y"
    else:
        step = next((s for s in _MONTH_STEPS if s >= smallest and months / s <= _MAX_DATE_TICKS), _MONTH_STEPS[-1])
        if step < 12:
            locator = mdates.MonthLocator(bymonth=range(1, 13, step))
            fmt, first_fmt = "%b", "%b %Y"
        else:
            locator = mdates.YearLocator(base=step // 12)
            fmt = first_fmt = "%Y"

    def label(value: float, pos: int | None) -> str:
        day = mdates.num2date(value)
        return str(day.strftime(first_fmt if pos == 0 or (day.month == 1 and day.day <= 7) else fmt))

    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(FuncFormatter(label))
