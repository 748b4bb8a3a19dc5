"""The ``memvelope`` command: a thin shell over the Python API.

Each subcommand lives in its own module here, exposing ``register(subparsers)`` which adds its parser
and sets ``func`` to a callable ``(args) -> int``. Library errors become one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ..errors import MemvelopeError

# One entry per subcommand module, in the order `--help` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "convert",
    "conformance",
    "doctor",
    "validate",
    "distill",
    "report",
    "info",
    "parquet",
    "convert_many",
    "search",
    "topics",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memvelope",
        description="Convert AI chat exports to Memvelope envelopes and analyse them.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` and return the exit status; never raises for bad input."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except MemvelopeError as exc:
        print(f"memvelope: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("memvelope: interrupted; no output was written", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
