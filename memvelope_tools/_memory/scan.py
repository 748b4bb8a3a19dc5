"""One pass over an export's conversation parts, parsing only the elements that may hold memory, in this
process or in worker processes."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from .._convert.assemble import detect_provider
from .._convert.sources import Part, ZipLimits, expand
from .._json.elements import FIELDS, JS, PartElements, Reader, Refused, load_part
from .._progress import progress_bar
from .._providers import registry
from .._providers.registry import DETECTION_WINDOW
from .._whole import citations as cited
from ..errors import ConversionError
from .chatgpt import chatgpt_conversation
from .items import Folding, Seen, Sink

# Bytes every element holding a memory item contains; an element without them is not parsed. A key or
# value written with \u escapes would hide them, which no export does. ``editable_context`` stands for
# both context types (a snapshot opens a conversation, so it is met first; one search is cheaper than two).
_MEMORY_MARKS: Final = (b"editable_context", b'"bio"', b"user_context_message_data", cited.MARK)

# A system or tool message: where ChatGPT keeps its memory records (as json.dumps writes a role, spaced or not).
_RECORD_ROLES: Final = (b'"role": "system"', b'"role":"system"', b'"role": "tool"', b'"role":"tool"')


def _holds(buf: Any, marks: tuple[bytes, ...], start: int, end: int) -> bool:
    return any(buf.find(mark, start, end) >= 0 for mark in marks)


class MemoryReading:
    """The memory of the elements of an export's array handed to it (an element reader of the pass that
    converts the export, see :class:`memvelope_tools._whole.read.ElementReader`, or of doctor's): the
    sightings of the ChatGPT conversations whose bytes hold a memory mark, parsed only once for conversion
    and memory alike, and whether an element holds a system or tool message (where ChatGPT keeps its
    memory records); as :func:`scan_export` reads them. With ``seen``, the sightings are folded there as
    they are read, else held in :attr:`sightings` (plain tuples, cheap to send from a worker)."""

    def __init__(self, seen: Folding | None = None) -> None:
        self.sightings: list[tuple[Any, ...]] = []
        self.records = False
        self.seen = seen  # where the sightings of the batches after this one are folded

    def element(self, element: object, provider: str, data: Any, start: int, end: int) -> None:
        """One element, its JSON text ``data[start:end]``."""
        if provider != "chatgpt":
            return
        if not self.records and _holds(data, _RECORD_ROLES, start, end):
            self.records = True
        if _holds(data, _MEMORY_MARKS, start, end):
            if self.seen is not None:
                chatgpt_conversation(element, self.seen)
                return
            seen: list[Seen] = []
            chatgpt_conversation(element, seen)
            self.sightings += map(tuple, seen)

    def extend(self, later: MemoryReading) -> None:
        """Fold in what ``later`` read, from the elements after those this one was handed."""
        if self.seen is None:
            self.seen = Folding()
        self.seen.extend(self.sightings)
        self.sightings = []
        self.seen.extend(later.sightings)
        self.records = self.records or later.records


@dataclass
class Scan:
    """What one pass over the export's conversation parts found."""

    head: list[Any] = field(default_factory=list)  # the first elements, for provider detection
    provider: str | None = None
    error: ConversionError | None = None  # why no provider could be detected
    decided: bool = False
    seen: Folding = field(default_factory=lambda: Folding())
    records: bool = False  # some element holds a system or tool message
    singles: list[Any] = field(default_factory=list)  # parts holding one conversation object
    single_names: list[str] = field(default_factory=list)  # those parts' names
    single_data: list[bytes] = field(default_factory=list)  # those parts' bytes
    documents: list[tuple[str, str]] = field(default_factory=list)  # parts showing another provider's export
    source: str | None = None  # the part the first elements are in
    foldings: dict[str, Folding] | None = None  # where each provider's sightings go, once it is detected

    def decide(self) -> None:
        """Detect the provider from the first elements, as conversion does, and read those elements;
        raise InputError at once for an export of a provider the spec does not define."""
        self.decided = True
        try:
            self.provider = detect_provider(self.head, self.source, non_arrays=0, documents=self.documents)
        except ConversionError as exc:
            if exc.reason == "unsupported-provider":
                raise
            self.error = exc
        if self.provider is not None and self.foldings is not None:
            self.seen = self.foldings.setdefault(self.provider, Folding())
        if self.provider == "chatgpt":
            for element in self.head:
                chatgpt_conversation(element, self.seen)


