"""``memvelope doctor``: what an export holds, what conversion keeps and drops, and why."""

from __future__ import annotations

import argparse
import json
import sys

from .._convert.zips import kept_open
from .._printable import printable
from .._sources import resolve


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "doctor",
        help="report what an export holds and what conversion keeps, drops and why",
        description=(
            "Examine one export (the same PATHs `memvelope convert` takes) without changing the "
            "envelope: the parts read and their order, files passed over, conversations and messages "
            "kept and dropped with the reason for each drop, branches, timestamp problems, ordering "
            "anomalies and content types never seen before. Examples name the conversation (id and "
            "title); message text appears only with --show-text.\n\n"
            "Exit status: 0 when the export converts, 1 when it cannot be read or would not convert "
            "(the report still goes to stdout in the latter case).\n\n"
            "Example:\n  memvelope doctor ~/Downloads/claude-export.zip\n"
            "  memvelope doctor --json conversations-000.json conversations-001.json > report.json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="export zip, folder or part file")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the report as JSON (top level carries messages_kept and messages_dropped)",
    )
    p.add_argument("--show-text", action="store_true", help="include message text excerpts in examples")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with kept_open():  # each zip given is opened once, from its resolving to its last reading
        resolve(args.paths, "export", list_means="parts", caller="memvelope doctor")  # a wrong file is one line
        from .._doctor import diagnose

        report = diagnose(tuple(args.paths), show_text=args.show_text)
    if args.json:
        sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(report.summary())
    sys.stdout.flush()
    if report.error is not None:
        print(f"memvelope: error: the export would not convert: {printable(report.error[1])}", file=sys.stderr)
        return 1
    return 0
