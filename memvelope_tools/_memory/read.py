"""Every remembered item of one export, with notes on what the export cannot say."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, BinaryIO, Final

from .._convert.sources import Part, ZipLimits
from .._providers import registry
from .._sources import explained, resolve
from .._whole import citations as cited
from ..errors import ConversionError, InputError
from .claude import claude_memory_file, memory_parts
from .items import INSTRUCTIONS_ONLY, NO_RECORDS, Folding, MemoryRead
from .scan import MemoryReading, Scan, scan_export

_SINGLES: Final = (
    "read single-conversation files (a top-level object, not an array): conversion takes only "
    "arrays, so message_id is the id the message would have with the conversation inside [ ]"
)
_NO_CLAUDE_FILE: Final = (
    "no memories.json or memories/ file was found beside the conversations; Claude's memory is not in what was given"
)


def read_memory(
    *paths: str | os.PathLike[str], zip_limits: ZipLimits | None = None, progress: bool | None = None
) -> MemoryRead:
    """Read every remembered item of one provider's export (the paths ``convert`` takes).

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
    InputError
        When the paths hold the exports of both providers (``bad-source``): one provider's memory is
        one Facts IR; :func:`read_memories` reads each.

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
    return only(read_memories(paths, zip_limits, progress, started, workers))


def only(reads: Sequence[MemoryRead]) -> MemoryRead:
    """The one provider's read among ``reads``; InputError (``bad-source``) when there are several, as
    a Facts IR holds one provider's facts."""
    if len(reads) > 1:
        names = " and ".join(registry.name(r.provider) for r in reads)
        raise InputError(
            f"the paths hold exports of {names}, and a Facts IR holds one provider's memory: "
            "give each provider's export on its own",
            reason="bad-source",
        )
    return reads[0]


def read_memories(
    paths: Sequence[str | os.PathLike[str]],
    zip_limits: ZipLimits | None = None,
    progress: bool | None = None,
    started: Callable[[], object] | None = None,
    workers: int | None = None,
) -> list[MemoryRead]:
    """Read every remembered item of one or several exports: each path is read on its own, and what the
    paths of one provider hold is that provider's memory (the parts of one export, or its memory zip
    beside its conversations, make one; a ChatGPT export and a Claude one make two).

    Parameters
    ----------
    paths
        The exports, or the parts of one: zips as downloaded, folders, or conversation files.
    zip_limits
        Limits against zip bombs (the defaults of ``convert``).
    progress
        Show a progress bar (None: when stderr is a terminal or in a notebook).
    started
        Called once, when the reading has begun.
    workers
        The number of processes reading a large export (None: as ``convert`` chooses).

    Returns
    -------
    list of MemoryRead
        One per provider, in the order the paths first show it.

    Raises
    ------
    ConversionError
        When a path cannot be read (missing file, bad zip, invalid JSON), or no path holds a
        conversation or a memory file; a file that adds no conversation is refused, naming it, when
        it is the only path or no path adds one.

    Examples
    --------
    >>> [r.provider for r in read_memories(["chatgpt-export.zip", "claude-export.zip"])]  # doctest: +SKIP
    ['chatgpt', 'claude']
    """
    limits = zip_limits or ZipLimits()
    [export] = resolve(list(paths), "diagnose", list_means="parts", caller="memory_frame()")
    paths = tuple(p for p in export.parts if isinstance(p, str | os.PathLike))
    calls = [] if started is None else [started]

    def begun() -> None:
        while calls:
            calls.pop()()

    exports: dict[str, _Export] = {}
    foldings: dict[str, Folding] = {}
    refused: ConversionError | None = None
    for path in paths:
        try:
            with explained([path]):  # a file that adds no conversation is refused as every command refuses it
                _read_path(path, limits, progress, begun, workers, exports, foldings)
        except ConversionError as exc:
            if len(paths) == 1 or exc.reason not in ("no-parts", "no-provider"):
                raise
            refused = refused or exc  # beside other paths, a path with no conversation adds nothing
    if not exports:
        assert refused is not None
        raise refused
    return [e.finish(foldings.get(e.provider) or Folding()) for e in exports.values()]


