"""Envelopes and Facts IR documents as a Parquet dataset: one folder, one file per table.

``to_parquet`` (:func:`memvelope_tools._tables.to_parquet`, through :func:`write_tables`) writes
``conversations.parquet`` and ``messages.parquet`` (from envelopes, and
from exports, converted in memory) and ``facts.parquet`` (from Facts IR documents). Columns and
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

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ._atomic import atomic_outputs, output_folder
from ._frames.columns import (
    CONVERSATION_COLUMNS,
    FACT_COLUMNS,
    INT,
    MESSAGE_COLUMNS,
    MS,
    STRING,
    TIMESTAMP,
    arrow_schema,
    to_pandas,
)
from ._progress import progress_bar
from ._sources import Found, refuse
from .errors import FormatError

if TYPE_CHECKING:
    from ._tables import Tables

#: What builds the archetype frame from Facts IR documents (:func:`memvelope_tools.archetype_frame`).
ArchetypeFrame = Callable[..., pd.DataFrame]

TABLES: dict[str, dict[str, Any]] = {
    "conversations": CONVERSATION_COLUMNS,
    "messages": MESSAGE_COLUMNS,
    "facts": FACT_COLUMNS,
}
_ROW_GROUP = 128 * 1024
#: The schema metadata key holding the id shared by the files of one :func:`to_parquet` call.
RUN_KEY = b"memvelope.run"


def write_tables(tables: Tables, folder: str | os.PathLike[str], progress: bool | None) -> dict[str, Path]:
    """Write ``tables`` into ``folder`` (created if missing); return the paths written.

    A table is written when its documents are there: conversations and messages for envelopes,
    facts for Facts IR documents.
    """
    out = output_folder(folder)
    described = {"envelope": tables.envelopes, "ir": tables.irs}
    described = {
        layer: [{k: d[k] for k in ("source", "format", "provider")} for d in records]
        for layer, records in described.items()
    }
    ir_docs = [{"source": d["source"], "meta": d["meta"], "archetype": d["archetype"]} for d in tables.irs]
    parts: dict[str, list[pa.Table]] = {
        "conversations": [tables.conversations] if described["envelope"] else [],
        "messages": [tables.messages] if described["envelope"] and tables.messages is not None else [],
        "facts": [tables.facts] if described["ir"] else [],
    }
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


def read_frames(folder: str | os.PathLike[str], archetype: ArchetypeFrame | None) -> dict[str, pd.DataFrame]:
    """The frames of a folder written by :func:`memvelope_tools.to_parquet` (see
    :func:`memvelope_tools.read_parquet`), the ``archetype`` frame built by ``archetype`` (none without it)."""
    base = Path(folder)
    if not base.exists():
        refuse(Found("missing"), os.fspath(folder), "history")
    if not base.is_dir():
        raise FormatError("a file, not a folder written by to_parquet", reason="not-found", source=str(base))
    if is_history_folder(base) and not (base / "messages.parquet").is_file():
        held = read_tables(base)
        assert held is not None
        return {
            name: to_pandas(held[name].select(list(TABLES[name])), TABLES[name], None)
            for name in TABLES
            if name in held
        }
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
        if table_name == "facts" and archetype is not None and b"memvelope.ir" in metadata:
            docs = json.loads(metadata[b"memvelope.ir"])
            frames["archetype"] = archetype(
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


# ---- history folders ------------------------------------------------------------------------------
#
# The files of a history folder, and the history they hold as tables.
#
# A history folder holds:
#
# * ``snapshots.parquet``: one row per export added (see :data:`SNAPSHOT_COLUMNS`);
# * ``conversations.parquet``: every conversation ever seen, as :func:`memvelope_tools.history` gives
#   them (in its order, with ``conversation_key``, ``first_seen``, ``last_seen`` and ``status``);
# * ``messages/part-NNNNN.parquet``: the messages each add saw first, one file per add that saw any,
#   never rewritten (the usual message columns except ``source`` and ``conv_index``, which name the
#   conversation as the history orders it now, plus ``conversation_key``);
# * ``state.parquet``: a row per message of the parts, in their order: ``conversation_key``,
#   ``position``, ``hash`` (of role, timestamp and text), ``first_seen``, and ``last_seen`` where an
#   edit took the message off its conversation's path (null while it is on it: it was last seen when
#   its conversation was). Its schema metadata lists the parts and their row counts: a part it does
#   not list is not part of the history.
#
# A folder written before the parts existed holds ``messages.parquet`` instead (the assembled
# messages); it is read as it is, and the next add rewrites it in parts. :func:`read_tables` gives
# either as the tables :func:`memvelope_tools.history` gives.

#: What :func:`memvelope_tools.history` says of a conversation or message.
HISTORY_STATUSES = ("current", "edited-away", "deleted-upstream")

_HISTORY_EXTRA: dict[str, Any] = {
    "conversation_key": STRING,
    "first_seen": TIMESTAMP,
    "last_seen": TIMESTAMP,
    "status": pd.CategoricalDtype(list(HISTORY_STATUSES)),
}
CONVERSATION_HISTORY_COLUMNS: dict[str, Any] = {**CONVERSATION_COLUMNS, **_HISTORY_EXTRA}
MESSAGE_HISTORY_COLUMNS: dict[str, Any] = {**MESSAGE_COLUMNS, **_HISTORY_EXTRA}
SNAPSHOT_COLUMNS: dict[str, Any] = {
    "snapshot": INT,
    "source": STRING,
    "provider": STRING,
    "date": TIMESTAMP,
    "date_source": STRING,
    "conversations": INT,
    "messages": INT,
    "new": INT,
    "grown": INT,
    "edited": INT,
    "unchanged": INT,
    "missing": INT,
}
#: The columns of a part of the messages.
PART_COLUMNS: dict[str, Any] = {
    **{k: v for k, v in MESSAGE_COLUMNS.items() if k not in ("source", "conv_index")},
    "conversation_key": STRING,
}
STATE_SCHEMA = pa.schema(
    [
        ("conversation_key", pa.dictionary(pa.int32(), pa.string())),
        ("position", pa.int64()),
        ("hash", pa.uint64()),
        ("first_seen", MS),
        ("last_seen", MS),
    ]
)
#: The folder of the parts, and the file the previous layout kept the messages in.
PARTS = "messages"
OLD_MESSAGES = "messages.parquet"
#: The files of the small tables, in the order they are replaced; the state is replaced with them.
TABLE_FILES = ("state", "conversations", "snapshots")
_PARTS_KEY = b"memvelope.history.parts"
_SCHEMAS = {
    "conversations": arrow_schema(CONVERSATION_HISTORY_COLUMNS),
    "snapshots": arrow_schema(SNAPSHOT_COLUMNS),
    "messages": arrow_schema(MESSAGE_HISTORY_COLUMNS),
    "part": arrow_schema(PART_COLUMNS),
}


def is_history_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a history folder (it holds ``snapshots.parquet`` and its messages' files)."""
    base = Path(os.path.expanduser(os.fspath(path)))
    has_messages = (base / "state.parquet").is_file() or (base / OLD_MESSAGES).is_file()
    return (base / "snapshots.parquet").is_file() and has_messages


