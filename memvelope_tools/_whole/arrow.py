"""Nodes as Arrow: a batch packed by a worker (:mod:`.pack`) as a record batch of the declared node columns,
and the batches of a whole export as one table whose ``conv_index`` counts the envelope's conversations
across batches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._frames.columns import KIND, NODE_COLUMNS, NODE_ROLE, Dtype, arrow_schema, timestamps
from .._frames.text import char_counts, strings
from .pack import Packed, Strings

if TYPE_CHECKING:
    from .read import Piece

#: The Arrow schema of the nodes table, and of it with the optional ``text`` column.
SCHEMA = arrow_schema(NODE_COLUMNS)
TEXT_SCHEMA = SCHEMA.append(pa.field("text", pa.string()))


def _validity(nulls: bytes) -> tuple[pa.Buffer | None, int]:
    """The validity bitmap of a column whose null bytes are ``nulls``, and its null count."""
    null = np.frombuffer(nulls, np.uint8).astype(bool)
    count = int(null.sum())
    if not count:
        return None, 0
    return pa.py_buffer(np.packbits(~null, bitorder="little")), count


def _strings(column: Strings, n: int, what: str) -> pa.Array:
    """A packed string column of ``n`` values (``what`` names them in a warning about surrogates)."""
    if isinstance(column, list):
        return strings(column, what)
    ends, data, nulls = column
    bitmap, count = _validity(nulls)
    array = pa.LargeStringArray.from_buffers(n, pa.py_buffer(ends), pa.py_buffer(data), bitmap, count)
    return array.cast(pa.string())


def _ints(data: bytes, nulls: bytes | None = None) -> pa.Array:
    """A packed int64 column, nulls where ``nulls`` says."""
    bitmap, count = _validity(nulls) if nulls is not None else (None, 0)
    return pa.Array.from_buffers(pa.int64(), len(data) // 8, [bitmap, pa.py_buffer(data)], count)


def _codes(data: bytes, dtype: Dtype) -> pa.DictionaryArray:
    """Category codes (one byte each) as the Arrow form of a category column of ``dtype``."""
    indices = pa.Array.from_buffers(pa.int8(), len(data), [None, pa.py_buffer(data)])
    return pa.DictionaryArray.from_arrays(indices, pa.array(list(dtype.categories or ()), pa.string()))


def unpack(packed: Packed, *, with_text: bool = False) -> pa.RecordBatch:
    """A packed batch as a record batch of the nodes table (with ``text`` when ``with_text``)."""
    n = packed.rows
    col = {name: _strings(values, n, name) for name, values in packed.strings.items()}
    names, ends = packed.tools
    chars = np.frombuffer(packed.chars, np.int64)
    if packed.odd:  # texts holding a surrogate: counted as the frames count them
        chars = chars.copy()
        chars[list(packed.odd)] = char_counts(list(packed.odd.values()))
    arrays = [
        pa.array([packed.source] * n, pa.string()),
        pa.array([packed.provider] * n, pa.string()),
        _ints(*packed.conv_index),
        col["conversation_id"],
        col["node_id"],
        col["parent_id"],
        _codes(packed.role, NODE_ROLE),
        col["author"],
        col["recipient"],
        col["content_type"],
        _codes(packed.kind, KIND),
        pa.ListArray.from_arrays(pa.Array.from_buffers(pa.int32(), n + 1, [None, pa.py_buffer(ends)]), _names(names)),
        col["model"],
        col["custom_gpt"],
        timestamps(col["ts"].to_pylist(), packed.source, lambda i: f"node {col['node_id'][i]}"),
        pa.array(np.frombuffer(packed.on_active_path, np.uint8).astype(bool), pa.bool_()),
        col["message_id"],
        _ints(packed.ints["sibling"]),
        _ints(packed.ints["siblings"]),
        pa.array(chars, pa.int64()),
        _ints(packed.ints["attachments"]),
    ]
    if with_text:
        assert packed.text is not None
        arrays.append(_strings(packed.text, n, "text"))
    return pa.RecordBatch.from_arrays(arrays, schema=TEXT_SCHEMA if with_text else SCHEMA)


def _names(names: Strings) -> pa.Array:
    """The tool names of a batch, one after the other."""
    count = len(names) if isinstance(names, list) else len(names[0]) // 8 - 1
    return _strings(names, count, "tool")


def shifted(batch: pa.RecordBatch, before: int) -> pa.RecordBatch:
    """A batch of one export's nodes, its ``conv_index`` shifted by ``before`` (the conversations the
    envelope keeps from the batches before it)."""
    if not before or not batch.num_rows:
        return batch
    i = batch.schema.get_field_index("conv_index")
    columns = list(batch.columns)
    columns[i] = pc.add(columns[i], before)  # RecordBatch.set_column is newer than the oldest pyarrow taken
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def to_table(pieces: Sequence[Piece[Packed]], *, with_text: bool = False) -> pa.Table:
    """The batches of one export in order as one table, each batch's ``conv_index`` shifted by the
    conversations the envelope keeps from the batches before it."""
    batches = []
    before = 0
    for piece in pieces:
        batches.append(shifted(unpack(piece.value, with_text=with_text), before))
        before += piece.kept
    return pa.Table.from_batches(batches, schema=TEXT_SCHEMA if with_text else SCHEMA)
