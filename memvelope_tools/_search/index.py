"""The index of a history's messages (:class:`SearchIndex`), built in memory, in a temporary folder or in a
folder of its own, with what a result row shows."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pyarrow as pa

from .._frames import INT, ROLE, STRING, TIMESTAMP, conform
from .._frames.folders import INDEX_FOLDER
from .engine import (
    BATCH,
    FORMAT,
    PARTS_FILE,
    ROWS,
    add_fields,
    add_rows,
    as_indexed,
    check_filters,
    count_matches,
    engine_errors,
    engine_query,
    engine_stamps,
    filtered,
    marked,
    open_engine,
    snippet,
    writing,
)
from .query import parse_query

if TYPE_CHECKING:
    import pandas as pd
    import tantivy


#: Columns and dtypes of a result frame.
RESULT_COLUMNS: dict[str, Any] = {
    "source": STRING,
    "conv_index": INT,
    "conversation_id": STRING,
    "title": STRING,
    "ts": TIMESTAMP,
    "role": ROLE,
    "position": INT,
    "snippet": STRING,
    "score": np.dtype("float64"),
    "matched": STRING,
}

#: What a result row matched by: its message's text, its conversation's title, or both.
MATCHED = ("text", "title", "text, title")


MARKS = ("⟦", "⟧")
OLD_FILES = ("search.sqlite", "search.1.sqlite")  # an index in the format of earlier releases

#: Messages from which an index not kept beside a Parquet folder is kept in a temporary folder.
DISK_MIN = 200_000
#: Bytes of text from which the index of envelopes or exports, built as they are read, is kept in a
#: temporary folder too (the batches read after it are written there as they come).
DISK_TEXT = 4 << 20
_HEAP = 512 << 20  # bytes the engine's indexing threads buffer before writing
_TITLE_HEAP = 32 << 20  # the same, indexing the titles


class SearchIndex:
    """The engine's index of a history's messages, with what a result row shows; query it with :meth:`search`.

    Built in memory, or in a folder (:meth:`build` with ``path``; :meth:`open` reads it again).
    """

    def __init__(
        self,
        engine: tantivy.Index,
        rows: pa.Table,
        path: Path | None = None,
        *,
        tie: np.ndarray | None = None,
        names: Callable[[list[int]], dict[str, list[Any]]] | None = None,
        conversations: tuple[np.ndarray, pa.ChunkedArray, np.ndarray] | None = None,
    ) -> None:
        self._engine = engine
        self._rows = rows
        self._row_of = _row_of_doc(rows)
        self._tie = tie  # each row's place in the order that breaks equal scores (None: the rows' order)
        self._names = names  # the conversation columns of rows, when the rows do not hold them
        # each row's conversation, the conversations' titles, and which of a conversation's first messages
        # a title match shows (the lowest), when the rows do not hold them
        self._conversations = conversations
        self._titles: _Titles | None = None
        self._lock = threading.Lock()
        self.path = path
        engine.reload()
        self._searcher = engine.searcher()
        self._temporary: tempfile.TemporaryDirectory[str] | None = None

    @classmethod
    def build(cls, history: pd.DataFrame, *, path: Path | None = None, fingerprint: str = "") -> SearchIndex:
        """Index a history frame (:data:`memvelope_tools._corpus.HISTORY_COLUMNS`): in memory (in
        a temporary folder from :data:`DISK_MIN` messages), or into the folder ``path``, written
        whole beside it, then moved into place."""
        if path is None:
            if len(history) < DISK_MIN:
                with engine_errors(None):
                    engine = open_engine(None, create=True)
                    return cls(engine, _fill(engine, history, fingerprint))
            folder = tempfile.TemporaryDirectory(prefix="memvelope-search-", ignore_cleanup_errors=True)
            try:
                index = cls.build(history, path=Path(folder.name) / INDEX_FOLDER, fingerprint=fingerprint)
            except BaseException:
                folder.cleanup()
                raise
            index.path, index._temporary = None, folder
            return index
        with new_folder(path) as made:
            with engine_errors(os.fspath(path)):
                rows = _fill(open_engine(made, create=True), history, fingerprint)
            write_rows(made, rows)
            del rows
        for name in OLD_FILES:
            with contextlib.suppress(OSError):
                (path.parent / name).unlink()
        return cls.open(path)

    @classmethod
    def open(cls, path: Path) -> SearchIndex:
        """The index kept in the folder ``path``.

        Raises :class:`ValueError` (:class:`pyarrow.ArrowInvalid` among them), :class:`OSError` or
        :class:`~memvelope_tools.errors.SearchIndexError` when it cannot be read.
        """
        if os.path.lexists(path / PARTS_FILE):
            raise ValueError(f"{path} holds the index of a history folder, which open_history_index opens")
        rows = pa.ipc.open_file(pa.memory_map(os.fspath(path / ROWS))).read_all()
        if (rows.schema.metadata or {}).get(b"format") is None:
            raise ValueError(f"{path / ROWS} is not a search index's rows")
        files = (rows.schema.metadata or {}).get(b"files")
        if files is not None and files.decode() != engine_stamps(path):
            raise ValueError("its files changed since it was written (damaged?)")
        with engine_errors(os.fspath(path)):
            index = cls(open_engine(path, create=False), rows, path)
            held = index._searcher.num_docs
        if held != rows.num_rows:
            raise ValueError(f"the engine holds {held} messages, the rows {rows.num_rows}")
        return index

    def __len__(self) -> int:
        return int(self._rows.num_rows)

    def meta(self, key: str) -> str | None:
        """A value stored with the index (``format``, ``fingerprint``)."""
        value = (self._rows.schema.metadata or {}).get(key.encode())
        return None if value is None else value.decode()

    def search(
        self,
        query: str,
        *,
        role: str | None = None,
        since: Any = None,
        until: Any = None,
        limit: int | None = 50,
        marks: Sequence[str] = MARKS,
    ) -> pd.DataFrame:
        """Messages matching ``query``, best first (see :mod:`memvelope_tools._search`)."""
        tree = parse_query(query)
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
            raise ValueError(f"limit must be a non-negative int or None, got {limit!r}")
        check_filters(role, since, until)
        with self._lock, self._engine_errors():
            in_text = self._best(
                filtered(engine_query(tree, self._searcher), role, since, until), limit, self._searcher, self._row_of
            )
            titles = self._title_index()
            in_title = self._best(
                filtered(engine_query(tree, titles.searcher), role, since, until), limit, titles.searcher, titles.first
            )
        hits, matched = self._together(in_text, in_title, limit)
        # Row by row: taking rows from a table in many chunks joins its chunks first.
        shown: tuple[str, ...] = ("ts", "role", "position", "text")
        if self._names is None:
            shown += ("source", "conv_index", "conversation_id", "title")
            if "status" in self._rows.column_names:
                shown += ("status",)
        columns = {name: [self._rows.column(name)[i].as_py() for i, _ in hits] for name in shown}
        if self._names is not None:
            columns.update(self._names([i for i, _ in hits]))
        leaves = marked(tree)
        import pandas as pd  # the results are a frame

        frame = pd.DataFrame(
            {
                "source": columns["source"],
                "conv_index": np.array(columns["conv_index"], dtype=np.int64),
                "conversation_id": columns["conversation_id"],
                "title": columns["title"],
                "ts": pd.to_datetime(pd.array(columns["ts"], dtype="Int64"), unit="ms", utc=True),
                "role": pd.Categorical.from_codes([-1 if r is None else r for r in columns["role"]], dtype=ROLE.pandas),
                "position": np.array(columns["position"], dtype=np.int64),
                "snippet": [snippet(text, leaves, marks) for text in columns["text"]],
                "score": np.array([score for _, score in hits], dtype=np.float64),
                "matched": matched,
            }
        )
        out = conform(frame, RESULT_COLUMNS)
        if "status" in columns:  # a history folder's message's own, where it stands in the folder's newest export
            out["status"] = pd.Series(columns["status"], dtype=STRING.pandas)
        return out

    def count(self, query: str, *, role: str | None = None, since: Any = None, until: Any = None) -> int:
        """How many messages match ``query`` (and the filters, as :meth:`search` takes them)."""
        tree = parse_query(query)
        check_filters(role, since, until)
        with self._lock, self._engine_errors():
            matching = filtered(engine_query(tree, self._searcher), role, since, until)
            return count_matches(self._searcher, matching)

    @contextlib.contextmanager
    def _engine_errors(self) -> Iterator[None]:
        with engine_errors(None if self.path is None else os.fspath(self.path)):
            yield

    def _best(
        self, query: tantivy.Query, limit: int | None, searcher: tantivy.Searcher, row_of: np.ndarray | None
    ) -> list[tuple[int, float]]:
        """Row and score of the best ``limit`` matches of ``searcher`` (whose document ``d`` is row
        ``row_of[d]``, row ``d`` when None): by score, then by row (rows follow the order that breaks
        equal scores, see :func:`_fill`)."""
        size = searcher.num_docs
        if limit == 0 or size == 0:
            return []
        want = count_matches(searcher, query) if limit is None else min(limit, size)
        if want == 0:
            return []
        fetch = want + 16
        while True:
            # The engine orders equal scores its own way: fetch until the score at the cut is
            # passed (or every match is in), then order equal scores by row.
            hits = searcher.search(query, fetch, count=False).hits
            if len(hits) < fetch or hits[-1][0] < hits[want - 1][0]:
                break
            fetch *= 4
        rows = searcher.fast_field_values("id", [address for _, address in hits])
        if row_of is not None:
            rows = [int(row_of[cast(int, doc)]) for doc in rows]
        ranked = sorted(zip(rows, (score for score, _ in hits), strict=True), key=self._rank)
        return [(int(cast(int, row)), float(score)) for row, score in ranked[:want]]

    def _rank(self, hit: tuple[Any, float]) -> tuple[float, int]:
        """A hit's place: by score, then by the order that breaks equal scores."""
        row = int(hit[0])
        return -hit[1], row if self._tie is None else int(self._tie[row])

    def _together(
        self, in_text: list[tuple[int, float]], in_title: list[tuple[int, float]], limit: int | None
    ) -> tuple[list[tuple[int, float]], list[str]]:
        """The best ``limit`` of the rows matched by their text and the rows shown for a title that
        matched (a row in both scores the higher of its two), and what each matched by."""
        found: dict[int, tuple[float, str]] = {row: (score, MATCHED[0]) for row, score in in_text}
        for row, score in in_title:
            held = found.get(row)
            found[row] = (score, MATCHED[1]) if held is None else (max(score, held[0]), MATCHED[2])
        ranked = sorted(((row, score) for row, (score, _) in found.items()), key=self._rank)[:limit]
        return ranked, [found[row][1] for row, _ in ranked]

    def _title_index(self) -> _Titles:
        """The index of the conversations' titles, built the first time a search needs it."""
        if self._titles is None:
            if self._conversations is not None:
                conv_of, titles, prefer = self._conversations
            else:
                conv_of, titles = _conversations_of(self._rows)
                if "first_seen" in self._rows.column_names:
                    prefer = seen_last_first(self._rows.column("first_seen").to_numpy())
                else:
                    prefer = np.arange(len(conv_of)) if self._tie is None else self._tie
            self._titles = _Titles.build(self._rows, conv_of, titles, prefer)
        return self._titles

    def close(self) -> None:
        """Let the index go (and remove the folder of one kept in a temporary folder)."""
        with self._lock:
            self._searcher = self._engine = self._rows = self._row_of = None  # type: ignore[assignment]
            self._tie = self._names = self._conversations = self._titles = None
            if self._temporary is not None:
                self._temporary.cleanup()