def memory_of_pass(
    paths: Sequence[str | os.PathLike[str]],
    provider: str,
    reading: MemoryReading,
    heads: Mapping[str, Sequence[str | None]] | None = None,
) -> MemoryRead | None:
    """The memory of the export at ``paths`` (one zip, folder or file, or the parts of one export, whose
    conversations are of ``provider``), of what a :class:`~memvelope_tools._memory.scan.MemoryReading`
    handed every element of its conversation parts read, and of the Claude memory files beside them: what
    :func:`read_memories` reads of it. For several paths, None when reading each on its own gives another
    memory (a path whose first elements, ``heads``, tell another provider or none, as one that holds no
    conversation array or a single conversation does; or ``heads`` not known).

    Parameters
    ----------
    paths
        The export's paths, as conversion read them.
    provider
        The provider its conversion found.
    reading
        The ``MemoryReading`` its conversion's pass handed every element, once every batch was folded in.
    heads
        The provider each of the first elements of each conversation part is a conversation of, by the
        part's name as conversion names it (:attr:`memvelope_tools._whole.tap.ExportPass.heads`); needed
        for several paths only.

    Returns
    -------
    MemoryRead or None
        As :func:`read_memories` gives it (one provider's read), or None when the paths are to be read
        each on its own.

    Raises
    ------
    ConversionError
        When a Claude memory file is not valid JSON.

    Examples
    --------
    >>> from memvelope_tools._memory.scan import MemoryReading
    >>> memory_of_pass(["export.zip"], "chatgpt", MemoryReading()).provider  # doctest: +SKIP
    'chatgpt'
    """
    if len(paths) > 1 and not _one_provider(paths, provider, heads):
        return None
    parts = memory_parts(paths, ZipLimits()) if provider == "claude" else []
    return memory_of_reading(provider, reading, parts)


def _one_provider(
    paths: Sequence[str | os.PathLike[str]], provider: str, heads: Mapping[str, Sequence[str | None]] | None
) -> bool:
    """Whether each of ``paths``, read on its own, tells ``provider`` from its first elements (``heads``)."""
    from .._whole.files import input_of

    if heads is None:
        return False
    firsts: list[list[str | None]] = [[] for _ in paths]
    for part, found in heads.items():
        n = input_of(paths, part)
        if n is None:
            return False
        firsts[n] += found
    return all(registry.detected(first) == provider for first in firsts)


def memory_of_reading(provider: str | None, reading: MemoryReading, memory_parts: Sequence[Part]) -> MemoryRead:
    """The remembered items of the elements ``reading`` was handed and of Claude memory files.

    Parameters
    ----------
    provider
        The provider of the elements (None: no provider was found, and nothing is read of them).
    reading
        The :class:`~memvelope_tools._memory.scan.MemoryReading` handed every element of the export's
        conversation parts, once every batch was folded in.
    memory_parts
        Claude memory files (read when ``provider`` is ``"claude"``), from
        :func:`~memvelope_tools._memory.claude.memory_parts`.

    Returns
    -------
    MemoryRead
        Items oldest first, and notes.

    Raises
    ------
    ConversionError
        When a Claude memory file is not valid JSON.

    Examples
    --------
    >>> memory_of_reading("chatgpt", MemoryReading(), []).notes == [NO_RECORDS]
    True
    """
    seen = reading.seen if reading.seen is not None else Folding()
    seen.extend(reading.sightings)
    reading.sightings = []
    return _finish(provider, seen, memory_parts, reading.records)


def paths_of(
    export: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], more: Sequence[str | os.PathLike[str]] = ()
) -> list[str | os.PathLike[str]]:
    """The paths given as ``export`` (one, or a list of them) and ``more``, in order."""
    first = [export] if isinstance(export, str | os.PathLike) else list(export)
    return [*first, *more]


def combined(reads: Sequence[MemoryRead]) -> MemoryRead:
    """The reads of several providers as one: their items oldest first (undated last), each note begun
    with its provider's name; the provider is None. One read is given back as it is."""
    if len(reads) == 1:
        return reads[0]
    items = [item for read in reads for item in read.items]
    dated = sorted((i for i in items if i.ts is not None), key=attrgetter("ts"))
    notes = [f"{registry.name(read.provider)}: {note}" for read in reads for note in read.notes]
    singles = [name for read in reads for name in read.singles]
    return MemoryRead(None, dated + [i for i in items if i.ts is None], notes, singles)


