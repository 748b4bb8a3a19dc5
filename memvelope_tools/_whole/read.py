"""One pass over an export's conversation parts, a batch of conversations at a time, each batch's nodes
handed to a consumer that makes something small of them (Arrow record batches, counts), and each whole
conversation to the readers asked for beside the nodes (the files and projects it names).

The parts, the element reader, the provider detection and the worker processes are the converter's
(:mod:`memvelope_tools._convert`): the first elements tell the provider as they tell it to the converter,
and for a large export the later batches are parsed in worker processes that read their byte ranges
themselves, as conversion's are. Only the consumer's result of each batch and its readers come back, in
order, so memory is bounded by the batches in flight, the largest conversation and what they keep.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import sys
import tempfile
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, Self, TypeVar

from .._convert.assemble import detect_provider, mixed_providers
from .._convert.parallel import batch_source, read_range, workers_for
from .._convert.sources import Part, describe, expand
from .._gc import gc_paused
from .._json.elements import FIELDS, JS, LONE, PartElements, Reader
from .._progress import progress_bar
from .._providers import registry
from .._providers.registry import DETECTION_WINDOW, OTHER
from .._sources import Input, explained
from .._stable import CHANGED, Changed, Stamp
from .._workers.processes import fork_context, start_pool
from ..errors import ConversionError, MixedProvidersWarning
from .conversations import ConversationReader
from .files import inside
from .rows import ROWS, Node

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

#: What a consumer makes of one batch: ``(nodes, provider, lone) -> result`` (a module-level function, or a
#: ``functools.partial`` of one, so that worker processes can be handed it); ``lone`` holds the ordinals of
#: the batch's conversations whose JSON escapes a lone surrogate (None: not known, any may), as only their
#: texts can hold one.
Consumer = Callable[[list[Node], str, "frozenset[int] | None"], T]


class Tally(Protocol[T_co]):
    """What takes a batch's conversations one at a time, for a job that needs no node rows."""

    def add(self, element: object) -> bool | None:
        """Take one element: None when it is no conversation of the provider, else whether the envelope
        keeps the conversation."""

    def result(self) -> T_co:
        """What was made of the conversations taken."""


class ElementReader(Protocol):
    """What takes every element of the export's array once its provider is known, with the element's bytes
    (for a job that looks at how the element is written, or parses only the elements it needs)."""

    def element(self, element: object, provider: str, data: Any, start: int, end: int) -> None:
        """One element, whose JSON text is ``data[start:end]``."""

    def extend(self, later: Self) -> None:
        """Add what another reader found in the elements after those this one was handed."""


@dataclass(frozen=True)
class Job(Generic[T]):
    """What is made of each batch: ``make``'s result of its nodes (``texts``: with every node's text, else
    only those the envelope keeps carry theirs), or with ``tally`` (called with the provider, afresh for
    each batch) the result of its conversations, with no node rows made; and ``beside``: readers made
    afresh for the batch (each called with no argument), handed each conversation of the export's
    provider whole; ``elements``: readers made afresh for the batch, handed every element."""

    make: Consumer[T] | None
    texts: bool = True
    beside: tuple[Callable[[], ConversationReader], ...] = ()
    tally: Callable[[str], Tally[T]] | None = None
    elements: tuple[Callable[[], ElementReader], ...] = ()


@dataclass
class Piece(Generic[T]):
    """A consumer's result for one batch, with the batch's counts: conversations of the provider
    (``conversations``), of them those the envelope keeps (``kept``), and elements of the other
    provider's shape (``foreign``, which conversion leaves out); and the batch's readers (``readers``,
    those of the job's ``beside`` then those of its ``elements``)."""

    value: T
    conversations: int
    kept: int
    foreign: int
    notes: list[tuple[str, type[Warning]]] = field(default_factory=list)
    readers: list[Any] = field(default_factory=list)
    #: the part the batch is in, as conversion names it, and the provider each of the batch's first
    #: elements is a conversation of (see :func:`memvelope_tools._providers.registry.provider_of`), when known
    first: tuple[str, list[str | None]] | None = None


@dataclass
class Whole(Generic[T]):
    """What one pass read: the provider, the consumer's results in export order, and the readers asked
    for beside the nodes, each holding what it found in every batch, in order."""

    provider: str
    pieces: list[Piece[T]] = field(default_factory=list)
    readers: list[Any] = field(default_factory=list)

    @property
    def conversations(self) -> int:
        """Conversations of the provider's shape, every one read."""
        return sum(p.conversations for p in self.pieces)


