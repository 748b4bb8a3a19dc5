"""``memvelope parquet``: envelopes, Facts IR files and exports as a Parquet dataset (one folder)."""

from __future__ import annotations

import argparse
import sys

from .._convert.zips import kept_open
from .._plural import count
from .common import check_inputs, check_output_folder, conversion_notes


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "parquet",
        help="write envelopes, Facts IR files and exports as Parquet files for DuckDB, Polars, pandas, Spark",
        description=(
            "Write conversations.parquet and messages.parquet (from envelopes, and from exports, converted "
            "as they are read), facts.parquet (from Facts IR files) and, when a FILE is an export, nodes.parquet "
            "(every message node of it, on every branch, as nodes_frame() gives them) into FOLDER, created "
            "if missing; for an export, also assets.parquet (the files uploaded or generated, and whether the "
            "download holds them) and projects.parquet (Claude projects, ChatGPT projects and custom GPTs). Several "
            "files become one dataset; the 'source' column holds each file's name and the 'provider' column "
            "its provider. Types and columns are those of messages_frame() and friends; the schema metadata "
            "carries the format tags and providers. Each file is replaced atomically.\n\n"
            "Example:\n  memvelope parquet ~/Downloads/chatgpt-export.zip -o history/\n"
            "  memvelope parquet chatgpt.mve.json claude.mve.json facts.mv.json -o history/ --dedupe"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="an envelope, a Facts IR document or an export")
    p.add_argument("-o", "--output", required=True, metavar="FOLDER", help="the folder to write into")
    p.add_argument(
        "--dedupe",
        action="store_true",
        help="keep one copy of a conversation whose id repeats (the latest updated_at), as the frames' dedupe=True",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")
    p.set_defaults(func=run, uses_pandas=False)


def run(args: argparse.Namespace) -> int:
    check_output_folder(args.output)
    with kept_open():  # each zip given is opened once, from its resolving to its last reading
        found = check_inputs(args.files)
        from .._tables import stream_to_parquet

        written = stream_to_parquet(
            found,
            args.output,
            dedupe=args.dedupe,
            progress=False if args.quiet else None,
            on_conversion=lambda log, provider: conversion_notes(log, provider, quiet=args.quiet),
        )
    if not args.quiet:
        import pyarrow.parquet as pq

        for path in written.values():
            rows = count(pq.ParquetFile(path).metadata.num_rows, "row")
            print(f"memvelope: wrote {path} ({rows})", file=sys.stderr)
    return 0