class _Titles:
    """An index of the conversations' titles, in memory: document ``j`` is conversation ``j``'s title,
    with the role and time of the message a title match shows (row ``first[j]``: the conversation's
    first message, the one seen last of its first messages in a history)."""

    def __init__(self, searcher: tantivy.Searcher, first: np.ndarray) -> None:
        self.searcher, self.first = searcher, first

    @classmethod
    def build(cls, rows: pa.Table, conv_of: np.ndarray, titles: pa.ChunkedArray, prefer: np.ndarray) -> _Titles:
        first = _first_rows(conv_of, rows.column("position").to_numpy(), len(titles), prefer)
        held = np.flatnonzero(first >= 0)
        text = as_indexed(titles.take(pa.array(held, pa.int64())).combine_chunks()).to_pylist()
        shown = rows.select(["role", "ts"]).take(pa.array(first[held], pa.int64()))
        engine = open_engine(None, create=True)
        with writing(engine, _TITLE_HEAP) as writer:
            add_fields(writer, held.tolist(), text, shown.column("role").to_pylist(), shown.column("ts").to_pylist())
        engine.reload()
        return cls(engine.searcher(), first)


def seen_last_first(first_seen: np.ndarray) -> np.ndarray:
    """Which of a conversation's first messages in a history folder a title match shows, as ranks (the
    lowest shown): the one seen last (``first_seen``: when each was first seen, in ms)."""
    return -first_seen


