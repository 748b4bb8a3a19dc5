"""Layer 1: provider exports to ``envelope-v0`` documents, a pure function of the export bytes."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .._atomic import atomic_output
from .._progress import progress_bar
from ..errors import ConversionError
from . import chatgpt, claude
from . import fast as _fast
from .canonical import dump_canonical, dumps_canonical
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
    "convert_stream",
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
    foreign: int = 0  # elements the other provider's looks_like accepts: left out, as the spec says


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


def convert_parts(
    parts: Sequence[Part],
    report: Report | None = None,
    *,
    fast: bool | None = None,
    stream: bool = False,
    progress: bool | None = None,
) -> Envelope:
    """Convert an ordered list of parts (see :func:`memvelope_tools.convert.sources.expand`).

    Options as for :func:`convert`.
    """
    from . import pipeline
    from . import stream as streaming

    report = report if report is not None else Report()
    report.parts = [p.name for p in parts]
    conversations: list[dict[str, Any]] = []
    total = sum(p.size or 0 for p in parts) or None
    with progress_bar(total, desc="converting", unit="B", enabled=progress) as bar, pipeline.gc_paused():
        assembler = pipeline.Assembler(pipeline.counting(conversations.append, bar), _describe(parts))
        if stream:
            streaming.assemble_streaming(parts, report, assembler, bar)
        else:
            use_fast = _fast.available() if fast is None else fast and _fast.available()
            pipeline.assemble(pipeline.parse_parts(parts, report, use_fast, bar), assembler)
    report.foreign = assembler.foreign
    return build_envelope(assembler.provider or "", conversations, _describe(parts))


def convert(
    *paths: str | os.PathLike[str],
    report: Report | None = None,
    zip_limits: ZipLimits | None = None,
    fast: bool | None = None,
    stream: bool = False,
    progress: bool | None = None,
) -> Envelope:
    """Convert one export, given as part files, folders and/or zips in order, to an envelope.

    Raises :class:`ConversionError` (with ``.reason``) when the export cannot be converted.
    Pass a :class:`Report` to learn which parts were read and which files were passed over.
    ``fast`` parses with orjson (default: when installed); ``stream`` parses incrementally with ijson,
    so the export's parse tree is never held whole (see :func:`convert_stream` to bound memory by the
    largest conversation). Every option gives the same envelope. ``progress`` shows a bar on stderr
    (default: on a terminal).
    """
    from ..load import explained

    with explained(paths):
        expansion: Expansion = expand(paths, zip_limits)
        if report is not None:
            report.ignored = expansion.ignored
            report.chose = expansion.chose
        return convert_parts(expansion.parts, report, fast=fast, stream=stream, progress=progress)


def convert_stream(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str] | None,
    *,
    report: Report | None = None,
    zip_limits: ZipLimits | None = None,
    progress: bool | None = None,
    stdout: Any = None,
) -> dict[str, Any]:
    """Convert one export straight to a canonical envelope file, holding one conversation at a time.

    Peak memory is bounded by the largest conversation, not the export. The bytes written are those of
    ``write_envelope(convert(paths), out)``; ``out`` is written atomically. With ``out=None`` the bytes
    go to the binary stream ``stdout``. Returns the envelope's ``meta``.
    """
    from . import stream as streaming

    inputs = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    expansion: Expansion = expand(inputs, zip_limits)
    report = report if report is not None else Report()
    report.ignored = expansion.ignored
    report.chose = expansion.chose
    return streaming.write_streaming(expansion.parts, out, report, progress=progress, stdout=stdout)


def write_envelope(envelope: Envelope, path: str | os.PathLike[str]) -> None:
    """Write the envelope's canonical bytes to ``path`` atomically (temporary file, then rename)."""
    data = _fast.dumps_envelope(envelope)
    with atomic_output(path) as fh:
        fh.write(data)