class Taking(Generic[T]):
    """The job's piece of a batch of elements (parsed conversations of ``provider``, of the part at
    ``part`` inside the export; ``origin``: that part as conversion names it, when known), taken one
    element at a time."""

    def __init__(self, provider: str, job: Job[T], part: str = "", origin: str | None = None) -> None:
        self.provider, self.job, self.part, self.origin = provider, job, part, origin
        self._first: list[str | None] = []
        self._rows = ROWS[provider]
        self._tally = None if job.tally is None else job.tally(provider)
        self._other = registry.conversation_test(OTHER[provider])
        self._readers = [new() for new in job.beside]
        self._elements = [new() for new in job.elements]
        self._out: list[Node] = []
        self._lone: set[int] | None = set()
        self.conversations = self.kept = self.foreign = 0

    def add(self, element: object, flags: int | None = None, data: Any = None, start: int = 0, end: int = 0) -> None:
        """Take the next element (``flags``: the scanner's flags of it, None when not known; ``data``,
        ``start``, ``end``: where its JSON text is, for the job's element readers)."""
        for each in self._elements:
            each.element(element, self.provider, data, start, end)
        if self.origin is not None and len(self._first) < DETECTION_WINDOW:
            self._first.append(registry.provider_of(element))
        self.foreign += self._other(element)
        job = self.job
        if self._tally is None:
            found = self._rows(element, self.conversations, self.kept, self._out, job.texts)
        else:
            found = self._tally.add(element)
        if found is None:
            return
        if flags is None:
            self._lone = None
        elif self._lone is not None and flags & LONE:
            self._lone.add(self.conversations)
        for reader in self._readers:
            reader.take(element, self.provider, self.part)  # type: ignore[arg-type]  # a conversation: a dict
        self.conversations += 1
        self.kept += found

    def piece(self) -> Piece[T]:
        """The job's result of the elements taken, with their counts and readers."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if self._tally is not None:
                value = self._tally.result()
            else:
                assert self.job.make is not None
                lone = None if self._lone is None else frozenset(self._lone)
                value = self.job.make(self._out, self.provider, lone)
        notes = [(str(w.message), w.category) for w in caught]
        readers: list[Any] = [*self._readers, *self._elements]
        first = None if self.origin is None else (self.origin, self._first)
        return Piece(value, self.conversations, self.kept, self.foreign, notes, readers, first)


def take(
    elements: Iterable[object],
    provider: str,
    job: Job[T],
    part: str = "",
    flags: Sequence[int] | None = None,
    texts: Sequence[tuple[Any, int, int]] | None = None,
) -> Piece[T]:
    """The job's piece of ``elements`` (parsed conversations of ``provider``, of the part at ``part`` inside
    the export; ``flags``: the scanner's flags of each, when known; ``texts``: where the JSON text of each
    is, ``(data, start, end)``, for the job's element readers)."""
    taking = Taking(provider, job, part)
    for n, element in enumerate(elements):
        if texts is None:
            taking.add(element, None if flags is None else flags[n])
        else:
            taking.add(element, None if flags is None else flags[n], *texts[n])
    return taking.piece()


def _texts(data: Any, found: list[int]) -> list[tuple[Any, int, int]]:
    """Where the JSON text of each element ``found`` (a scan's list) is in ``data``."""
    return [(data, found[k + 2], found[k + 3]) for k in range(0, len(found), FIELDS)]


def work(
    source: bytes | tuple[str, int, int, Stamp], found: list[int], provider: str, job: Job[T], part: str
) -> Piece[T]:
    """In a worker process: :func:`take` of the elements ``found`` (a scan's list, positions relative to
    the batch's first byte) in ``source`` (the batch's bytes, or the file range holding them);
    :class:`~memvelope_tools._stable.Changed` when the file changed since the parent read it."""
    with gc_paused():
        data = read_range(source)
        reader = Reader(JS)
        values = (reader.value(data, *found[k + 2 : k + FIELDS]) for k in range(0, len(found), FIELDS))
        texts = _texts(data, found) if job.elements else None
        return take(values, provider, job, part, found[4::FIELDS], texts)


