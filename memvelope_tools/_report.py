"""One self-contained HTML page about a chat history: charts, summary tables, the longest conversations.

The page opens from disk with no server and no network: charts are PNG ``data:`` URIs, the CSS is
inline, and there is no script at all (a Content-Security-Policy meta tag forbids scripts, so even
text that slipped through unescaped could not run). Every piece of text that came from a document
(titles, messages, file names, fact styles) is HTML-escaped.
"""

from __future__ import annotations

import base64
import functools
import gc
import html
import io
import os
import warnings
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pandas as pd

from . import __version__
from ._atomic import atomic_write
from ._convert.log import ConversionLog
from ._convert.zips import kept_open
from ._frames.facts import facts_frame
from ._gc import gc_paused
from ._load import LoadSource, open_input
from ._plural import count
from ._pool import give_back_memory, lean_pool
from ._providers import registry
from ._report_data import Gather, gathered_of
from ._report_data import snippet as _snippet
from ._sources import Input, resolve
from ._stream import stream
from ._topic_units import Counted
from .errors import FormatError, MemvelopeError, TopicsError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["build_report", "memory_section", "usage_section", "write_report"]

CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)
_DPI = 100

Document = dict[str, Any]
Labelled = list[tuple[str, Document]]  # (label, document) pairs of one layer

_CSS = """
body{margin:0;background:#f6f7f9;color:#1f2328;font:15px/1.5 system-ui,-apple-system,"Segoe UI",
Roboto,"DejaVu Sans",sans-serif}
main{max-width:1100px;margin:0 auto;padding:24px 28px 48px}
h1{font-size:28px;margin:8px 0 4px}h2{font-size:20px;margin:32px 0 10px;border-bottom:1px solid #d8dde3;
padding-bottom:4px}
.lead{color:#57606a;margin:0 0 8px}
table{border-collapse:collapse;width:100%;background:#fff;font-size:14px}
th,td{border-bottom:1px solid #e6e9ed;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}
td.d{white-space:nowrap}td.snip{color:#57606a;max-width:380px;overflow-wrap:anywhere}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));gap:16px}
figure{margin:0;background:#fff;border:1px solid #e6e9ed;border-radius:6px;padding:8px}
figure img{width:100%;height:auto;display:block}figcaption{color:#57606a;font-size:13px;padding:4px}
footer{margin-top:40px;color:#6e7781;font-size:13px}
"""


def _e(value: Any) -> str:
    """Escape any value for HTML text or a quoted attribute."""
    return html.escape("" if value is None or value is pd.NA else str(value), quote=True)


def _check_tz(tz: str) -> None:
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise MemvelopeError(
            f"unknown time zone {tz!r} (use an IANA name such as Europe/Berlin)", reason="bad-tz"
        ) from None


def _chart(draw: Callable[[Any], Any], caption: str, size: tuple[float, float] = (7.2, 3.9)) -> str:
    return _figure(lambda fig: draw(fig.add_subplot()), caption, size)


def _figure(draw: Callable[[Figure], Any], caption: str, size: tuple[float, float]) -> str:
    with gc_paused():
        from matplotlib.figure import Figure

        fig = Figure(figsize=size, dpi=_DPI, layout="constrained")
        draw(fig)
        png = _png(fig)
        del fig
        # A drawn figure is a web of reference cycles, all made while the collector was paused: collecting
        # the youngest generation frees it now, without going through every object the report holds.
        gc.collect(0)
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure><img alt="{_e(caption)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
    )


#: zlib's level for the charts: as small as savefig's level 6 for a report's charts, in two thirds of the time.
_PNG_LEVEL = 3


