"""One stream of Arrow record batches per input: its conversations and messages, a batch of whole
conversations at a time, read in one pass from the input as the resolver found it.

* An export given by path is converted as ``memvelope convert`` converts it, and its envelope's
  conversations are read while they are made (the conversation in this thread, the reading and the
  consumer on another); nothing of the envelope is held but the batch at hand.
* An envelope file is read a window at a time.
* An envelope given parsed or as bytes, an export given as bytes, and an envelope the windowed reading
  refuses (an unusual file, read whole to say what is wrong with it) are read whole, then handed on in
  batches.
* A history given as a Parquet folder or as frames (search and topics take them) is read whole, then
  handed on in batches of messages (:func:`history_stream`).

Each batch is a conversations table (:data:`~memvelope_tools._frames.columns.CONVERSATION_COLUMNS`) and
the messages table of the same conversations (:data:`~memvelope_tools._frames.columns.MESSAGE_COLUMNS`),
``conv_index`` numbered on from the batch before, so the batches of an input together are the tables
the frame functions give for it. A consumer (:class:`Sink`) works on each batch and lets it go.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from typing import Any, Final, Protocol

import pyarrow as pa

from ._convert.log import ConversionLog
from ._convert.pipeline import convert_export, open_export
from ._frames.flatten import flatten_batches, flatten_export_batches, flatten_file_batches
from ._json.elements import parse_json, read_file, read_windows
from ._json.walker import Fallback
from ._read import check
from ._sources import Input
from ._tags import ENVELOPE_TAG
from .errors import FormatError

__all__ = ["ROWS", "HistorySink", "Sink", "history_batch", "history_stream", "stream"]

#: Messages in a batch, at least (a batch is the conversations of a window of the envelope's bytes, or of
#: several windows until they hold this many messages).
ROWS: Final = 1024
_WINDOW: Final = 4 << 20  # bytes of an envelope file read at a time


class Sink(Protocol):
    """What takes the batches of one input, in order."""

    def add(self, conversations: pa.Table, messages: pa.Table) -> None:
        """Work on one batch: the tables of whole conversations."""

    def restart(self) -> None:
        """Forget the batches of this input taken so far: it is read again from its start."""


def stream(
    found: Input,
    sink: Sink,
    *,
    rows: int = ROWS,
    progress: bool | None = None,
    log: ConversionLog | None = None,
    window: int | None = None,
) -> str:
    """Give ``sink`` the tables of the envelope ``found`` holds (an export converted), a batch of whole
    conversations at a time; return its provider.

    A batch is handed on once ``rows`` messages or more were read and a window of the envelope's bytes
    (``window`` bytes, default 4 MiB) is done. ``log`` learns what an export's conversion read and left
    out. Errors are those of the frame functions for the same input: FormatError (``wrong-layer``) for a
    Facts IR document.
    """
    window = window or _WINDOW
    sink = _Giving(sink)
    label, name = found.label, found.name or found.label
    if found.kind == "export":
        return _export(found, sink, rows, progress, log, window)
    if found.kind in ("parquet", "frame", "tables"):
        raise TypeError(f"a {found.kind} input is no envelope to stream (see history_stream)")
    if found.kind == "envelope" and found.path is not None and found.value is None:
        provider = _envelope_file(found, sink, rows, progress, window)
        if provider is not None:
            return provider
    data: Any = read_file(os.fspath(found.path), progress) if found.path is not None and found.value is None else None
    doc = parse_json(data, found.name) if data is not None else found.document(progress)
    del data
    layer = check(doc, source_name=found.name, conversations=False)
    if layer != "envelope":
        raise FormatError(
            f"expected an envelope ({ENVELOPE_TAG}), found a Facts IR document", reason="wrong-layer", source=name
        )
    owned = not (found.path is None and isinstance(found.value, dict))
    return flatten_batches(doc, label, name, sink.add, rows=rows, owned=owned)


def _export(found: Input, sink: Sink, rows: int, progress: bool | None, log: ConversionLog | None, window: int) -> str:
    label, name = found.label, found.name or found.label
    try:
        provider = flatten_export_batches(
            lambda write, on_provider: convert_export(
                found, write, progress=progress, on_provider=on_provider, log=log
            ),
            label,
            name,
            sink.add,
            rows=rows,
            window=window,
        )
    except Fallback:
        sink.restart()
        provider = None
    if provider is not None:
        return provider
    doc = open_export(found, report=log, progress=progress)
    return flatten_batches(doc, label, name, sink.add, rows=rows, owned=True)


def _envelope_file(found: Input, sink: Sink, rows: int, progress: bool | None, window: int) -> str | None:
    """The envelope file read a window at a time, or None when it is to be read whole instead."""
    assert found.path is not None
    with read_windows(os.fspath(found.path), window=window) as windows:
        if windows is None:
            return None
        try:
            return flatten_file_batches(
                windows, found.label, found.name or found.label, sink.add, rows=rows, progress=progress
            )
        except Fallback:
            windows.finish()  # a file that changed meanwhile is refused, not read again
            sink.restart()
            return None


class _Giving:
    """A sink that, once it has worked on a batch, gives the memory freed meanwhile back to the system (the
    allocators keep it otherwise, and the process would grow with the number of batches it was given)."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    def add(self, conversations: pa.Table, messages: pa.Table) -> None:
        self.sink.add(conversations, messages)
        del conversations, messages
        give_back_memory()

    def restart(self) -> None:
        self.sink.restart()