def scan_export(
    paths: Sequence[str | os.PathLike[str]],
    limits: ZipLimits,
    progress: bool | None,
    started: Callable[[], object] | None = None,
    workers: int | None = None,
    foldings: dict[str, Folding] | None = None,
) -> Scan:
    """Read the conversation parts as conversion does, parsing only the elements that may hold memory:
    in this process, or, for a large export, in worker processes (a batch of elements each, as
    conversion's, their sightings taken in order). ``started`` is called once the workers run (at once
    when there are none). With ``foldings``, the sightings go to the detected provider's folding there."""
    from .._convert.parallel import workers_for
    from .._gc import gc_paused

    found = Scan(foldings=foldings)
    expansion = expand(paths, limits)
    parts = expansion.parts
    total = sum(p.size or 0 for p in parts) or None
    count = workers_for(total or 0, workers)
    pool = _Workers(count) if count > 1 else None
    try:
        if started is not None:
            started()
        with progress_bar(total, desc="reading memory", unit="B", enabled=progress) as bar, gc_paused():
            for part in parts:
                elements = PartElements(part, Reader(JS), on_bytes=bar.update)
                try:
                    _scan_part(part, elements, found, pool)
                except ConversionError:
                    if pool is not None:
                        pool.drain(found, elements)  # an earlier element's error comes first
                    raise
                if pool is not None:
                    pool.drain(found, elements)
                if elements.is_array is False:
                    data = part.read()
                    value = load_part(part, Reader(JS), data)
                    if registry.provider_of(value) in registry.SUPPORTED:
                        found.singles.append(value)
                        found.single_names.append(part.name)
                        found.single_data.append(data)
                    elif (shown := registry.document_provider(value)) is not None:
                        found.documents.append((shown, part.name))
            if not found.decided:
                found.decide()
            if found.error is not None and found.error.reason == "no-provider":
                found.error = expansion.without_conversations(read=True) or found.error
    finally:
        if pool is not None:
            pool.close()
    return found


def _scan_part(part: Part, elements: PartElements, found: Scan, pool: _Workers | None) -> None:
    """Read the elements of one part that may hold memory into ``found``, or hand them to ``pool``."""
    reader = elements.reader
    for buf, children, offset in elements.ranges():
        if elements.is_array is False:
            break
        k = 0
        while k < len(children) and not found.decided:  # the first elements tell the provider
            start, end, flags, depth = children[k + 2 : k + FIELDS]
            found.records = found.records or _holds(buf, _RECORD_ROLES, start, end)
            try:
                found.head.append(reader.value(buf, start, end, flags, depth, offset))
            except Refused as exc:
                raise elements.error(exc) from None
            found.source = found.source or part.name
            if len(found.head) == DETECTION_WINDOW:
                found.decide()
            k += FIELDS
        if k == len(children) or found.provider != "chatgpt":
            continue
        rest = children[k:] if k else children
        if pool is not None:
            stamp = elements.stamp
            at = None if part.path is None or stamp is None else (part.path, offset + elements.skip, stamp)
            pool.submit(buf, rest, offset, at, found, elements)
            continue
        records, refused = _read_elements(buf, rest, offset, found.seen)
        found.records = found.records or records
        if refused is not None:
            raise elements.error(Refused(*refused))


_Source = bytes | tuple[str, int, int, Any]  # a batch's bytes, or the file range holding them

# a Refused's reason, detail and offset: a worker's exception cannot cross to the parent as raised
_Refusal = tuple[str, str, int]
_Rows = list[tuple[Any, ...]]  # sightings as plain tuples, cheaper to send back


