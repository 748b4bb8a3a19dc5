"""One stream of Arrow record batches per input: its conversations and messages, a batch of whole
conversations at a time, read in one pass from the input as the resolver found it.

* An export given by path is converted as ``memvelope convert`` converts it, and the tables are built from
  its envelope's conversations as they are made, never written as bytes (the conversion in this thread,
  the building and the consumer on another); nothing of the envelope is held but the batch at hand.
* An envelope file is read a window at a time.
* An envelope given parsed or as bytes, an export given as bytes, and an envelope the windowed reading
  refuses (an unusual file, read whole to say what is wrong with it) are read whole, then handed on in
  batches.

Each batch is a conversations table (:data:`~memvelope_tools._frames.columns.CONVERSATION_COLUMNS`) and
the messages table of the same conversations (:data:`~memvelope_tools._frames.columns.MESSAGE_COLUMNS`),
``conv_index`` numbered on from the batch before, so the batches of an input together are the tables
the frame functions give for it. A consumer (:class:`Sink`) works on each batch and lets it go. Beside it,
the conversion of an export hands each conversation it parses to the consumers of the tables only the export
gives (:class:`~memvelope_tools._whole.tap.ExportPass`: nodes, files, projects, memory), so the export is read
once for all of them. Search and
topics read a history, which may also be a Parquet folder or frames, through
:func:`memvelope_tools._corpus.history_stream`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Final, Protocol

import pyarrow as pa

from ._convert.log import ConversionLog
from ._convert.pipeline import export_conversations, open_export
from ._frames.flatten import flatten_batches, flatten_export_batches, flatten_file_batches
from ._json.elements import parse_json, read_file, read_windows
from ._json.walker import Fallback
from ._pool import give_back_memory, lean_pool
from ._read import check
from ._sources import Input
from ._tags import ENVELOPE_TAG
from .errors import FormatError

if TYPE_CHECKING:
    from ._whole.tap import ExportPass

__all__ = ["ROWS", "Sink", "stream"]

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


@lean_pool()
def stream(
    found: Input,
    sink: Sink,
    *,
    rows: int = ROWS,
    progress: bool | None = None,
    log: ConversionLog | None = None,
    window: int | None = None,
    whole: ExportPass[Any] | None = None,
) -> str:
    """Give ``sink`` the tables of the envelope ``found`` holds (an export converted), a batch of whole
    conversations at a time; return its provider. For an export, ``whole`` is handed the batches of its
    elements in the same pass (for the tables only the export gives: nodes, files, projects, memory).

    A batch is handed on once ``rows`` messages or more were read and a window of the envelope's bytes
    (``window`` bytes, default 4 MiB) is done; for an export, once it holds ``rows`` messages or more and
    ``window`` characters of text or more. ``log`` learns what an export's conversion read and left
    out. Errors are those of the frame functions for the same input: FormatError (``wrong-layer``) for a
    Facts IR document.
    """
    window = window or _WINDOW
    sink = _Giving(sink)
    label, name = found.label, found.name or found.label
    if found.kind == "export":
        return _export(found, sink, rows, progress, log, window, whole)
    if found.kind in ("parquet", "frame", "tables"):
        raise TypeError(f"a {found.kind} input is no envelope to stream (see _corpus.history_stream)")
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


def _export(
    found: Input,
    sink: Sink,
    rows: int,
    progress: bool | None,
    log: ConversionLog | None,
    window: int,
    whole: ExportPass[Any] | None,
) -> str:
    label, name = found.label, found.name or found.label
    beside = None if whole is None else whole.beside()
    try:
        provider = flatten_export_batches(
            lambda take, on_provider: export_conversations(
                found, take, progress=progress, on_provider=on_provider, log=log, beside=beside
            ),
            label,
            name,
            sink.add,
            rows=rows,
            window=window,
        )
    except Fallback:
        sink.restart()
        if whole is not None:
            whole.restart()
        provider = None
    if provider is not None:
        return provider
    doc = open_export(found, report=log, progress=progress, beside=beside)
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
