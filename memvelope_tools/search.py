"""Ranked full-text search over the messages of a chat history, offline, with SQLite FTS5 and BM25.

>>> import memvelope_tools as mv
>>> hits = mv.search("history.mve.json", '"time zone" OR tz*', role="user")  # doctest: +SKIP

``source`` is a history as :mod:`memvelope_tools.corpus` describes: anything the frame functions
take, a messages frame, a Parquet folder, or a list of them.

**Queries.** Words are matched whole and in any order (all of them must occur); case and diacritics
do not matter (``cafe`` finds "Café", ``zurich`` "Zürich"). ``"two words"`` is a phrase, ``pyth*`` a
prefix, ``AND``, ``OR``, ``NOT`` (upper case) combine terms, parentheses group them:
``(pandas OR polars) NOT spark``. Everything else in a word is taken literally, so ``c++``,
``e-mail`` or ``don't`` need no quoting. Chinese and Japanese text has no spaces between words:
each ideograph or kana is indexed on its own and a run of them is searched as a phrase, so ``東京``
finds "東京に行く". A query that cannot be run raises :class:`~memvelope_tools.QueryError` saying why.

**Results.** One row per matching message, best first: ``source``, ``conv_index``,
``conversation_id``, ``title``, ``ts``, ``role``, ``position`` (as in the frames), ``snippet`` (up to
about 24 words of the message around the matches, whitespace collapsed, each match between ``⟦`` and
``⟧``, brackets rare enough in real text not to be confused with it) and ``score`` (BM25, higher is
better). Equal scores put the most recent message first; undated messages come last.
``role`` keeps one role; ``since`` (inclusive) and ``until`` (exclusive) keep messages sent in that
interval, given as anything :class:`pandas.Timestamp` reads, UTC when no offset is given
(``since="2024-01-01", until="2025-01-01"`` is the year 2024); undated messages then drop out.

**The index** is built once per history and reused: in memory for the last few histories searched
(recognised by their content, or for files by path, size and modification time; a frame's large
Arrow-backed text by the buffers that hold it, which pandas never changes in place), and for a Parquet
folder on disk beside the Parquet files as ``search.sqlite``, with a fingerprint of those files. When
the files change, the next search says so in a warning and rebuilds the index; it is never used stale.

**Large histories** (:data:`SHARD_MIN` messages or more, on a machine with more than one CPU) are
indexed in two parts built side by side, the second by a Python process of its own, every other
message in each. Each part ranks its messages with its own BM25 statistics, as the shards of a
search engine do: scores differ slightly from those of one index over everything, and two
messages with equal text in different parts can score unequally (so equal scores no longer
always put the most recent first). Which messages match, and their snippets, do not change. A query
ranks the parts side by side, one thread each. Such an index is kept in files: beside a Parquet
folder the second part as ``search.1.sqlite``; otherwise in a temporary folder, removed once the
index is no longer cached (or closed).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import heapq
import itertools
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from . import corpus
from .errors import QueryError
from .frames import INT, ROLE, STRING, TIMESTAMP, conform
from .read import ROLES

__all__ = ["RESULT_COLUMNS", "SHARD_MIN", "SearchIndex", "fts_query", "search"]

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
}
MARKS = ("⟦", "⟧")
INDEX_FILE = "search.sqlite"
_FORMAT = "memvelope-search-2"
_TOKENIZER = "unicode61 remove_diacritics 2"
_SNIPPET_TOKENS = 24
_CACHED = 4  # in-memory indexes kept
_SHARDS = 2  # parts a large index is built in, side by side
# Threads ranking the parts of large indexes beside the querying thread; started when first needed.
_workers = concurrent.futures.ThreadPoolExecutor(max_workers=_SHARDS - 1, thread_name_prefix="memvelope-search")
#: Messages from which an index is built in parts, by as many processes (when there are CPUs for it).
SHARD_MIN = 200_000
_HASHED = 1 << 24  # Arrow buffers up to this size are hashed into a frame's key, larger ones named
_BATCH = 1 << 16  # texts converted to Python at a time while indexing
_BUILD_OPTIONS = (("automerge", 0), ("crisismerge", 1 << 16), ("hashsize", 8 << 20))
# Ideographs and kana: a zero-width space (a separator to the tokenizer, invisible in a snippet)
# after each makes every one a token of its own.
_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_CJK_RE2 = "([" + "".join(f"\\x{{{ord(c):04x}}}" if c != "-" else "-" for c in _CJK_CLASS) + "])"
_CJK = re.compile(f"([{_CJK_CLASS}])")
_ZWSP = "\u200b"
_OPERATORS = frozenset(("AND", "OR", "NOT"))
_QUERY_TOKEN = re.compile(r'\s*(?:(")([^"]*)("?)(\*?)|(\()|(\))|([^\s()"]+))')
_SEARCHABLE = re.compile(r"[^\W_]")


# ---- queries -------------------------------------------------------------------------------------


def fts_query(query: str) -> str:
    """The FTS5 expression a query (see the module docstring) is run as.

    Raises :class:`~memvelope_tools.QueryError` with the reason when the query cannot be run.
    """
    if not isinstance(query, str):
        raise QueryError(f"a query is a string, not {type(query).__name__}")
    out: list[str] = []
    kinds: list[str] = []  # "term", "op", "(", ")"
    pos = 0
    text = query.rstrip()
    while pos < len(text):
        m = _QUERY_TOKEN.match(text, pos)
        assert m is not None  # every non-space character starts some token
        pos = m.end()
        quote, phrase, closed, star, opening, closing, word = m.groups()
        if quote:
            if not closed:
                raise QueryError(f"cannot search for {query!r}: a quote is not closed")
            out.append(_phrase(phrase, query) + ("*" if star else ""))
            kinds.append("term")
        elif opening:
            out.append("(")
            kinds.append("(")
        elif closing:
            out.append(")")
            kinds.append(")")
        elif word in _OPERATORS:
            out.append(word)
            kinds.append("op")
        else:
            stem = word.rstrip("*")
            if not stem:
                raise QueryError(f"cannot search for {query!r}: '*' ends a word to search for its prefix (pyth*)")
            out.append(_phrase(stem, query) + ("*" if stem != word else ""))
            kinds.append("term")
    if "term" not in kinds:
        raise QueryError(f"cannot search for {query!r}: there is no word to search for")
    for i, kind in enumerate(kinds):
        before = kinds[i - 1] if i else "("
        after = kinds[i + 1] if i + 1 < len(kinds) else ")"
        if kind == "op" and (before in ("op", "(") or after in ("op", ")")):
            raise QueryError(f"cannot search for {query!r}: {out[i]} needs a term on each side (a {out[i]} b)")
    if kinds.count("(") != kinds.count(")"):
        raise QueryError(f"cannot search for {query!r}: parentheses do not pair up")
    return " ".join(out)


def _phrase(words: str, query: str) -> str:
    if not _SEARCHABLE.search(words):
        raise QueryError(f"cannot search for {query!r}: {words!r} has no letter or digit to search for")
    return '"' + _CJK.sub(r"\1" + _ZWSP, words).replace('"', '""') + '"'


def _timestamp_ms(value: Any, name: str) -> int | None:
    if value is None:
        return None
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError):
        raise QueryError(f"{name}={value!r} is not a date or time") from None
    if ts is pd.NaT:  # type: ignore[comparison-overlap]
        raise QueryError(f"{name}={value!r} is not a date or time")
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    return int(ts.as_unit("ns").value) // 1_000_000


# ---- the index -----------------------------------------------------------------------------------


class SearchIndex:
    """An FTS5 index of a history's messages, with what a result row shows; query it with :meth:`search`.

    A large history is indexed in parts built side by side (:data:`SHARD_MIN`), each ranking with
    its own BM25 statistics (see the module docstring). A query ranks the parts side by side, in
    threads, each on a read-only connection of its own (SQLite runs a statement without holding
    Python's lock), then merges the parts' best rows by score and row id, in the order one
    statement over all parts gives. Such an index is therefore always kept in files: a large
    history indexed "in memory" is kept in a temporary folder, removed when the index is closed or
    no longer used.
    """

    def __init__(self, connection: sqlite3.Connection, path: Path | None = None) -> None:
        self._db = connection
        self._lock = threading.Lock()
        self.path = path
        shards = connection.execute("SELECT value FROM meta WHERE key = 'shards'").fetchone()
        self._schemas = ["main"] + [f"s{i}" for i in range(1, int(shards[0]) if shards else 1)]
        # Where the parts can be opened again by other connections: with one, each part is ranked
        # in a thread of its own; without, all in one statement on this connection.
        self._file = path if len(self._schemas) > 1 else None
        self._connections: dict[int, sqlite3.Connection] = {}
        self._temporary: tempfile.TemporaryDirectory[str] | None = None

    @classmethod
    def build(cls, history: pd.DataFrame, *, path: Path | None = None, fingerprint: str = "") -> SearchIndex:
        """Index a history frame (:data:`memvelope_tools.corpus.HISTORY_COLUMNS`), in memory or
        into the SQLite file ``path`` (written whole, then renamed into place)."""
        shards = _SHARDS if len(history) >= SHARD_MIN and (os.cpu_count() or 1) > 1 else 1
        if path is None:
            if shards == 1:
                db = _connect(":memory:")
                _fill(db, history, fingerprint, [])
                return cls(db)
            # Each part must be open to a connection of its own while querying: they are files.
            folder = tempfile.TemporaryDirectory(prefix="memvelope-search-", ignore_cleanup_errors=True)
            try:
                main = Path(folder.name) / INDEX_FILE
                db = _connect(main)
                try:
                    _fill(db, history, fingerprint, [_shard_path(main, i) for i in range(1, shards)])
                finally:
                    db.close()
                index = cls.open(main)
            except BaseException:
                folder.cleanup()
                raise
            index.path, index._temporary = None, folder
            return index
        made: list[str] = []
        try:
            tmp = _temp_beside(path, made)
            parts = [Path(_temp_beside(_shard_path(path, i), made)) for i in range(1, shards)]
            db = _connect(tmp)
            try:
                _fill(db, history, fingerprint, parts)
            finally:
                db.close()
            for i, part in enumerate(parts, 1):
                os.replace(part, _shard_path(path, i))
            os.replace(tmp, path)
            with contextlib.suppress(FileNotFoundError):  # a part of an earlier, larger index
                os.unlink(_shard_path(path, shards))
        except BaseException:
            for name in made:
                with contextlib.suppress(OSError):
                    os.unlink(name)
            raise
        return cls.open(path)

    @classmethod
    def open(cls, path: Path) -> SearchIndex:
        """The index kept in the SQLite file ``path`` (and the parts beside it), read-only.

        Raises :class:`sqlite3.DatabaseError` when it or one of its parts cannot be read.
        """
        db = _connect(path, read_only=True)
        try:
            shards = db.execute("SELECT value FROM meta WHERE key = 'shards'").fetchone()
            build = db.execute("SELECT value FROM meta WHERE key = 'build'").fetchone()
            for i in range(1, int(shards[0]) if shards else 1):
                _attach(db, path, i)
                if db.execute(f"SELECT value FROM s{i}.meta WHERE key = 'build'").fetchone() != build:
                    raise sqlite3.DatabaseError(f"{_shard_path(path, i).name} belongs to another index")
        except BaseException:
            db.close()
            raise
        return cls(db, path)

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM msgs").fetchone()[0])

    def meta(self, key: str) -> str | None:
        """A value stored with the index (``format``, ``fingerprint``)."""
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

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
        """Messages matching ``query``, best first (see the module docstring)."""
        expression = fts_query(query)
        if limit is not None and (not isinstance(limit, int) or limit < 0):
            raise ValueError(f"limit must be a non-negative int or None, got {limit!r}")
        open_mark, close_mark = marks
        with self._lock:
            hits = self._best(expression, role, since, until, limit, query)
            ids = [row[0] for row in hits]
            snippets: dict[int, str] = {}
            details: dict[int, tuple[Any, ...]] = {}
            # FTS5 looks a query up again for each row id it is given, and expanding a prefix costs
            # a scan of the terms: a query with one reads its matches once and keeps the rows shown.
            rowid = "+rowid" if '"*' in expression else "rowid"
            for shard, schema in enumerate(self._schemas):
                for chunk in _chunks([i for i in ids if i % len(self._schemas) == shard], 500):
                    marks_in = ",".join("?" * len(chunk))
                    snippets.update(
                        self._db.execute(
                            f"SELECT rowid, snippet(fts, 0, ?, ?, '…', {_SNIPPET_TOKENS}) FROM {schema}.fts "
                            f"WHERE fts MATCH ? AND {rowid} IN ({marks_in})",
                            [open_mark, close_mark, expression, *chunk],
                        ).fetchall()
                    )
            for chunk in _chunks(ids, 500):
                marks_in = ",".join("?" * len(chunk))
                for row in self._db.execute(
                    "SELECT m.id, c.source, c.conv_index, c.conversation_id, c.title, m.ts, m.role, m.position "
                    f"FROM msgs m JOIN convs c ON c.id = m.conv WHERE m.id IN ({marks_in})",
                    chunk,
                ):
                    details[row[0]] = row[1:]
        rows = [details[i] for i in ids]
        frame = pd.DataFrame(
            {
                "source": [r[0] for r in rows],
                "conv_index": np.array([r[1] for r in rows], dtype=np.int64),
                "conversation_id": [r[2] for r in rows],
                "title": [r[3] for r in rows],
                "ts": pd.to_datetime(pd.array([r[4] for r in rows], dtype="Int64"), unit="ms", utc=True),
                "role": pd.Categorical.from_codes([-1 if r[5] is None else r[5] for r in rows], dtype=ROLE),
                "position": np.array([r[6] for r in rows], dtype=np.int64),
                "snippet": [" ".join(snippets[i].replace(_ZWSP, "").split()) for i in ids],
                "score": np.array([row[1] for row in hits], dtype=np.float64),
            }
        )
        return conform(frame, RESULT_COLUMNS)

    def count(self, query: str, *, role: str | None = None, since: Any = None, until: Any = None) -> int:
        """How many messages match ``query`` (and the filters, as :meth:`search` takes them)."""
        expression = fts_query(query)
        arms = list(map(_matching(expression, role, since, until), self._schemas))
        with self._lock:
            counts = self._each_part(lambda db, i: db.execute(f"SELECT count(*) {arms[i][0]}", arms[i][1]), query)
        return sum(int(rows[0][0]) for rows in counts)

    def _best(
        self, expression: str, role: str | None, since: Any, until: Any, limit: int | None, query: str
    ) -> list[tuple[int, float]]:
        """Row ids and scores (higher is better) of the best ``limit`` matches, best first."""
        arms = list(map(_matching(expression, role, since, until), self._schemas))
        n = -1 if limit is None else limit
        # Row ids break ties (see _fill).
        if self._file is None:
            union = " UNION ALL ".join(f"SELECT fts.rowid AS id, bm25(fts) AS score {source}" for source, _ in arms)
            params = [p for _, arm_params in arms for p in arm_params]
            sql = f"SELECT id, -score FROM ({union}) ORDER BY score, id LIMIT ?"
            return self._each_part(lambda db, _: db.execute(sql, [*params, n]), query, together=True)[0]
        tops = self._each_part(
            lambda db, i: db.execute(
                f"SELECT fts.rowid AS id, bm25(fts) AS score {arms[i][0]} ORDER BY score, id LIMIT ?", [*arms[i][1], n]
            ),
            query,
        )
        merged = heapq.merge(*tops, key=lambda row: (row[1], row[0]))
        return [(i, -score) for i, score in itertools.islice(merged, None if limit is None else limit)]

    def _each_part(
        self, run: Callable[[sqlite3.Connection, int], sqlite3.Cursor], query: str, *, together: bool = False
    ) -> list[list[Any]]:
        """The rows of ``run(connection, i)`` for each part ``i`` (``together``: for ``i = 0`` alone, a
        statement over all parts): where the parts are files, side by side, each on a connection of
        its own, else one after the other on this index's connection.

        Side by side, this thread and the worker threads take the parts one at a time, whichever is
        free first: on a busy machine a small query does not wait for a worker to get a core.
        The caller holds the lock, so each connection is used by one thread at a time.
        """
        parts = [0] if together else list(range(len(self._schemas)))
        threaded = not together and self._file is not None
        connections = [self._db if i == 0 or not threaded else self._part(i) for i in parts]
        results: list[list[Any]] = [[] for _ in parts]
        failures: list[BaseException | None] = [None for _ in parts]
        done = [threading.Event() for _ in parts]
        pending = list(parts)
        claim = threading.Lock()

        def work() -> None:
            while True:
                with claim:
                    if not pending:
                        return
                    i = pending.pop(0)
                try:
                    results[i] = run(connections[i], i).fetchall()
                except BaseException as exc:  # raised in the calling thread, below
                    failures[i] = exc
                finally:
                    done[i].set()

        if threaded:
            for _ in parts[1:]:
                _workers.submit(work)
        try:
            work()
        finally:
            for event in done:
                event.wait()
        for failure in failures:
            if isinstance(failure, sqlite3.OperationalError):
                detail = str(failure).removeprefix("fts5: ")
                raise QueryError(f"cannot search for {query!r}: {detail}") from None
            if failure is not None:
                raise failure
        return results

    def _part(self, i: int) -> sqlite3.Connection:
        """A read-only connection with part ``i`` attached under its name, for one thread at a time."""
        if i not in self._connections:
            assert self._file is not None
            db = _connect(self._file, read_only=True)
            _attach(db, self._file, i)
            self._connections[i] = db
        return self._connections[i]

    def close(self) -> None:
        """Close the database connections (and remove the files of an index kept in a temporary folder)."""
        with self._lock:
            for db in [self._db, *self._connections.values()]:
                db.close()
            self._connections.clear()
            if self._temporary is not None:
                self._temporary.cleanup()


def _matching(
    expression: str, role: str | None, since: Any, until: Any
) -> Callable[[str], tuple[str, list[str | int]]]:
    """For a part's schema, the FROM and WHERE clauses selecting its messages that match, and their
    parameters (the filters are checked here, once for every part)."""
    where: list[str] = ["fts MATCH ?"]
    params: list[str | int] = [expression]
    if role is not None:
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)} or None, got {role!r}")
        where.append("m.role = ?")
        params.append(ROLES.index(role))
    for name, value, op in (("since", since, ">="), ("until", until, "<")):
        ms = _timestamp_ms(value, name)
        if ms is not None:
            where.append(f"m.ts {op} ?")
            params.append(ms)
    join = "JOIN main.msgs m ON m.id = fts.rowid " if len(where) > 1 else ""
    return lambda schema: (f"FROM {schema}.fts {join}WHERE {' AND '.join(where)}", params)


def _chunks(values: list[int], size: int) -> Iterable[list[int]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _shard_path(path: Path, i: int) -> Path:
    """Where part ``i`` (from 1) of the index kept in ``path`` is kept."""
    return path.with_name(f"{path.stem}.{i}{path.suffix}")


def _attach(db: sqlite3.Connection, path: Path, i: int) -> None:
    """Attach part ``i`` of the index kept in ``path`` to ``db``, read-only, as schema ``s{i}``."""
    db.execute(f"ATTACH ? AS s{i}", (f"{_shard_path(path, i).resolve().as_uri()}?mode=ro",))


def _temp_beside(path: Path, made: list[str]) -> str:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    made.append(tmp)
    return tmp


def _connect(path: str | Path, *, read_only: bool = False) -> sqlite3.Connection:
    if read_only:
        return sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    for pragma in ("journal_mode = OFF", "synchronous = OFF", "temp_store = MEMORY"):
        db.execute(f"PRAGMA {pragma}")
    return db


def _create_fts(db: sqlite3.Connection) -> None:
    db.execute(f"CREATE VIRTUAL TABLE fts USING fts5(text, tokenize = '{_TOKENIZER}')")
    # Segments are merged once, at the end, rather than while the rows go in.
    for option, value in _BUILD_OPTIONS:
        with contextlib.suppress(sqlite3.OperationalError):  # an older SQLite without the option
            db.execute("INSERT INTO fts(fts, rank) VALUES (?, ?)", (option, value))


def _fill(db: sqlite3.Connection, history: pd.DataFrame, fingerprint: str, parts: list[Path]) -> None:
    """Create the tables and insert the history, the texts of every ``len(parts) + 1``-th row id
    here and the others into the SQLite files ``parts``, each by a process of its own."""
    db.executescript(
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE convs(id INTEGER PRIMARY KEY, source TEXT, conv_index INTEGER, conversation_id TEXT,
                           title TEXT);
        CREATE TABLE msgs(id INTEGER PRIMARY KEY, conv INTEGER, position INTEGER, role INTEGER, ts INTEGER);
        """
    )
    _create_fts(db)
    n = len(history)
    step = len(parts) + 1
    source = history["source"].astype(object).to_numpy()
    conv_index = history["conv_index"].to_numpy(dtype=np.int64)
    # A new conversation starts wherever (source, conv_index) changes from the row before.
    starts = np.ones(n, dtype=bool)
    if n:
        starts[1:] = (conv_index[1:] != conv_index[:-1]) | (source[1:] != source[:-1])
    conv = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    ts = _ms(history["ts"])
    undated = history["ts"].isna().to_numpy()
    ms = np.where(undated, 0, history["ts"].to_numpy(dtype="datetime64[ms]").view(np.int64))
    # Row ids follow the order that breaks equal scores (dated first, the most recent first, then frame
    # order), so a query ranks by score and row id alone, without reading the messages it does not show.
    order = np.lexsort((np.arange(n), -ms, undated))
    role = history["role"].cat.codes.to_numpy() if n else np.zeros(0, dtype=np.int8)
    build = os.urandom(8).hex()
    with contextlib.ExitStack() as stack:
        workers = [
            stack.enter_context(_Part(part, _index_batches(history["text"], order[i::step]), i, step, build))
            for i, part in enumerate(parts, 1)
        ]
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [
                ("format", _FORMAT),
                ("tokenizer", _TOKENIZER),
                ("fingerprint", fingerprint),
                ("shards", str(step)),
                ("build", build),
            ],
        )
        db.executemany(
            "INSERT INTO convs VALUES (?, ?, ?, ?, ?)",
            zip(
                range(len(first)),
                source[first].tolist(),
                conv_index[first].tolist(),
                _nullable(history["conversation_id"].iloc[first]),
                _nullable(history["title"].iloc[first]),
                strict=True,
            ),
        )
        db.executemany(
            "INSERT INTO msgs VALUES (?, ?, ?, ?, ?)",
            zip(
                range(n),
                conv[order].tolist(),
                history["position"].to_numpy(dtype=np.int64)[order].tolist(),
                [None if r < 0 else r for r in role[order].tolist()],
                [ts[i] for i in order.tolist()],
                strict=True,
            ),
        )
        _insert_texts(db, _index_batches(history["text"], order[::step]), 0, step)
        db.execute("COMMIT")
        for worker in workers:
            worker.finish()


