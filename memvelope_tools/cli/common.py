"""What several commands share: loading any input with the conversion's notes, and output checks."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._atomic import check_output_file, check_output_folder
from .._load import document_file, load
from ..errors import FormatError

if TYPE_CHECKING:
    from .._convert import ConversionLog

__all__ = [
    "at_least",
    "check_inputs",
    "check_output_file",
    "check_output_folder",
    "conversion_notes",
    "document_inputs",
    "labels_of",
    "load_input",
]


def conversion_notes(report: ConversionLog, provider: str | None, *, quiet: bool = False) -> None:
    """The notes every command that converts prints on stderr: repaired UTF-8 and the elements of
    the other provider that the spec leaves out of an export."""
    if quiet:
        return
    from .._convert.assemble import OTHER, mixed_providers

    err = sys.stderr
    for name, count in report.replaced.items():
        print(f"memvelope: warning: {name}: {count} invalid UTF-8 sequence(s) replaced with U+FFFD", file=err)
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


def check_inputs(paths: list[str]) -> None:
    """Stop on an input that does not exist, or whose first bytes show that no command reads it, before
    anything heavy is imported: the same line the command would give later, only sooner."""
    from .._read import parse_source
    from .._sniffing import HEAD_BYTES, Sniffed, kind_from_head, wrong_file

    for given in paths:
        path = os.path.expanduser(given)
        if os.path.isdir(path):
            continue
        try:
            with open(path, "rb") as fh:
                head = fh.read(HEAD_BYTES)
        except FileNotFoundError:
            raise FormatError("no such file or folder", reason="not-found", source=given) from None
        except OSError:
            continue  # the reader says why
        kind = kind_from_head(head)
        message = wrong_file(Sniffed(kind), "any") if kind is not None else None
        if message is not None:
            raise FormatError(message, reason="invalid-json", source=given)
        if kind is None and len(head) < HEAD_BYTES and head.lstrip(b"\xef\xbb\xbf \t\n\r")[:1] not in (b"{", b"["):
            parse_source(path)  # a small file that is not a JSON array or object: the parser's own line


def load_input(source: str | os.PathLike[str], *, quiet: bool = False) -> dict[str, Any]:
    """The document ``source`` names (an export is converted in memory, with its notes on stderr)."""
    from .._convert import ConversionLog

    report = ConversionLog()
    doc = load(source, report=report, progress=False if quiet else None)
    if report.parts:
        conversion_notes(report, doc.get("meta", {}).get("source_provider"), quiet=quiet)
    return doc


def labels_of(paths: list[str]) -> list[str]:
    """Each input's label, as the frames give it: its file (or folder) name, or the path as given
    when another input has the same name."""
    names = [os.path.basename(os.path.normpath(p)) or p for p in paths]
    return [path if names.count(name) > 1 else name for path, name in zip(paths, names, strict=True)]


def document_inputs(paths: list[str], *, quiet: bool = False) -> list[Any]:
    """What to give the frames for each path: a Memvelope document file as its path (read as it
    streams), anything else loaded here (an export converted, with its notes on stderr)."""
    return [p if document_file(p) is not None else load_input(p, quiet=quiet) for p in paths]
