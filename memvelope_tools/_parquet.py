"""Envelopes and Facts IR documents as a Parquet dataset: one folder, one file per table.

``to_parquet`` (:func:`memvelope_tools._tables.to_parquet`, through :func:`write_tables`) writes
``conversations.parquet`` and ``messages.parquet`` (from envelopes, and
from exports, converted in memory), ``facts.parquet`` (from Facts IR documents) and, when an input is an
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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ._atomic import atomic_outputs, output_folder
from ._frames.columns import (
    arrow_schema,
    to_pandas,
)
from ._frames.folders import RUN_KEY, TABLES, read_folder
from ._progress import progress_bar

if TYPE_CHECKING:
    from ._tables import Tables

#: What builds the archetype frame from Facts IR documents (:func:`memvelope_tools.archetype_frame`).
ArchetypeFrame = Callable[..., pd.DataFrame]

_ROW_GROUP = 128 * 1024


def write_tables(tables: Tables, folder: str | os.PathLike[str], progress: bool | None) -> dict[str, Path]:
    """Write ``tables`` into ``folder`` (created if missing); return the paths written.

    A table is written when its documents are there: conversations and messages for envelopes,
    facts for Facts IR documents, nodes when ``tables`` holds the nodes of exports.
    """
    out = output_folder(folder)
    described = {"envelope": tables.envelopes, "ir": tables.irs}
    described = {
        layer: [{k: d[k] for k in ("source", "format", "provider")} for d in records]
        for layer, records in described.items()
    }
    nodes = tables.whole.get("nodes")
    if nodes is not None:
        exports = set(nodes.column("source").unique().to_pylist())
        described["nodes"] = [d for d in described["envelope"] if d["source"] in exports]
    ir_docs = [{"source": d["source"], "meta": d["meta"], "archetype": d["archetype"]} for d in tables.irs]
    parts: dict[str, list[pa.Table]] = {
        "conversations": [tables.conversations] if described["envelope"] else [],
        "messages": [tables.messages] if described["envelope"] and tables.messages is not None else [],
        "facts": [tables.facts] if described["ir"] else [],
        "nodes": [nodes] if nodes is not None else [],
    }
    run = uuid.uuid4().hex.encode()
    names = [table_name for table_name in TABLES if parts[table_name]]
    whole = {name: table for name, table in tables.whole.items() if name not in TABLES}
    with atomic_outputs(out, [f"{table_name}.parquet" for table_name in [*names, *whole]]) as open_file:
        for table_name in names:
            layer = {"facts": "ir", "nodes": "nodes"}.get(table_name, "envelope")
            meta = _metadata(described[layer])
            meta[RUN_KEY] = run
            if table_name == "facts":
                meta[b"memvelope.ir"] = json.dumps(ir_docs, ensure_ascii=False).encode("utf-8")
            schema = arrow_schema(TABLES[table_name]).with_metadata(meta)
            table = pa.concat_tables(parts[table_name]).cast(schema)
            parts[table_name] = []
            _write(table, open_file(f"{table_name}.parquet"), f"{table_name}.parquet", progress)
            del table
        for table_name, table in whole.items():  # the whole exports' tables: their own columns, the same run
            meta = {**_metadata(described["envelope"]), RUN_KEY: run}
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})
            _write(table, open_file(f"{table_name}.parquet"), f"{table_name}.parquet", progress)
    return {table_name: out / f"{table_name}.parquet" for table_name in [*names, *whole]}


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
    enabled = progress if table.num_rows >= 4 * _ROW_GROUP else False
    with (
        progress_bar(table.num_rows, desc=f"writing {name}", unit="row", enabled=enabled) as bar,
        pq.ParquetWriter(fh, table.schema, compression="zstd") as writer,
    ):
        for start in range(0, max(table.num_rows, 1), _ROW_GROUP):
            chunk = table.slice(start, _ROW_GROUP)
            writer.write_table(chunk, row_group_size=_ROW_GROUP)
            bar.update(chunk.num_rows)


# ---- for the other writers of Parquet datasets (the history folder) --------------------------------

#: Write one table as this module writes its files: zstd, its row groups (into a file of
#: :func:`memvelope_tools._atomic.atomic_outputs`, so a folder's files are replaced together).
write_table = _write
#: The ``memvelope.*`` schema metadata of the documents described (``source``, ``format``, ``provider``).
schema_metadata = _metadata