def read_table(path: Path, name: str, columns: list[str] | None = None) -> pa.Table:
    """One of a history folder's files (``name``: ``conversations``, ``snapshots``, ``messages`` for the
    previous layout's, ``part``, or ``state``), in its schema (only ``columns`` of it, when given);
    FormatError naming it when it cannot be read."""
    try:
        if name == "state":
            table = pq.read_table(path, read_dictionary=["conversation_key"])
            return table.select(STATE_SCHEMA.names).cast(STATE_SCHEMA.with_metadata(table.schema.metadata))
        schema = _SCHEMAS[name]
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns])
        return pq.read_table(path, columns=columns).select(schema.names).cast(schema)
    except (pa.ArrowException, OSError, KeyError, ValueError) as exc:
        raise FormatError(f"cannot read this history file: {exc}", reason="bad-parquet", source=str(path)) from None


def empty_table(name: str) -> pa.Table:
    """An empty table in the schema of a history folder's file (``name`` as :func:`read_table` takes it)."""
    return STATE_SCHEMA.empty_table() if name == "state" else _SCHEMAS[name].empty_table()


def parts_of(state: pa.Table) -> list[tuple[str, int]]:
    """The parts the state lists: each one's file name (in :data:`PARTS`) and number of rows."""
    listed = json.loads((state.schema.metadata or {}).get(_PARTS_KEY, b"[]"))
    return [(str(name), int(rows)) for name, rows in listed]


