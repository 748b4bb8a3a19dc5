"""The text of a chat history, as one frame or a batch at a time, for search and topics.

A *history* is whatever :func:`memvelope_tools.messages_frame` takes (envelopes as paths, bytes,
binary files or parsed dicts), a messages frame, a Parquet folder written by
:func:`memvelope_tools.to_parquet` (or the dict :func:`memvelope_tools.read_parquet` returns),
or a list mixing them. :func:`history_frame` turns it into one messages frame with the
conversation ``title`` beside each message; :func:`history_stream` hands it on a batch at a time, each
batch a table of the same columns (:data:`HISTORY_COLUMNS`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa

from ._convert.log import ConversionLog
from ._frames import CONVERSATION_COLUMNS, MESSAGE_COLUMNS, STRING, TIMESTAMP, conform
from ._frames.columns import require_columns, to_pandas
from ._frames.documents import envelope_tables
from ._frames.folders import CONVERSATION_HISTORY_COLUMNS, MESSAGE_HISTORY_COLUMNS, read_tables
from ._load import open_input
from ._parquet import read_frames
from ._pool import give_back_memory
from ._sources import Input, resolve
from ._stream import ROWS, stream
from ._tags import ENVELOPE_TAG
from .errors import FormatError

if TYPE_CHECKING:
    import pandas as pd

#: The columns of a history frame: those of a messages frame that search and topics use, and the title.
HISTORY_COLUMNS: dict[str, Any] = {
    **{
        name: MESSAGE_COLUMNS[name]
        for name in ("source", "conv_index", "conversation_id", "position", "role", "ts", "text")
    },
    "title": STRING,
}
#: The same, with each message's status in the history folder it was read from and when it was first seen there
#: (see :func:`memvelope_tools.history`).
FOLDER_COLUMNS: dict[str, Any] = {**HISTORY_COLUMNS, "status": STRING, "first_seen": TIMESTAMP}
_NEEDED = tuple(name for name in HISTORY_COLUMNS if name != "title")
_FOLDER_NEEDED = tuple(name for name in FOLDER_COLUMNS if name != "title")


def history_frame(source: Any, *, caller: str = "this call") -> pd.DataFrame:
    """One messages frame (:data:`HISTORY_COLUMNS`) of everything in ``source``, in the order given.

    Messages keep their frame order; documents given together are labelled as the frame functions
    label them (see :func:`memvelope_tools._sources.labels_of`).
    """
    return history_of(resolve(source, "history", list_means="documents", caller=caller))


def history_of(inputs: list[Input]) -> pd.DataFrame:
    """:func:`history_frame` of inputs already resolved."""
    import pandas as pd

    parts: list[tuple[int, pd.DataFrame]] = []
    documents: list[Any] = []
    labels: list[str] = []
    first_document = -1
    for i, found in enumerate(inputs):
        if found.kind == "frame":
            parts.append((i, from_messages(found.value)))
        elif found.kind == "tables":
            parts.append((i, from_tables(found.value["messages"], found.value.get("conversations"))))
        elif found.kind == "parquet":
            assert found.path is not None
            parts.append((i, from_parquet(found.path)))
        else:
            if first_document < 0:
                first_document = i
            documents.append(open_input(found, conversations=False) if found.kind == "export" else found)
            labels.append(found.label)
    if documents:
        parts.append((first_document, _from_documents(documents, labels)))
    if not parts:
        return conform(pd.DataFrame({name: [] for name in HISTORY_COLUMNS}), HISTORY_COLUMNS)
    ordered = [frame for _, frame in sorted(parts, key=lambda part: part[0])]
    if len(ordered) == 1:
        return ordered[0]
    return pd.concat(ordered, ignore_index=True)


def from_messages(messages: pd.DataFrame, *, history_folder: bool = False) -> pd.DataFrame:
    """A messages frame (with a ``title`` column or without) as a history frame; with ``history_folder``,
    a history folder's messages keeping their status and first sighting (:data:`FOLDER_COLUMNS`)."""
    require_columns(messages, _FOLDER_NEEDED if history_folder else _NEEDED, "a messages frame")
    if "title" not in messages.columns:
        import pandas as pd

        messages = messages.assign(title=pd.Series(pd.NA, index=messages.index, dtype=STRING.pandas))
    return conform(messages, FOLDER_COLUMNS if history_folder else HISTORY_COLUMNS)


def from_tables(
    messages: pd.DataFrame, conversations: pd.DataFrame | None, *, history_folder: bool = False
) -> pd.DataFrame:
    """Messages with the titles of their conversations (matched on ``source`` and ``conv_index``); with
    ``history_folder``, as :func:`from_messages` keeps them."""
    if conversations is None or "title" in messages.columns:
        return from_messages(messages, history_folder=history_folder)
    titles = conversations.loc[:, ["source", "conv_index", "title"]].drop_duplicates(["source", "conv_index"])
    titled = messages.merge(titles, on=["source", "conv_index"], how="left", sort=False)
    return from_messages(titled, history_folder=history_folder)


def from_history_folder(folder: Path) -> pd.DataFrame:
    """The messages of the history folder ``folder``, each with its conversation's title and its status
    and first sighting there (:data:`FOLDER_COLUMNS`); a FormatError naming the file when one of its files
    cannot be read."""
    wanted = {name: MESSAGE_HISTORY_COLUMNS[name] for name in _FOLDER_NEEDED}
    tables = read_tables(folder, list(wanted))
    assert tables is not None, f"{folder} is not a history folder"
    titles = {name: CONVERSATION_HISTORY_COLUMNS[name] for name in ("source", "conv_index", "title")}
    conversations = to_pandas(tables["conversations"].select(list(titles)), titles, None)
    return from_tables(to_pandas(tables["messages"], wanted, None), conversations, history_folder=True)


def from_parquet(folder: Path) -> pd.DataFrame:
    """The history held in a Parquet folder written by :func:`memvelope_tools.to_parquet`."""
    tables = read_frames(folder, None)
    return from_tables(tables["messages"], tables.get("conversations"))


def _from_documents(documents: list[Any], labels: list[str]) -> pd.DataFrame:
    """The history of envelopes, each read once, as :func:`memvelope_tools.messages_frame` and
    :func:`memvelope_tools.conversations_frame` read them."""
    conversations, messages = envelope_tables(documents, sources=labels)
    assert messages is not None
    return from_tables(to_pandas(messages, MESSAGE_COLUMNS, None), to_pandas(conversations, CONVERSATION_COLUMNS, None))


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
    conversation's ``title`` (the columns of :data:`HISTORY_COLUMNS`), about ``rows`` at a time: an envelope
    or export as :func:`~memvelope_tools._stream.stream` reads it (its provider is returned), a Parquet
    folder or frames sliced (None is). A conversation's messages may be split between two batches only
    where the history given holds them apart."""
    if found.kind in ("export", "envelope"):
        return stream(found, _Titled(sink), rows=rows, progress=progress, log=log)
    if found.kind == "parquet":
        assert found.path is not None
        frame = from_parquet(found.path)
    elif found.kind == "tables":
        frame = from_tables(found.value["messages"], found.value.get("conversations"))
    elif found.kind == "frame":
        frame = from_messages(found.value)
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
    """A sink of :func:`~memvelope_tools._stream.stream` giving a :class:`HistorySink` each batch's messages
    with their conversations' titles."""

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
    return pa.table(
        {**{name: messages.column(name) for name in _NEEDED}, "title": conversations.column("title").take(at)}
    )