@dataclass
class _Export:
    """What the paths of one provider gave."""

    provider: str
    records: bool = False
    memory_parts: list[Part] = field(default_factory=list)
    singles: list[str] = field(default_factory=list)

    def finish(self, seen: Folding) -> MemoryRead:
        read = _finish(self.provider, seen, self.memory_parts, self.records)
        if self.singles:
            read.notes.insert(0, _SINGLES)
            read.singles = list(self.singles)
        return read


def _read_path(
    path: str | os.PathLike[str],
    limits: ZipLimits,
    progress: bool | None,
    started: Callable[[], object],
    workers: int | None,
    exports: dict[str, _Export],
    foldings: dict[str, Folding],
) -> None:
    """Read one path into the export of its provider (``exports``, the sightings into ``foldings``)."""
    found = memory_parts([path], limits)
    try:
        scanned = scan_export([path], limits, progress, started, workers, foldings)
    except ConversionError as exc:
        if not found or exc.reason not in ("no-parts", "no-provider"):
            raise
        scanned = Scan(decided=True)
    if not scanned.head and scanned.singles:
        providers: list[str] = []
        for value, name, data in zip(scanned.singles, scanned.single_names, scanned.single_data, strict=True):
            provider = registry.provider_of(value) or "claude"  # one the scan knows: it kept only those
            export = exports.setdefault(provider, _Export(provider))
            if provider == "chatgpt":
                reading = MemoryReading(foldings.setdefault(provider, Folding()))
                reading.element(value, provider, data, 0, len(data))
                export.records = reading.records or export.records
            export.singles.append(name)
            providers.append(provider)
        if "claude" in providers:
            exports["claude"].memory_parts += found
        return
    if scanned.provider is None and not found:
        raise scanned.error or ConversionError("the export holds no conversations", reason="no-provider")
    provider = scanned.provider or "claude"  # memory files and no conversation: Claude's memory
    export = exports.setdefault(provider, _Export(provider))
    export.records = export.records or scanned.records
    if provider == "claude":
        export.memory_parts += found


def envelope_of(
    paths: Sequence[str | os.PathLike[str]], read: MemoryRead, zip_limits: ZipLimits | None = None
) -> dict[str, Any]:
    """The envelope the export read as ``read`` converts to, the facts of its memory checked against: a
    part read as one conversation (``read.singles``) is converted as if it were inside [ ], as its
    ``message_id`` values say.

    Parameters
    ----------
    paths
        The export's paths, as given to :func:`read_memory`.
    read
        What :func:`read_memory` found in them.
    zip_limits
        Limits against zip bombs (the defaults of ``convert``).

    Returns
    -------
    dict
        The ``envelope-v0`` document.

    Raises
    ------
    ConversionError
        When the export does not convert.

    Examples
    --------
    >>> envelope_of(["conversation.json"], read_memory("conversation.json"))  # doctest: +SKIP
    """
    from .._convert.pipeline import convert, convert_parts
    from .._convert.sources import expand

    if not read.singles:
        return convert(*paths, zip_limits=zip_limits)
    singles = set(read.singles)
    with explained(paths):
        parts = [_inside_brackets(p) if p.name in singles else p for p in expand(paths, zip_limits).parts]
        return convert_parts(parts)


def _inside_brackets(part: Part) -> Part:
    """``part``, its one conversation object read inside [ ]."""

    def opener() -> BinaryIO:
        return io.BytesIO(b"[" + part.read() + b"]")

    return Part(part.name, opener, None if part.size is None else part.size + 2)


def _finish(provider: str | None, seen: Folding, memory_parts: Sequence[Part], records: bool) -> MemoryRead:
    """The items of the sightings folded in ``seen`` and of the Claude memory files, with the notes."""
    from .._gc import gc_paused

    notes: list[str] = []
    with gc_paused():  # many small objects, no cycles
        if provider == "claude":
            for part in memory_parts:
                claude_memory_file(part, seen)
            if not memory_parts:
                notes.append(_NO_CLAUDE_FILE)
        items = seen.items(provider or "claude")
        if provider == "chatgpt" and not records:
            kinds = {i.kind for i in items}
            if cited.CITED in kinds:
                notes.append(cited.CITED_ONLY)
            elif kinds & {"about_user", "about_model"}:
                notes.append(INSTRUCTIONS_ONLY)
            else:
                notes.append(NO_RECORDS)
        return MemoryRead(provider, items, notes)