def _png(fig: Figure) -> bytes:
    """The figure as PNG bytes, drawn once (savefig draws twice: once to lay out, once to render): the pixels
    ``fig.savefig(format="png")`` gives, and no alpha channel when every pixel is opaque, as a report's are."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    from . import _charts as charts

    canvas: Any = FigureCanvasAgg(fig)  # its draw and buffer are untyped
    with warnings.catch_warnings():
        # Text in a script the installed fonts lack (say Japanese) is drawn as boxes; no need to warn.
        warnings.filterwarnings("ignore", charts.GLYPH_MISSING, UserWarning)
        canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    image = Image.frombuffer("RGBA", (rgba.shape[1], rgba.shape[0]), rgba, "raw", "RGBA", 0, 1)
    if rgba[..., 3].min() == 255:
        image = image.convert("RGB")
    buf = io.BytesIO()
    image.save(buf, format="png", dpi=(fig.dpi, fig.dpi), compress_level=_PNG_LEVEL)
    return buf.getvalue()


def _let_go() -> None:
    """Free what is garbage (drawn figures hold reference cycles, freed only by a collection) and give the
    memory back to the system, before the next part of the page loads more."""
    gc.collect()
    give_back_memory()


def _table(header: Sequence[str], rows: Sequence[Sequence[tuple[str, Any]]]) -> str:
    """``rows`` are sequences of ``(css class, value)``; values are escaped here."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f'<td class="{cls}">{_e(v)}</td>' if cls else f"<td>{_e(v)}</td>" for cls, v in row) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _day(ts: Any, tz: str) -> str:
    return "" if pd.isna(ts) else pd.Timestamp(ts).tz_convert(tz).strftime("%Y-%m-%d")


def _inputs(
    sources: Sequence[LoadSource], labels: Sequence[str] | None, converted: Sequence[bool] | None
) -> tuple[list[Input], list[bool]]:
    """Each source resolved once, and whether it is shown as an export converted."""
    if converted is not None and len(converted) != len(sources):
        raise ValueError(f"converted= has {count(len(converted), 'value')} for {count(len(sources), 'document')}")
    found = resolve(list(sources), "any", list_means="documents", labels=labels, caller="the report")
    return found, list(converted) if converted is not None else [item.kind == "export" for item in found]


def build_report(
    sources: Sequence[LoadSource],
    *,
    tz: str = "UTC",
    top: int = 20,
    title: str = "Memvelope report",
    labels: Sequence[str] | None = None,
    dedupe: bool = False,
    converted: Sequence[bool] | None = None,
    memory: Sequence[str | os.PathLike[str]] | None = None,
    progress: bool | None = False,
    on_conversion: Callable[[ConversionLog, str], object] | None = None,
) -> str:
    """The report page for envelopes, Facts IR documents and exports (anything
    :func:`~memvelope_tools._load` takes; each item of ``sources`` is one document), as a string.
    ``tz`` is the time zone dates and hours are shown in; ``top`` how many of the longest
    conversations are listed; ``labels`` names the documents (default: file names); ``dedupe``
    drops repeated conversations as the frames do; ``converted`` says which of ``sources`` are
    exports already converted in memory, shown as such (default: the inputs that are exports); ``memory``
    names the exports read for the sections only the export itself can give, how it was used and what the
    provider remembered (default: each item of ``sources`` that is the path of an export); one among
    ``sources`` is read once, in the pass that converts it, another in one pass of its own. ``progress``
    shows a bar while an export is converted; ``on_conversion`` is called with what each export's
    conversion read and left out, and its provider.

    Each input is resolved once and read a batch of conversations at a time: what the page shows is
    gathered from each batch (see :mod:`memvelope_tools._report_data`) and the batch let go; an export's
    nodes and memory are read in the same pass as its conversations.
    """
    _check_tz(tz)
    # An export's zip is opened once, for its conversations and its memory alike; Arrow allocates from the
    # streams' pool until the page is made, as the page holds no table.
    with kept_open(), lean_pool():
        return _build(list(sources), tz, top, title, labels, dedupe, converted, memory, progress, on_conversion)


