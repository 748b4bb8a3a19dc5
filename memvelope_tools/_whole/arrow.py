"""Nodes as Arrow: each batch's rows as a record batch of the declared node columns, and the batches of a
whole export as one table whose ``conv_index`` counts the envelope's conversations across batches."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._frames.columns import KIND, NODE_COLUMNS, NODE_ROLE, arrow_schema, dictionary, timestamps
from .._frames.text import char_counts, strings
from .rows import Node

if TYPE_CHECKING:
    from .read import Piece

#: The Arrow schema of the nodes table, and of it with the optional ``text`` column.
SCHEMA = arrow_schema(NODE_COLUMNS)
TEXT_SCHEMA = SCHEMA.append(pa.field("text", pa.string()))


def to_batch(nodes: list[Node], provider: str, *, source: str, with_text: bool = False) -> pa.RecordBatch:
    """The rows ``nodes`` of one batch (``provider``'s, labelled ``source``) as a record batch; ``conv_index``
    counts from 0 within the batch."""
    n = len(nodes)
    cols = list(zip(*nodes, strict=True)) if n else [() for _ in Node._fields]
    col = dict(zip(Node._fields, cols, strict=True))
    texts = list(col["text"])
    tools = list(col["tools"])
    offsets = np.zeros(n + 1, dtype=np.int32)
    offsets[1:] = list(accumulate(map(len, tools)))
    arrays = [
        strings([source] * n, "source"),
        strings([provider] * n, "provider"),
        pa.array(col["conv_index"], pa.int64()),
        strings(list(col["conversation_id"]), "conversation_id"),
        strings(list(col["node_id"]), "node_id"),
        strings(list(col["parent_id"]), "parent_id"),
        dictionary(list(col["role"]), NODE_ROLE),
        strings(list(col["author"]), "author"),
        strings(list(col["recipient"]), "recipient"),
        strings(list(col["content_type"]), "content_type"),
        dictionary(list(col["kind"]), KIND),
        pa.ListArray.from_arrays(pa.array(offsets), strings([t for names in tools for t in names], "tool")),
        strings(list(col["model"]), "model"),
        strings(list(col["custom_gpt"]), "custom_gpt"),
        timestamps(list(col["ts"]), source, lambda i: f"node {nodes[i].node_id}"),
        pa.array(col["on_active_path"], pa.bool_()),
        strings(list(col["message_id"]), "message_id"),
        pa.array(col["sibling"], pa.int64()),
        pa.array(col["siblings"], pa.int64()),
        pa.array(char_counts(texts), pa.int64()),
        pa.array(col["attachments"], pa.int64()),
    ]
    if with_text:
        arrays.append(strings(texts, "text"))
    return pa.RecordBatch.from_arrays(arrays, schema=TEXT_SCHEMA if with_text else SCHEMA)


def to_table(pieces: Sequence[Piece[pa.RecordBatch]], *, with_text: bool = False) -> pa.Table:
    """The batches of one export in order as one table, each batch's ``conv_index`` shifted by the
    conversations the envelope keeps from the batches before it."""
    batches = []
    before = 0
    for piece in pieces:
        batch = piece.value
        if before and batch.num_rows:
            i = batch.schema.get_field_index("conv_index")
            batch = batch.set_column(i, "conv_index", pc.add(batch.column(i), before))
        batches.append(batch)
        before += piece.kept
    return pa.Table.from_batches(batches, schema=TEXT_SCHEMA if with_text else SCHEMA)
