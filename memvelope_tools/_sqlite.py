"""The toolkit's tables as one SQLite database, for Datasette, ``sqlite-utils`` and any SQL tool.

:func:`to_sqlite` gathers the tables :func:`memvelope_tools.to_parquet` writes for the same input
(``conversations``, ``messages``, ``facts``, and from an export given by path ``nodes``, ``assets`` and
``projects``), adds ``memory`` (:func:`memvelope_tools.memory_frame`, a ``source`` column first) for each
export given by path, or, for a history folder, the tables :func:`memvelope_tools.read_history` gives
(``snapshots``, and ``conversations`` and ``messages`` with ``conversation_key``, ``first_seen``,
``last_seen`` and ``status``), and writes each as a table of the same columns, which ``sqlite-utils``
creates, with its keys, indexes and full-text index:

* text, categories and timestamps are ``TEXT`` (timestamps in ISO 8601, UTC: ``2026-05-01T08:30:00.000Z``),
  whole numbers and yes/no ``INTEGER`` (1 or 0), fractions ``FLOAT``, lists and records JSON ``TEXT``;
* ``conversations`` has the primary key ``(source, conv_index)``, ``facts`` ``(source, fact_index)`` and
  ``snapshots`` ``(snapshot)``; the other tables are keyed by their ``rowid`` (a history keeps every
  version of an edited message at its position). ``messages (source, conv_index)`` is a foreign key to
  ``conversations``;
* an index on each join column (``source, conv_index``, and the ids: ``conversation_id``, ``message_id``,
  ``node_id``, ``convo_id``, ``project_id``, ``memory_id``, ``conversation_key``) and each timestamp column;
* ``messages_fts``, an FTS5 index of the messages' ``text`` made by ``sqlite-utils``' ``enable_fts``
  (with its triggers), which Datasette offers as full-text search.

The inputs are read as :func:`memvelope_tools.to_parquet` reads them
(:func:`memvelope_tools._tables.streamed_tables`): each envelope and export once, as a stream of batches
(an export's nodes, files, projects and memory made in the same pass as its conversations), the
conversations kept and the messages and nodes waiting in files of Arrow record batches beside the target. The
rows go in a table at a time and a batch at a time (a batch is turned into Python values only when it is
inserted), into a temporary file beside the target that replaces it once complete.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._atomic import atomic_path, check_output_file
from ._convert.log import ConversionLog
from ._parquet import Chunks
from ._progress import progress_bar
from ._read import Source
from ._sources import Input, is_history_folder, resolve
from .errors import FormatError, OutputError

if TYPE_CHECKING:
    import pyarrow as pa
    import sqlite_utils

    from ._memory.scan import MemoryReading

#: The primary key of each table that has one of its own columns.
PRIMARY_KEYS: dict[str, tuple[str, ...]] = {
    "conversations": ("source", "conv_index"),
    "facts": ("source", "fact_index"),
    "snapshots": ("snapshot",),
}
#: The columns that name a row of another table, each indexed where a table has it.
JOIN_COLUMNS = (
    "conversation_id",
    "message_id",
    "node_id",
    "convo_id",
    "project_id",
    "memory_id",
    "conversation_key",
)
#: The order the tables are written in (the others after them, in the order read).
ORDER = ("snapshots", "conversations", "messages", "facts", "nodes", "memory", "assets", "projects")
_BATCH = 16 * 1024


def to_sqlite(
    doc_or_docs: Source | Sequence[Source],
    path: str | os.PathLike[str],
    *,
    sources: Sequence[str] | None = None,
    dedupe: bool = False,
    progress: bool | None = None,
) -> dict[str, int]:
    """Write the documents' tables into one SQLite database at ``path``; return each table's row count.

    Parameters
    ----------
    doc_or_docs : document or list of documents
        Anything the frame functions take (an export is converted in memory, a Parquet folder gives every
        table it holds); a list is several documents. A history folder (``memvelope history add``) is given
        on its own: its conversations and messages are written with their ``status``, ``first_seen``
        and ``last_seen``, and its ``snapshots``.
    path : str or os.PathLike
        The database file to write (its folder must exist); a file already there is replaced whole
        once the new one is complete, and left as it was on any failure.
    sources : list of str, optional
        One label per document (default: see :func:`memvelope_tools._sources.labels_of`).
    dedupe : bool, default False
        Keep one copy of a conversation that several documents hold, as the frames' ``dedupe=True`` does.
    progress : bool, optional
        Show bars on stderr for large inputs (default: on a terminal).

    Returns
    -------
    dict of str to int
        The tables written and their number of rows: ``conversations`` and ``messages`` (when an
        envelope or an export is given), ``facts`` (when a Facts IR document is), and
        ``nodes``, ``memory``, ``assets``, ``projects`` when an input is an export given by path, the
        tables a Parquet folder holds (all but ``memory``, read from an export only), and ``snapshots``,
        ``conversations`` and ``messages`` for a history folder. The database also
        holds ``messages_fts``, the full-text index of the messages' text.

    Raises
    ------
    memvelope_tools.errors.InputError
        An input is missing, empty, not JSON or a file of another kind (nothing is written).
    memvelope_tools.errors.FormatError
        A document breaks the spec, a history folder is given beside other inputs or is damaged, or
        two inputs hold conversations under one ``source`` label (nothing is written).
    memvelope_tools.errors.OutputError
        The database cannot be written (its folder is missing, the disk is full).
    ModuleNotFoundError
        ``sqlite-utils`` is not installed (``pip install 'memvelope_tools[sqlite]'``); said before any
        input is read.

    Examples
    --------
    >>> import sqlite3, tempfile, os
    >>> import memvelope_tools as mv
    >>> path = os.path.join(tempfile.mkdtemp(), "history.db")
    >>> counts = mv.to_sqlite(mv.sample_path("claude"), path)
    >>> db = sqlite3.connect(path)
    >>> db.execute("select count(*) from messages").fetchone()[0] == counts["messages"]
    True
    >>> db.execute("select count(*) from messages_fts where messages_fts match 'python'").fetchone()[0] > 0
    True
    """
    from ._convert.zips import kept_open

    check_output_file(path)
    require_writer()
    with kept_open():  # each zip given is opened once, from its resolving to its last reading
        inputs = resolve(doc_or_docs, "frames", list_means="documents", labels=sources, caller="to_sqlite()")
        with sqlite_tables(inputs, path, dedupe=dedupe, progress=progress) as tables:
            return write_sqlite(tables, path, progress=progress)


def require_writer() -> None:
    """ModuleNotFoundError now, before any input is read, when ``sqlite-utils`` (the ``sqlite`` extra) is missing."""
    import sqlite_utils  # noqa: F401


@contextlib.contextmanager
def sqlite_tables(
    inputs: list[Input],
    path: str | os.PathLike[str],
    *,
    dedupe: bool,
    progress: bool | None,
    on_conversion: Callable[[ConversionLog, str], object] | None = None,
) -> Iterator[dict[str, pa.Table | Chunks]]:
    """The tables :func:`to_sqlite` writes at ``path`` for resolved ``inputs``, by name, for the block (see
    the module docstring): read as :func:`memvelope_tools.to_parquet` reads them, the messages a batch at a
    time from a file beside ``path``; ``on_conversion`` as there."""
    histories = [i for i in inputs if i.kind == "parquet" and i.path is not None and is_history_folder(i.path)]
    if histories:
        if len(inputs) > 1:
            raise FormatError("a history folder is written on its own: give it as the only input", reason="bad-source")
        from ._frames.folders import read_tables as history_tables

        assert histories[0].path is not None
        held = history_tables(histories[0].path)
        assert held is not None  # it is a history folder
        yield {name: held[name] for name in ("snapshots", "conversations", "messages")}
        return
    from ._memory.frame import items_table
    from ._memory.read import combined, memory_of_pass, read_memories
    from ._tables import streamed_tables

    def memory(
        found: Input, provider: str, reading: MemoryReading, heads: dict[str, list[str | None]] | None
    ) -> pa.Table:
        files = found.files()
        assert files is not None
        read = memory_of_pass(files, provider, reading, heads)
        if read is None:  # each path's memory read on its own, as memory_frame reads it
            return items_table(combined(read_memories(files, None, progress)))
        return items_table(read)

    folder = Path(path).parent
    streamed = streamed_tables(
        inputs, folder, dedupe=dedupe, progress=progress, on_conversion=on_conversion, memory=memory
    )
    with streamed as (_, parts, whole):
        yield {**parts, **whole}  # whole: the exports' nodes, assets, projects and memory


def write_sqlite(
    tables: dict[str, pa.Table | Chunks], path: str | os.PathLike[str], *, progress: bool | None
) -> dict[str, int]:
    """Write ``tables`` (name -> Arrow table, or the pieces of one; emptied as each is written) into a new
    database that replaces ``path``; the row counts."""
    import sqlite_utils

    names = sorted(tables, key=lambda name: ORDER.index(name) if name in ORDER else len(ORDER))
    counts: dict[str, int] = {}
    with atomic_path(path) as tmp:
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("PRAGMA journal_mode = OFF")  # a failed write is thrown away whole
            conn.execute("PRAGMA synchronous = OFF")  # the file is synced once, before it replaces the target
            db = sqlite_utils.Database(conn)
            indexes: dict[str, list[list[str]]] = {}
            for name in names:
                schema = _schema(name, tables[name])
                _create(db, name, schema)
                indexes[name] = _indexes(name, schema)
            for name in names:
                counts[name] = _insert(conn, name, tables.pop(name), progress)
            for name in names:
                for columns in indexes[name]:
                    db.table(name).create_index(columns, find_unique_name=True)
            if "messages" in names:
                db.table("messages").enable_fts(["text"], fts_version="FTS5", create_triggers=True)
            conn.commit()
        except sqlite3.IntegrityError as exc:
            raise FormatError(
                f"two inputs hold rows under one source label ({exc}): give each input its own label, or "
                "dedupe to keep one copy of a file given twice",
                reason="bad-source",
                source=os.fspath(path),
            ) from None
        except sqlite3.Error as exc:
            raise OutputError(f"cannot write the database: {exc}", reason="output", source=os.fspath(path)) from None
        finally:
            conn.close()
    return counts


def _create(db: sqlite_utils.Database, name: str, schema: pa.Schema) -> None:
    foreign_keys = []
    if name == "messages":
        foreign_keys = [(("source", "conv_index"), "conversations", ("source", "conv_index"))]
    db.table(name).create(
        {field.name: _column_type(field.type) for field in schema},
        pk=PRIMARY_KEYS.get(name),
        foreign_keys=foreign_keys,
    )


def _column_type(arrow: pa.DataType) -> type:
    import pyarrow as pa

    if pa.types.is_integer(arrow) or pa.types.is_boolean(arrow):
        return int
    if pa.types.is_floating(arrow):
        return float
    return str


def _schema(name: str, table: pa.Table | Chunks) -> pa.Schema:
    """The columns of ``table``: its own, or for the pieces of one those declared for ``name``."""
    from ._frames.columns import arrow_schema
    from ._frames.folders import TABLES

    return arrow_schema(TABLES[name]) if isinstance(table, Chunks) else table.schema


def _insert(conn: sqlite3.Connection, name: str, table: pa.Table | Chunks, progress: bool | None) -> int:
    """Insert ``table``'s rows into the table ``sqlite-utils`` made for it, a batch at a time (as tuples,
    straight to SQLite: ``insert_all`` would look at every value again); the number inserted."""
    names = _schema(name, table).names
    columns = ", ".join(_quoted(column) for column in names)
    sql = f"INSERT INTO {_quoted(name)} ({columns}) VALUES ({', '.join('?' * len(names))})"
    pieces = table.pieces if isinstance(table, Chunks) else [table]
    enabled = progress if table.num_rows >= 16 * _BATCH else False
    with progress_bar(table.num_rows, desc=f"writing {name}", unit="row", enabled=enabled) as bar:
        for piece in pieces:
            for batch in piece.select(names).to_batches(max_chunksize=_BATCH):
                conn.executemany(sql, zip(*(column.to_pylist() for column in _plain(batch).columns), strict=True))
                bar.update(batch.num_rows)
    return int(table.num_rows)


def _quoted(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _plain(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with columns SQLite stores as they are: timestamps as ISO 8601 text, categories as text,
    lists and records as JSON text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = []
    for column in batch.columns:
        kind = column.type
        if pa.types.is_timestamp(kind):
            column = pc.strftime(column.cast(pa.timestamp("ms", tz="UTC")), format="%Y-%m-%dT%H:%M:%SZ")
        elif pa.types.is_dictionary(kind):
            column = column.cast(pa.string())
        elif pa.types.is_nested(kind):
            values = [
                None if v is None else json.dumps(v, ensure_ascii=False, default=_json_value)
                for v in column.to_pylist()
            ]
            column = pa.array(values, pa.string())
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    raise TypeError(f"{type(value).__name__} is not JSON")


def _indexes(name: str, schema: pa.Schema) -> list[list[str]]:
    """The indexes of table ``name``: on its join columns and its timestamp columns."""
    import pyarrow as pa

    columns = schema.names
    found: list[list[str]] = []
    if "source" in columns and "conv_index" in columns and name not in PRIMARY_KEYS:
        found.append(["source", "conv_index", *(["position"] if "position" in columns else [])])
    found += [[c] for c in JOIN_COLUMNS if c in columns]
    found += [[f.name] for f in schema if pa.types.is_timestamp(f.type)]
    return found