class _Pool(Generic[T]):
    """Worker processes taking batches in order, at most two per worker in flight."""

    def __init__(self, workers: int, meanwhile: Callable[[], object] | None = None) -> None:
        self._executor = start_pool(workers, preload=[__name__])
        self._limit = 2 * workers
        self._meanwhile = meanwhile
        self.pending: deque[tuple[str, Future[Piece[T]]]] = deque()

    def submit(
        self,
        tag: str,
        source: bytes | tuple[str, int, int, Stamp],
        found: list[int],
        provider: str,
        job: Job[T],
        part: str,
    ) -> None:
        self.pending.append((tag, self._executor.submit(work, source, found, provider, job, part)))

    def full(self) -> bool:
        return len(self.pending) >= self._limit

    def idle(self) -> None:
        """Do what was asked to be done while the workers are busy, once."""
        meanwhile = self._meanwhile
        if meanwhile is not None:
            self._meanwhile = None
            meanwhile()

    def next(self) -> Piece[T]:
        self.idle()
        tag, future = self.pending.popleft()
        try:
            return future.result()
        except Changed:
            raise ConversionError(CHANGED, reason="changed", source=tag) from None

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)


class _Detection:
    """The first elements of the merged array, until they tell the provider as they tell the converter."""

    def __init__(self, source: str | None) -> None:
        self.source = source
        self.head: list[object] = []
        self.head_parts: list[str] = []  # the part of each of them, inside the export
        self.head_texts: list[tuple[Any, int, int]] = []  # the JSON text of each, for the job's element readers
        self.provider: str | None = None
        self.error: ConversionError | None = None
        self.non_arrays = 0
        self.documents: list[tuple[str, str]] = []
        self.taken = False  # whether the first elements were handed on

    @property
    def waiting(self) -> bool:
        return self.provider is None and self.error is None

    def decide(self) -> None:
        try:
            self.provider = detect_provider(
                self.head, self.source, non_arrays=self.non_arrays, documents=self.documents
            )
        except ConversionError as exc:
            if exc.reason == "unsupported-provider":
                raise
            self.error = exc  # raised once every part was read, so that a broken later part is named first

    def take(self, job: Job[T]) -> list[Piece[T]]:
        """The job's pieces of the first elements, a piece for each part they lie in."""
        assert self.provider is not None
        pieces: list[Piece[T]] = []
        start = 0
        for end in range(1, len(self.head) + 1):
            if end == len(self.head) or self.head_parts[end] != self.head_parts[start]:
                texts = self.head_texts[start:end] if job.elements else None
                pieces.append(take(self.head[start:end], self.provider, job, self.head_parts[start], texts=texts))
                start = end
        return pieces


def read_parts(
    parts: Sequence[Part],
    job: Job[T],
    *,
    progress: bool | None = None,
    workers: int | None = None,
    meanwhile: Callable[[], object] | None = None,
    inside: Callable[[str], str] | None = None,
) -> Whole[T]:
    """Read every node of the export whose conversation parts are ``parts``, in order, doing ``job`` on
    each batch of conversations. ``workers`` worker processes parse the batches after the first elements
    (None: as ``convert`` chooses, one per core for an export of 32 MB or more; 1: none). With workers,
    ``meanwhile`` is called once, the first time this process waits for them (to import what the results
    need here, say). ``inside`` gives the path inside the export of a part by its name (the readers beside
    the nodes are told it; default: the name).

    Raises ConversionError (and InputError) as conversion does: a part that cannot be read or is not
    JSON, an export whose provider cannot be told, another provider's export.
    """
    total = sum(p.size or 0 for p in parts) or None
    count = workers_for(total or 0, workers)
    if workers is None and count > 1 and not _may_start_workers():
        count = 1
    detection = _Detection(describe(parts))
    results: list[Piece[T] | None] = []  # None: the pool's next piece, in order
    pool: _Pool[T] | None = _Pool(count, meanwhile) if count > 1 else None
    try:
        with progress_bar(total, desc="reading nodes", unit="B", enabled=progress) as bar, gc_paused():
            for part in parts:
                elements = PartElements(part, Reader(JS), on_bytes=bar.update)
                name = part.name if inside is None else inside(part.name)
                _read_part(part, name, elements, detection, job, pool, results)
            if detection.waiting:
                detection.decide()
                if detection.provider is not None:
                    results += detection.take(job)
            if pool is not None:
                pool.idle()
            if detection.error is not None:
                raise detection.error
            assert detection.provider is not None
            whole = Whole[T](detection.provider)
            for piece in results:
                whole.pieces.append(piece if piece is not None else _next(pool))
    finally:
        if pool is not None:
            pool.close()
    whole.readers = [new() for new in (*job.beside, *job.elements)]
    for piece in whole.pieces:
        for reader, later in zip(whole.readers, piece.readers, strict=True):
            reader.extend(later)
        piece.readers = []
    for piece in whole.pieces:
        for text, category in piece.notes:
            warnings.warn(text, category, stacklevel=2)
    foreign = sum(p.foreign for p in whole.pieces)
    if foreign:
        warnings.warn(
            MixedProvidersWarning(mixed_providers(whole.provider, foreign), provider=whole.provider, left_out=foreign),
            stacklevel=2,
        )
    return whole