def _first_rows(conv_of: np.ndarray, position: np.ndarray, n_convs: int, prefer: np.ndarray) -> np.ndarray:
    """Each conversation's first message (of those at its lowest position, the lowest in ``prefer``), -1
    for one with none."""
    order = np.lexsort((prefer, position, conv_of))
    first = np.full(n_convs, -1, dtype=np.int64)
    conv = conv_of[order]
    starts = np.flatnonzero(np.r_[True, conv[1:] != conv[:-1]]) if len(conv) else np.zeros(0, dtype=np.int64)
    first[conv[starts]] = order[starts]
    return first


def _conversations_of(rows: pa.Table) -> tuple[np.ndarray, pa.ChunkedArray]:
    """Each row's conversation (numbered in the order first met) and each conversation's title."""
    if not rows.num_rows:  # pandas 2.2.0 cannot factorize an empty MultiIndex
        return np.zeros(0, dtype=np.int64), rows.column("title").slice(0, 0)
    import pandas as pd

    keys = pd.MultiIndex.from_arrays([rows.column("source").to_pandas(), rows.column("conv_index").to_numpy()])
    codes, _ = pd.factorize(keys)
    codes = codes.astype(np.int64)
    n = int(codes.max()) + 1 if len(codes) else 0
    at = np.full(n, -1, dtype=np.int64)
    at[codes[::-1]] = np.arange(len(codes))[::-1]
    return codes, rows.column("title").take(pa.array(at, pa.int64()))


