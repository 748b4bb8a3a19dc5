"""Layer 1: provider exports to ``envelope-v0`` documents, a pure function of the export bytes."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .._atomic import atomic_output
from ..errors import ConversionError
from . import chatgpt, claude
from .canonical import dump_canonical, dumps_canonical
from .parse import decode, loads_js
from .sources import Expansion, Part, ZipLimits, expand

Envelope = dict[str, Any]
Normaliser = Callable[[object], "dict[str, Any] | None"]

NORMALISERS: Final[Mapping[str, Normaliser]] = {
    "claude": claude.normalise,
    "chatgpt": chatgpt.normalise,
}
DETECTION_WINDOW: Final = 5

__all__ = [
    "ConversionError",
    "Envelope",
    "Part",
    "Report",
    "ZipLimits",
    "convert",
    "convert_parts",
    "convert_values",
    "detect_provider",
    "dump_canonical",
    "dumps_canonical",
    "expand",
    "write_envelope",
]


@dataclass
class Report:
    """What a conversion read, besides the envelope: parts, passed-over files, decoding repairs."""

    parts: list[str] = field(default_factory=list)
    ignored: list[tuple[str, str]] = field(default_factory=list)
    chose: bool = False
    replaced: dict[str, int] = field(default_factory=dict)  # part name -> invalid UTF-8 sequences
    elements: int = 0


def detect_provider(elements: Sequence[object], source: str | None = None, *, non_arrays: int = 0) -> str:
    """The provider token, from the first five elements of the merged array (Claude wins)."""
    window = elements[:DETECTION_WINDOW]
    if any(claude.looks_like(e) for e in window):
        return "claude"
    if any(chatgpt.looks_like(e) for e in window):
        return "chatgpt"
    if not elements:
        msg = "the export holds no conversations (no part has a top-level array with elements)"
        if non_arrays:
            msg = (
                "the export holds no conversations: its top level is not an array (a part whose top "
                "level is an object contributes nothing; a single conversation must be inside [ ])"
            )
    else:
        msg = (
            "cannot identify the provider: none of the first five elements looks like a ChatGPT "
            "conversation (an object with a 'mapping' object) or a Claude one ('uuid' and 'chat_messages')"
        )
    raise ConversionError(msg, reason="no-provider", source=source)


def build_envelope(provider: str, conversations: list[dict[str, Any]], source: str | None = None) -> Envelope:
    """Wrap normalised conversations in an envelope; zero conversations is an error, never an envelope."""
    if not conversations:
        raise ConversionError(
            f"no conversation survived conversion ({provider} export, every conversation was empty, "
            "non-prose or malformed)",
            reason="no-conversations",
            source=source,
        )
    return {
        "memvelope": "envelope-v0",
        "meta": {
            "source_provider": provider,
            "conversation_count": len(conversations),
            "message_count": sum(len(c["messages"]) for c in conversations),
        },
        "conversations": conversations,
    }


def convert_values(values: Iterable[object], source: str | None = None) -> Envelope:
    """Convert already-parsed part values (each a part's top-level JSON value), in order."""
    merged: list[object] = []
    non_arrays = 0
    for value in values:
        if type(value) is list:
            merged.extend(value)
        else:  # a part whose top level is not an array contributes nothing (A16)
            non_arrays += 1
    provider = detect_provider(merged, source, non_arrays=non_arrays)
    normalise = NORMALISERS[provider]
    conversations = [c for c in map(normalise, merged) if c is not None]
    return build_envelope(provider, conversations, source)


def _describe(parts: Sequence[Part]) -> str | None:
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0].name
    return f"{parts[0].name} and {len(parts) - 1} more part(s)"


def _parsed(parts: Sequence[Part], report: Report) -> Iterator[object]:
    for part in parts:
        decoded = decode(part.read())
        if decoded.replaced:
            report.replaced[part.name] = decoded.replaced
        yield loads_js(decoded.text, part.name)


def convert_parts(parts: Sequence[Part], report: Report | None = None) -> Envelope:
    """Convert an ordered list of parts (see :func:`memvelope_tools.convert.sources.expand`)."""
    report = report if report is not None else Report()
    report.parts = [p.name for p in parts]
    return convert_values(_parsed(parts, report), _describe(parts))


def convert(*paths: str | os.PathLike[str], report: Report | None = None,
            zip_limits: ZipLimits | None = None) -> Envelope:
    """Convert one export, given as part files, folders and/or zips in order, to an envelope.

    Raises :class:`ConversionError` (with ``.reason``) when the export cannot be converted.
    Pass a :class:`Report` to learn which parts were read and which files were passed over.
    """
    expansion: Expansion = expand(paths, zip_limits)
    if report is not None:
        report.ignored = expansion.ignored
        report.chose = expansion.chose
    return convert_parts(expansion.parts, report)


def write_envelope(envelope: Envelope, path: str | os.PathLike[str]) -> None:
    """Write the envelope's canonical bytes to ``path`` atomically (temporary file, then rename)."""
    with atomic_output(path) as fh:
        dump_canonical(envelope, fh)
