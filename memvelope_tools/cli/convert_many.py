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
            "Convert each INPUT (an export zip, folder or part file: one export each) to its own "
            "envelope, <name>.mve.json in FOLDER, in parallel worker processes. A broken export does not "
            "stop the others; it is reported at the end and the exit status is 1. With --parquet every "
            "envelope also goes into one Parquet dataset, rows tagged with a source column.\n\n"
            "Example:\n  memvelope convert-many donations/*.zip -o envelopes/ --parquet dataset/"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="one export each: zip, folder or part file")
    p.add_argument("-o", "--output", required=True, metavar="FOLDER", help="folder for the envelopes")
    p.add_argument(
        "-j", "--workers", type=int, default=None, metavar="N", help="worker processes (default: one per CPU)"
    )
    p.add_argument("--parquet", metavar="DIR", help="also write one Parquet dataset of all envelopes here")
    p.add_argument(
        "--scheduler", metavar="ADDRESS", help="run on this dask.distributed scheduler instead (needs the dask extra)"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print failures only")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._many import convert_many

    client = None
    if args.scheduler:
        try:
            from distributed import Client
        except ImportError:
            print(
                "memvelope: error: --scheduler needs dask.distributed (pip install 'memvelope_tools[dask]')",
                file=sys.stderr,
            )
            return 1
        client = Client(args.scheduler)  # type: ignore[no-untyped-call]
    try:
        result = convert_many(args.inputs, args.output, workers=args.workers, parquet=args.parquet, client=client)
    finally:
        if client is not None:
            client.close()  # type: ignore[no-untyped-call]
    if not args.quiet:
        for done in result.converted:
            print(
                f"memvelope: {done.input} -> {done.output}: {done.provider}, "
                f"{count(done.conversations, 'conversation')}, {count(done.messages, 'message')}",
                file=sys.stderr,
            )
        if result.parquet:
            print(f"memvelope: wrote {', '.join(str(p) for p in result.parquet.values())}", file=sys.stderr)
    for failed in result.failed:
        print(f"memvelope: failed: {printable(str(failed.input))}: {printable(str(failed.error))}", file=sys.stderr)
    print(f"memvelope: {len(result.converted):,} converted, {len(result.failed):,} failed", file=sys.stderr)
    return 0 if result.ok else 1
