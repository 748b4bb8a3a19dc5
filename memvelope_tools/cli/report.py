"""``memvelope report``: one self-contained HTML page about envelopes and Facts IR documents."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any

from .._convert.log import ConversionLog
from .._convert.zips import kept_open
from .common import at_least, check_inputs, check_output_file, conversion_notes, notes


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "report",
        help="write a static HTML report (charts, tables, longest conversations)",
        description=(
            "Write one self-contained HTML page about the given documents: activity charts, summary "
            "tables, the longest conversations and, for Facts IR documents, fact charts and archetypes. "
            "Each FILE is an envelope, a Facts IR document or an export (zip, folder or part file), "
            "converted as it is read, a batch of conversations at a time. The page needs no server and no "
            "network, and runs no script; it contains conversation titles and opening messages, so read it "
            "before you share it.\n\n"
            "Examples:\n  memvelope report ~/Downloads/chatgpt-export.zip -o report.html\n"
            "  memvelope report history.mve.json facts.mv.json -o report.html --tz Europe/Berlin"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="FILE", help="envelope, Facts IR document, or export")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the HTML file to write (atomically)")
    p.add_argument("--tz", default="UTC", help="time zone for dates and hours (IANA name; default UTC)")
    p.add_argument("--top", type=at_least(1), default=20, metavar="N", help="list the N longest conversations")
    p.add_argument("--title", default="Memvelope report", help="the page's heading")
    p.add_argument(
        "--dedupe",
        action="store_true",
        help="keep one copy of a conversation whose id repeats (the latest updated_at), as the frames' dedupe=True",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="say nothing on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_output_file(args.output)
    with kept_open():  # each zip given is opened once, from its resolving to its last reading
        found = check_inputs(args.paths, use="history")
        folders = [path for path, item in zip(args.paths, found, strict=True) if item.kind == "parquet"]
        from .._report import write_report
        from .._sources import is_history_folder

        sources: list[Any]
        if folders and len(found) == 1 and is_history_folder(folders[0]):
            sources = list(folders)
        else:
            check_inputs(folders)  # the report reads a Parquet folder only when it is a history folder, alone
            sources = list(found)  # resolved once: handed on, never resolved again

        def noted(log: ConversionLog, provider: str) -> None:
            conversion_notes(log, provider, quiet=args.quiet)

        # Library warnings (a font to install) as notes, or not at all with --quiet.
        said = warnings.catch_warnings(action="ignore") if args.quiet else notes()
        with said:
            write_report(
                sources,
                args.output,
                tz=args.tz,
                top=args.top,
                title=args.title,
                labels=[item.label for item in found],
                dedupe=args.dedupe,
                progress=False if args.quiet else None,
                on_conversion=noted,
            )
    if not args.quiet:
        size = os.path.getsize(args.output) if os.path.isfile(args.output) else 0
        print(f"memvelope: wrote {args.output} ({size / 1024:.0f} KiB)", file=sys.stderr)
    return 0