def _build(
    sources: list[Any],
    tz: str,
    top: int,
    title: str,
    labels: Sequence[str] | None,
    dedupe: bool,
    converted: Sequence[bool] | None,
    memory: Sequence[Any] | None,
    progress: bool | None,
    on_conversion: Callable[[ConversionLog, str], object] | None,
) -> str:
    history, sources = _history_input(sources)
    inputs, shown_converted = _inputs(sources, labels, converted) if history is None else ([], [])
    if not inputs and history is None:
        raise FormatError("no documents to report on", reason="no-input")
    named = None if memory is None else _resolved_exports(memory)
    envs: list[tuple[str, str]] = []  # (label, provider)
    exports: set[str] = set()
    irs: Labelled = []
    gather = Gather()
    passes: list[_ExportRead] = []  # what each export given by path showed of itself while it was converted
    for found, export in zip(inputs, shown_converted, strict=True):
        if found.kind == "ir":
            irs.append((found.label, open_input(found, progress=False)))
            continue
        log = ConversionLog()
        gather.begin(found.label)
        read = _ExportRead(found) if found.files() is not None and (named is None or _named(found, named)) else None
        provider = stream(found, gather, progress=progress, log=log, whole=None if read is None else read.passing)
        if read is not None:
            read.provider = provider
            passes.append(read)
        if log.parts and on_conversion is not None:
            on_conversion(log, provider)
        envs.append((found.label, provider))
        if export:
            exports.add(found.label)
    data = gathered_of(history["messages"], history["conversations"]) if history is not None else None
    if envs:
        data = gather.finish(dedupe=dedupe)
    del gather
    give_back_memory()
    # What only the export itself gives (how it was used, what the provider remembered) is read before
    # topics loads its model, so that the two never hold memory at once; its sections still come last.
    if named is not None:
        passes = _exports_read(named, passes)
    read_whole = [read.usage(tz) for read in passes]
    _let_go()
    read_whole += [read.memory(tz) for read in passes]
    del passes
    _let_go()
    # Charts are drawn with libraries loaded only now, so that their memory and the stream's never add up.
    with gc_paused():
        from . import _charts as charts

    facts = facts_frame([d for _, d in irs], sources=[label for label, _ in irs]) if irs else None
    msgs, convs = (data.msgs, data.convs) if data is not None else (None, None)
    parts = [f"<h1>{_e(title)}</h1>"]
    parts.append(f'<p class="lead">{_e(_lead(msgs, convs, facts, tz))}</p>')
    if history is not None:
        parts.append(_history_section(history, tz))
    else:
        parts.append("<h2>Documents</h2>" + _documents_table(envs, irs, convs, msgs, tz, exports))
    if data is not None and msgs is not None and convs is not None:
        parts.append(
            '<h2>Activity</h2><div class="charts">'
            + _chart(
                lambda ax: charts.activity_timeline(msgs, ax=ax, tz=tz),
                "Messages per month by role; the line counts conversations active that month.",
            )
            + _chart(
                lambda ax: charts.activity_heatmap(msgs, ax=ax, tz=tz),
                f"When messages were sent: weekday by hour of day, in {tz}.",
            )
            + _chart(
                lambda ax: charts.conversation_lengths(convs, ax=ax),
                "How long conversations are: messages per conversation.",
            )
            + "</div>"
        )
        top_n = count(min(top, len(convs)), "conversation")
        parts.append(f"<h2>Top {top_n} by length</h2>" + _top_table(convs, data.openings, top, tz))
        words = data.words
        del data, msgs, convs  # the frames are shown: topics loads its model without them
        _let_go()
        parts.append("<h2>Topics</h2>" + _topics_section(words, tz))
    if facts is not None:
        by_label = {label: doc for label, doc in irs}
        few = charts.few_facts_note(len(facts))
        parts.append(
            "<h2>Facts</h2>"
            + ("" if few is None else f'<p class="lead">{_e(few)}</p>')
            + '<div class="charts">'
            + _chart(
                lambda ax: charts.fact_categories(facts, ax=ax, hue="subject_type"),
                "Facts per category, split by who they are about.",
            )
            + _chart(
                lambda ax: charts.facts_over_time(facts, ax=ax), "Facts per year of their effective date, by category."
            )
            + _chart(
                lambda ax: charts.archetype_chart(list(by_label.items()), ax=ax),
                "Archetype: how much is about the user, standing beliefs, and the category mix.",
                size=(7.2, 4.6 if len(irs) > 1 else 3.9),
            )
            + "</div>"
        )
        parts.append("<h2>Archetypes</h2>" + _archetype_table(irs))
    parts += read_whole
    parts.append(
        f"<footer>Made with memvelope_tools {_e(__version__)}. A static page: no scripts, no "
        "network requests; every chart is embedded.</footer>"
    )
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>\n<body><main>"
    )
    return "\n".join([head, *parts, "</main></body></html>\n"])  # joined once: the page is copied once