def _replace_folder(new: Path, path: Path) -> None:
    """Move the folder ``new`` to ``path``, in place of what is there."""
    if path.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{path.name}-", suffix=".old", dir=path.parent))
        os.replace(path, old / path.name)
        try:
            os.replace(new, path)
        finally:
            shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(new, path)


def _fill(engine: tantivy.Index, history: pd.DataFrame, fingerprint: str) -> pa.Table:
    """Index the history's texts into ``engine``; the rows a result shows, one per message in the
    order that breaks equal scores (dated first, the most recent first, then history order)."""
    rows = result_rows(history, fingerprint)
    add_documents(engine, rows, np.arange(rows.num_rows), 0)
    return rows


def result_rows(history: pd.DataFrame, fingerprint: str) -> pa.Table:
    """The rows a result shows, one per message of ``history`` in the order that breaks equal scores
    (dated first, the most recent first, then history order), ``text`` as indexed; each message's
    ``status`` and ``first_seen`` (in ms) when ``history`` is a history folder's
    (:data:`memvelope_tools._corpus.FOLDER_COLUMNS`)."""
    n = len(history)
    undated = history["ts"].isna().to_numpy()
    ms = np.where(undated, 0, history["ts"].to_numpy(dtype="datetime64[ms]").view(np.int64))
    order = np.lexsort((np.arange(n), -ms, undated))
    codes = history["role"].cat.codes.to_numpy().astype(np.int8) if n else np.zeros(0, dtype=np.int8)
    role = pa.array(codes[order], mask=codes[order] < 0)
    ts = pa.array(ms[order], mask=undated[order])
    texts = list(_index_batches(history["text"], order))
    sightings = {}
    if "status" in history.columns:
        seen = history["first_seen"].to_numpy(dtype="datetime64[ms]").view(np.int64)
        sightings = {"status": _column(history["status"], order), "first_seen": pa.array(seen[order])}
    return pa.table(
        {
            "source": _column(history["source"], order),
            "conv_index": pa.array(history["conv_index"].to_numpy(dtype=np.int64)[order]),
            "conversation_id": _column(history["conversation_id"], order),
            "title": _column(history["title"], order),
            "position": pa.array(history["position"].to_numpy(dtype=np.int64)[order]),
            "role": role,
            "ts": ts,
            "text": pa.chunked_array(texts, type=pa.string()),
            **sightings,
        }
    ).replace_schema_metadata({"format": FORMAT, "fingerprint": fingerprint})


