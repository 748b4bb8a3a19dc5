"""The whole-export tables of an export read from the pass that converts it: each element conversion
parses is also handed to a :class:`~memvelope_tools._whole.read.Taking` (in the conversion's worker
processes, when it has them), so the export's conversations are read once for the envelope's tables,
the nodes, the files, the projects and the memory alike (see :mod:`memvelope_tools._stream`).

A consumer of the pass (:class:`ExportPass`) gets each batch's piece in the export's order, with the
number of conversations the envelope kept before it, and merges the batches' readers.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from .._convert.parallel import Beside
from .._providers.registry import DETECTION_WINDOW
from .._sources import Input
from .files import inside
from .read import Job, Piece, Taking, Whole

__all__ = ["ExportPass", "Tapper"]

T = TypeVar("T")


@dataclass(frozen=True)
class Tapper(Generic[T]):
    """What makes the taker of a batch (it travels to the worker processes): the job, and the files of
    the export on disk, whose readers are told the path inside the export of the part a conversation is in."""

    job: Job[T]
    files: tuple[Path, ...] | None = None

    def __call__(self, provider: str, part: str) -> Taking[T]:
        return Taking(provider, self.job, part if self.files is None else inside(self.files, part), origin=part)


class ExportPass(Generic[T]):
    """A consumer of one export's conversion pass: ``job`` is done on each batch of its elements, and
    ``each(piece, before)`` called here with the batch's piece, in order, ``before`` being the
    conversations the envelope keeps from the batches before it (and ``again()`` when they are read
    again). :attr:`readers` are the job's readers (those of its ``beside``, then those of its
    ``elements``), each holding what it found in every batch; :attr:`heads` the provider each of the
    first elements of each part is a conversation of (by the part's name as conversion names it)."""

    def __init__(
        self,
        found: Input,
        job: Job[T],
        each: Callable[[Piece[T], int], object],
        again: Callable[[], object] | None = None,
    ) -> None:
        self.found = found
        self.job = job
        self.each = each
        self.again = again
        files = found.files()
        self.tapper = Tapper(job, None if files is None else tuple(files))
        self.readers: list[Any] = []
        self.conversations = self.kept = 0
        self._begin()

    def _begin(self) -> None:
        self.readers = [new() for new in (*self.job.beside, *self.job.elements)]
        self.heads: dict[str, list[str | None]] | None = {}  # None: not known of every batch
        self.conversations = self.kept = 0

    def restart(self) -> None:
        """Forget the batches taken so far (``again`` is called to forget what ``each`` was given): the
        export is read again from its start."""
        self._begin()
        if self.again is not None:
            self.again()

    def beside(self) -> Beside:
        """What the conversion is handed to do this pass's job beside its own."""
        return Beside(self.tapper, self.put)

    def put(self, piece: Piece[T]) -> None:
        """Take the next batch's piece."""
        for text, category in piece.notes:
            warnings.warn(text, category, stacklevel=2)
        for reader, later in zip(self.readers, piece.readers, strict=True):
            reader.extend(later)
        piece.readers = []
        self._head(piece.first)
        self.each(piece, self.kept)
        self.conversations += piece.conversations
        self.kept += piece.kept

    def _head(self, first: tuple[str, list[str | None]] | None) -> None:
        """Add a batch's first elements to the :attr:`heads` of its part."""
        if self.heads is None:
            return
        if first is None:
            self.heads = None
            return
        part, providers = first
        head = self.heads.setdefault(part, [])
        head += providers[: DETECTION_WINDOW - len(head)]

    def take(self, whole: Whole[T]) -> None:
        """Take every batch's piece of the export read in a pass of its own, not beside its conversion
        (:func:`~memvelope_tools._whole.read.read_export` of :attr:`job`), and its readers."""
        self.heads = None  # read apart from conversion: the parts are named inside the export
        for piece in whole.pieces:
            self.each(piece, self.kept)
            self.conversations += piece.conversations
            self.kept += piece.kept
        self.readers = whole.readers