def _insert_texts(db: sqlite3.Connection, batches: Iterable[pa.StringArray], first: int, step: int) -> None:
    """Insert the texts as row ids ``first``, ``first + step``, ... and merge the index."""
    texts = (text for batch in batches for text in batch.to_pylist())
    # Row ids in increasing order: FTS5 writes out what it holds whenever a row id goes back.
    db.executemany("INSERT INTO fts(rowid, text) VALUES (?, ?)", zip(itertools.count(first, step), texts))
    db.execute("INSERT INTO fts(fts) VALUES ('optimize')")


class _Part:
    """A part of the index built by another process, from texts handed over in an Arrow file.

    When that process cannot be started or fails, :meth:`finish` builds the part here.
    """

    def __init__(self, path: Path, batches: Iterable[pa.StringArray], first: int, step: int, build: str) -> None:
        self.args = [os.fspath(path), os.fspath(path) + ".arrow", str(first), str(step), build]
        with pa.OSFile(self.args[1], "wb") as sink, pa.ipc.new_stream(sink, pa.schema([("text", pa.string())])) as out:
            for batch in batches:
                out.write_batch(pa.record_batch([batch], names=["text"]))
        code = (
            f"import sys; sys.path.insert(0, {os.fspath(Path(__file__).resolve().parents[1])!r}); "
            "from memvelope_tools.search import build_part; build_part(*sys.argv[1:])"
        )
        self.process: subprocess.Popen[bytes] | None = None
        with contextlib.suppress(OSError):
            self.process = subprocess.Popen(
                [sys.executable, "-c", code, *self.args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )

    def __enter__(self) -> _Part:
        return self

    def finish(self) -> None:
        if self.process is None or self.process.wait() != 0:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.args[0])
            build_part(*self.args)

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.args[1])


