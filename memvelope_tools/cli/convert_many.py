"""``memvelope convert-many``: many independent exports, one envelope each, converted in parallel."""

from __future__ import annotations

import argparse
import sys

from .._plural import count
from .._printable import printable


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "convert-many",
        help="convert many independent exports in parallel, one envelope each",
        description=(
            "Convert each INPUT (an export zip, folder or part file: one donation each) to its own "
            "envelope, <label>.mve.json in FOLDER, in parallel worker processes or on a Dask cluster. A broken "
            "export does not stop the others; it is reported at the end and the exit status is 1.\n\n"
            "With --parquet DIR each donation's rows are written by the worker that converted it as its own "
            "partitions, DIR/conversations/source=<label>/ and DIR/messages/source=<label>/, and "
            "DIR/_manifest.json records every donation. Run again on DIR, it converts only new and changed "
            "donations; an interrupted run is resumed where it stopped.\n\n"
            "Example:\n  memvelope convert-many donations/*.zip --parquet dataset/\n"
            "  memvelope convert-many donations/*.zip --parquet dataset/ --scheduler tcp://scheduler:8786"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="one export each: zip, folder or part file")
    p.add_argument("-o", "--output", metavar="FOLDER", help="folder for the envelopes (needed without --parquet)")
    p.add_argument(
        "-j", "--workers", type=int, default=None, metavar="N", help="worker processes (default: one per CPU)"
    )
    p.add_argument(
        "--parquet", metavar="DIR", help="write each donation's rows as its partitions of the dataset DIR (resumable)"
    )
    p.add_argument(
        "--scheduler", metavar="ADDRESS", help="run on this dask.distributed scheduler instead (needs the dask extra)"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print failures only")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._many import run_many

    if args.output is None and args.parquet is None:
        print("memvelope: error: give -o FOLDER for the envelopes, --parquet DIR, or both", file=sys.stderr)
        return 2
    if args.scheduler:
        try:
            import distributed  # noqa: F401
        except ImportError:
            print(
                "memvelope: error: --scheduler needs dask.distributed (pip install 'memvelope_tools[dask]')",
                file=sys.stderr,
            )
            return 1
    result = run_many(
        args.inputs,
        args.output,
        parquet=args.parquet,
        workers=args.workers,
        scheduler=args.scheduler,
        progress=False if args.quiet else None,
    )
    if not args.quiet:
        for done in result.converted:
            where = f" -> {done.output}" if done.output else ""
            print(
                f"memvelope: {printable(str(done.input))}{where}: {done.provider}, "
                f"{count(done.conversations, 'conversation')}, {count(done.messages, 'message')}",
                file=sys.stderr,
            )
        if args.parquet and result.manifest is not None:
            finished = sum(1 for row in result.manifest if row["status"] == "done")
            print(f"memvelope: {args.parquet}: {count(finished, 'donation')} finished in all", file=sys.stderr)
    for failed in result.failed:
        print(f"memvelope: failed: {printable(str(failed.input))}: {printable(str(failed.error))}", file=sys.stderr)
    unchanged = f"{len(result.unchanged):,} unchanged, " if args.parquet else ""
    print(f"memvelope: {len(result.converted):,} converted, {unchanged}{len(result.failed):,} failed", file=sys.stderr)
    return 0 if result.ok else 1
