"""``memvelope parquet``: envelopes and Facts IR files as a Parquet dataset (one folder)."""

from __future__ import annotations

import argparse

from ..parquet import to_parquet


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "parquet",
        help="write envelopes and Facts IR files as Parquet files for DuckDB, Polars, pandas, Spark",
        description=(
            "Write conversations.parquet and messages.parquet (from envelopes) and facts.parquet (from "
            "Facts IR files) into FOLDER, created if missing. Several files become one dataset; the "
            "'source' column holds each file's name. Types and columns are those of messages_frame() and "
            "friends; the schema metadata carries the format tags and providers. Each file is replaced "
            "atomically.\n\n"
            "Example:\n  memvelope parquet 2024.mve.json 2025.mve.json -o history/\n"
            "  duckdb -c \"SELECT role, count(*) FROM 'history/messages.parquet' GROUP BY role\""
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="an envelope or Facts IR document")
    p.add_argument("-o", "--output", required=True, metavar="FOLDER", help="the folder to write into")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    written = to_parquet(args.files, args.output, progress=False if args.quiet else None)
    if not args.quiet:
        import pyarrow.parquet as pq

        for path in written.values():
            print(f"wrote {path} ({pq.ParquetFile(path).metadata.num_rows:,} rows)")
    return 0