def build_part(path: str, texts: str, first: str, step: str, build: str) -> None:
    """Build part of an index: the texts of the Arrow stream ``texts`` as row ids ``first``,
    ``first + step``, ..., into a new SQLite file ``path`` (run by :class:`SearchIndex.build`)."""
    db = _connect(path)
    try:
        db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
        _create_fts(db)
        db.execute("BEGIN")
        db.execute("INSERT INTO meta VALUES ('build', ?)", (build,))
        with pa.memory_map(texts) as source:
            reader = pa.ipc.open_stream(source)
            _insert_texts(db, (batch.column(0) for batch in reader), int(first), int(step))
        db.execute("COMMIT")
    finally:
        db.close()


def _ms(ts: pd.Series) -> list[int | None]:
    """Milliseconds since the epoch, None for NaT."""
    out: list[int | None] = list(ts.to_numpy(dtype="datetime64[ms]").view(np.int64).tolist())
    for i in np.flatnonzero(ts.isna().to_numpy()).tolist():
        out[i] = None
    return out


def _nullable(values: pd.Series) -> list[str | None]:
    return [None if v is pd.NA or v is None else str(v) for v in values.astype(object)]


def _index_batches(text: pd.Series, order: np.ndarray) -> Iterator[pa.StringArray]:
    """The texts as indexed, in ``order``: null as empty, a zero-width space after each ideograph and kana."""
    array = pa.chunked_array([pa.array(text.astype(STRING).array, type=pa.string())])
    for start in range(0, len(order), _BATCH):
        # pandas before 3.0 holds its Arrow strings as large_string whatever type is asked for.
        batch = array.take(order[start : start + _BATCH]).combine_chunks().fill_null("").cast(pa.string())
        wide = pc.invert(pc.string_is_ascii(batch))  # only text beyond ASCII can hold an ideograph
        if pc.any(wide).as_py():
            spaced = pc.replace_substring_regex(batch.filter(wide), pattern=_CJK_RE2, replacement="\\1" + _ZWSP)
            batch = pc.replace_with_mask(batch, wide, spaced)
        yield batch


