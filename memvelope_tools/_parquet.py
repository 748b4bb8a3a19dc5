"""Envelopes and Facts IR documents as a Parquet dataset: one folder, one file per table.

``to_parquet`` writes ``conversations.parquet`` and ``messages.parquet`` (from envelopes, and
from exports, converted in memory) and ``facts.parquet`` (from Facts IR documents). Columns and
types are those of :mod:`memvelope_tools._frames` (the Arrow schema is derived from the same
declaration; ``provider`` names each conversation's and message's provider), compressed with
zstd. Each file's schema metadata carries ``memvelope.format`` and ``memvelope.provider`` (the tags
and providers of the documents, comma-separated when several differ) and
``memvelope.sources`` (a JSON list of ``{source, format, provider}``); ``facts.parquet`` also
carries ``memvelope.ir``, each document's ``meta`` and ``archetype`` as JSON. Every file of one
call also carries the same ``memvelope.run`` (a random id): the files are written beside their
targets and replace them together, and :func:`read_parquet` refuses ``conversations.parquet`` and
``messages.parquet`` of two different calls. DuckDB, Polars or Spark read the files as they are, e.g.
``SELECT role, count(*) FROM 'out/messages.parquet' GROUP BY role``.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ._atomic import atomic_outputs, output_folder
from ._frames.columns import CONVERSATION_COLUMNS, FACT_COLUMNS, MESSAGE_COLUMNS, arrow_schema, to_pandas
from ._frames.documents import Flat, documents
from ._frames.envelopes import dedupe_tables
from ._frames.facts import archetype_frame, fact_table
from ._frames.flatten import flatten
from ._progress import progress_bar
from ._read import Source
from ._sources import Found, refuse
from ._tags import ENVELOPE_TAG, IR_TAG
from .errors import FormatError

TABLES: dict[str, dict[str, Any]] = {
    "conversations": CONVERSATION_COLUMNS,
    "messages": MESSAGE_COLUMNS,
    "facts": FACT_COLUMNS,
}
_ROW_GROUP = 128 * 1024
#: The schema metadata key holding the id shared by the files of one :func:`to_parquet` call.
RUN_KEY = b"memvelope.run"


def to_parquet(
    doc_or_docs: Source | Sequence[Source],
    folder: str | os.PathLike[str],
    *,
    sources: Sequence[str] | None = None,
    dedupe: bool = False,
    progress: bool | None = None,
) -> dict[str, Path]:
    """Write the documents' tables into ``folder`` (created if missing); return the paths written.

    A document is anything :func:`memvelope_tools._load` takes (an export is converted in memory);
    a list is several documents. ``dedupe`` drops repeated conversations as the frames do.

    Parameters
    ----------
    doc_or_docs
        An envelope, a Facts IR document or an export (a path, bytes, a binary file object or a parsed
        dict), or a list of them: a list is several documents, each with its own label.
    folder
        Where to write (created if missing).
    sources
        One label per document (default: see :func:`memvelope_tools._sources.labels_of`).
    dedupe
        Keep one copy of a conversation that several documents hold.
    progress
        Show a bar on long work (``None``: only on a terminal or in a notebook).

    Returns
    -------
    dict of str to pathlib.Path
        The files written, by table name.

    Raises
    ------
    memvelope_tools.errors.InputError
        An input is missing, empty, not JSON or a file of another kind (nothing is written).
    memvelope_tools.errors.OutputError
        The folder cannot be written.

    Examples
    --------
    >>> import tempfile, memvelope_tools as mv
    >>> sorted(mv.to_parquet(mv.sample_path("claude"), tempfile.mkdtemp()))
    ['conversations', 'messages']
    """
    inputs = documents(doc_or_docs, sources, None, progress=progress, stream=True)  # a wrong input stops here
    out = output_folder(folder)
    parts: dict[str, list[pa.Table]] = {name: [] for name in TABLES}
    described: dict[str, list[dict[str, Any]]] = {"envelope": [], "ir": []}
    ir_docs: list[dict[str, Any]] = []
    for label, doc, name, owned in inputs:
        if isinstance(doc, Flat) or "memvelope" in doc:
            convs, msgs = (
                doc.tables if isinstance(doc, Flat) else flatten(doc, label, name, True, progress, owned=owned)
            )
            parts["conversations"].append(convs)
            parts["messages"].append(msgs)
            described["envelope"].append(
                {
                    "source": label,
                    "format": ENVELOPE_TAG,
                    "provider": doc.provider if isinstance(doc, Flat) else doc["meta"]["source_provider"],
                }
            )
        else:
            parts["facts"].append(fact_table(doc, label))
            described["ir"].append({"source": label, "format": IR_TAG, "provider": doc["meta"]["provider"]})
            ir_docs.append({"source": label, "meta": doc["meta"], "archetype": doc["archetype"]})
        del doc
    if dedupe and parts["conversations"]:
        convs, msgs = dedupe_tables(pa.concat_tables(parts["conversations"]), pa.concat_tables(parts["messages"]))
        parts["conversations"], parts["messages"] = [convs], [msgs]
    run = uuid.uuid4().hex.encode()
    names = [table_name for table_name in TABLES if parts[table_name]]
    with atomic_outputs(out, [f"{table_name}.parquet" for table_name in names]) as open_file:
        for table_name in names:
            layer = "ir" if table_name == "facts" else "envelope"
            meta = _metadata(described[layer])
            meta[RUN_KEY] = run
            if table_name == "facts":
                meta[b"memvelope.ir"] = json.dumps(ir_docs, ensure_ascii=False).encode("utf-8")
            schema = arrow_schema(TABLES[table_name]).with_metadata(meta)
            table = pa.concat_tables(parts[table_name]).cast(schema)
            parts[table_name] = []
            _write(table, open_file(f"{table_name}.parquet"), f"{table_name}.parquet", progress)
            del table
    return {table_name: out / f"{table_name}.parquet" for table_name in names}


def read_parquet(folder: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Read a folder written by :func:`to_parquet` back into frames, dtypes included.

    Keys are ``conversations``, ``messages``, ``facts`` for the files present, plus ``archetype``
    when ``facts.parquet`` carries the documents' ``meta`` and ``archetype``.

    Parameters
    ----------
    folder
        A folder written by :func:`to_parquet`.

    Returns
    -------
    dict of str to pandas.DataFrame
        The frames, by table name.

    Raises
    ------
    memvelope_tools.errors.InputError
        No such folder (``not-found``, worded as for every input).
    memvelope_tools.errors.FormatError
        The path is a file or a folder holding none of the files, or a file cannot be read (``bad-parquet``).

    Examples
    --------
    >>> import tempfile, memvelope_tools as mv
    >>> folder = tempfile.mkdtemp()
    >>> _ = mv.to_parquet(mv.sample_path("claude"), folder)
    >>> sorted(mv.read_parquet(folder))
    ['conversations', 'messages']
    """
    base = Path(folder)
    if not base.exists():
        refuse(Found("missing"), os.fspath(folder), "history")
    if not base.is_dir():
        raise FormatError("a file, not a folder written by to_parquet", reason="not-found", source=str(base))
    frames: dict[str, pd.DataFrame] = {}
    runs: dict[str, bytes | None] = {}
    for table_name, columns in TABLES.items():
        path = base / f"{table_name}.parquet"
        if not path.is_file():
            continue
        try:
            table = pq.read_table(path)
        except (pa.ArrowException, OSError) as exc:
            raise FormatError(f"cannot read Parquet file: {exc}", reason="bad-parquet", source=str(path)) from None
        missing = [c for c in columns if c not in table.column_names]
        if missing:
            raise FormatError(f"missing column(s) {', '.join(missing)}", reason="bad-parquet", source=str(path))
        metadata = table.schema.metadata or {}
        runs[table_name] = metadata.get(RUN_KEY)
        frames[table_name] = to_pandas(table.select(list(columns)), columns, None)
        if table_name == "facts" and b"memvelope.ir" in metadata:
            docs = json.loads(metadata[b"memvelope.ir"])
            frames["archetype"] = archetype_frame(
                [{"meta": d["meta"], "archetype": d["archetype"], "facts": []} for d in docs],
                sources=[d["source"] for d in docs],
            )
    if not frames:
        raise FormatError(
            "no conversations.parquet, messages.parquet or facts.parquet here", reason="not-found", source=str(base)
        )
    if "conversations" in runs and "messages" in runs and runs["conversations"] != runs["messages"]:
        raise FormatError(
            "conversations.parquet and messages.parquet were written by two different runs (a write that failed "
            "part-way, or two at once); write the folder again",
            reason="bad-parquet",
            source=str(base),
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