def write_report(sources: Sequence[LoadSource], path: str | os.PathLike[str], **options: Any) -> None:
    """Build the report (see :func:`build_report`) and write it to ``path`` atomically, as UTF-8."""
    atomic_write(path, build_report(sources, **options).encode("utf-8"))


def _lead(msgs: pd.DataFrame | None, convs: pd.DataFrame | None, facts: pd.DataFrame | None, tz: str) -> str:
    bits = []
    if convs is not None and msgs is not None:
        bits.append(f"{count(len(convs), 'conversation')}, {count(len(msgs), 'message')}")
        dated = msgs["ts"].dropna()
        if not dated.empty:
            bits.append(f"from {_day(dated.min(), tz)} to {_day(dated.max(), tz)}")
    if facts is not None:
        bits.append(count(len(facts), "fact"))
    return ", ".join(bits) + f". Dates and hours in {tz}."


def _documents_table(
    envs: list[tuple[str, str]],
    irs: Labelled,
    convs: pd.DataFrame | None,
    msgs: pd.DataFrame | None,
    tz: str,
    exports: Collection[str] = (),
) -> str:
    rows = []
    for label, provider in envs:
        assert convs is not None and msgs is not None
        m = msgs[msgs["source"] == label]
        roles = m["role"].value_counts()
        n_conv = int((convs["source"] == label).sum())
        span = f"{_day(m['ts'].min(), tz)} – {_day(m['ts'].max(), tz)}" if m["ts"].notna().any() else ""
        rows.append(
            [
                ("", label),
                ("", "export (converted)" if label in exports else "envelope"),
                ("", provider),
                ("n", f"{n_conv:,}"),
                ("n", f"{len(m):,}"),
                ("n", f"{int(roles.get('user', 0)):,}"),
                ("n", f"{int(roles.get('assistant', 0)):,}"),
                ("d", span),
                ("n", ""),
            ]
        )
    for label, doc in irs:
        rows.append(
            [
                ("", label),
                ("", "facts IR"),
                ("", doc["meta"]["provider"]),
                ("n", ""),
                ("n", ""),
                ("n", ""),
                ("n", ""),
                ("", ""),
                ("n", f"{len(doc['facts']):,}"),
            ]
        )
    return _table(
        ["document", "layer", "provider", "conversations", "messages", "user", "assistant", "dates", "facts"], rows
    )


def _top_table(convs: pd.DataFrame, openings: dict[tuple[str, int], str], top: int, tz: str) -> str:
    """The longest conversations, each with the snippet of its first user message (``openings``, by
    ``source`` and ``conv_index``); the document of each only when there are several."""
    ranked = convs.sort_values(["n_messages", "chars"], ascending=False, kind="stable").head(max(0, top))
    several = convs["source"].nunique() > 1
    rows = []
    for rank, row in enumerate(ranked.itertuples(index=False), start=1):
        opening = openings.get((str(row.source), int(cast("int", row.conv_index))))
        rows.append(
            [
                ("n", rank),
                ("", row.title if row.title else "(untitled)"),
                *([("d", row.source)] if several else []),
                ("n", f"{row.n_messages:,}"),
                ("n", f"{row.chars:,}"),
                ("d", _day(row.first_ts, tz)),
                ("d", _day(row.last_ts, tz)),
                ("snip", opening or ("(no user message)" if opening is None else "(no text)")),
            ]
        )
    header = ["#", "title", *(["document"] if several else []), "messages", "characters", "first", "last"]
    return _table([*header, "opening message"], rows)


