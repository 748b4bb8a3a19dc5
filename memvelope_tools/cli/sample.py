"""``memvelope sample``: the files bundled with the package, listed or written out, for trying every command."""

from __future__ import annotations

import argparse
import sys

from .._atomic import atomic_write, check_output_file
from ..errors import MemvelopeError
from ..samples import BUNDLED, sample_path


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "sample",
        help="list the bundled sample files, or write one out to try the other commands on",
        description=(
            "Without NAME, list the files bundled with the package: a sample export per provider "
            "(invented, shaped like today's downloads) and the Facts IR distilled from each. With NAME, "
            "write that file to OUT (default: its own file name, in the current folder), byte for byte; "
            "`-o -` writes it to stdout.\n\n"
            "Examples:\n  memvelope sample\n  memvelope sample chatgpt\n"
            "  memvelope sample facts-claude -o facts.mv.json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="the sample to write (see the list without NAME)")
    p.add_argument("-o", "--output", metavar="OUT", help="where to write it (atomically); - for stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="say nothing on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.name is None:
        if args.output is not None:
            raise MemvelopeError("-o needs a NAME: which sample to write (`memvelope sample` lists them)")
        names, whats = (max(len(s.name) for s in BUNDLED), max(len(s.what) for s in BUNDLED))
        for sample in BUNDLED:
            print(f"{sample.name:<{names}}  {sample.what:<{whats}}  {sample.file}")
        return 0
    source = sample_path(args.name)
    data = source.read_bytes()
    if args.output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    output = args.output or source.name
    check_output_file(output)
    atomic_write(output, data)
    if not args.quiet:
        print(f"memvelope: wrote {output} ({args.name} sample, {len(data):,} bytes)", file=sys.stderr)
    return 0
