"""Every remembered item of one export, with notes on what the export cannot say."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Final

from .._convert.assemble import detect_provider
from .._convert.sources import Part, ZipLimits
from .._sources import resolve
from .._whole import citations as cited
from ..errors import ConversionError
from .chatgpt import chatgpt_conversation
from .claude import claude_memory_file, memory_parts
from .items import NO_RECORDS, Folding, MemoryRead
from .scan import Scan, scan_export

_NO_CLAUDE_FILE: Final = (
    "no memories.json or memories/ file was found beside the conversations; Claude's memory is not in what was given"
)


def read_memory(
    *paths: str | os.PathLike[str], zip_limits: ZipLimits | None = None, progress: bool | None = None
) -> MemoryRead:
    """Read every remembered item of one export (the paths ``convert`` takes).

    Parameters
    ----------
    *paths
        The export: a zip as downloaded, a folder, or conversation files.
    zip_limits
        Limits against zip bombs (the defaults of ``convert``).
    progress
        Show a progress bar (None: when stderr is a terminal or in a notebook).

    Returns
    -------
    MemoryRead
        The provider, the items oldest first (undated last) and notes on what the export cannot say.

    Raises
    ------
    ConversionError
        When the export cannot be read (missing file, bad zip, invalid JSON) or holds neither a
        conversation nor a memory file.

    Examples
    --------
    >>> read_memory("export.zip").items[0].kind  # doctest: +SKIP
    'saved'
    """
    return read_memory_of(paths, zip_limits, progress)


def read_memory_of(
    paths: Sequence[str | os.PathLike[str]],
    zip_limits: ZipLimits | None,
    progress: bool | None,
    started: Callable[[], object] | None = None,
    workers: int | None = None,
) -> MemoryRead:
    """:func:`read_memory`; ``started`` is called once the export's reading has begun, ``workers`` is
    the number of processes reading it (None: as ``convert`` chooses)."""
    limits = zip_limits or ZipLimits()
    [export] = resolve(list(paths), "diagnose", list_means="parts", caller="memory_frame()")
    paths = tuple(p for p in export.parts if isinstance(p, str | os.PathLike))
    found = memory_parts(paths, limits)
    try:
        scanned = scan_export(paths, limits, progress, started, workers)
    except ConversionError as exc:
        if not found or exc.reason not in ("no-parts", "no-provider"):
            raise
        scanned = Scan(decided=True)
    if not scanned.head and scanned.singles:
        try:
            read = collect(detect_provider(scanned.singles), scanned.singles, found)
        except ConversionError:
            if not found:
                raise
            read = collect("claude", [], found)
        read.notes.insert(
            0,
            "read single-conversation files (a top-level object, not an array): conversion takes only "
            "arrays, so message_id is the id the message would have with the conversation inside [ ]",
        )
        return read
    provider = scanned.provider
    if provider is None:
        if not found:
            raise scanned.error or ConversionError("the export holds no conversations", reason="no-provider")
        provider = "claude"
    return _finish(provider, scanned.seen, found, scanned.records)


def collect(
    provider: str | None, elements: Sequence[Any], memory_parts: Sequence[Part], *, records: bool | None = None
) -> MemoryRead:
    """The remembered items of conversations already read (``elements``, of ``provider``) and of Claude
    memory files (``memory_parts``).

    Parameters
    ----------
    provider
        ``"chatgpt"`` or ``"claude"`` (None reads nothing from ``elements``).
    elements
        The export's conversations, as parsed.
    memory_parts
        Claude memory files, from :func:`memory_parts`.
    records
        Whether the export holds a system or tool message (where ChatGPT records memory); by default,
        whether ``elements`` do.

    Returns
    -------
    MemoryRead
        Items oldest first, and notes.

    Raises
    ------
    ConversionError
        When a memory file is not valid JSON.

    Examples
    --------
    >>> collect("chatgpt", [], []).notes == [NO_RECORDS]
    True
    """
    from .._convert.pipeline import gc_paused

    seen = Folding()
    found = False
    with gc_paused():  # many small objects, no cycles
        if provider == "chatgpt":
            for element in elements:
                found = chatgpt_conversation(element, seen) or found
        return _finish(provider, seen, memory_parts, found if records is None else records)


def _finish(provider: str | None, seen: Folding, memory_parts: Sequence[Part], records: bool) -> MemoryRead:
    """The items of the sightings folded in ``seen`` and of the Claude memory files, with the notes."""
    from .._convert.pipeline import gc_paused

    notes: list[str] = []
    with gc_paused():  # many small objects, no cycles
        if provider == "claude":
            for part in memory_parts:
                claude_memory_file(part, seen)
            if not memory_parts:
                notes.append(_NO_CLAUDE_FILE)
        items = seen.items(provider or "claude")
        if provider == "chatgpt" and not records:
            notes.append(cited.CITED_ONLY if any(i.kind == cited.CITED for i in items) else NO_RECORDS)
        return MemoryRead(provider, items, notes)