def give_back_memory() -> None:
    """Return the memory freed so far to the system: Arrow's pool, and the C library's where it can."""
    pa.default_memory_pool().release_unused()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).malloc_trim(0)


class HistorySink(Protocol):
    """What takes the history batches of one input, in order (see :func:`history_stream`)."""

    def add(self, history: pa.Table) -> None:
        """Work on one batch of messages, each with its conversation's title."""

    def restart(self) -> None:
        """Forget the batches of this input taken so far: it is read again from its start."""


def history_stream(
    found: Input, sink: HistorySink, *, rows: int = ROWS, progress: bool | None = None, log: ConversionLog | None = None
) -> str | None:
    """Give ``sink`` the messages of a history (any input search and topics take), each with its
    conversation's ``title`` (the columns of :data:`~memvelope_tools._corpus.HISTORY_COLUMNS`), about
    ``rows`` at a time: an envelope or export as :func:`stream` reads it (its provider is returned), a
    Parquet folder or frames sliced (None is). A conversation's messages may be split between two batches
    only where the history given holds them apart."""
    if found.kind in ("export", "envelope"):
        return stream(found, _Titled(sink), rows=rows, progress=progress, log=log)
    from . import _corpus as corpus

    if found.kind == "parquet":
        assert found.path is not None
        frame = corpus.from_parquet(found.path)
    elif found.kind == "tables":
        frame = corpus.from_tables(found.value["messages"], found.value.get("conversations"))
    elif found.kind == "frame":
        frame = corpus.from_messages(found.value)
    else:
        raise FormatError(
            f"expected an envelope ({ENVELOPE_TAG}), found a Facts IR document",
            reason="wrong-layer",
            source=found.name or found.label,
        )
    table = pa.Table.from_pandas(frame, preserve_index=False)
    del frame
    for start in range(0, max(table.num_rows, 1), rows):
        sink.add(table.slice(start, rows))
        give_back_memory()
    return None


class _Titled:
    """A :class:`Sink` giving a :class:`HistorySink` each batch's messages with their conversations' titles."""

    def __init__(self, sink: HistorySink) -> None:
        self.sink = sink

    def add(self, conversations: pa.Table, messages: pa.Table) -> None:
        self.sink.add(history_batch(conversations, messages))

    def restart(self) -> None:
        self.sink.restart()


def history_batch(conversations: pa.Table, messages: pa.Table) -> pa.Table:
    """One batch's messages as a history batch: the columns search and topics read, and each message's
    conversation's title (the batch's conversations are numbered on, one after the other)."""
    first = int(conversations.column("conv_index")[0].as_py()) if conversations.num_rows else 0
    at = pa.array(messages.column("conv_index").to_numpy() - first)
    columns = ("source", "conv_index", "conversation_id", "position", "role", "ts", "text")
    return pa.table(
        {**{name: messages.column(name) for name in columns}, "title": conversations.column("title").take(at)}
    )
