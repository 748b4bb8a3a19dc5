"""``memvelope search``: ranked full-text search over the messages of a history."""

from __future__ import annotations

import argparse
import shutil
from typing import Any

from .._convert.zips import kept_open
from .._printable import printable
from .._spec import ROLES
from .common import at_least, check_inputs, conversion_notes, document_inputs, notes


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "search",
        help="full-text search over the messages of envelopes, exports or a Parquet folder",
        description=(
            "Print the messages matching QUERY, best first (BM25), with the match marked in a snippet; a "
            "conversation whose title matches is shown as its first message, [title] before its snippet. "
            "A history folder's matches have a status column (current, edited-away, deleted-upstream). "
            "Each PATH is an envelope, an export zip or folder (indexed as it is converted), or a "
            "folder written by 'memvelope parquet' (its index is kept there in search-index/ and "
            "rebuilt when the Parquet files change).\n\n"
            'QUERY: words (all must occur; case and accents do not matter), "a phrase", a prefix*, '
            "AND / OR / NOT in capitals, (parentheses). Quote the whole query for the shell.\n\n"
            "Examples:\n"
            "  memvelope search history.mve.json 'sourdough starter'\n"
            "  memvelope search history/ '\"time zone\" OR tz*' --role user --since 2024-01-01 --limit 5\n"
            "  memvelope search export.zip 'pandas NOT polars' --json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="envelope, export zip or folder, or Parquet folder")
    p.add_argument("query", metavar="QUERY", help="what to search for")
    p.add_argument("--role", choices=ROLES, help="only messages of this role")
    p.add_argument("--since", metavar="DATE", help="only messages sent at or after DATE (UTC unless it says)")
    p.add_argument("--until", metavar="DATE", help="only messages sent before DATE")
    p.add_argument("--limit", type=at_least(1), default=20, metavar="N", help="show the N best matches (default 20)")
    p.add_argument("--json", action="store_true", help="print the matches as a JSON array")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with kept_open():  # each zip given is opened once, from its resolving to its last reading
        found = check_inputs(args.paths, use="history")
        from .._search.cache import streamable
        from .._search.function import search, search_inputs
        from .._search.query import parse_query

        parse_query(args.query)  # a bad query is reported before anything is read
        filters = {"role": args.role, "since": args.since, "until": args.until, "limit": args.limit}
        with notes():
            if streamable(found):  # envelopes and exports, indexed as they are read
                hits = search_inputs(found, args.query, on_conversion=conversion_notes, **filters)
            else:
                sources, _ = document_inputs(found, use="history")
                hits = search(sources if len(sources) > 1 else sources[0], args.query, **filters)
    if args.json:
        print(hits.to_json(orient="records", date_format="iso", force_ascii=False, indent=1) if len(hits) else "[]")
        return 0
    if hits.empty:
        print(f"no message matches {args.query!r}")
        return 0
    print(table(hits, shutil.get_terminal_size((120, 24)).columns))
    if len(hits) == args.limit:
        print(f"(the best {args.limit}; --limit N for more)")
    return 0


def table(hits: Any, width: int) -> str:
    """The matches as a plain-text table fitted to ``width`` columns: only the snippet, last, is cut to fit.

    A history folder's matches have a ``status`` column of their own; a match found by its
    conversation's title has ``[title]`` before its snippet; the conversation is named by its title."""
    import pandas as pd

    with_status = "status" in hits.columns
    rows = []
    for rank, hit in enumerate(hits.to_dict("records"), start=1):
        when = "" if pd.isna(hit["ts"]) else hit["ts"].strftime("%Y-%m-%d %H:%M")
        title = "" if pd.isna(hit["title"]) else str(hit["title"])
        marker = "[title] " if "title" in str(hit.get("matched", "")) else ""
        cells = [str(rank), f"{hit['score']:.2f}", when, printable(str(hit["role"]))]
        if with_status:
            cells.append("" if pd.isna(hit["status"]) else str(hit["status"]))
        rows.append((*cells, clip(title or "(untitled)", 32), marker, str(hit["snippet"])))
    header = ("#", "score", "sent (UTC)", "role", *(["status"] if with_status else []), "conversation", "", "snippet")
    fixed = len(header) - 2
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(fixed)]
    room = max(20, width - sum(widths) - 2 * fixed)
    lines = []
    for row in [header, *rows]:
        cells = [row[i].rjust(widths[i]) if i < 2 else row[i].ljust(widths[i]) for i in range(fixed)]
        marker = row[fixed]  # kept whole: the snippet after it is cut to fit
        lines.append("  ".join([*cells, marker + clip(row[fixed + 1], room - len(marker), keep="⟦")]).rstrip())
    return "\n".join(lines)


def clip(text: str, width: int, keep: str = "") -> str:
    """``text`` on one line and printable, cut to ``width`` characters with an ellipsis, from a little
    before the first ``keep`` when that would be cut off."""
    flat = printable(" ".join(text.split()))
    if len(flat) <= width:
        return flat
    at = flat.find(keep) if keep else -1
    if at > width // 2:
        flat = "…" + flat[at - width // 4 :].lstrip("…")
        if len(flat) <= width:
            return flat
    return flat[: width - 1] + "…"
