"""The text of a chat history as one frame, for search and topics.

A *history* is whatever :func:`memvelope_tools.messages_frame` takes (envelopes as paths, bytes,
binary files or parsed dicts), a messages frame, a Parquet folder written by
:func:`memvelope_tools.to_parquet` (or the dict :func:`memvelope_tools.read_parquet` returns),
or a list mixing them. :func:`history_frame` turns it into one messages frame with the
conversation ``title`` beside each message.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ._frames import CONVERSATION_COLUMNS, MESSAGE_COLUMNS, STRING, conform, envelope_tables
from ._frames.columns import to_pandas
from .errors import FormatError

#: The columns of a history frame: those of a messages frame that search and topics use, and the title.
HISTORY_COLUMNS: dict[str, Any] = {
    **{
        name: MESSAGE_COLUMNS[name]
        for name in ("source", "conv_index", "conversation_id", "position", "role", "ts", "text")
    },
    "title": STRING,
}
_NEEDED = tuple(name for name in HISTORY_COLUMNS if name != "title")


def parquet_folder(item: Any) -> Path | None:
    """The folder when ``item`` names a folder holding ``messages.parquet``, else None."""
    if isinstance(item, str | os.PathLike):
        folder = Path(os.fspath(item)).expanduser()
        if folder.is_dir() and (folder / "messages.parquet").is_file():
            return folder
    return None


def history_frame(source: Any) -> pd.DataFrame:
    """One messages frame (:data:`HISTORY_COLUMNS`) of everything in ``source``, in the order given.

    Messages keep their frame order; documents given together are labelled in ``source`` as the
    frame functions label them (file name, or ``doc0``, ``doc1``, ... by position among the documents).
    """
    items = list(source) if isinstance(source, list | tuple) else [source]
    parts: list[tuple[int, pd.DataFrame]] = []
    documents: list[Any] = []
    first_document = -1
    for i, item in enumerate(items):
        if isinstance(item, pd.DataFrame):
            parts.append((i, from_messages(item)))
        elif isinstance(item, Mapping) and isinstance(item.get("messages"), pd.DataFrame):
            parts.append((i, from_tables(item["messages"], item.get("conversations"))))
        elif (folder := parquet_folder(item)) is not None:
            parts.append((i, from_parquet(folder)))
        else:
            if first_document < 0:
                first_document = i
            # A binary file can be read once; both frame functions below read each document.
            documents.append(item.read() if hasattr(item, "read") else item)
    if documents:
        parts.append((first_document, _from_documents(documents)))
    if not parts:
        return conform(pd.DataFrame({name: [] for name in HISTORY_COLUMNS}), HISTORY_COLUMNS)
    ordered = [frame for _, frame in sorted(parts, key=lambda part: part[0])]
    if len(ordered) == 1:
        return ordered[0]
    return pd.concat(ordered, ignore_index=True)


def from_messages(messages: pd.DataFrame) -> pd.DataFrame:
    """A messages frame (with a ``title`` column or without) as a history frame."""
    missing = [name for name in _NEEDED if name not in messages.columns]
    if missing:
        raise FormatError(
            f"expected a messages frame (missing column(s) {', '.join(missing)}), got columns "
            f"{', '.join(map(str, messages.columns)) or 'none'}",
            reason="wrong-frame",
        )
    if "title" not in messages.columns:
        messages = messages.assign(title=pd.Series(pd.NA, index=messages.index, dtype=STRING))
    return conform(messages, HISTORY_COLUMNS)


def from_tables(messages: pd.DataFrame, conversations: pd.DataFrame | None) -> pd.DataFrame:
    """Messages with the titles of their conversations (matched on ``source`` and ``conv_index``)."""
    if conversations is None or "title" in messages.columns:
        return from_messages(messages)
    titles = conversations.loc[:, ["source", "conv_index", "title"]].drop_duplicates(["source", "conv_index"])
    return from_messages(messages.merge(titles, on=["source", "conv_index"], how="left", sort=False))


def from_parquet(folder: Path) -> pd.DataFrame:
    """The history held in a Parquet folder written by :func:`memvelope_tools.to_parquet`."""
    from ._parquet import read_parquet

    tables = read_parquet(folder)
    return from_tables(tables["messages"], tables.get("conversations"))


def _from_documents(documents: list[Any]) -> pd.DataFrame:
    """The history of envelopes, each read once, as :func:`memvelope_tools.messages_frame` and
    :func:`memvelope_tools.conversations_frame` read them."""
    conversations, messages = envelope_tables(documents)
    assert messages is not None
    return from_tables(to_pandas(messages, MESSAGE_COLUMNS, None), to_pandas(conversations, CONVERSATION_COLUMNS, None))
