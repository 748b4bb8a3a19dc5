"""The index of a history built from its batches as they stream (see
:func:`memvelope_tools._corpus.history_stream`): each batch's messages are added to the index and let go.

A history of fewer than :data:`~memvelope_tools._search.index.DISK_MIN` messages and
:data:`~memvelope_tools._search.index.DISK_TEXT` bytes of text is indexed in memory, as
:meth:`~memvelope_tools._search.index.SearchIndex.build` indexes it; from either on, the index and the rows a
result shows are written to a temporary folder as the batches come, and the rows are read back mapped from
the file. The rows keep the history's order; the order that breaks equal scores is kept beside them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._frames.folders import INDEX_FOLDER
from . import index as held_index
from .engine import BATCH, FORMAT, ROWS, add_rows, as_indexed, engine_errors, open_engine, role_codes
from .index import SearchIndex, add_documents

if TYPE_CHECKING:
    import tantivy

#: Bytes the engine's indexing threads buffer before writing, indexing into a temporary folder.
_HEAP = 64 << 20

_ROWS_SCHEMA = pa.schema(
    [
        ("source", pa.string()),
        ("conv_index", pa.int64()),
        ("conversation_id", pa.string()),
        ("title", pa.string()),
        ("position", pa.int64()),
        ("role", pa.int8()),
        ("ts", pa.int64()),
        ("text", pa.string()),
    ]
)


class Again(Exception):
    """An input is read again from its start after some of its rows were written to the temporary folder."""


def _rows(history: pa.Table) -> pa.Table:
    """What the index keeps of a history batch's messages: the rows a result shows, text as indexed."""
    text = history.column("text")
    return pa.table(
        {
            "source": history.column("source").cast(pa.string()),
            "conv_index": history.column("conv_index").cast(pa.int64()),
            "conversation_id": history.column("conversation_id").cast(pa.string()),
            "title": history.column("title").cast(pa.string()),
            "position": history.column("position").cast(pa.int64()),
            "role": role_codes(history.column("role")),
            "ts": history.column("ts").cast(pa.int64()),
            "text": pa.chunked_array([as_indexed(c) for c in text.chunks], type=pa.string()),
        },
        schema=_ROWS_SCHEMA,
    )


def tie_order(rows: pa.Table) -> np.ndarray:
    """Each row's place in the order that breaks equal scores: dated first, the most recent first, then
    the rows' order."""
    ts = rows.column("ts")
    undated = pc.is_null(ts).to_numpy(zero_copy_only=False)
    ms = ts.fill_null(0).to_numpy()
    n = len(ms)
    tie = np.empty(n, dtype=np.int64)
    tie[np.lexsort((np.arange(n), -ms, undated))] = np.arange(n)
    return tie


