"""The index of a history folder: brought up to date a part at a time, and opened with its conversations."""

from __future__ import annotations

import contextlib
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .._atomic import folder_lock
from .._frames.folders import INDEX_FOLDER, PARTS, message_statuses, parts_of_file, unreadable
from .._lookup import positions
from .._pool import lean_pool
from ..errors import FormatError, SearchIndexError
from .engine import (
    BATCH,
    FORMAT,
    PARTS_FILE,
    add_rows,
    as_indexed,
    engine_errors,
    open_engine,
    role_codes,
    writing,
)
from .index import OLD_FILES, SearchIndex, new_folder, seen_last_first, share_files
from .parts import (
    Damaged,
    Indexed,
    Stale,
    Unusable,
    check_index_place,
    file_digest,
    holds,
    part_identity,
    part_rows_file,
    part_rows_schema,
    read_parts_file,
    rows_table,
    write_parts_file,
)

if TYPE_CHECKING:
    import tantivy


_PART_HEAP = 64 << 20  # the same, indexing a history folder's parts (a row group at a time)


def _kept_parts(folder: Path, parts: list[tuple[str, int]]) -> list[Indexed] | None:
    """The parts the index of the history folder ``folder`` holds, when they are the first of its
    ``parts`` as they are now and their rows files are as written; None otherwise."""
    try:
        held = read_parts_file(folder / INDEX_FOLDER)
        if not holds(held, folder, parts):
            return None
        for part in held:
            rows_table(folder / INDEX_FOLDER, part)
    except Unusable:
        return None
    return held


def update_history_index(folder: Path, *, anew: bool = False) -> None:
    """Index the parts of the history folder ``folder`` that its index does not hold (all of them, in an
    index built anew, when ``anew`` or when the index holds parts the folder does not, or is damaged),
    under the folder's lock."""
    path = folder / INDEX_FOLDER
    with folder_lock(folder), lean_pool():
        check_index_place(path)
        parts = parts_of_file(folder / "state.parquet")
        kept = None if anew else _kept_parts(folder, parts)
        if kept is not None and len(kept) == len(parts):
            return
        held = kept or []
        with new_folder(path) as made:
            if held:
                share_files(path, made, but=PARTS_FILE)
            first = sum(part.rows for part in held)
            with engine_errors(os.fspath(path)), writing(open_engine(made, create=not held), _PART_HEAP) as writer:
                for name, rows in parts[len(held) :]:
                    part = part_identity(folder / PARTS / name, name, rows)
                    target = made / part_rows_file(name)
                    with contextlib.suppress(FileNotFoundError):
                        target.unlink()  # a file shared with the index replaced is never written into
                    first = _index_part(writer, folder / PARTS / name, rows, target, first)
                    rows_size, rows_sha256 = file_digest(target)
                    held.append(replace(part, rows_size=rows_size, rows_sha256=rows_sha256))
            write_parts_file(made, held)
        for name in OLD_FILES:
            with contextlib.suppress(OSError):
                (folder / name).unlink()


def _index_part(writer: tantivy.IndexWriter, part: Path, rows: int, target: Path, first: int) -> int:
    """Add the messages of a part (``rows`` of them) as documents numbered from ``first`` on, a row group
    at a time, and write what the index keeps of them to ``target``; the next document's number."""
    try:
        with pq.ParquetFile(part) as file, pa.OSFile(os.fspath(target), "wb") as sink:
            if file.metadata.num_rows != rows:
                raise SearchIndexError(
                    f"holds {file.metadata.num_rows} messages, the history's state says {rows}",
                    reason="bad-index",
                    source=os.fspath(part),
                )
            with pa.ipc.new_file(sink, part_rows_schema()) as out:
                for group in range(file.num_row_groups):
                    # One thread: the decoding threads' allocations outlive each row group.
                    read = file.read_row_group(group, columns=list(part_rows_schema().names), use_threads=False)
                    table = _part_rows(read)
                    del read
                    add_rows(writer, table, np.arange(table.num_rows), first)
                    out.write_table(table, max_chunksize=BATCH)
                    first += table.num_rows
    except (pa.ArrowException, OSError) as exc:
        raise SearchIndexError(f"cannot read {part}: {exc}", reason="bad-index", source=os.fspath(part)) from None
    return first


