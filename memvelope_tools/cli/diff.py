"""``memvelope diff``: what changed between two exports of one account."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .._plural import count
from .._printable import printable
from .._workers.children import converting_early
from .common import notes


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "diff",
        help="what changed between two exports of one account: new, grown, edited, missing conversations",
        description=(
            "Compare an older and a newer export (or envelope) of one account, conversation by conversation: "
            "new (only in NEW), missing (only in OLD: deleted or archived upstream), unchanged, grown (NEW "
            "holds every message of OLD, in order, then more), edited (they share a beginning and then "
            "differ: an edited prompt or a regenerated reply), unmatched (no id of its own to match by, and no "
            "counterpart by created time and title, content or first message). Conversations match by provider "
            "and id; messages "
            "compare by role, text and timestamp. Prints the counts per status and the conversations that "
            "changed, newest first; --json prints one JSON object instead. Neither input is changed.\n\n"
            "Examples:\n  memvelope diff old-export.zip new-export.zip\n"
            "  memvelope diff january.mve.json june.mve.json --json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("old", metavar="OLD", help="the older export or envelope")
    p.add_argument("new", metavar="NEW", help="the newer export or envelope")
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"counts": {status: n}, "conversations": [one object per changed conversation]}',
    )
    p.add_argument(
        "--limit", type=int, default=20, metavar="N", help="list at most N changed conversations (default 20)"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    progress = False if args.quiet or args.json else None
    with converting_early([args.old, args.new], progress) as converted, notes():
        from .._history.diff import diff, status_counts  # its libraries load while the exports convert

        old, new = converted()
        changes = diff(old, new, workers=None, progress=progress)
    counts = status_counts(changes)
    changed = _newest_first(changes[changes["status"] != "unchanged"])
    if args.json:
        rows = [_json_row(row) for row in changed.to_dict("records")]
        print(json.dumps({"counts": counts, "conversations": rows}, ensure_ascii=False, indent=2))
        return 0
    total = len(changes)
    print(f"{count(total, 'conversation')}: " + ", ".join(f"{status} {n:,}" for status, n in counts.items() if n))
    if not len(changed):
        print("nothing changed")
        return 0
    print("changed, newest first:")
    for row in changed.head(max(args.limit, 0)).to_dict("records"):
        print(f"  {_line(row)}")
    if len(changed) > args.limit:
        print(f"  ... and {len(changed) - max(args.limit, 0):,} more (--limit, or --json for all)")
    return 0


def _newest_first(changed: Any) -> Any:
    when = changed["updated_at"].fillna(changed["last_ts"]).fillna(changed["created_at"])
    return changed.assign(_when=when).sort_values("_when", ascending=False, na_position="last", kind="stable")


def _line(row: dict[str, Any]) -> str:
    import pandas as pd

    when = row["_when"]
    day = when.strftime("%Y-%m-%d") if not pd.isna(when) else "----------"
    title = printable(row["title"]) if not pd.isna(row["title"]) and row["title"] else "(untitled)"
    before, after = row["messages_before"], row["messages_after"]
    if row["status"] in ("grown", "edited"):
        counts = f"{before:,} -> {after:,} messages, differ from message {row['first_difference'] + 1}"
    else:
        counts = count(int(after if pd.isna(before) else before), "message")
    ident = "" if pd.isna(row["id"]) else f" [{printable(row['id'])}]"
    return f"{row['status']:<9}  {day}  {title}{ident} ({counts})"


def _json_row(row: dict[str, Any]) -> dict[str, Any]:
    import pandas as pd

    out: dict[str, Any] = {}
    for key, value in row.items():
        if key.startswith("_"):
            continue
        if value is None or value is pd.NA or value is pd.NaT:
            out[key] = None
        elif isinstance(value, pd.Timestamp):
            out[key] = value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
        elif hasattr(value, "item"):
            out[key] = value.item()
        else:
            out[key] = value
    return out