def _may_start_workers() -> bool:
    """Whether worker processes can start without asking anything of the caller: they fork (this process
    runs one thread), or the main module is no script file (a notebook, ``python -c``). A clean interpreter
    started for a worker imports the main script again, which runs a script that is not guarded by
    ``if __name__ == "__main__":`` once more."""
    if fork_context() is not None:
        return True
    return getattr(sys.modules.get("__main__"), "__file__", None) is None


def _next(pool: _Pool[T] | None) -> Piece[T]:
    assert pool is not None
    return pool.next()


def _read_part(
    part: Part,
    name: str,
    elements: PartElements,
    detection: _Detection,
    job: Job[T],
    pool: _Pool[T] | None,
    results: list[Piece[T] | None],
) -> None:
    shows: str | None = None  # the provider whose export a part that is no array shows
    for buf, found, offset in elements.ranges():
        if not elements.is_array:
            members = elements.values(buf, found, offset)
            shows = shows or next((p for p in map(registry.within, members) if p is not None), None)
            continue
        if detection.error is not None:
            continue  # read on only to report a broken later part
        k = 0
        while k < len(found) and detection.waiting:
            detection.head += elements.values(buf, found[k : k + FIELDS], offset)
            detection.head_parts.append(name)
            if job.elements:
                text = bytes(buf[found[k + 2] : found[k + 3]])
                detection.head_texts.append((text, 0, len(text)))
            k += FIELDS
            if len(detection.head) == DETECTION_WINDOW:
                detection.decide()
        provider = detection.provider
        if provider is None:
            continue
        if k and not detection.taken:
            detection.taken = True
            # The first elements go to a worker with the rest of this range when they all lie in it, so that
            # this process is free to read on; else this process takes them.
            if pool is None or len(detection.head) * FIELDS != k:
                results += detection.take(job)
            else:
                k = 0
        if k == len(found):
            continue
        rest = found[k:]
        if pool is None:
            texts = _texts(buf, rest) if job.elements else None
            results.append(take(elements.values(buf, rest, offset), provider, job, name, rest[4::FIELDS], texts))
            continue
        while pool.full():
            _settle(pool, results)
        stamp = elements.stamp
        at = None if part.path is None or stamp is None else (part.path, offset + elements.skip, stamp)
        source, shifted = batch_source(buf, rest, at)
        pool.submit(part.name, source, shifted, provider, job, name)
        results.append(None)
    if not elements.is_array:
        detection.non_arrays += 1
        if shows is not None:
            detection.documents.append((shows, part.name))


def _settle(pool: _Pool[T], results: list[Piece[T] | None]) -> None:
    """Take the oldest piece in flight into its place in ``results``."""
    position = results.index(None)
    results[position] = pool.next()


@contextlib.contextmanager
def export_parts(found: Input) -> Iterator[list[Part]]:
    """The conversation parts of a resolved export, as conversion takes them (a zip given as bytes is
    read from a temporary file); errors about a part given by path are worded as for every input."""
    if len(found.parts) == 1 and isinstance(found.parts[0], bytes):
        data: bytes = found.parts[0]
        if data[:2] != b"PK":
            yield [Part(found.name or "<bytes>", lambda: io.BytesIO(data), len(data))]
            return
        with tempfile.TemporaryDirectory(prefix="memvelope-") as tmp:
            path = Path(tmp) / "export.zip"
            path.write_bytes(data)
            yield expand([path]).parts
        return
    paths = [p for p in found.parts if isinstance(p, str | os.PathLike)]
    with explained(paths):
        yield expand(paths).parts


def read_export(
    found: Input,
    job: Job[T],
    *,
    progress: bool | None = None,
    workers: int | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> Whole[T]:
    """:func:`read_parts` of a resolved export, its parts named by their path inside it."""
    files = found.files()
    naming = None if files is None else functools.partial(inside, tuple(files))
    with export_parts(found) as parts:
        return read_parts(parts, job, progress=progress, workers=workers, meanwhile=meanwhile, inside=naming)
