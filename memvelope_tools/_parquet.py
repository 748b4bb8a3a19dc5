"""Envelopes and Facts IR documents as a Parquet dataset: one folder, one file per table.

``to_parquet`` (:func:`memvelope_tools._tables.to_parquet`, through :func:`write_tables`) writes
``conversations.parquet`` and ``messages.parquet`` (from envelopes, and
from exports, converted as they are read), ``facts.parquet`` (from Facts IR documents) and, when an input is an
export, ``nodes.parquet`` (every message node of it, see :func:`memvelope_tools.nodes_frame`); for exports
given by path, also ``assets.parquet`` and ``projects.parquet`` (:mod:`memvelope_tools._whole.export`). Columns and
types are those of :mod:`memvelope_tools._frames` (the Arrow schema is derived from the same
declaration; ``provider`` names each conversation's and message's provider), compressed with
zstd. Each file's schema metadata carries ``memvelope.format`` and ``memvelope.provider`` (the tags
and providers of the documents, comma-separated when several differ) and
``memvelope.sources`` (a JSON list of ``{source, format, provider}``); ``facts.parquet`` also
carries ``memvelope.ir``, each document's ``meta`` and ``archetype`` as JSON. Every file of one
call also carries the same ``memvelope.run`` (a random id): the files are written beside their
targets and replace them together, and :func:`memvelope_tools.read_parquet` refuses ``conversations.parquet`` and
``messages.parquet`` of two different calls. DuckDB, Polars or Spark read the files as they are, e.g.
``SELECT role, count(*) FROM 'out/messages.parquet' GROUP BY role``.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ._atomic import atomic_outputs, output_folder
from ._frames.columns import (
    arrow_schema,
    to_pandas,
)
from ._frames.folders import RUN_KEY, TABLES, read_folder
from ._progress import progress_bar
from ._tags import ENVELOPE_TAG, IR_TAG

if TYPE_CHECKING:
    import pandas as pd

    from ._tables import Tables

#: What builds the archetype frame from Facts IR documents (:func:`memvelope_tools.archetype_frame`).
ArchetypeFrame = Callable[..., "pd.DataFrame"]

_ROW_GROUP = 128 * 1024
#: The text a row group holds, about: a group ends at the row that reaches it (the group is held in memory
#: while it is written).
_GROUP_BYTES = 16 << 20


@dataclass
class Chunks:
    """A table given a piece at a time (each piece a table of its columns, in order), its number of rows,
    and (for a table with a ``source`` column, when known) the labels its rows hold."""

    num_rows: int
    pieces: Iterable[pa.Table]
    sources: frozenset[str] | None = None


def write_tables(tables: Tables, folder: str | os.PathLike[str], progress: bool | None) -> dict[str, Path]:
    """Write ``tables`` into ``folder`` (created if missing); return the paths written.

    A table is written when its documents are there: conversations and messages for envelopes,
    facts for Facts IR documents, nodes when ``tables`` holds the nodes of exports.
    """
    parts: dict[str, pa.Table | Chunks] = {}
    if tables.envelopes:
        parts["conversations"] = tables.conversations
        if tables.messages is not None:
            parts["messages"] = tables.messages
    if tables.irs:
        parts["facts"] = tables.facts
    return write_dataset(folder, tables.documents, parts, tables.whole, progress)


def write_dataset(
    folder: str | os.PathLike[str],
    documents: list[dict[str, Any]],
    parts: dict[str, pa.Table | Chunks],
    whole: dict[str, pa.Table | Chunks],
    progress: bool | None,
) -> dict[str, Path]:
    """Write the tables ``parts`` holds (``conversations``, ``messages``, ``facts``) and the whole exports'
    tables ``whole`` holds (``nodes``, ``assets``, ``projects``; the nodes may come a piece at a time, their
    ``sources`` known) into ``folder`` (created if missing), their metadata made from ``documents`` (a record
    per document, as :class:`~memvelope_tools._tables.Tables` holds them); return the paths written."""
    out = output_folder(folder)
    described = {
        layer: [{k: d[k] for k in ("source", "format", "provider")} for d in documents if d["format"] == tag]
        for layer, tag in (("envelope", ENVELOPE_TAG), ("ir", IR_TAG))
    }
    nodes = whole.get("nodes")
    if nodes is not None:
        if isinstance(nodes, Chunks):
            assert nodes.sources is not None
            exports = set(nodes.sources)
        else:
            exports = set(nodes.column("source").unique().to_pylist())
        described["nodes"] = [d for d in described["envelope"] if d["source"] in exports]
        parts = {**parts, "nodes": nodes}
    ir_docs = [
        {"source": d["source"], "meta": d["meta"], "archetype": d["archetype"]}
        for d in documents
        if d["format"] == IR_TAG and d["meta"] is not None  # None: read from a facts.parquet that lacks them
    ]
    run = uuid.uuid4().hex.encode()
    names = [table_name for table_name in TABLES if table_name in parts]
    rest = {name: table for name, table in whole.items() if name not in TABLES}
    with atomic_outputs(out, [f"{table_name}.parquet" for table_name in [*names, *rest]]) as open_file:
        for table_name in names:
            layer = {"facts": "ir", "nodes": "nodes"}.get(table_name, "envelope")
            meta = _metadata(described[layer])
            meta[RUN_KEY] = run
            if table_name == "facts":
                meta[b"memvelope.ir"] = json.dumps(ir_docs, ensure_ascii=False).encode("utf-8")
            schema = arrow_schema(TABLES[table_name]).with_metadata(meta)
            part = parts.pop(table_name)
            chunks = part if isinstance(part, Chunks) else Chunks(part.num_rows, [part])
            del part
            _write_chunks(chunks, schema, open_file(f"{table_name}.parquet"), f"{table_name}.parquet", progress)
        for table_name, table in rest.items():  # the whole exports' tables: their own columns, the same run
            assert isinstance(table, pa.Table)
            meta = {**_metadata(described["envelope"]), RUN_KEY: run}
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})
            _write(table, open_file(f"{table_name}.parquet"), f"{table_name}.parquet", progress)
    return {table_name: out / f"{table_name}.parquet" for table_name in [*names, *rest]}


def read_frames(folder: str | os.PathLike[str], archetype: ArchetypeFrame | None) -> dict[str, pd.DataFrame]:
    """The frames of a folder written by :func:`memvelope_tools.to_parquet` (see
    :func:`memvelope_tools.read_parquet`), the ``archetype`` frame built by ``archetype`` (none without it)."""
    tables, facts_meta = read_folder(Path(folder))
    frames = {name: to_pandas(table, TABLES[name], None) for name, table in tables.items()}
    if "facts" in tables and archetype is not None and b"memvelope.ir" in facts_meta:
        docs = json.loads(facts_meta[b"memvelope.ir"])
        frames["archetype"] = archetype(
            [{"meta": d["meta"], "archetype": d["archetype"], "facts": []} for d in docs],
            sources=[d["source"] for d in docs],
        )
    return frames


def _metadata(described: list[dict[str, Any]]) -> dict[bytes, bytes]:
    def joined(key: str) -> bytes:
        return ",".join(dict.fromkeys(d[key] for d in described)).encode("utf-8")

    return {
        b"memvelope.format": joined("format"),
        b"memvelope.provider": joined("provider"),
        b"memvelope.sources": json.dumps(described, ensure_ascii=False).encode("utf-8"),
    }


def _write(table: pa.Table, fh: BinaryIO, name: str, progress: bool | None) -> None:
    _write_chunks(Chunks(table.num_rows, [table]), table.schema, fh, name, progress)


def _write_chunks(chunks: Chunks, schema: pa.Schema, fh: BinaryIO, name: str, progress: bool | None) -> None:
    """Write the pieces of ``chunks``, cast to ``schema``, in row groups of :data:`_ROW_GROUP` rows, or fewer
    where their text reaches :data:`_GROUP_BYTES` (the row that reaches it ends the group); the last group is
    the rest, and a table without rows one empty group. Where groups end depends on the rows only, not on
    how they were cut into pieces."""
    enabled = progress if chunks.num_rows >= 4 * _ROW_GROUP else False
    held: list[pa.Table] = []
    rows = size = 0
    written = False
    with (
        progress_bar(chunks.num_rows, desc=f"writing {name}", unit="row", enabled=enabled) as bar,
        pq.ParquetWriter(fh, schema, compression="zstd") as writer,
    ):
        for piece in chunks.pieces:
            piece = piece.cast(schema)
            sizes = np.cumsum(_text_bytes(piece))
            start = 0
            while start < piece.num_rows:
                before = int(sizes[start - 1]) if start else 0
                ends = sizes[start : start + _ROW_GROUP - rows] - before
                take = min(len(ends), int(np.searchsorted(ends, _GROUP_BYTES - size)) + 1)
                held.append(piece.slice(start, take))
                rows, size, start = rows + take, size + int(ends[take - 1]), start + take
                if rows >= _ROW_GROUP or size >= _GROUP_BYTES:
                    table = pa.concat_tables(held)
                    writer.write_table(table, row_group_size=rows)
                    bar.update(rows)
                    held, rows, size, written = [], 0, 0, True
                    del table
        if rows or not written:
            writer.write_table(pa.concat_tables(held) if held else schema.empty_table(), row_group_size=max(rows, 1))
            bar.update(rows)


def _text_bytes(table: pa.Table) -> np.ndarray:
    """Each row's bytes of text (of every string and binary column)."""
    sizes = np.zeros(table.num_rows, dtype=np.int64)
    for column in table.columns:
        kind = column.type
        if pa.types.is_dictionary(kind):
            continue  # a few values, held once
        if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind):
            sizes += pc.binary_length(column).fill_null(0).to_numpy()
    return sizes


# ---- for the other writers of Parquet datasets (the history folder) --------------------------------

#: Write one table as this module writes its files: zstd, its row groups (into a file of
#: :func:`memvelope_tools._atomic.atomic_outputs`, so a folder's files are replaced together).
write_table = _write
#: The ``memvelope.*`` schema metadata of the documents described (``source``, ``format``, ``provider``).
schema_metadata = _metadata
