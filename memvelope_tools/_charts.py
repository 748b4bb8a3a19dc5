"""The drawing behind :mod:`memvelope_tools.plot`, whose docstring says what each chart takes and shows.

The charts here draw what they are given: frames, the ``(label, document)`` pairs of Facts IR documents
already read, topics already found; :mod:`memvelope_tools.plot` reads them from any input first, so that
the report draws with this module without standing on the readers, topics and memory. The colours and
the font fallback live here too.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import textwrap
import unicodedata
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

import matplotlib as mpl
import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib import font_manager
from matplotlib.ticker import MaxNLocator, PercentFormatter

from ._chart_axes import date_axis as _date_axis
from ._chart_axes import freq_unit as _freq
from ._chart_axes import get_ax as _get_ax
from ._chart_axes import local as _local
from ._chart_axes import no_data as _no_data
from ._chart_axes import palette as _palette
from ._chart_axes import period_start as _period_start
from ._chart_axes import tidy as _tidy
from ._frames.columns import require_columns
from ._plural import count, plural
from ._spec import CATEGORIES, ROLES, SUBJECT_TYPES
from ._tags import IR_TAG
from .errors import FormatError

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ._topics import Topics

#: One colour per role, per fact category and per subject type, the same in every chart.
ROLE_COLORS: dict[str, str] = {"user": "#4C72B0", "assistant": "#DD8452"}
CATEGORY_COLORS: dict[str, str] = {
    "identity": "#4C72B0",
    "career": "#DD8452",
    "projects": "#55A868",
    "preferences": "#C44E52",
    "instructions": "#8172B3",
    "relationship": "#937860",
    "uncategorised": "#B0B0B0",
}
SUBJECT_COLORS: dict[str, str] = {
    "self": "#4C72B0",
    "person": "#DD8452",
    "company": "#55A868",
    "project": "#C44E52",
    "other": "#8172B3",
    "unknown": "#B0B0B0",
}
_LINE_COLOR = "#2F2F2F"
_UNCATEGORISED = "uncategorised"
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


# ---- fonts ---------------------------------------------------------------------------------------

#: The fonts that draw what matplotlib's default font lacks, tried in this order, each with the Debian
#: package that installs it. matplotlib shapes the text (right to left, joined Arabic letters, Indic
#: vowel signs); these fonts give it the glyphs.
FALLBACK_FONTS: tuple[tuple[str, str], ...] = (
    ("Noto Sans", "fonts-noto-core"),
    ("Noto Sans CJK JP", "fonts-noto-cjk"),
    ("Noto Sans Arabic", "fonts-noto-core"),
    ("Noto Sans Hebrew", "fonts-noto-core"),
    ("Noto Sans Devanagari", "fonts-noto-core"),
)
# Han, kana and hangul: the CJK font package has them; everything else is in the core package.
_CJK_RANGES = (
    (0x1100, 0x11FF),
    (0x2E80, 0x9FFF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7FF),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFFEF),
)
_warned_packages: set[str] = set()
#: How the one warning about letters no installed font has begins.
NO_FONT: Final = "no installed font has some letters"
#: matplotlib's warning for each letter its fonts lack, which that one warning stands in for.
GLYPH_MISSING: Final = r"Glyph \d+ .* missing from font"


def text_fonts(texts: Iterable[str]) -> list[str]:
    """The font families to draw ``texts`` with: matplotlib's own, then a fallback font for each
    script it lacks (see :data:`FALLBACK_FONTS`).

    Where no installed font has some of the letters, one warning per font package says which to install,
    and matplotlib's warning for each such letter is not shown from then on.

    Parameters
    ----------
    texts : iterable of str
        Every piece of text a chart is about to draw.

    Returns
    -------
    list of str
        A font family list for matplotlib's ``fontfamily``, its own families first.

    Examples
    --------
    >>> text_fonts(["plain words"]) == list(mpl.rcParams["font.family"])
    True
    """
    families = list(mpl.rcParams["font.family"])
    wanted = {ord(c) for text in texts for c in str(text) if not c.isspace() and unicodedata.category(c)[0] != "C"}
    missing = wanted - _charmap(font_manager.findfont(font_manager.FontProperties(family=families)))
    for family, _package in FALLBACK_FONTS:
        if not missing:
            break
        path = _font_file(family)
        if path is None:
            continue
        drawn = missing & _charmap(path)
        if drawn:
            families.append(family)
            missing -= drawn
    if missing:
        warnings.filterwarnings("ignore", GLYPH_MISSING, UserWarning)  # said once below, not once per letter
        packages = sorted({_package_for(c) for c in missing} - _warned_packages)
        if packages:
            _warned_packages.update(packages)
            sample = "".join(sorted(chr(c) for c in missing)[:8])
            warnings.warn(
                f"{NO_FONT} of this chart ({sample}...): they are drawn as boxes; "
                f"install {' and '.join(packages)} (apt-get install {' '.join(packages)}) or other Noto fonts",
                UserWarning,
                stacklevel=3,
            )
    return families


def fallback_fonts_installed() -> bool:
    """Whether every font of :data:`FALLBACK_FONTS` is installed.

    Returns
    -------
    bool
        True when charts can draw every script :data:`FALLBACK_FONTS` covers.

    Examples
    --------
    >>> isinstance(fallback_fonts_installed(), bool)
    True
    """
    return all(_font_file(family) is not None for family, _ in FALLBACK_FONTS)


def _package_for(code: int) -> str:
    return "fonts-noto-cjk" if any(lo <= code <= hi for lo, hi in _CJK_RANGES) else "fonts-noto-core"


@functools.cache
def _charmap(path: str) -> frozenset[int]:
    from matplotlib.ft2font import FT2Font

    return frozenset(FT2Font(path).get_charmap())


@functools.cache
def _font_file(family: str) -> str | None:
    """The file of ``family``, also when it was installed after matplotlib listed the fonts."""
    known = {entry.name: entry.fname for entry in font_manager.fontManager.ttflist if entry.style == "normal"}
    if family in known:
        regular = [
            e.fname for e in font_manager.fontManager.ttflist if e.name == family and e.weight in (400, "normal")
        ]
        return regular[0] if regular else known[family]
    fc_match = shutil.which("fc-match")
    if fc_match is None:
        return None
    found = subprocess.run(
        [fc_match, "--format=%{family}\\n%{file}", f"{family}:style=Regular"], capture_output=True, text=True
    )
    names, _, path = found.stdout.partition("\n")
    if found.returncode != 0 or family not in names.split(",") or not path:
        return None
    font_manager.fontManager.addfont(path)
    return path


# ---- inputs --------------------------------------------------------------------------------------


#: The periods :func:`activity_timeline` and :func:`facts_over_time` count by.
TIMELINE_FREQS = ("week", "month")
FACT_FREQS = ("year", "month")


def _messages(frame: pd.DataFrame) -> pd.DataFrame:
    require_columns(frame, ("ts", "role"), "a messages frame")
    return frame


def _facts(frame: pd.DataFrame) -> pd.DataFrame:
    require_columns(frame, ("category",), "a facts frame")
    return frame


def _undated(frame: pd.DataFrame) -> str:
    """What to say where no message can be placed in time."""
    if frame.empty:
        return "no messages"
    undated = int(frame["ts"].isna().sum())
    have = "has" if undated == 1 else "have"
    return f"no dated messages: {count(undated, 'message')} {have} no date"


# ---- messages ------------------------------------------------------------------------------------


def activity_timeline(
    messages: pd.DataFrame, *, ax: Axes | None = None, tz: str = "UTC", freq: str = "month", **kwargs: Any
) -> Axes:
    """Draw :func:`memvelope_tools.plot.activity_timeline` of a messages frame."""
    unit = _freq(freq, TIMELINE_FREQS)
    frame = _messages(messages)
    ax = _get_ax(ax)
    title = f"Messages per {unit}"
    dated = frame.loc[frame["ts"].notna()]
    if dated.empty:
        return _no_data(ax, title, _undated(frame))
    start = _period_start(_local(dated["ts"], tz), unit)
    periods = pd.date_range(start.min(), start.max(), freq="W-MON" if unit == "week" else "MS")
    role = dated["role"].astype(str)
    counts = pd.crosstab(start, role).reindex(index=periods, columns=list(ROLES), fill_value=0)
    conv_key = (
        dated["source"].astype(str) + "\x00" + dated["conv_index"].astype(str)
        if "source" in dated and "conv_index" in dated
        else dated["conversation_id"].astype(str)
    )
    active = conv_key.groupby(start.to_numpy()).nunique().reindex(periods, fill_value=0)

    x = mdates.date2num(periods.to_pydatetime())
    width = 5.5 if unit == "week" else 24.0
    bottom = np.zeros(len(periods))
    handles = []
    for name in ROLES:
        heights = counts[name].to_numpy(dtype=float)
        bars = ax.bar(
            x,
            heights,
            width=width,
            bottom=bottom,
            align="edge",
            color=ROLE_COLORS[name],
            label=f"{name} messages",
            **kwargs,
        )
        handles.append(bars)
        bottom += heights
    twin = ax.twinx()
    (line,) = twin.plot(
        x + width / 2,
        active.to_numpy(),
        color=_LINE_COLOR,
        marker="o",
        markersize=3.5,
        linewidth=1.4,
        label="conversations",
    )
    ax.right_ax = twin  # type: ignore[attr-defined]  # as pandas does for secondary_y
    twin.set_ylim(bottom=0, top=max(1, int(active.max())) * 1.3)  # headroom for the legend
    twin.yaxis.set_major_locator(MaxNLocator(integer=True))
    twin.set_ylabel("conversations")
    twin.spines["top"].set_visible(False)
    twin.legend(handles=[*handles, line], loc="upper left", frameon=False, ncols=3, fontsize="small")
    ax.set_ylim(top=max(1.0, float(bottom.max())) * 1.3)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(x[0] - width, x[-1] + 2 * width)
    _date_axis(ax, x, unit)
    ax.set_title(title if tz == "UTC" else f"{title} ({tz})")
    ax.set_xlabel(unit)
    ax.set_ylabel("messages")
    _tidy(ax)
    ax.spines["right"].set_visible(True)
    return ax


def activity_heatmap(
    messages: pd.DataFrame,
    *,
    ax: Axes | None = None,
    tz: str = "UTC",
    cmap: str = "YlGnBu",
    cbar: bool = True,
    **kwargs: Any,
) -> Axes:
    """Draw :func:`memvelope_tools.plot.activity_heatmap` of a messages frame."""
    frame = _messages(messages)
    ax = _get_ax(ax)
    title = f"Messages by weekday and hour ({tz})"
    local = _local(frame["ts"], tz)
    grid = np.zeros((7, 24), dtype=np.int64)
    np.add.at(grid, (local.dt.day_of_week.to_numpy(), local.dt.hour.to_numpy()), 1)
    image = ax.imshow(
        grid, aspect="auto", cmap=cmap, interpolation="nearest", vmin=0, vmax=max(1, int(grid.max())), **kwargs
    )
    ax.set_yticks(range(7), _WEEKDAYS)
    ax.set_xticks(range(0, 24, 3), [f"{h:02d}:00" for h in range(0, 24, 3)])
    ax.set_xticks(np.arange(-0.5, 24, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, 7, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=1)
    ax.tick_params(which="minor", length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_xlabel("hour of day")
    ax.set_title(title)
    if local.empty:
        ax.text(0.5, 0.5, _undated(frame), ha="center", va="center", transform=ax.transAxes)
    if cbar:
        ax.figure.colorbar(image, ax=ax, label="messages", fraction=0.05, pad=0.02)
    return ax


def conversation_lengths(
    data: pd.DataFrame,
    *,
    ax: Axes | None = None,
    tz: str = "UTC",
    bins: int = 20,
    log: bool | None = None,
    **kwargs: Any,
) -> Axes:
    """Draw :func:`memvelope_tools.plot.conversation_lengths` of a conversations or messages frame."""
    del tz
    if isinstance(data, pd.DataFrame) and "n_messages" not in data.columns and "position" in data.columns:
        keys = [c for c in ("source", "conv_index") if c in data.columns] or ["conversation_id"]
        lengths = data.groupby(keys, observed=True, dropna=False).size().to_numpy()
    else:
        convs = data
        require_columns(convs, ("n_messages",), "a conversations frame")
        lengths = convs["n_messages"].to_numpy(dtype=np.int64)
    ax = _get_ax(ax)
    title = "Messages per conversation"
    if lengths.size == 0:
        return _no_data(ax, title)
    median = float(np.median(lengths))
    top = int(lengths.max())
    if log is None:
        log = top >= 10 * max(median, 1.0)
    if log:
        edges = np.unique(np.geomspace(max(1, int(lengths.min())), top + 1, bins + 1))
    elif top - int(lengths.min()) + 1 <= bins:  # few distinct lengths: one bar per length
        edges = np.arange(int(lengths.min()) - 0.5, top + 1.0)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        edges = np.histogram_bin_edges(lengths, bins=bins)
    kwargs.setdefault("color", ROLE_COLORS["user"])
    kwargs.setdefault("edgecolor", "white")
    ax.hist(lengths, bins=edges.tolist(), **kwargs)
    if log:
        ax.set_xscale("log")
    ax.axvline(
        median,
        color=_LINE_COLOR,
        linestyle="--",
        linewidth=1.2,
        label=f"median {median:,g} {plural(median, 'message')}",
    )
    ax.legend(frameon=False)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(f"{title} ({count(lengths.size, 'conversation')})")
    ax.set_xlabel("messages in the conversation" + (" (log scale)" if log else ""))
    ax.set_ylabel("conversations")
    _tidy(ax)
    return ax


# ---- facts ---------------------------------------------------------------------------------------

#: Below this many facts, the fact charts and the report say how few were found and how to find more.
FEW_FACTS = 10
_NOTE_WIDTH = 70


def few_facts_note(n_facts: int) -> str | None:
    """What the fact charts and the report say about ``n_facts`` facts when they are few: how many were
    found and how to find more; None from :data:`FEW_FACTS` facts on."""
    if n_facts >= FEW_FACTS:
        return None
    found = "No facts were found" if n_facts == 0 else f"Only {count(n_facts, 'fact')} found"
    return (
        f"{found}. To find more, distil the export itself (an envelope does not hold the provider's memory) "
        "with memory turned on in ChatGPT (Settings, Personalization, Memory), or distil with a model: "
        "memvelope distill EXPORT --mode llm, with a local model server such as Ollama."
    )


def _facts_label(label: str, n_facts: int) -> str:
    """``label``, with the note on few facts below it, wrapped, when there are few."""
    note = few_facts_note(n_facts)
    return label if note is None else f"{label}\n{textwrap.fill(note, _NOTE_WIDTH)}"


def _no_facts(ax: Axes, title: str, said: str = "") -> Axes:
    """No facts to draw: ``said``, then how many facts there are (none or few) and how to find more."""
    return _no_data(ax, title, _facts_label(said, 0).lstrip("\n"))


def _category_labels(facts: pd.DataFrame) -> pd.Series:
    return facts["category"].astype("object").where(facts["category"].notna(), _UNCATEGORISED).astype(str)


def fact_categories(
    facts: pd.DataFrame, *, ax: Axes | None = None, tz: str = "UTC", hue: str | None = None, **kwargs: Any
) -> Axes:
    """Draw :func:`memvelope_tools.plot.fact_categories` of a facts frame."""
    del tz
    frame = _facts(facts)
    ax = _get_ax(ax)
    if frame.empty:
        return _no_facts(ax, "Facts per category (0 facts)")
    cats = _category_labels(frame)
    order = list(CATEGORIES) + ([_UNCATEGORISED] if (cats == _UNCATEGORISED).any() else [])
    totals = cats.value_counts().reindex(order, fill_value=0)
    # Most frequent on top: barh draws the first row at the bottom, so sort ascending.
    ranked = sorted(order, key=lambda c: (totals[c], -order.index(c)))
    if hue is None:
        table = pd.DataFrame({"facts": totals.reindex(ranked)})
        colors: dict[str, Any] = {"facts": None}
    elif hue in ("subject_type", "source"):
        if hue == "subject_type":
            keys = frame["subject_type"].astype("object").where(frame["subject_type"].notna(), "unknown")
            levels = [s for s in (*SUBJECT_TYPES, "unknown") if (keys == s).any()]
            colors = SUBJECT_COLORS
        else:
            keys = frame["source"].astype(str)
            levels = list(dict.fromkeys(keys))
            palette = _palette()
            colors = {s: palette[i % len(palette)] for i, s in enumerate(levels)}
        table = pd.crosstab(cats, keys.astype(str)).reindex(index=ranked, columns=levels, fill_value=0)
    else:
        raise ValueError(f"hue must be None, 'subject_type' or 'source', got {hue!r}")
    left = np.zeros(len(ranked))
    for column in table.columns:
        widths = table[column].to_numpy(dtype=float)
        bar_colors = [CATEGORY_COLORS[c] for c in ranked] if colors[column] is None else colors[column]
        ax.barh(ranked, widths, left=left, color=bar_colors, label=None if hue is None else str(column), **kwargs)
        left += widths
    for y, total in enumerate(left):
        ax.annotate(
            f"{int(total)}",
            (total, y),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize="small",
            color="0.25",
        )
    ax.set_xlim(0, max(1.0, float(left.max())) * 1.12)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if hue is not None and len(table.columns):  # no facts: no legend to draw
        ax.legend(
            title=hue.replace("_", " "), frameon=False, loc="lower right", prop={"family": text_fonts(table.columns)}
        )
    ax.set_title(f"Facts per category ({count(len(frame), 'fact')})")
    ax.set_xlabel(_facts_label("facts", len(frame)))
    ax.set_ylabel("category")
    _tidy(ax, grid_axis="x")
    return ax


def facts_over_time(
    facts: pd.DataFrame, *, ax: Axes | None = None, tz: str = "UTC", freq: str = "year", **kwargs: Any
) -> Axes:
    """Draw :func:`memvelope_tools.plot.facts_over_time` of a facts frame."""
    del tz
    unit = _freq(freq, FACT_FREQS)
    frame = _facts(facts)
    ax = _get_ax(ax)
    title = f"Facts per {unit} of their effective date"
    dates = frame["effective_date"].astype("object")
    width_needed = 4 if unit == "year" else 7
    usable = dates.notna() & (dates.astype(str).str.len() >= width_needed)
    undated = int(dates.isna().sum())
    coarse = int((dates.notna() & ~usable).sum())
    notes = []
    if coarse:
        notes.append(f"{coarse:,} dated only to a year")
    if undated:
        notes.append(f"{undated:,} without a date")
    keys = dates[usable].astype(str).str.slice(0, width_needed)
    cats = _category_labels(frame)[usable]
    if keys.empty and frame.empty:
        return _no_facts(ax, title)
    if keys.empty:
        return _no_data(ax, title, _facts_label(f"no facts dated to a {unit}: " + ", ".join(notes), len(frame)))
    order = [c for c in (*CATEGORIES, _UNCATEGORISED) if (cats == c).any()]
    table = pd.crosstab(keys, cats).reindex(columns=order, fill_value=0).sort_index()
    if unit == "year":
        x = table.index.astype(int).to_numpy(dtype=float)
        width = 0.8
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        starts = pd.to_datetime(table.index, format="%Y-%m")
        x = mdates.date2num(starts.to_pydatetime())
        width = 24.0
        _date_axis(ax, x, "month")
    bottom = np.zeros(len(table))
    for cat in order:
        heights = table[cat].to_numpy(dtype=float)
        ax.bar(x, heights, width=width, bottom=bottom, color=CATEGORY_COLORS[cat], label=cat, align="center", **kwargs)
        bottom += heights
    ax.set_ylim(top=max(1.0, float(bottom.max())) * 1.15)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(title="category", frameon=False, fontsize="small", title_fontsize="small", loc="upper left")
    ax.set_title(title + ("\n(not shown: " + ", ".join(notes) + ")" if notes else ""))
    ax.set_xlabel(_facts_label(unit, len(frame)))
    ax.set_ylabel("facts")
    _tidy(ax)
    return ax


# ---- archetype -----------------------------------------------------------------------------------


def _archetypes(
    documents: Sequence[tuple[str, Mapping[str, Any]]],
) -> list[tuple[str, dict[str, Any], int, str | None]]:
    """``(label, archetype block, number of facts, the document's mode)`` for each ``(label, document)``."""

    def one(label: str, doc: Mapping[str, Any]) -> tuple[str, dict[str, Any], int, str | None]:
        if "self_ratio" in doc and "meta" not in doc:
            return label, dict(doc), int(doc.get("facts") or 0), None
        if "archetype" not in doc or "facts" not in doc:
            raise FormatError(f"expected a Facts IR document ({IR_TAG}), found an envelope", reason="wrong-layer")
        meta = doc.get("meta")
        mode = meta.get("mode") if isinstance(meta, Mapping) else None
        n_facts = int(doc["archetype"].get("facts") or len(doc["facts"]))
        return label, dict(doc["archetype"]), n_facts, None if mode is None else str(mode)

    return [one(label, doc) for label, doc in documents]


def archetype_chart(
    ir: Sequence[tuple[str, Mapping[str, Any]]], *, ax: Axes | None = None, tz: str = "UTC", **kwargs: Any
) -> Axes:
    """Draw :func:`memvelope_tools.plot.archetype_chart` of ``(label, document)`` pairs, each document a
    Facts IR document or its ``archetype`` block."""
    del tz
    docs = _archetypes(ir)
    ax = _get_ax(ax)
    if not any(n_facts for _, _, n_facts, _ in docs):
        return _no_facts(ax, "Archetype (0 facts)")
    rows = ["self ratio", "belief ratio", *CATEGORIES]
    n = len(docs)
    height = 0.8 / n
    palette = _palette()
    y_base = np.arange(len(rows))[::-1].astype(float)  # first row on top
    reasons: list[str] = []
    for i, (label, arch, n_facts, mode) in enumerate(docs):
        cats = arch.get("categories")
        values: list[float | None] = [arch.get("self_ratio"), arch.get("belief_ratio")]
        for cat in CATEGORIES:
            values.append(None if cats is None or not n_facts else cats.get(cat, 0) / n_facts)
        y = y_base + (n - 1) / 2 * height - i * height
        color = ROLE_COLORS["user"] if n == 1 else palette[i % len(palette)]
        widths = [0.0 if v is None else float(v) for v in values]
        if any(v is None for v in values):
            reasons.append(_why_not_available(label if n > 1 else None, arch, n_facts, mode))
        legend = f"{label}: {arch.get('style') or 'no style'} ({count(n_facts, 'fact')}, {_entities(arch)})"
        ax.barh(y, widths, height=height * 0.92, color=color, label=legend, **kwargs)
        for yy, v in zip(y, values, strict=True):
            ax.annotate(
                "n/a" if v is None else f"{v:.0%}",
                (0.0 if v is None else v, yy),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize="x-small" if n > 2 else "small",
                color="0.25",
            )
    ax.set_yticks(y_base, rows)
    ax.axhline(y_base[1] - 0.5, color="0.7", linewidth=0.8)
    ax.set_xlim(0, 1.1)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    label = "share of facts" + "".join(f"\n{reason}" for reason in reasons)
    ax.set_xlabel(_facts_label(label, sum(n_facts for _, _, n_facts, _ in docs)))
    if n == 1:
        label, arch, n_facts, _ = docs[0]
        ax.set_title(
            f"{arch.get('style') or 'style: n/a'}\n{count(n_facts, 'fact')} · {_entities(arch)}",
            fontsize="medium",
            fontfamily=text_fonts([str(arch.get("style") or "")]),
        )
    else:
        ax.set_title("Archetypes side by side", fontsize="medium")
        legends = [str(text) for _, text in zip(*ax.get_legend_handles_labels(), strict=True)]
        ax.legend(
            frameon=False,
            prop={"size": "small", "family": text_fonts(legends)},
            loc="upper center",
            bbox_to_anchor=(0.5, -0.14),
        )
    _tidy(ax, grid_axis="x")
    return ax


def _why_not_available(label: str | None, arch: Mapping[str, Any], n_facts: int, mode: str | None) -> str:
    """Why some figures of an archetype are drawn as n/a."""
    who = f"{label}: " if label else ""
    if not n_facts:
        return f"{who}n/a: no facts to measure"
    missing = [name for name in ("style", "self_ratio", "belief_ratio", "categories") if arch.get(name) is None]
    made = f":\nits mode, {mode}, does not work {'it' if len(missing) == 1 else 'them'} out" if mode else ""
    return f"{who}n/a: the document leaves {', '.join(missing)} null{made}"


def _entities(arch: Mapping[str, Any]) -> str:
    value = arch.get("distinct_entities")
    return "distinct entities: n/a" if value is None else count(int(value), "distinct entity")


# ---- topics --------------------------------------------------------------------------------------

_FREQ_UNITS = {"W": "week", "M": "month", "MS": "month", "Q": "quarter", "QS": "quarter", "Y": "year", "YS": "year"}
_PERIOD_WIDTH = {"week": 5.5, "W": 5.5, "month": 24.0, "M": 24.0, "MS": 24.0, "quarter": 80.0, "Q": 80.0, "QS": 80.0}


def topic_colors(n: int) -> list[Any]:
    """One colour per topic, topic 0 first (tab20, repeating after twenty)."""
    cmap = plt.get_cmap("tab20")
    return [cmap(i % cmap.N) for i in range(n)]


def topics_over_time(
    topics: Topics, *, ax: Axes | None = None, tz: str = "UTC", freq: str = "month", **kwargs: Any
) -> Axes:
    """Each topic's share of the conversations (or messages) of each period, as stacked bars that
    fill 100 % in every period with any; the legend lists the topics, largest first.

    ``topics`` is what :func:`memvelope_tools.topics` returns. ``freq`` is ``week``, ``month``,
    ``quarter`` or ``year``, on the wall clock of ``tz``. Units without a time or a topic are left out.
    ``kwargs`` go to ``ax.bar``.
    """
    found = topics
    shares = found.over_time(freq, tz)
    ax = _get_ax(ax)
    title = f"Topics per {freq}: share of {found.unit}s"
    if shares.empty:
        undated = int(found.assignments["ts"].isna().sum())
        note = f"no dated {found.unit}s: {count(undated, found.unit)} without a date" if undated else "no data"
        return _no_data(ax, title, note)
    x = mdates.date2num(cast(pd.DatetimeIndex, shares.index).to_pydatetime())
    width = _PERIOD_WIDTH.get(freq, 330.0)
    bottom = np.zeros(len(shares))
    for color, label in zip(topic_colors(shares.shape[1]), shares.columns, strict=True):
        heights = shares[label].to_numpy(dtype=float)
        ax.bar(x, heights, width=width, bottom=bottom, align="edge", color=color, label=str(label), **kwargs)
        bottom += heights
    ax.set_ylim(0, 1)
    ax.set_xlim(x[0] - width / 2, x[-1] + 1.5 * width)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    _date_axis(ax, x, _FREQ_UNITS.get(freq, freq))
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
        prop={"size": "small", "family": text_fonts(map(str, shares.columns))},
        title="topic",
    )
    ax.set_title(title if tz == "UTC" else f"{title} ({tz})")
    ax.set_xlabel(freq)
    ax.set_ylabel(f"share of {found.unit}s")
    _tidy(ax)
    return ax