def _archetype_table(irs: Labelled) -> str:
    def ratio(v: Any) -> str:
        return "n/a" if v is None else f"{v:.0%}"

    rows = []
    for label, doc in irs:
        a = doc["archetype"]
        rows.append(
            [
                ("", label),
                ("", a.get("style") or "n/a"),
                ("n", a.get("facts")),
                ("n", ratio(a.get("self_ratio"))),
                ("n", ratio(a.get("belief_ratio"))),
                ("n", "n/a" if a.get("distinct_entities") is None else a["distinct_entities"]),
                ("", doc["meta"].get("mode")),
            ]
        )
    return _table(["document", "style", "facts", "self ratio", "belief ratio", "distinct entities", "mode"], rows)


def _topics_section(counted: Counted, tz: str) -> str:
    from . import _charts as charts
    from ._topics import topics

    give_back_memory()  # before scikit-learn is loaded (each chart drawn so far was freed once drawn)
    try:
        found = topics(counted)  # as many as topics() finds by default
    except TopicsError as exc:
        return f'<p class="lead">No topics: {_e(exc.msg)}.</p>'
    give_back_memory()  # what finding them used, before they are drawn
    sizes = found.assignments["topic"].value_counts()
    assigned = int(sizes.sum()) or 1
    rows = []
    for t, label in found.labels.items():
        words = found.terms.loc[found.terms["topic"] == t, "term"]
        rows.append(
            [
                ("n", t),
                ("", label),
                ("n", f"{int(sizes.get(t, 0)):,}"),
                ("n", f"{int(sizes.get(t, 0)) / assigned:.0%}"),
                ("snip", ", ".join(map(str, words))),
            ]
        )
    k = found.n_topics
    return (
        f'<p class="lead">{count(k, "topic")} found in the conversations\' words (titles and messages, without code, '
        "URLs and numbers); each conversation counts for its main topic.</p>"
        '<div class="charts">'
        + _chart(
            lambda ax: charts.topics_over_time(found, ax=ax, tz=tz, freq="quarter"),
            "Each topic's share of the conversations of each quarter.",
            size=(7.2, 4.2),
        )
        + _figure(
            lambda fig: charts.topic_terms(found, fig=fig, n_terms=6, ncols=4),
            "The top terms of each topic.",
            size=(9.6, 1.9 * -(-k // 4) + 0.6),
        )
        + "</div>"
        + _table(["#", "topic", "conversations", "share", "top terms"], rows)
    )


# ---- history across exports ----------------------------------------------------------------------


def _history_input(sources: list[Any]) -> tuple[dict[str, pd.DataFrame] | None, list[Any]]:
    """The history a history folder holds when ``sources`` is one, and the sources left to load."""
    from ._history.folder import read_history
    from ._sources import is_history_folder

    folders = [s for s in sources if isinstance(s, str | os.PathLike) and is_history_folder(s)]
    if not folders:
        return None, sources
    if len(sources) > 1:
        raise FormatError("a history folder is reported on its own: give it as the only input", reason="bad-source")
    return read_history(folders[0]), []


def _history_section(history: dict[str, pd.DataFrame], tz: str) -> str:
    """The exports a history folder was built from, what each changed, and what the provider no longer has."""
    from . import _charts as charts

    snaps, convs, msgs = history["snapshots"], history["conversations"], history["messages"]
    rows = [
        [
            ("d", _day(row["date"], tz)),
            ("", row["source"]),
            ("", row["provider"]),
            ("", row["date_source"]),
            ("n", f"{row['conversations']:,}"),
            ("n", f"{row['messages']:,}"),
            *[("n", f"{row[k]:,}") for k in ("new", "grown", "edited", "missing")],
        ]
        for row in snaps.to_dict("records")
    ]
    table = _table(
        ["export", "source", "provider", "dated by", "conversations", "messages", "new", "grown", "edited", "missing"],
        rows,
    )
    status = msgs["status"].value_counts()
    gone = convs[convs["status"] == "deleted-upstream"].sort_values("last_seen", ascending=False)
    edited, deleted_msgs = int(status.get("edited-away", 0)), int(status.get("deleted-upstream", 0))
    lost = (
        f"{count(edited, 'message')} {'was' if edited == 1 else 'were'} edited away and "
        f"{deleted_msgs:,} {'is' if deleted_msgs == 1 else 'are'} in {count(len(gone), 'conversation')} deleted "
        "upstream: the provider's latest export no longer has them; this history keeps them."
    )
    deleted = ""
    if len(gone):
        deleted = "<h3>Deleted upstream</h3>" + _table(
            ["conversation", "messages", "first seen", "last seen"],
            [
                [
                    ("", row["title"] if isinstance(row["title"], str) and row["title"] else "(untitled)"),
                    ("n", f"{row['n_messages']:,}"),
                    ("d", _day(row["first_seen"], tz)),
                    ("d", _day(row["last_seen"], tz)),
                ]
                for row in gone.head(20).to_dict("records")
            ],
        )
    return (
        f"<h2>History across {count(len(snaps), 'export')}</h2>"
        + _chart(
            lambda ax: charts.history_changes(snaps, ax=ax, tz=tz),
            "Conversations each export added, grew and edited, and those missing from it, against the history before.",
        )
        + table
        + f"<p>{_e(lost)}</p>"
        + deleted
    )


# ---- how the export was used ---------------------------------------------------------------------


def usage_section(export: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Input, *, tz: str = "UTC") -> str:
    """The report's section "How you used it" for one export, as HTML: what its nodes say beyond the prose.

    Parameters
    ----------
    export
        The export (a path, the paths of its parts, or the export as the resolver found it), read once for
        its nodes and their inventory
        (:func:`memvelope_tools.nodes_frame`, :func:`memvelope_tools.inventory`).
    tz
        The time zone months are shown in.

    Returns
    -------
    str
        An ``<h2>`` section: the branches in a sentence, charts of the models, the features and tools used
        and the branches by month, and tables of the nodes by kind, the models and the tools, every name
        escaped like every text in the report.

    Raises
    ------
    ConversionError
        When the export cannot be read.

    Examples
    --------
    >>> html = usage_section("chatgpt-export.zip")  # doctest: +SKIP
    """
    from ._frames.columns import NODE_COLUMNS, to_pandas
    from ._whole.export import export_input
    from ._whole.inventory import nodes_and_inventory

    table, found = nodes_and_inventory(export_input(export, "the report"), progress=False)
    nodes = to_pandas(table, NODE_COLUMNS, None)
    del table
    give_back_memory()  # what reading the export left, before the charts are drawn
    return _usage(nodes, found, tz)


def _usage(nodes: pd.DataFrame, found: dict[str, Any], tz: str) -> str:
    """The section of :func:`usage_section`, of an export's nodes (those :func:`memvelope_tools._usage_charts.charted`
    keeps, or all) and its inventory."""
    from . import _usage_charts as usage

    branches = found["branches"]
    lead = (
        f"Read from the export, not from the envelope: its {count(found['nodes'], 'message node')} in "
        f"{count(found['conversations'], 'conversation')}, on every branch. You edited "
        f"{count(branches['edited_prompts'], 'prompt')} and regenerated "
        f"{count(branches['regenerated_replies'], 'reply')}; the envelope leaves out "
        f"{count(branches['abandoned_nodes'], 'node')} on abandoned branches."
    )
    charts: list[tuple[Callable[..., Any], dict[str, Any], str]] = [
        (usage.models_over_time, {}, "Which models answered: assistant nodes per month, by model."),
        (usage.features_over_time, {}, "What was used besides talking: nodes per month by kind."),
        (usage.branching, {}, "Prompts edited and replies regenerated, per month."),
    ]
    if found["tools"]:
        charts.insert(2, (usage.features_over_time, {"by": "tool"}, "Tool calls per month, by tool."))
    drawn = "".join(_chart(functools.partial(_draw, fn, nodes, tz, kw), caption) for fn, kw, caption in charts)
    counted = [
        (["kind of node", "nodes"], list(found["kinds"].items())),
        (["model", "assistant nodes"], list(found["models"].items())[:12]),
        (["tool", "calls"], list(found["tools"].items())[:12]),
    ]
    tables = "".join(_table(head, [[("", k), ("n", f"{n:,}")] for k, n in rows]) for head, rows in counted if rows)
    return (
        f"<h2>How you used it: {_e(registry.name(found['provider']))}</h2>"
        f'<p class="lead">{_e(lead)}</p><div class="charts">{drawn}</div>{tables}'
    )


def _draw(draw: Callable[..., Any], nodes: pd.DataFrame, tz: str, options: dict[str, Any], ax: Any) -> Any:
    return draw(nodes, ax=ax, tz=tz, **options)


# ---- what the provider remembered ----------------------------------------------------------------

_MEMORY_KINDS = {
    "saved": "saved memory",
    "snapshot": "memory snapshot",
    "about_user": "custom instructions: about you",
    "about_model": "custom instructions: how to answer",
    "claude_account": "account memory",
    "claude_project": "project memory",
    "cited": "memory ChatGPT cited",
}


def memory_section(
    export: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Input, *, tz: str = "UTC"
) -> str:
    """The report's section "What ChatGPT / Claude remembers about you" for one export, as HTML.

    Parameters
    ----------
    export
        The export (a path, the paths of its parts, or the export as the resolver found it), read as
        :func:`memvelope_tools.memory_frame` reads it.
    tz
        The time zone dates are shown in.

    Returns
    -------
    str
        An ``<h2>`` section: a timeline chart and a table of the remembered items, oldest first, each text
        shortened to a snippet and escaped like every text in the report; or, when the export keeps no
        memory records, the note that says so.

    Raises
    ------
    ConversionError
        When the export cannot be read.

    Examples
    --------
    >>> html = memory_section("chatgpt-export.zip")  # doctest: +SKIP
    """
    from ._memory.frame import items_frame
    from ._memory.read import read_memory_of

    given: list[Any] = [export] if isinstance(export, str | os.PathLike | Input) else list(export)
    # Read in this process: beside the threads the report runs, worker processes would each start a clean
    # interpreter, costing more time and memory than they save.
    return _memory(items_frame(read_memory_of(given, None, False, workers=1)), tz)


def _memory(frame: pd.DataFrame, tz: str) -> str:
    """The section of :func:`memory_section`, of the export's memory frame."""
    from . import _charts as charts
    from ._memory.items import KINDS

    name = registry.name(frame.attrs.get("provider"))
    head = f"<h2>What {_e(name)} remembers about you</h2>"
    caution = (
        '<p class="lead">Read from the export, not from the envelope: these are the details the provider kept '
        "about you, often personal. Think before you share this page.</p>"
    )
    notes = "".join(f'<p class="lead">{_e(note)}</p>' for note in frame.attrs.get("notes") or [])
    if frame.empty:
        return head + (notes or '<p class="lead">The export records nothing the provider remembered.</p>')
    chart = _chart(
        lambda ax: charts.memory_timeline(frame, KINDS, ax=ax, tz=tz),
        "What was remembered when, by kind: a dot where an item was written or first seen, a line on to where "
        "it was last seen.",
    )
    rows = [
        [
            ("d", _day(row["ts"], tz) or "undated"),
            ("", _MEMORY_KINDS.get(str(row["kind"]), str(row["kind"]))),
            ("snip", _snippet(row["text"])),
            ("snip", _snippet(row["conversation_title"]) or _snippet(row["project_id"])),
            ("n", int(row["count"])),
            ("", "yes" if row["current"] is True else "replaced" if row["current"] is False else ""),
        ]
        for _, row in frame.iterrows()
    ]
    table = _table(["date", "kind", "what", "where", "seen", "current"], rows)
    return head + caution + notes + '<div class="charts">' + chart + "</div>" + table


def _resolved_exports(memory: Sequence[Any]) -> list[Input]:
    """Each export ``memory`` names, resolved once."""
    from ._whole.export import export_input

    return [export_input(export, "the report") for export in memory]


def _files_key(found: Input) -> tuple[str, ...] | None:
    """The real paths of the files of an export on disk; None for one given as bytes."""
    files = found.files()
    return None if files is None else tuple(os.path.realpath(f) for f in files)


def _named(found: Input, named: Sequence[Input]) -> bool:
    """Whether the export ``found`` is one of the exports ``named``."""
    key = _files_key(found)
    return key is not None and any(_files_key(export) == key for export in named)


def _exports_read(named: Sequence[Input], passes: list[_ExportRead]) -> list[_ExportRead]:
    """What the report shows of each export ``named``, in its order: the pass that converted it, when it is
    one of the sources streamed (each pass used once), else a pass of its own, read now."""
    streamed = {_files_key(read.found): read for read in reversed(passes)}
    reads: list[_ExportRead] = []
    for export in named:
        key = _files_key(export)
        read = None if key is None else streamed.pop(key, None)
        if read is None:
            read = _ExportRead(export)
            read.read_alone()
        reads.append(read)
    return reads


class _ExportRead:
    """What the report shows of an export given by path beyond its envelope (how it was used, what the
    provider remembered), made from the batches of the pass that converts it (:attr:`passing`), or of a
    pass of its own (:meth:`read_alone`) for an export that is not streamed: the inventory's counts, the
    nodes the charts show (:func:`memvelope_tools._usage_charts.charted`) and the memory; the other nodes
    are let go batch by batch."""

    def __init__(self, found: Input) -> None:
        from ._memory.scan import MemoryReading
        from ._whole.inventory import Counts, packed_and_counted
        from ._whole.read import Job
        from ._whole.tap import ExportPass

        self.found = found
        self.provider = ""
        self.counts = Counts()
        self.shown: list[Any] = []
        elements = (MemoryReading,) if found.files() is not None else ()  # an export as bytes: read on its own
        job = Job(functools.partial(packed_and_counted, source=found.label), texts=False, elements=elements)
        self.passing = ExportPass(found, job, self._each, again=self._forget)

    def read_alone(self) -> None:
        """Read the export in a pass of its own, for an export that is not streamed beside the report's
        sources: its nodes and memory alike, in one reading."""
        from ._whole.read import read_export

        whole = read_export(self.found, self.passing.job, progress=False)
        self.provider = whole.provider
        self.passing.take(whole)

    def _each(self, piece: Any, before: int) -> None:
        from ._usage_charts import charted
        from ._whole.arrow import unpack

        packed, counts = piece.value
        self.counts = self.counts + counts
        self.shown.append(charted(unpack(packed)))

    def _forget(self) -> None:
        from ._whole.inventory import Counts

        self.counts = Counts()
        self.shown = []

    def usage(self, tz: str) -> str:
        """The section "How you used it" (see :func:`usage_section`)."""
        import pyarrow as pa

        from ._frames.columns import NODE_COLUMNS, to_pandas
        from ._usage_charts import charted
        from ._whole.arrow import SCHEMA
        from ._whole.inventory import summary
        from ._whole.read import Piece, Whole

        passing = self.passing
        whole = Whole(self.provider, [Piece(self.counts, passing.conversations, passing.kept, 0)])
        found = summary(whole, self.found)
        empty = charted(SCHEMA.empty_table())
        shown = pa.concat_tables(self.shown) if self.shown else empty
        self.shown = []
        columns = {name: NODE_COLUMNS[name] for name in shown.column_names}
        return _usage(to_pandas(shown, columns, None), found, tz)

    def memory(self, tz: str) -> str:
        """The section "What ... remembers about you" (see :func:`memory_section`)."""
        from ._memory.frame import items_frame
        from ._memory.read import memory_of_pass

        files = self.found.files()
        read = None
        if files is not None:
            [reading] = self.passing.readers
            read = memory_of_pass(files, self.provider, reading, self.passing.heads)
        if read is None:  # each path (or the bytes) read on its own, as memory_frame reads them
            return memory_section(self.found, tz=tz)
        return _memory(items_frame(read), tz)
