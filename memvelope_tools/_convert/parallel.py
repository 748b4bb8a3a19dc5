"""Both cores: ranges of elements parsed, normalised and serialised by worker processes.

The parent scans the parts (the scan checks the grammar and finds the elements), detects the provider
from the first elements itself, then hands each later batch of elements to a worker: as the file's
path and byte range when the part is a file on disk (the worker reads the range into its own memory,
and refuses it when the file no longer has the stamp the parent read), else as bytes. The worker
returns the batch's conversations as canonical envelope bytes with their counts; the parent writes the
pieces in order, so the bytes are those of one process.
"""

from __future__ import annotations

import gc
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from .._json.elements import FIELDS, JS, LONE, Reader
from .._stable import CHANGED, Changed, Stamp, changed
from .._workers.processes import start_pool
from ..errors import ConversionError
from .envelope import SEPARATOR, fragment, fragments

if TYPE_CHECKING:  # the pool is started by the worker layer
    from concurrent.futures import Future

PARALLEL_ABOVE: Final = 32 << 20  # bytes of input: smaller exports stay in one process

Source = bytes | tuple[str, int, int, Stamp]  # a batch's bytes, or (path, start, end, stamp) of the file holding them


class Taker(Protocol):
    """What takes a batch's elements beside conversion (see :class:`Beside`)."""

    def add(self, element: object, flags: int | None, data: Any, start: int, end: int) -> None:
        """The next element, its scanner ``flags`` (None: not known), its JSON text ``data[start:end]``."""

    def piece(self) -> object:
        """What was made of the elements taken."""


@dataclass(frozen=True)
class Beside:
    """What else is made of the elements conversion parses, each parsed once for both: ``start(provider,
    part)`` makes a taker for a batch of the elements of the part named ``part`` (it is handed to the
    worker processes, so a module-level function or an instance of a module-level class), and ``put`` is
    given each batch's piece here, in the export's order."""

    start: Callable[[str, str], Taker]
    put: Callable[[Any], None]


@dataclass(frozen=True)
class Piece:
    """What a worker made of a batch: the conversations' envelope bytes (joined by ``SEPARATOR``) and
    the counts the envelope's meta and the conversion log need; ``beside``: the piece of the batch's
    taker (see :class:`Beside`), when one was asked for."""

    body: bytes
    conversations: int
    messages: int
    elements: int
    foreign: int
    replaced: int
    beside: Any = None


def read_range(source: Source) -> bytes:
    if isinstance(source, bytes):
        return source
    path, start, end, before = source
    with open(path, "rb") as fh:
        data = os.pread(fh.fileno(), end - start, start)
        if len(data) != end - start or changed(fh.fileno(), before):
            raise Changed(CHANGED)
    return data


def work(
    source: Source,
    found: list[int],
    normalise: Callable[[object], dict[str, Any] | None],
    other: Callable[[object], bool],
    use_orjson: bool,
    taker: Callable[[], Taker] | None = None,
) -> Piece:
    """Parse the elements ``found`` (a scan's list, positions relative to the batch's first byte) in
    ``source``, normalise each with ``normalise`` and serialise them, counting those ``other`` (the
    other provider's shape check) accepts, and hand each to the taker ``taker`` makes, when given;
    :class:`~memvelope_tools._stable.Changed` when the file read changed since the parent read it."""
    enabled = gc.isenabled()
    gc.disable()  # parse trees hold no cycles (see memvelope_tools._gc)
    try:
        data = read_range(source)
        reader = Reader(JS, use_orjson=use_orjson)
        bodies: list[bytes] = []
        run: list[dict[str, Any]] = []  # conversations serialised together, none with a lone surrogate
        conversations = messages = foreign = 0
        taking = None if taker is None else taker()
        for k in range(0, len(found), FIELDS):
            _, _, start, end, flags, depth = found[k : k + FIELDS]
            element = reader.value(data, start, end, flags, depth)
            if taking is not None:
                taking.add(element, flags, data, start, end)
            foreign += other(element)
            conversation = normalise(element)
            del element
            if conversation is None:
                continue
            conversations += 1
            messages += len(conversation["messages"])
            if flags & LONE:
                if run:
                    bodies.append(fragments(run))
                    run = []
                bodies.append(fragment(conversation))
            else:
                run.append(conversation)
        if run:
            bodies.append(fragments(run))
        body = SEPARATOR.join(bodies)
        beside = None if taking is None else taking.piece()
        return Piece(body, conversations, messages, len(found) // FIELDS, foreign, reader.replaced, beside)
    finally:
        if enabled:
            gc.enable()


def workers_for(size: int, workers: int | None) -> int:
    """How many worker processes an export of ``size`` bytes gets (1: none, stay in this process)."""
    if workers is not None:
        return max(1, workers)
    if size < PARALLEL_ABOVE:
        return 1
    return min(os.cpu_count() or 1, 8)


def batch_source(buf: bytes, found: list[int], at: tuple[str, int, Stamp] | None) -> tuple[Source, list[int]]:
    """What a worker reads for the children ``found`` in ``buf``: their bytes, or with ``at`` (a file's
    path, where ``buf`` starts in it, its stamp as read) the file range holding them; and the children's
    bounds shifted to that range."""
    start, end = found[2], found[-3]
    shifted = list(found)
    for k in range(0, len(shifted), FIELDS):
        shifted[k + 2] -= start
        shifted[k + 3] -= start
    if at is None:
        return bytes(buf[start:end]), shifted
    path, shift, before = at
    return (path, start + shift, end + shift, before), shifted


class Pool:
    """Worker processes taking batches in order; at most ``2 * workers`` batches in flight, so memory
    stays bounded. The processes start at once, while the parent reads the first elements; ``write``
    (set before the first batch) receives each batch's tag and piece, in submission order."""

    def __init__(self, workers: int) -> None:
        self._executor = start_pool(workers, preload=[__name__])
        self._limit = 2 * workers
        self._pending: deque[tuple[str, Future[Piece]]] = deque()
        self.write: Callable[[str, Piece], None] | None = None

    def submit(
        self,
        tag: str,
        buf: bytes,
        found: list[int],
        normalise: Callable[[object], dict[str, Any] | None],
        other: Callable[[object], bool],
        use_orjson: bool,
        at: tuple[str, int, Stamp] | None = None,
        taker: Callable[[], Taker] | None = None,
    ) -> None:
        """A batch: the children ``found`` (array elements, as a scan lists them) in ``buf``, taken by
        ``normalise``, counted by ``other`` and handed to ``taker``'s taker as :func:`work` does. With ``at``
        (a file's path, the position of ``buf`` in it, the file's stamp as read), the worker reads the
        bytes from the file instead. ``tag`` (the part's name) is passed on to ``write`` with its piece."""
        source, shifted = batch_source(buf, found, at)
        while len(self._pending) >= self._limit:
            self._next()
        self._pending.append((tag, self._executor.submit(work, source, shifted, normalise, other, use_orjson, taker)))

    def drain(self) -> None:
        """Wait for every batch and write its piece."""
        while self._pending:
            self._next()

    def _next(self) -> None:
        tag, future = self._pending.popleft()
        try:
            piece = future.result()
        except Changed:
            raise ConversionError(CHANGED, reason="changed", source=tag) from None
        assert self.write is not None
        self.write(tag, piece)

    def release(self) -> None:
        """Let the workers exit (every batch written), without waiting for them: they leave while the
        parent writes the output."""
        self._executor.shutdown(wait=False)

    def close(self) -> None:
        """Stop the workers (dropping batches not written) and wait for them to exit."""
        self._executor.shutdown(wait=True, cancel_futures=True)
