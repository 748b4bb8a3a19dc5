"""``memvelope sqlite``: envelopes, Facts IR files, exports or a history folder as one SQLite database."""

from __future__ import annotations

import argparse
import sys

from .._convert.zips import kept_open
from .._plural import count
from .common import check_inputs, check_output_file, conversion_notes, notes


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "sqlite",
        help="write envelopes, Facts IR files, exports or a history folder as a SQLite database for Datasette",
        description=(
            "Write the tables `memvelope parquet` writes (conversations, messages, facts; for an export also "
            "nodes, assets and projects) and, for an export, memory (what the provider remembered, as "
            "memory_frame() gives it) into one SQLite database FILE, with the frames' columns: timestamps "
            "as ISO 8601 text in UTC, primary keys, a foreign key from messages to conversations, indexes "
            "on the join and time columns, and messages_fts, a full-text index of the messages' text "
            "(FTS5, as sqlite-utils makes it, so Datasette offers full-text search). A history folder is "
            "given alone: its snapshots, and its conversations and messages with their status, first_seen "
            "and last_seen. FILE is replaced whole once the new database is complete, never left half "
            "written. `datasette FILE` serves it (pip install 'memvelope_tools[datasette]').\n\n"
            "Example:\n  memvelope sqlite ~/Downloads/chatgpt-export.zip -o history.db\n"
            "  memvelope sqlite my-history/ -o history.db && datasette history.db"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "files", nargs="+", metavar="INPUT", help="an envelope, a Facts IR document, an export or a history folder"
    )
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the database file to write")
    p.add_argument(
        "--dedupe",
        action="store_true",
        help="keep one copy of a conversation whose id repeats (the latest updated_at), as the frames' dedupe=True",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")
    p.set_defaults(func=run, uses_pandas=False)


def run(args: argparse.Namespace) -> int:
    check_output_file(args.output)
    with kept_open():  # each zip given is opened once, from its resolving to its last reading
        found = check_inputs(args.files, use="frames")
        from .._sqlite import require_writer, sqlite_tables, write_sqlite

        require_writer()
        progress = False if args.quiet else None
        with (
            notes(),
            sqlite_tables(
                found,
                args.output,
                dedupe=args.dedupe,
                progress=progress,
                on_conversion=lambda log, provider: conversion_notes(log, provider, quiet=args.quiet),
            ) as tables,
        ):
            written = write_sqlite(tables, args.output, progress=progress)
    if not args.quiet:
        rows = ", ".join(f"{name}: {count(n, 'row')}" for name, n in written.items())
        print(f"memvelope: wrote {args.output} ({rows})", file=sys.stderr)
    return 0
