"""The envelope frames: one row per conversation, one row per message (see :mod:`memvelope_tools._frames`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .._read import Source
from .._tags import ENVELOPE_TAG, IR_TAG
from .columns import CONVERSATION_COLUMNS, FACT_COLUMNS, MESSAGE_COLUMNS, STRING, arrow_schema, to_pandas
from .documents import Flat, documents
from .flatten import fact_table, flatten


def conversations_frame(
    doc_or_docs: Source | Sequence[Source],
    *,
    dedupe: bool = False,
    tz: str | None = None,
    sources: Sequence[str] | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """One row per conversation of one or several envelopes (see :mod:`memvelope_tools._frames`).

    Parameters
    ----------
    doc_or_docs
        An envelope or an export (a path, bytes, a binary file object or a parsed dict; an export is
        converted in memory), or a list of them: a list is several documents, each with its own label.
    dedupe
        Keep one copy of a conversation that several documents hold.
    tz
        Time zone of the timestamp columns (default UTC).
    sources
        One label per document (default: see :func:`memvelope_tools._sources.labels_of`).
    progress
        Show a bar on long work (``None``: only on a terminal or in a notebook).

    Returns
    -------
    pandas.DataFrame
        One row per conversation, in document order.

    Raises
    ------
    memvelope_tools.errors.InputError
        An input is missing, empty, not JSON or a file of another kind (the message says which).
    memvelope_tools.errors.FormatError
        An input is not an envelope (``wrong-layer``) or its shape is not the spec's.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> frame = mv.conversations_frame(mv.sample_path("claude"))
    >>> set(frame["provider"])
    {'claude'}
    """
    convs, _ = envelope_tables(doc_or_docs, dedupe=dedupe, sources=sources, progress=progress, with_messages=False)
    return to_pandas(convs, CONVERSATION_COLUMNS, tz)


def messages_frame(
    doc_or_docs: Source | Sequence[Source],
    *,
    dedupe: bool = False,
    tz: str | None = None,
    sources: Sequence[str] | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """One row per message of one or several envelopes (see :mod:`memvelope_tools._frames`).

    Parameters
    ----------
    doc_or_docs
        An envelope or an export (a path, bytes, a binary file object or a parsed dict; an export is
        converted in memory), or a list of them: a list is several documents, each with its own label.
    dedupe
        Keep one copy of a conversation that several documents hold.
    tz
        Time zone of the timestamp columns (default UTC).
    sources
        One label per document (default: see :func:`memvelope_tools._sources.labels_of`).
    progress
        Show a bar on long work (``None``: only on a terminal or in a notebook).

    Returns
    -------
    pandas.DataFrame
        One row per message, in document order.

    Raises
    ------
    memvelope_tools.errors.InputError
        An input is missing, empty, not JSON or a file of another kind (the message says which).
    memvelope_tools.errors.FormatError
        An input is not an envelope (``wrong-layer``) or its shape is not the spec's.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> frame = mv.messages_frame(mv.sample_path("claude"))
    >>> set(frame["provider"])
    {'claude'}
    """
    _, msgs = envelope_tables(doc_or_docs, dedupe=dedupe, sources=sources, progress=progress)
    assert msgs is not None
    return to_pandas(msgs, MESSAGE_COLUMNS, tz)


def envelope_tables(
    doc_or_docs: Source | Sequence[Source],
    *,
    dedupe: bool = False,
    sources: Sequence[str] | None = None,
    progress: bool | None = None,
    with_messages: bool = True,
) -> tuple[pa.Table, pa.Table | None]:
    """Flatten envelopes into Arrow tables of conversations and (optionally) messages."""
    read = read_documents(
        doc_or_docs, "envelope", dedupe=dedupe, sources=sources, progress=progress, with_messages=with_messages
    )
    return read.conversations, read.messages


@dataclass
class Read:
    """The tables of documents read by :func:`read_documents`, and a record per document.

    A record holds the document's ``source`` label, ``format`` (its tag) and ``provider``, and for
    a Facts IR document its ``meta`` and ``archetype``.
    """

    conversations: pa.Table
    messages: pa.Table | None
    facts: pa.Table
    records: list[dict[str, Any]]


def read_documents(
    doc_or_docs: Source | Sequence[Source],
    layer: str | None,
    *,
    dedupe: bool = False,
    sources: Sequence[str] | None = None,
    progress: bool | None = None,
    with_messages: bool = True,
) -> Read:
    """Read documents (each loaded and checked once, see :func:`documents`) into tables, in order.

    ``layer`` (``"envelope"``, ``"ir"`` or None for either) is the layer every document must have.
    """
    conv_parts: list[pa.Table] = []
    msg_parts: list[pa.Table] = []
    fact_parts: list[pa.Table] = []
    records: list[dict[str, Any]] = []
    for label, doc, name, owned in documents(doc_or_docs, sources, layer, progress=progress, stream=with_messages):
        if isinstance(doc, Flat) or "memvelope" in doc:
            if isinstance(doc, Flat):
                convs, msgs = doc.tables
                provider = doc.provider
            else:
                convs, msgs = flatten(doc, label, name, with_messages, progress, owned=owned)
                provider = doc["meta"]["source_provider"]
            conv_parts.append(convs)
            if msgs is not None:
                msg_parts.append(msgs)
            records.append({"source": label, "format": ENVELOPE_TAG, "provider": provider})
        else:
            fact_parts.append(fact_table(doc, label))
            meta = doc["meta"]
            records.append(
                {
                    "source": label,
                    "format": IR_TAG,
                    "provider": meta["provider"],
                    "meta": meta,
                    "archetype": doc["archetype"],
                }
            )
        del doc
    conv_table = pa.concat_tables(conv_parts) if conv_parts else arrow_schema(CONVERSATION_COLUMNS).empty_table()
    msg_table = None
    if with_messages:
        msg_table = pa.concat_tables(msg_parts) if msg_parts else arrow_schema(MESSAGE_COLUMNS).empty_table()
    if dedupe:
        conv_table, msg_table = dedupe_tables(conv_table, msg_table)
    facts = pa.concat_tables(fact_parts) if fact_parts else arrow_schema(FACT_COLUMNS).empty_table()
    return Read(conv_table, msg_table, facts, records)


def dedupe_tables(conv_table: pa.Table, msg_table: pa.Table | None) -> tuple[pa.Table, pa.Table | None]:
    """The tables without the conversations ``dedupe=True`` drops (see :mod:`memvelope_tools._frames`)."""
    if not conv_table.num_rows:
        return conv_table, msg_table
    keep = _dedupe_mask(conv_table)
    if msg_table is not None:
        # Map each message to its conversation's row number in the concatenated table.
        counts = conv_table.column("n_messages").to_numpy()
        msg_table = msg_table.filter(pa.array(np.repeat(keep, counts)))
    return conv_table.filter(pa.array(keep)), msg_table


def _dedupe_mask(convs: pa.Table) -> np.ndarray:
    frame = pd.DataFrame(
        {
            "id": convs.column("conversation_id").to_pandas(types_mapper={pa.string(): STRING}.get),
            "updated": convs.column("updated_at").cast(pa.int64()).fill_null(np.iinfo(np.int64).min).to_numpy(),
            "row": np.arange(convs.num_rows),
        }
    )
    dated = frame[frame["id"].notna()].sort_values(["updated", "row"], kind="stable")
    dropped = dated.loc[dated.duplicated("id", keep="last"), "row"].to_numpy()
    keep = np.ones(convs.num_rows, dtype=bool)
    keep[dropped] = False
    return keep