def parts_of_file(state: Path) -> list[tuple[str, int]]:
    """The parts the state file ``state`` lists (see :func:`parts_of`), read from its footer alone."""
    try:
        metadata = pq.read_schema(state).metadata or {}
    except (pa.ArrowException, OSError) as exc:
        raise FormatError(f"cannot read this history file: {exc}", reason="bad-parquet", source=str(state)) from None
    return [(str(name), int(rows)) for name, rows in json.loads(metadata.get(_PARTS_KEY, b"[]"))]


def with_parts(state: pa.Table, parts: list[tuple[str, int]]) -> pa.Table:
    """``state`` listing ``parts`` in its schema metadata."""
    return state.replace_schema_metadata({_PARTS_KEY: json.dumps([[n, r] for n, r in parts]).encode()})


def read_tables(base: Path, columns: list[str] | None = None) -> dict[str, pa.Table] | None:
    """The tables of the history folder ``base``: ``snapshots``, ``conversations`` and ``messages`` as
    :func:`memvelope_tools.history` gives them (only the message ``columns`` given, when given); None
    when it has no ``snapshots.parquet``."""
    if not (base / "snapshots.parquet").is_file():
        return None
    tables = {name: read_table(base / f"{name}.parquet", name) for name in ("snapshots", "conversations")}
    if not (base / "state.parquet").is_file() and (base / OLD_MESSAGES).is_file():
        tables["messages"] = read_table(base / OLD_MESSAGES, "messages", columns)
        return tables
    state = read_table(base / "state.parquet", "state")
    in_parts = None if columns is None else [c for c in PART_COLUMNS if c in columns]
    parts = []
    for name, rows in parts_of(state):
        part = read_table(base / PARTS / name, "part", in_parts)
        if part.num_rows != rows:
            raise FormatError(
                f"holds {part.num_rows} messages, the history's state says {rows} (damaged?)",
                reason="bad-parquet",
                source=str(base / PARTS / name),
            )
        parts.append(part)
    empty = _SCHEMAS["part"].empty_table()
    messages = pa.concat_tables(parts) if parts else empty.select(in_parts or empty.column_names)
    if messages.num_rows != state.num_rows:
        raise FormatError(
            f"the history's state has {state.num_rows} messages, its parts {messages.num_rows} (damaged?)",
            reason="bad-parquet",
            source=str(base / "state.parquet"),
        )
    tables["messages"] = assemble(tables["conversations"], state, messages, source=str(base), columns=columns)
    return tables


def assemble(
    conversations: pa.Table, state: pa.Table, messages: pa.Table, *, source: str, columns: list[str] | None = None
) -> pa.Table:
    """The history's messages (:data:`MESSAGE_HISTORY_COLUMNS`, or only ``columns`` of them, in
    :func:`memvelope_tools.history`'s order) from its conversations, its state and the rows of its
    parts (those columns of them) in the state's order."""
    keys = state.column("conversation_key").combine_chunks()
    known = pd.Index(conversations.column("conversation_key").to_numpy(zero_copy_only=False))
    code_rank = known.get_indexer(keys.dictionary.to_numpy(zero_copy_only=False)) if len(keys) else np.zeros(0, int)
    rank = code_rank[keys.indices.to_numpy()].astype(np.int64) if len(keys) else np.zeros(0, np.int64)
    if (rank < 0).any():
        raise FormatError(
            "a message's conversation is not in conversations.parquet (damaged?)", reason="bad-parquet", source=source
        )
    taken = pa.array(rank)
    conv_last = conversations.column("last_seen").cast(pa.int64()).take(taken)
    own_last = state.column("last_seen").cast(pa.int64())
    off_path = pc.is_valid(own_last)
    last_seen = pc.if_else(off_path, own_last, conv_last).cast(MS)
    conv_status = conversations.column("status").cast(pa.string()).take(taken)
    status = pc.if_else(off_path, pa.scalar("edited-away"), conv_status)
    first_seen = state.column("first_seen")
    order = np.lexsort((first_seen.cast(pa.int64()).to_numpy(), state.column("position").to_numpy(), rank))
    made = {
        "source": conversations.column("source").take(taken),
        "conv_index": taken,
        **{name: messages.column(name) for name in messages.column_names},
        "first_seen": first_seen,
        "last_seen": last_seen,
        "status": status,
    }
    wanted = list(MESSAGE_HISTORY_COLUMNS) if columns is None else columns
    schema = pa.schema([_SCHEMAS["messages"].field(name) for name in wanted])
    table = pa.table({name: made[name] for name in wanted})
    return table.take(pa.array(order, pa.int64())).cast(schema)
