"""What several commands share: loading any input with the conversion's notes, and output checks."""

from __future__ import annotations

import sys
from typing import Any

from .._atomic import check_output_file, check_output_folder
from .._convert import ConversionLog
from .._load import open_input
from .._sources import Input, Use, resolve

__all__ = [
    "check_output_file",
    "check_output_folder",
    "conversion_notes",
    "document_inputs",
    "load_input",
]

_PROVIDERS = {"chatgpt": "ChatGPT", "claude": "Claude"}


def conversion_notes(report: ConversionLog, provider: str | None, *, quiet: bool = False) -> None:
    """The notes every command that converts prints on stderr: repaired UTF-8 and the elements of
    the other provider that the spec leaves out of an export."""
    if quiet:
        return
    err = sys.stderr
    for name, count in report.replaced.items():
        print(f"memvelope: warning: {name}: {count} invalid UTF-8 sequence(s) replaced with U+FFFD", file=err)
    if report.foreign and provider in _PROVIDERS:
        other = _PROVIDERS["claude" if provider == "chatgpt" else "chatgpt"]
        print(
            f"memvelope: note: {report.foreign} {other} conversation(s) left out: an export converts as one "
            f"provider, here {_PROVIDERS[provider]} (from its first elements); `memvelope doctor` lists them",
            file=err,
        )


def opened(found: Input, *, quiet: bool = False) -> dict[str, Any]:
    """The document of a resolved input (an export is converted in memory, with its notes on stderr)."""
    report = ConversionLog()
    doc = open_input(found, report=report, progress=False if quiet else None)
    if report.parts:
        conversion_notes(report, doc.get("meta", {}).get("source_provider"), quiet=quiet)
    return doc


def load_input(path: str, *, quiet: bool = False) -> dict[str, Any]:
    """The document ``path`` names (an export is converted in memory, with its notes on stderr)."""
    [found] = resolve(path, "any", list_means="documents")
    return opened(found, quiet=quiet)


def document_inputs(paths: list[str], *, use: Use = "any", quiet: bool = False) -> tuple[list[Any], list[str]]:
    """What to give the frames for each path, and each one's label: a Memvelope document file or a
    Parquet folder resolved (read as it streams), an export converted here (with its notes on
    stderr). Every path is resolved before any is read, so a wrong one is reported at once."""
    found = resolve(paths, use, list_means="documents", caller=f"memvelope with {len(paths)} paths")
    sources = [f if f.kind != "export" else opened(f, quiet=quiet) for f in found]
    return sources, [f.label for f in found]
