"""Both cores: ranges of elements parsed, normalised and serialised by worker processes.

The parent reads and scans the parts (the scan checks the grammar and finds the elements), detects the
provider from the first elements itself, then hands each later batch of elements, as bytes, to a
worker, which returns the batch's conversations as canonical envelope bytes with their counts. The
parent writes the pieces in order, so the bytes are those of one process.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Final

from .assemble import take_all
from .elements import FIELDS, JS, Reader
from .envelope import fragment

PARALLEL_ABOVE: Final = 32 << 20  # bytes of input: smaller exports stay in one process
SEPARATOR: Final = b",\n    "


@dataclass(frozen=True)
class Piece:
    """What a worker made of a batch: the conversations' envelope bytes (joined by ``SEPARATOR``) and
    the counts the envelope's meta and the conversion log need."""

    body: bytes
    conversations: int
    messages: int
    elements: int
    foreign: int
    replaced: int


def work(data: bytes, found: list[int], provider: str, use_orjson: bool) -> Piece:
    """Parse the elements ``found`` in ``data`` (a scan's list), normalise and serialise them."""
    enabled = gc.isenabled()
    gc.disable()  # parse trees hold no cycles (see pipeline.gc_paused)
    try:
        reader = Reader(JS, use_orjson=use_orjson)
        values = [value for _, value in reader.children(data, found)]
        conversations, messages, foreign = take_all(provider, values)
        body = SEPARATOR.join(map(fragment, conversations))
        return Piece(body, len(conversations), messages, len(values), foreign, reader.replaced)
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


def _context() -> multiprocessing.context.BaseContext:
    # fork warns on 3.12+ once the parent has threads (and is unsafe then); forkserver starts clean
    # processes quickly where it exists (not on Windows), spawn elsewhere.
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    return multiprocessing.get_context(method)


class Pool:
    """Worker processes taking batches in order; at most ``2 * workers`` batches in flight, so memory
    stays bounded. ``write(tag, piece)`` receives each piece, in submission order."""

    def __init__(self, workers: int, write: Callable[[str, Piece], None]) -> None:
        self._executor = ProcessPoolExecutor(max_workers=workers, mp_context=_context())
        self._limit = 2 * workers
        self._pending: deque[tuple[str, Future[Piece]]] = deque()
        self._write = write

    def submit(self, tag: str, buf: bytes, found: list[int], provider: str, use_orjson: bool) -> None:
        """A batch: the children ``found`` in ``buf`` (array elements, as a scan lists them), ``tag``
        passed on to ``write`` with its piece."""
        start, end = found[2], found[-3]
        shifted = list(found)
        for k in range(0, len(shifted), FIELDS):
            shifted[k + 2] -= start
            shifted[k + 3] -= start
        while len(self._pending) >= self._limit:
            self._next()
        self._pending.append((tag, self._executor.submit(work, buf[start:end], shifted, provider, use_orjson)))

    def drain(self) -> None:
        """Wait for every batch and write its piece."""
        while self._pending:
            self._next()

    def _next(self) -> None:
        tag, future = self._pending.popleft()
        self._write(tag, future.result())

    def close(self) -> None:
        """Stop the workers (dropping batches not written)."""
        self._executor.shutdown(wait=True, cancel_futures=True)
