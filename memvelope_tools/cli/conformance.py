"""``memvelope conformance``: run the envelope fixture corpus against this converter."""

from __future__ import annotations

import argparse
import sys

from ..errors import MemvelopeError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "conformance",
        help="run envelope conformance fixtures (inputs -> expected bytes)",
        description="Run every case folder (input parts + expected.mve.json or expected.error) and "
        "print one line per failing case and a summary.\n\nExample:\n  memvelope conformance "
        "fixtures/envelope",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("folder", help="folder of case folders")
    p.add_argument("-v", "--verbose", action="store_true", help="print passing cases too")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._conformance import run_suite

    try:
        results = run_suite(args.folder)
    except OSError as exc:
        raise MemvelopeError(f"cannot read fixtures: {exc.strerror or exc}", source=args.folder) from exc
    if not results:
        raise MemvelopeError("no fixture cases found", source=args.folder)
    failed = [r for r in results if not r.ok]
    for r in results:
        if not r.ok:
            print(f"FAIL {r.name}: {r.detail}")
        elif args.verbose:
            print(f"ok   {r.name}")
    print(f"{len(results) - len(failed):,} passed, {len(failed):,} failed")
    sys.stdout.flush()
    return 1 if failed else 0