class Indexing:
    """A :class:`~memvelope_tools._corpus.HistorySink` that indexes each batch it is given (held until
    :data:`~memvelope_tools._search.index.DISK_MIN` messages or
    :data:`~memvelope_tools._search.index.DISK_TEXT` bytes of text are reached, then written to a temporary
    folder as it comes)."""

    def __init__(self, digest: bool) -> None:
        self.held: list[pa.Table] = []
        self.n = 0
        self.text = 0  # bytes of text held
        self.mark = (0, 0, 0)
        self.digest = hashlib.blake2b(digest_size=20) if digest else None
        self.digest_mark = self.digest.copy() if self.digest is not None else None
        self.disk: _Disk | None = None

    def begin(self) -> None:
        """An input starts (see :meth:`restart`)."""
        self.mark = (len(self.held), self.n, self.text)
        self.digest_mark = self.digest.copy() if self.digest is not None else None

    def restart(self) -> None:
        """Forget what the input begun last gave so far: it is read again."""
        if self.disk is not None and self.disk.docs > self.mark[1]:
            raise Again
        held, self.n, self.text = self.mark
        del self.held[held:]
        self.digest = self.digest_mark.copy() if self.digest_mark is not None else None

    def add(self, history: pa.Table) -> None:
        """Index one history batch (see :data:`memvelope_tools._corpus.HISTORY_COLUMNS`)."""
        if not history.num_rows:
            return
        rows = _rows(history)
        if self.digest is not None:
            for column in rows.columns:
                for chunk in column.chunks:
                    self.digest.update(f"{len(chunk)}:{chunk.null_count}".encode())
                    for buffer in chunk.buffers():
                        if buffer is not None:
                            self.digest.update(memoryview(buffer))
        self.n += rows.num_rows
        if self.disk is not None:
            self.disk.add(rows)
            return
        self.held.append(rows)
        self.text += rows.column("text").nbytes
        if self.n >= held_index.DISK_MIN or self.text >= held_index.DISK_TEXT:
            self.disk = _Disk()
            self.held.reverse()
            while self.held:  # each table let go once written, as the engine's buffer fills
                self.disk.add(self.held.pop())
            self.text = 0

    def hexdigest(self) -> str | None:
        return None if self.digest is None else self.digest.hexdigest()

    def finish(self) -> SearchIndex:
        """The index of everything added."""
        key = self.hexdigest()
        metadata = {"format": FORMAT, "fingerprint": "" if key is None else "stream:" + key}
        if self.disk is not None:
            return self.disk.finish(metadata)
        rows = pa.concat_tables(self.held) if self.held else _ROWS_SCHEMA.empty_table()
        self.held.clear()
        rows = rows.replace_schema_metadata(metadata)
        with engine_errors(None):
            engine = open_engine(None, create=True)
            add_documents(engine, rows, np.arange(rows.num_rows), 0)
            return SearchIndex(engine, rows, tie=tie_order(rows))

    def abandon(self) -> None:
        """Let go of what was written so far."""
        self.held.clear()
        if self.disk is not None:
            self.disk.abandon()


class _Disk:
    """The index being written to a temporary folder, with the rows a result shows beside it."""

    def __init__(self) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="memvelope-search-", ignore_cleanup_errors=True)
        self.path = Path(self.folder.name) / INDEX_FOLDER
        self.docs = 0
        self.writer: tantivy.IndexWriter | None = None
        self.rows = contextlib.ExitStack()
        try:
            self.path.mkdir()
            with engine_errors(None):
                self.engine = open_engine(self.path, create=True)
                self.writer = self.engine.writer(heap_size=_HEAP, num_threads=max(1, min(2, os.cpu_count() or 1)))
            sink = self.rows.enter_context(pa.OSFile(os.fspath(self.path / ROWS), "wb"))
            self.out = self.rows.enter_context(pa.ipc.new_file(sink, _ROWS_SCHEMA))
        except BaseException:
            self.abandon()
            raise

    def add(self, rows: pa.Table) -> None:
        assert self.writer is not None
        with engine_errors(None):
            add_rows(self.writer, rows, np.arange(rows.num_rows), self.docs)
        self.out.write_table(rows, max_chunksize=BATCH)
        self.docs += rows.num_rows

    def finish(self, metadata: dict[str, str]) -> SearchIndex:
        assert self.writer is not None
        try:
            self.rows.close()
            with engine_errors(None):
                self.writer.commit()
                self.writer.wait_merging_threads()
                self.writer = None
            rows = pa.ipc.open_file(pa.memory_map(os.fspath(self.path / ROWS))).read_all()
            rows = rows.replace_schema_metadata(metadata)
            with engine_errors(None):
                index = SearchIndex(self.engine, rows, tie=tie_order(rows))
        except BaseException:
            self.abandon()
            raise
        index._temporary = self.folder
        return index

    def abandon(self) -> None:
        if self.writer is not None:
            with contextlib.suppress(BaseException):
                self.writer.rollback()
            self.writer = None
        with contextlib.suppress(Exception):
            self.rows.close()
        self.folder.cleanup()