# ---- caching -------------------------------------------------------------------------------------

_memory: OrderedDict[str, tuple[SearchIndex, tuple[pa.Buffer, ...]]] = OrderedDict()
_memory_lock = threading.Lock()


def _remember(key: str, index: SearchIndex, pins: tuple[pa.Buffer, ...] = ()) -> SearchIndex:
    """Keep ``index`` under ``key`` (with the buffers the key relies on) for the last few indexes."""
    with _memory_lock:
        _memory[key] = (index, pins)
        _memory.move_to_end(key)
        while len({id(kept) for kept, _ in _memory.values()}) > _CACHED:
            _memory.popitem(last=False)
    return index


def _recall(key: str) -> SearchIndex | None:
    with _memory_lock:
        entry = _memory.get(key)
        if entry is None:
            return None
        _memory.move_to_end(key)
        return entry[0]


def clear_cache() -> None:
    """Forget the indexes kept in memory (files on disk stay)."""
    with _memory_lock:
        _memory.clear()


def _arrow_columns(history: pd.DataFrame) -> Iterator[tuple[str, pa.ChunkedArray, bool]]:
    """Each column of a history frame as Arrow, and whether pandas holds it as Arrow (immutable) data."""
    table = pa.Table.from_pandas(history.loc[:, list(corpus.HISTORY_COLUMNS)], preserve_index=False)
    for name in table.column_names:
        dtype = history[name].dtype
        held = isinstance(dtype, pd.ArrowDtype) or (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow")
        yield name, table.column(name), held


def frame_fingerprint(history: pd.DataFrame) -> str:
    """A digest of a history frame's content: equal for equal content, whatever object holds it."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(_FORMAT.encode())
    for name, column, _ in _arrow_columns(history):
        digest.update(name.encode())
        for chunk in column.chunks:
            if isinstance(chunk, pa.DictionaryArray):
                chunk = chunk.cast(chunk.type.value_type)
            digest.update(f"{chunk.type}:{chunk.offset}:{len(chunk)}:{chunk.null_count}".encode())
            for buffer in chunk.buffers():
                if buffer is not None:
                    digest.update(memoryview(buffer))
    return digest.hexdigest()


def _frame_key(history: pd.DataFrame) -> tuple[str, tuple[pa.Buffer, ...]]:
    """A key for exactly this content held in exactly these buffers, and the buffers it names.

    Like :func:`frame_fingerprint`, except that a large buffer of Arrow data is named by its
    address rather than hashed: pandas never writes into Arrow data (a change makes new buffers),
    and while the key is kept its buffers are kept alive, so their addresses are not reused.
    """
    digest = hashlib.blake2b(digest_size=20)
    digest.update(_FORMAT.encode())
    pins: list[pa.Buffer] = []
    for name, column, held in _arrow_columns(history):
        digest.update(name.encode())
        for chunk in column.chunks:
            digest.update(f"{chunk.type}:{chunk.offset}:{len(chunk)}:{chunk.null_count}".encode())
            parts = [chunk.indices, chunk.dictionary] if isinstance(chunk, pa.DictionaryArray) else [chunk]
            for buffer in (buffer for part in parts for buffer in part.buffers()):
                if buffer is None:
                    continue
                if held and buffer.size > _HASHED:
                    digest.update(f"@{buffer.address}:{buffer.size}".encode())
                    pins.append(buffer)
                else:
                    digest.update(memoryview(buffer))
    return "buffers:" + digest.hexdigest(), tuple(pins)


def _files_fingerprint(paths: Iterable[Path]) -> str:
    """Size, modification time and Parquet footer of each file: any rewrite changes it."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(_FORMAT.encode())
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


def _file_key(items: list[Any]) -> str | None:
    """For files named by path only: a key from their paths, sizes and modification times."""
    parts = []
    for item in items:
        if not isinstance(item, str | os.PathLike):
            return None
        try:
            stat = os.stat(item)
        except OSError:
            return None
        if not os.path.isfile(item):
            return None
        parts.append(f"{os.path.abspath(os.fspath(item))}:{stat.st_size}:{stat.st_mtime_ns}")
    return "files:" + "\n".join(parts)


def index_for(source: Any) -> SearchIndex:
    """The search index of a history, built now or reused (see the module docstring)."""
    if (folder := corpus.parquet_folder(source)) is not None:
        return _folder_index(folder)
    items = list(source) if isinstance(source, list | tuple) else [source]
    file_key = _file_key(items) if items else None
    if file_key is not None and (index := _recall(file_key)) is not None:
        return index
    history = corpus.history_frame(source)
    quick_key, pins = _frame_key(history)
    index = _recall(quick_key)
    if index is None:
        key = "frame:" + frame_fingerprint(history)
        index = _recall(key)
        if index is None:
            index = _remember(key, SearchIndex.build(history, fingerprint=key))
        _remember(quick_key, index, pins)
    if file_key is not None:
        _remember(file_key, index)
    return index


def _folder_index(folder: Path) -> SearchIndex:
    files = [folder / name for name in ("messages.parquet", "conversations.parquet") if (folder / name).is_file()]
    fingerprint = _files_fingerprint(files)
    key = f"folder:{folder.resolve()}:{fingerprint}"
    if (index := _recall(key)) is not None:
        return index
    path = folder / INDEX_FILE
    if path.exists():
        stored: SearchIndex | None = None
        try:
            stored = SearchIndex.open(path)
            if stored.meta("format") != _FORMAT:
                why = "it was built by another version"
            elif stored.meta("fingerprint") == fingerprint:
                return _remember(key, stored)
            else:
                why = "the Parquet files changed since it was built"
        except sqlite3.DatabaseError:
            why = "it cannot be read"
        if stored is not None:
            stored.close()
        warnings.warn(f"search index {path} is out of date ({why}); rebuilding it", stacklevel=4)
    history = corpus.from_parquet(folder)
    try:
        index = SearchIndex.build(history, path=path, fingerprint=fingerprint)
    except OSError as exc:
        warnings.warn(f"cannot write {path} ({exc.strerror or exc}); keeping the index in memory only", stacklevel=4)
        index = SearchIndex.build(history, fingerprint=fingerprint)
    return _remember(key, index)


# ---- the function --------------------------------------------------------------------------------


def search(
    source: Any,
    query: str,
    *,
    role: str | None = None,
    since: Any = None,
    until: Any = None,
    limit: int | None = 50,
) -> pd.DataFrame:
    """The messages of ``source`` matching ``query``, best first, at most ``limit`` of them
    (``None``: all); see the module docstring for the query syntax, the filters and the columns."""
    fts_query(query)  # a bad query fails before any index is built
    return index_for(source).search(query, role=role, since=since, until=until, limit=limit)
