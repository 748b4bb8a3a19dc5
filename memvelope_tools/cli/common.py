"""What several commands share: loading any input with the conversion's notes, warnings as notes, output
checks."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .._atomic import check_output_file, check_output_folder
from .._convert.log import ConversionLog
from .._plural import count
from .._printable import printable
from .._sources import Input, Use, resolve, resolve_one

__all__ = [
    "at_least",
    "check_inputs",
    "check_output_file",
    "check_output_folder",
    "conversion_notes",
    "document_inputs",
    "load_input",
    "notes",
]


def conversion_notes(report: ConversionLog, provider: str | None, *, quiet: bool = False) -> None:
    """The notes every command that converts prints on stderr: repaired UTF-8 and the elements of
    the other provider that the spec leaves out of an export."""
    if quiet:
        return
    from .._convert.assemble import mixed_providers
    from .._providers.registry import OTHER

    err = sys.stderr
    for name, n in report.replaced.items():
        what = f"{count(n, 'invalid UTF-8 sequence')} replaced with U+FFFD"
        print(f"memvelope: warning: {printable(name)}: {what}", file=err)
    if report.foreign and provider in OTHER:
        print(f"memvelope: note: {mixed_providers(provider, report.foreign)}; `memvelope doctor` lists them", file=err)


def at_least(low: int) -> Callable[[str], int]:
    """An argparse ``type`` for a whole number of at least ``low`` (a smaller one is a usage error)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    parse.__name__ = f"a whole number of at least {low}"
    return parse


def check_inputs(paths: Sequence[str | Input], *, use: Use = "any") -> list[Input]:
    """Every input resolved, before anything heavy is imported: a missing or wrong one is reported at
    once, in the one line the resolver gives it. Pass the result on, so nothing is resolved twice."""
    return resolve(list(paths), use, list_means="documents", caller=f"memvelope with {len(paths)} paths")


def opened(found: Input, *, quiet: bool = False) -> dict[str, Any]:
    """The document of a resolved input (an export is converted in memory, with its notes on stderr)."""
    from .._load import open_input  # the conversion pipeline, only once a document is opened

    report = ConversionLog()
    doc = open_input(found, report=report, progress=False if quiet else None)
    if report.parts:
        conversion_notes(report, doc.get("meta", {}).get("source_provider"), quiet=quiet)
    return doc


def load_input(path: str | Input, *, quiet: bool = False) -> dict[str, Any]:
    """The document ``path`` names (an export is converted in memory, with its notes on stderr)."""
    [found] = resolve(path, "any", list_means="documents")
    return opened(found, quiet=quiet)


def document_inputs(
    paths: Sequence[str | Input], *, use: Use = "any", quiet: bool = False
) -> tuple[list[Any], list[str]]:
    """What to give the frames for each path, and each one's label: a Memvelope document file or a
    Parquet folder resolved (read as it streams), an export converted here (with its notes on
    stderr). Every path is resolved before any is read, so a wrong one is reported at once."""
    found = check_inputs(paths, use=use)
    # An export converted here keeps its label, so that it is labelled as the library labels the path.
    sources = [f if f.kind != "export" else resolve_one(opened(f, quiet=quiet), use, label=f.label) for f in found]
    return sources, [f.label for f in found]


@contextmanager
def notes() -> Iterator[None]:
    """Library warnings as one ``memvelope: note:`` line each on stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        try:
            yield
        finally:
            for w in caught:
                print(f"memvelope: note: {printable(str(w.message))}", file=sys.stderr)