def add_documents(engine: tantivy.Index, rows: pa.Table, which: np.ndarray, first: int) -> None:
    """Add the rows ``which`` of ``rows`` to ``engine`` as documents numbered from ``first`` on."""
    with writing(engine, _HEAP) as writer:
        add_rows(writer, rows, which, first)


def _row_of_doc(rows: pa.Table) -> np.ndarray | None:
    """Each engine document's row in ``rows`` (None: document ``i`` is row ``i``)."""
    if "doc" not in rows.column_names:
        return None
    docs = rows.column("doc").to_numpy()
    row_of = np.full(int(docs.max()) + 1 if len(docs) else 0, -1, dtype=np.int64)
    row_of[docs] = np.arange(len(docs))
    return row_of


def share_files(path: Path, made: Path, *, but: str) -> None:
    """The files of the index in the folder ``path`` in the folder ``made`` too, all ``but`` one."""
    for entry in os.scandir(path):
        if entry.name == but or not entry.is_file(follow_symlinks=False):
            continue
        try:  # the engine never writes into a file it made: linking shares it safely
            os.link(entry.path, made / entry.name, follow_symlinks=False)
        except OSError:
            shutil.copy2(entry.path, made / entry.name, follow_symlinks=False)


@contextlib.contextmanager
def new_folder(path: Path) -> Iterator[Path]:
    """A temporary folder beside ``path`` that replaces it when the block ends well, and is removed otherwise."""
    made = Path(tempfile.mkdtemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent))
    try:
        yield made
        _replace_folder(made, path)
    except BaseException:
        shutil.rmtree(made, ignore_errors=True)
        raise


def write_rows(made: Path, rows: pa.Table) -> None:
    """Write the rows beside the engine's files in the folder ``made``, with the stamp of those files."""
    rows = rows.replace_schema_metadata({**(rows.schema.metadata or {}), b"files": engine_stamps(made)})
    with pa.OSFile(os.fspath(made / ROWS), "wb") as sink, pa.ipc.new_file(sink, rows.schema) as out:
        out.write_table(rows, max_chunksize=BATCH)


def _column(values: pd.Series, order: np.ndarray) -> pa.Array:
    """A text column in ``order``."""
    # pandas before 3.0 holds its Arrow strings as large_string whatever type is asked for.
    return pa.array(values.astype(STRING.pandas).array, type=pa.string()).take(pa.array(order)).cast(pa.string())


def _index_batches(text: pd.Series, order: np.ndarray) -> Iterator[pa.StringArray]:
    """The texts as indexed, in ``order`` (see :func:`as_indexed`)."""
    array = pa.chunked_array([pa.array(text.astype(STRING.pandas).array, type=pa.string())])
    for start in range(0, len(order), BATCH):
        # pandas before 3.0 holds its Arrow strings as large_string whatever type is asked for.
        yield as_indexed(array.take(order[start : start + BATCH]).combine_chunks())


def _files_fingerprint(paths: Iterable[Path]) -> str:
    """Size, modification time and Parquet footer of each file: any rewrite changes it."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(FORMAT.encode())
    for path in paths:
        stat = path.stat()
        digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
        with open(path, "rb") as fh:
            fh.seek(max(0, stat.st_size - 8))
            tail = fh.read(8)
            footer = int.from_bytes(tail[:4], "little") if len(tail) == 8 else 0
            fh.seek(max(0, stat.st_size - 8 - footer))
            digest.update(fh.read(footer + 8))
    return digest.hexdigest()


def folder_fingerprint(folder: Path) -> str:
    """The fingerprint of the Parquet files an index beside ``folder`` is built from."""
    names = ("messages.parquet", "state.parquet", "conversations.parquet")
    files = [folder / name for name in names if (folder / name).is_file()]
    return _files_fingerprint(files)