def _part_rows(table: pa.Table) -> pa.Table:
    """What the index keeps of a part's messages: their conversation's key, position, role, time and text as indexed."""
    text = table.column("text")
    return pa.table(
        {
            "conversation_key": table.column("conversation_key").cast(pa.string()),
            "position": table.column("position").cast(pa.int64()),
            "role": role_codes(table.column("role")),
            "ts": table.column("ts").cast(pa.int64()),
            "text": pa.chunked_array([as_indexed(c) for c in text.chunks] or [pa.array([], pa.string())]),
        },
        schema=part_rows_schema(),
    )


def _history_columns(folder: Path, name: str, columns: list[str]) -> pa.Table:
    """Columns of one of the history folder's small tables; FormatError naming the file when it cannot be read."""
    path = folder / f"{name}.parquet"
    try:
        return pq.read_table(path, columns=columns)
    except (pa.ArrowException, OSError) as exc:
        raise unreadable(path, exc) from None


def open_history_index(folder: Path) -> SearchIndex:
    """The index kept beside the history folder ``folder``: Stale when it does not hold the folder's
    parts as they are now, Damaged when a file of it is not as written, SearchIndexError when
    ``search-index`` is not a folder of its own, FormatError when the folder's files cannot be read."""
    path = folder / INDEX_FOLDER
    check_index_place(path)
    held = read_parts_file(path)
    parts = parts_of_file(folder / "state.parquet")
    if len(held) != len(parts) or not holds(held, folder, parts):
        raise Stale("it does not hold the history's messages as they are now")
    chunks = [rows_table(path, part) for part in held]
    rows = pa.concat_tables(chunks) if chunks else part_rows_schema().empty_table()
    rows = rows.replace_schema_metadata({"format": FORMAT})
    convs = _history_columns(
        folder, "conversations", ["conversation_key", "source", "conversation_id", "title", "status"]
    )
    state = _history_columns(folder, "state", ["first_seen", "last_seen"])
    first_seen = state.column("first_seen")
    if len(first_seen) != rows.num_rows:
        raise FormatError(
            f"the history's state has {len(first_seen)} messages, its parts {rows.num_rows} (damaged?)",
            reason="bad-parquet",
            source=str(folder / "state.parquet"),
        )
    rank = positions(rows.column("conversation_key"), convs.column("conversation_key"))
    if (rank < 0).any():
        raise FormatError(
            "a message's conversation is not in conversations.parquet (damaged?)",
            reason="bad-parquet",
            source=str(folder),
        )
    seen = first_seen.cast(pa.int64()).to_numpy()
    in_history = np.empty(len(rank), dtype=np.int64)
    in_history[np.lexsort((first_seen.cast(pa.int64()).to_numpy(), rows.column("position").to_numpy(), rank))] = (
        np.arange(len(rank))
    )
    ts = rows.column("ts")
    undated = pc.is_null(ts).to_numpy(zero_copy_only=False)
    ms = ts.fill_null(0).to_numpy()
    tie = np.empty(len(rank), dtype=np.int64)
    tie[np.lexsort((in_history, -ms, undated))] = np.arange(len(rank))
    source, conv_id, title = (convs.column(name) for name in ("source", "conversation_id", "title"))
    status = message_statuses(convs.column("status").cast(pa.string()).take(pa.array(rank)), state.column("last_seen"))

    def names(found: list[int]) -> dict[str, list[Any]]:
        at = [int(rank[i]) for i in found]
        return {
            "source": [source[r].as_py() for r in at],
            "conv_index": at,
            "conversation_id": [conv_id[r].as_py() for r in at],
            "title": [title[r].as_py() for r in at],
            "status": [status[i].as_py() for i in found],
        }

    try:
        with engine_errors(os.fspath(path)):
            engine = open_engine(path, create=False)
            shown = (rank, title, seen_last_first(seen))
            index = SearchIndex(engine, rows, path, tie=tie, names=names, conversations=shown)
            held_docs = index._searcher.num_docs
    except SearchIndexError as exc:
        raise Damaged(exc.msg) from None
    if held_docs != rows.num_rows:
        index.close()
        raise Damaged(f"the engine holds {held_docs} messages, the rows {rows.num_rows}")
    return index