def _read_elements(data: Any, found: list[int], offset: int, seen: Sink) -> tuple[bool, _Refusal | None]:
    """Add to ``seen`` the sightings of the ChatGPT conversations ``found`` in ``data`` (which starts at
    ``offset`` in its part), parsing only those whose bytes hold a memory mark. Returns whether one holds
    a system or tool message, and the refusal that stopped the reading early, if one did."""
    reader = Reader(JS)
    records = False
    for k in range(0, len(found), FIELDS):
        start, end, flags, depth = found[k + 2 : k + FIELDS]
        if not records and _holds(data, _RECORD_ROLES, start, end):
            records = True
        if not _holds(data, _MEMORY_MARKS, start, end):
            continue
        try:
            value = reader.value(data, start, end, flags, depth, offset)
        except Refused as exc:
            return records, (exc.reason, exc.detail, exc.offset)
        chatgpt_conversation(value, seen)
    return records, None


def _read_batch(source: _Source, found: list[int], offset: int) -> tuple[_Rows, _Refusal | None, bool]:
    """In a worker: :func:`_read_elements` of the elements ``found`` in ``source`` (which starts at
    ``offset`` in its part), the sightings as plain tuples."""
    from .._convert.parallel import read_range
    from .._gc import gc_paused

    seen: list[Seen] = []
    with gc_paused():
        records, refused = _read_elements(read_range(source), found, offset, seen)
        return list(map(tuple, seen)), refused, records


class _Workers:
    """Worker processes reading batches of elements, at most ``_PER_WORKER`` batches each in flight;
    when all of those are taken, this process reads the next batch itself rather than wait (up to
    ``_AHEAD`` batches read here wait for the workers' earlier ones). Sightings are added in
    submission order, so the result is that of one process."""

    _PER_WORKER: ClassVar[int] = 2
    _AHEAD: ClassVar[int] = 4

    def __init__(self, workers: int) -> None:
        from .._workers.processes import start_pool

        self._executor = start_pool(workers, preload=[__name__])
        self._limit = self._PER_WORKER * workers
        self._pending: deque[Future[tuple[_Rows, _Refusal | None, bool]]] = deque()

    def submit(
        self,
        buf: bytes,
        found: list[int],
        offset: int,
        at: tuple[str, int, Any] | None,
        scan: Scan,
        elements: PartElements,
    ) -> None:
        """A batch: the children ``found`` in ``buf`` (which starts at ``offset`` in the part), what they
        hold going to ``scan``. With ``at`` (the file, where ``buf`` starts in it, its stamp as read), the
        worker reads the bytes itself."""
        from .._convert.parallel import batch_source

        while self._pending and self._pending[0].done():
            self._next(scan, elements)
        busy = sum(not f.done() for f in self._pending)
        if busy >= self._limit and len(self._pending) < busy + self._AHEAD:
            seen: _Rows = []
            records, refused = _read_elements(buf, found, offset, seen)
            here: Future[tuple[_Rows, _Refusal | None, bool]] = Future()
            here.set_result((seen, refused, records))
            self._pending.append(here)
            return
        while self._pending and sum(not f.done() for f in self._pending) >= self._limit:
            self._next(scan, elements)
        source, shifted = batch_source(buf, found, at)
        self._pending.append(self._executor.submit(_read_batch, source, shifted, offset + found[2]))

    def drain(self, found: Scan, elements: PartElements) -> None:
        """Wait for every batch and add what it found to ``found``."""
        while self._pending:
            self._next(found, elements)

    def _next(self, found: Scan, elements: PartElements) -> None:
        from .._stable import CHANGED, Changed

        future = self._pending.popleft()
        try:
            rows, refused, records = future.result()
        except Changed:
            self._pending.clear()
            raise ConversionError(CHANGED, reason="changed", source=elements.part.name) from None
        found.seen.extend(rows)
        found.records = found.records or records
        if refused is not None:
            self._pending.clear()
            raise elements.error(Refused(*refused))

    def close(self) -> None:
        """Stop the workers (dropping batches not taken) and wait for them to exit."""
        self._executor.shutdown(wait=True, cancel_futures=True)