def topic_terms(topics: Topics, *, fig: Any = None, n_terms: int = 8, ncols: int = 4, **kwargs: Any) -> np.ndarray:
    """Small multiples: one horizontal bar chart per topic of its top ``n_terms`` terms by weight,
    the strongest on top, titled with the topic's number, label and size.

    Figure-level: draws into ``fig`` (a new figure sized to the grid when ``None``) and returns the
    array of Axes, one per topic in topic order. ``topics`` is what :func:`memvelope_tools.topics`
    returns. ``kwargs`` go to ``ax.barh``.
    """
    found = topics
    k = found.n_topics
    ncols = max(1, min(ncols, k))
    nrows = -(-k // ncols)
    if fig is None:
        fig = plt.figure(figsize=(3.3 * ncols, 0.25 * n_terms * nrows + 0.9 * nrows), layout="constrained")
    grid = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for extra in grid[k:]:
        extra.remove()
    sizes = found.assignments["topic"].value_counts()
    colors = topic_colors(k)
    fonts = text_fonts([*map(str, found.terms["term"]), *map(str, found.labels)])
    for t, ax in enumerate(grid[:k]):
        rows = found.terms.loc[found.terms["topic"] == t].sort_values("rank").head(n_terms)
        terms = [str(term) for term in rows["term"]][::-1]  # barh draws the first row at the bottom
        ax.barh(terms, rows["weight"].to_numpy(dtype=float)[::-1], color=colors[t], **kwargs)
        ax.set_title(
            f"{t}: {found.labels[t]}\n{count(int(sizes.get(t, 0)), found.unit)}", fontsize="small", fontfamily=fonts
        )
        ax.tick_params(axis="y", labelsize="small", labelfontfamily=fonts)
        ax.tick_params(axis="x", labelsize="x-small")
        _tidy(ax, grid_axis="x")
    fig.suptitle(f"Top terms of {count(k, 'topic')}")
    axes: np.ndarray = grid[:k]
    return axes


# ---- history across exports ------------------------------------------------------------------------

#: One colour per kind of change between exports.
CHANGE_COLORS: dict[str, str] = {"new": "#55A868", "grown": "#4C72B0", "edited": "#DD8452", "missing": "#C44E52"}


def _snapshots(data: pd.DataFrame | Mapping[str, Any]) -> pd.DataFrame:
    frame = data["snapshots"] if isinstance(data, Mapping) else data
    missing = [c for c in ("date", *CHANGE_COLORS) if c not in frame.columns]
    if missing:
        raise FormatError(
            f"expected the snapshots of a history (missing column(s) {', '.join(missing)})", reason="wrong-frame"
        )
    return frame


def history_changes(
    data: pd.DataFrame | Mapping[str, Any], *, ax: Axes | None = None, tz: str = "UTC", **kwargs: Any
) -> Axes:
    """Draw :func:`memvelope_tools.plot.history_changes` of a history's ``snapshots`` frame (or the history)."""
    snaps = _snapshots(data)
    ax = _get_ax(ax)
    title = "What each export changed"
    if snaps.empty:
        return _no_data(ax, title)
    x = np.arange(len(snaps))
    bottom = np.zeros(len(snaps))
    for change in ("new", "grown", "edited"):
        values = snaps[change].to_numpy(dtype=float)
        ax.bar(x, values, bottom=bottom, color=CHANGE_COLORS[change], label=change, **kwargs)
        bottom += values
    ax.bar(x, -snaps["missing"].to_numpy(dtype=float), color=CHANGE_COLORS["missing"], label="missing", **kwargs)
    ax.axhline(0, color=_LINE_COLOR, linewidth=0.8)
    dates = pd.to_datetime(snaps["date"], utc=True).dt.tz_convert(tz)
    ax.set_xticks(x, [f"{d:%Y-%m-%d}" for d in dates])
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_formatter(lambda value, _pos: f"{abs(value):g}")
    ax.set_ylabel("conversations (missing below the line)")
    ax.set_xlabel("export")
    ax.set_title(title)
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    _tidy(ax)
    return ax


# ---- what the provider remembered ----------------------------------------------------------------

_MEMORY_KIND_LABELS: dict[str, str] = {
    "saved": "saved memory",
    "snapshot": "memory snapshot entry",
    "about_user": "custom instructions: about you",
    "about_model": "custom instructions: how to answer",
    "claude_account": "Claude account memory",
    "claude_project": "Claude project memory",
    "cited": "memory ChatGPT cited",
}


def memory_timeline(
    frame: pd.DataFrame, kinds: Sequence[str], *, ax: Axes | None = None, tz: str = "UTC", **kwargs: Any
) -> Axes:
    """Draw :func:`memvelope_tools.plot.memory_timeline` from a memory frame; ``kinds`` orders its rows
    (:data:`memvelope_tools._memory.items.KINDS`)."""
    ax = _get_ax(ax)
    title = "What the provider remembered, and when"
    dated = frame[frame["ts"].notna()]
    undated = len(frame) - len(dated)
    if dated.empty:
        import textwrap

        notes = list(frame.attrs.get("notes") or [])
        if undated:
            notes.insert(0, f"{count(undated, 'item')}, none with a date to place")
        if not notes:
            return _no_data(ax, title)
        ax.set_title(title)
        text = "\n\n".join(textwrap.fill(note, 70) for note in notes)
        ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.35", fontsize="small")
        ax.set_xticks([])
        ax.set_yticks([])
        return ax
    kinds = [k for k in kinds if (dated["kind"] == k).any()]
    colors = _palette()
    first = _local(dated["first_seen"].fillna(dated["ts"]), tz)
    last = _local(dated["last_seen"].fillna(dated["ts"]), tz)
    start = _local(dated["ts"], tz)
    for row, kind in enumerate(kinds):
        mask = (dated["kind"] == kind).to_numpy()
        color = colors[row % len(colors)]
        x0 = mdates.date2num(first[mask].dt.tz_localize(None).to_numpy())
        x1 = mdates.date2num(last[mask].dt.tz_localize(None).to_numpy())
        for a, b in zip(x0, x1, strict=True):
            if b > a:
                ax.plot([a, b], [row, row], color=color, alpha=0.45, linewidth=2, solid_capstyle="round")
        xs = mdates.date2num(start[mask].dt.tz_localize(None).to_numpy())
        ax.scatter(xs, np.full(len(xs), row), color=color, zorder=3, s=28, **kwargs)
    ax.set_yticks(range(len(kinds)), [_MEMORY_KIND_LABELS[k] for k in kinds])
    ax.set_ylim(-0.6, len(kinds) - 0.4)
    ax.invert_yaxis()
    shown = pd.concat([first, last, start]).dropna().dt.tz_localize(None).to_numpy()
    _date_axis(ax, mdates.date2num(shown), "week")
    ax.set_title(title + (f"\n(not shown: {undated:,} without a date)" if undated else ""))
    _tidy(ax, "x")
    return ax
