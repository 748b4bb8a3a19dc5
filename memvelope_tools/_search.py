"""Ranked full-text search over the messages of a chat history, offline, with Tantivy and BM25.

>>> import memvelope_tools as mv
>>> hits = mv.search("history.mve.json", '"time zone" OR tz*', role="user")  # doctest: +SKIP

``source`` is a history as :mod:`memvelope_tools._corpus` describes: anything the frame functions
take, a messages frame, a Parquet folder, or a list of them.

**Queries.** Words are matched whole and in any order (all of them must occur); case and diacritics
do not matter (``cafe`` finds "Café", ``zurich`` "Zürich"). ``"two words"`` is a phrase, ``pyth*`` a
prefix, ``AND``, ``OR``, ``NOT`` (upper case) combine terms, parentheses group them:
``(pandas OR polars) NOT spark``. Words side by side bind tightest, then ``NOT``, then ``AND``,
then ``OR``: ``a OR b c NOT d`` is ``a OR ((b AND c) NOT d)``. Everything else in a word is taken
literally, so ``c++``, ``e-mail`` or ``don't`` need no quoting. Chinese and Japanese text has no
spaces between words: each ideograph or kana is indexed on its own and a run of them is searched as
a phrase, so ``東京`` finds "東京に行く". A query that cannot be run raises
:class:`~memvelope_tools.QueryError` saying why.

**Results.** One row per matching message, best first: ``source``, ``conv_index``,
``conversation_id``, ``title``, ``ts``, ``role``, ``position`` (as in the frames), ``snippet`` (up to
about 24 words of the message around the matches, whitespace collapsed, each match between ``⟦`` and
``⟧``, brackets rare enough in real text not to be confused with it) and ``score`` (BM25, higher is
better; a prefix counts each word it starts as that word). Equal scores put the most recent
message first; undated messages come last. The results of a history folder (``memvelope history
add``) also say each message's ``status`` there: ``current``, ``edited-away`` or
``deleted-upstream``. ``role`` keeps one role; ``since`` (inclusive) and
``until`` (exclusive) keep messages sent in that interval, given as anything
:class:`pandas.Timestamp` reads, UTC when no offset is given (``since="2024-01-01",
until="2025-01-01"`` is the year 2024); undated messages then drop out.

**The index** is built once per history and reused: in memory for the last few histories searched
(recognised by their content, or for files by path, size and modification time; a frame's large
Arrow-backed text by the buffers that hold it, which pandas never changes in place), and for a Parquet
folder on disk beside the Parquet files, in the folder ``search-index``, with a fingerprint of those
files. When the files change, the next search says so in a warning and rebuilds the index; it is
never used stale. An index of :data:`DISK_MIN` messages or more that is not kept beside a Parquet
folder is kept in a temporary folder (removed once the index is no longer cached, or closed) rather
than in memory.

**The engine** is Tantivy, a search library in Rust: it indexes on two cores, and for a word, a
prefix or words joined by ``OR`` it finds the best matches without scoring every message that
matches, so a word most messages hold is ranked about as quickly as a rare one. A phrase, ``AND``,
``NOT`` or a filter still visits each message that matches, quickly but in proportion to their
number.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import mmap
import os
import re
import shutil
import stat
import tempfile
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from . import _corpus as corpus
from ._atomic import folder_lock
from ._frames import INT, ROLE, STRING, TIMESTAMP, conform
from ._frames.folders import (
    INDEX_FOLDER,
    PARTS,
    is_parted,
    part_digest,
    parts_of_file,
    require_history_files,
    unreadable,
)
from ._sources import resolve
from ._spec import ROLES
from .errors import FormatError, QueryError, SearchIndexError

if TYPE_CHECKING:  # the engine is imported by the functions using it: importing the package stays quick
    import tantivy

__all__ = ["DISK_MIN", "RESULT_COLUMNS", "Query", "SearchIndex", "parse_query", "search"]

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
INDEX_DIR = INDEX_FOLDER
_ROWS = "rows.arrow"  # what a result row shows, beside the engine's files
_PARTS_FILE = "parts.json"  # in the index of a history folder: the parts indexed (see memvelope_tools._frames.folders)
_OLD_FILES = ("search.sqlite", "search.1.sqlite")  # an index in the format of earlier releases
_ENGINE_FILES = (".term", ".idx", ".store", ".fast", ".fieldnorm", ".pos", "meta.json")  # what a change damages
_FORMAT = "memvelope-search-3"
_ANALYZER = "memvelope"
_SNIPPET_TOKENS = 24
_SNIPPET_LEAD = 3  # words shown before the first match of a long message
_CACHED = 4  # in-memory indexes kept
#: Messages from which an index not kept beside a Parquet folder is kept in a temporary folder.
DISK_MIN = 200_000
_HEAP = 512 << 20  # bytes the engine's indexing threads buffer before writing
_PART_HEAP = 64 << 20  # the same, indexing a history folder's parts (a row group at a time)
_HASHED = 1 << 24  # Arrow buffers up to this size are hashed into a frame's key, larger ones named
_BATCH = 1 << 16  # texts converted to Python at a time while indexing
# Ideographs and kana: a zero-width space (a separator to the tokenizer, invisible in a snippet)
# after each makes every one a token of its own.
_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_CJK_RE2 = "([" + "".join(f"\\x{{{ord(c):04x}}}" if c != "-" else "-" for c in _CJK_CLASS) + "])"
_CJK = re.compile(f"([{_CJK_CLASS}])")
_ZWSP = "\u200b"
_OPERATORS = frozenset(("AND", "OR", "NOT"))
#: Parentheses nested deeper than this are refused (no real query comes near it).
MAX_NESTING = 32
_QUERY_TOKEN = re.compile(r'\s*(?:(")([^"]*)("?)(\*?)|(\()|(\))|([^\s()"]+))')
_SEARCHABLE = re.compile(r"[^\W_]")
_WORD = re.compile(r"[^\W_]+")  # a run of letters and digits: a token to the engine


# ---- queries -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Words:
    """A word or a quoted phrase of a query, as written (``prefix``: it ended in ``*``)."""

    text: str
    prefix: bool = False

    def __str__(self) -> str:
        return f'"{self.text}"' + ("*" if self.prefix else "")  # a word never holds a quote


@dataclass(frozen=True)
class Operation:
    """``AND``, ``OR`` or ``NOT`` over two or more parts (``NOT``: the first without any of the others)."""

    operator: Literal["AND", "OR", "NOT"]
    parts: tuple[Query, ...]

    def __str__(self) -> str:
        return "(" + f" {self.operator} ".join(map(str, self.parts)) + ")"


Query = Words | Operation


def parse_query(query: str) -> Query:
    """A query (see the module docstring) as a tree of :class:`Words` and :class:`Operation`.

    Raises :class:`~memvelope_tools.QueryError` with the reason when the query cannot be run.
    """
    if not isinstance(query, str):
        raise QueryError(f"a query is a string, not {type(query).__name__}")
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise QueryError(
            f"cannot search for {query!r}: {query[exc.start]!r} is a lone surrogate, not a character "
            "(the query's bytes were not UTF-8?)"
        ) from None
    items: list[Words | str] = []  # Words, an operator, "(" or ")"
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
            items.append(_words(phrase, bool(star), query))
        elif opening or closing:
            items.append(opening or closing)
        elif word in _OPERATORS:
            items.append(word)
        else:
            stem = word.rstrip("*")
            if not stem:
                raise QueryError(f"cannot search for {query!r}: '*' ends a word to search for its prefix (pyth*)")
            items.append(_words(stem, stem != word, query))
    if not any(isinstance(item, Words) for item in items):
        raise QueryError(f"cannot search for {query!r}: there is no word to search for")
    for i, item in enumerate(items):
        before = items[i - 1] if i else "("
        after = items[i + 1] if i + 1 < len(items) else ")"
        if item in _OPERATORS and (before in (*_OPERATORS, "(") or after in (*_OPERATORS, ")")):
            raise QueryError(f"cannot search for {query!r}: {item} needs a term on each side (a {item} b)")
    return _Parser(items, query).parse()


def _words(text: str, prefix: bool, query: str) -> Words:
    if not _SEARCHABLE.search(text):
        raise QueryError(f"cannot search for {query!r}: {text!r} has no letter or digit to search for")
    return Words(text, prefix)


# Operators, loosest first; words side by side bind tighter than any.
_PRECEDENCE: tuple[Literal["AND", "OR", "NOT"], ...] = ("OR", "AND", "NOT")


class _Parser:
    """Recursive descent over a query's items: OR over AND over NOT over words side by side."""

    def __init__(self, items: list[Words | str], query: str) -> None:
        self.items, self.query, self.i, self.depth = items, query, 0, 0

    def parse(self) -> Query:
        tree = self.binary()
        if self.i < len(self.items):  # a ")" with no "(" before it
            raise self.unpaired()
        return tree

    def binary(self, level: int = 0) -> Query:
        """Operands joined by the operator of ``level`` in :data:`_PRECEDENCE`."""
        operator = _PRECEDENCE[level]

        def operand() -> Query:
            return self.binary(level + 1) if level + 1 < len(_PRECEDENCE) else self.side_by_side()

        parts = [operand()]
        while self.i < len(self.items) and self.items[self.i] == operator:
            self.i += 1
            parts.append(operand())
        return parts[0] if len(parts) == 1 else Operation(operator, tuple(parts))

    def side_by_side(self) -> Query:
        parts = [self.primary()]
        while self.i < len(self.items) and (isinstance(self.items[self.i], Words) or self.items[self.i] == "("):
            parts.append(self.primary())
        return parts[0] if len(parts) == 1 else Operation("AND", tuple(parts))

    def primary(self) -> Query:
        if self.i >= len(self.items):
            raise self.unpaired()
        item = self.items[self.i]
        self.i += 1
        if isinstance(item, Words):
            return item
        if item != "(":
            raise self.unpaired()
        if self.i < len(self.items) and self.items[self.i] == ")":
            raise QueryError(f"cannot search for {self.query!r}: parentheses hold no word")
        if self.depth >= MAX_NESTING:
            raise QueryError(f"cannot search for {self.query!r}: parentheses nested more than {MAX_NESTING} deep")
        self.depth += 1
        inner = self.binary()
        self.depth -= 1
        if self.i >= len(self.items) or self.items[self.i] != ")":
            raise self.unpaired()
        self.i += 1
        return inner

    def unpaired(self) -> QueryError:
        return QueryError(f"cannot search for {self.query!r}: parentheses do not pair up")


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


# ---- the engine ----------------------------------------------------------------------------------


@functools.cache
def _analyzer() -> tantivy.TextAnalyzer:
    """Runs of letters and digits, lower-cased, diacritics folded to ASCII where they fold."""
    import tantivy as t

    return (
        t.TextAnalyzerBuilder(t.Tokenizer.simple()).filter(t.Filter.lowercase()).filter(t.Filter.ascii_fold()).build()
    )


def _tokens(text: str) -> list[str]:
    """The tokens of ``text`` as the index holds them (ideographs and kana one by one)."""
    return list(_analyzer().analyze(_CJK.sub(r"\1" + _ZWSP, text)))


@functools.cache
def _schema() -> tantivy.Schema:
    import tantivy as t

    builder = t.SchemaBuilder()
    builder.add_text_field("text", tokenizer_name=_ANALYZER, index_option="position")
    # Read by row, not searched: the message's row, its role's code, when it was sent (milliseconds
    # since the epoch; none when undated).
    builder.add_integer_field("id", fast=True)
    builder.add_integer_field("role", fast=True)
    builder.add_integer_field("ts", fast=True)
    return builder.build()


def _open_engine(directory: Path | None, *, create: bool) -> tantivy.Index:
    import tantivy as t

    if directory is None:
        engine = t.Index(_schema())
    elif create:
        engine = t.Index(_schema(), path=os.fspath(directory))
    else:
        engine = t.Index.open(os.fspath(directory))
    engine.register_tokenizer(_ANALYZER, _analyzer())
    return engine


def _engine_query(tree: Query, searcher: tantivy.Searcher) -> tantivy.Query:
    """The engine's query for a parsed query (``searcher``: where the words a prefix starts are looked up)."""
    import tantivy as t

    schema = _schema()
    if isinstance(tree, Words):
        tokens = _tokens(tree.text)
        if not tokens:  # no character the engine takes for a letter or digit
            return t.Query.empty_query()
        if tree.prefix and len(tokens) == 1:
            # Each word the prefix starts, ranked as that word would be on its own.
            words = [word for word, _ in searcher.terms_with_prefix("text", tokens[0])]
            if not words:
                return t.Query.empty_query()
            return t.Query.boolean_query([(t.Occur.Should, t.Query.term_query(schema, "text", w)) for w in words])
        if tree.prefix:
            return t.Query.regex_phrase_query(
                schema, "text", [*map(re.escape, tokens[:-1]), re.escape(tokens[-1]) + ".*"]
            )
        if len(tokens) == 1:
            return t.Query.term_query(schema, "text", tokens[0])
        return t.Query.phrase_query(schema, "text", list[str | tuple[int, str]](tokens))
    parts = [_engine_query(part, searcher) for part in tree.parts]
    if tree.operator == "AND":
        return t.Query.boolean_query([(t.Occur.Must, q) for q in parts])
    if tree.operator == "OR":
        return t.Query.boolean_query([(t.Occur.Should, q) for q in parts])
    return t.Query.boolean_query([(t.Occur.Must, parts[0]), *((t.Occur.MustNot, q) for q in parts[1:])])


def _filtered(query: tantivy.Query, role: str | None, since: Any, until: Any) -> tantivy.Query:
    """``query`` restricted to a role and an interval of time, scored as ``query`` alone."""
    import tantivy as t

    schema = _schema()
    filters = []
    if role is not None:
        code = ROLES.index(role)
        filters.append(t.Query.range_query(schema, "role", t.FieldType.Integer, code, code))
    low, high = _timestamp_ms(since, "since"), _timestamp_ms(until, "until")
    if low is not None or high is not None:
        filters.append(
            t.Query.range_query(
                schema,
                "ts",
                t.FieldType.Integer,
                low,
                high,
                True,
                high is None,  # an open side counts as inclusive
            )
        )
    if not filters:
        return query
    return t.Query.boolean_query(
        [(t.Occur.Must, query), *((t.Occur.Must, t.Query.const_score_query(f, 0.0)) for f in filters)]
    )


def _check_filters(role: str | None, since: Any, until: Any) -> None:
    if role is not None and role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)} or None, got {role!r}")
    _timestamp_ms(since, "since")
    _timestamp_ms(until, "until")


def _marked(tree: Query) -> list[tuple[list[str], bool]]:
    """The token sequences a matching message is marked at (the words not after a NOT), with their prefix flag."""
    if isinstance(tree, Words):
        tokens = _tokens(tree.text)
        return [(tokens, tree.prefix)] if tokens else []
    parts = tree.parts[:1] if tree.operator == "NOT" else tree.parts
    return [leaf for part in parts for leaf in _marked(part)]


def _snippet(text: str, leaves: list[tuple[list[str], bool]], marks: Sequence[str]) -> str:
    """Up to :data:`_SNIPPET_TOKENS` words of ``text`` around its matches, each between ``marks``."""
    spans = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    folded: dict[str, str | None] = {}
    tokens: list[str | None] = []
    for start, end in spans:
        word = text[start:end]
        if word not in folded:
            analysed = _analyzer().analyze(word)
            folded[word] = analysed[0] if len(analysed) == 1 else None
        tokens.append(folded[word])
    found: list[tuple[int, int]] = []  # first and last token of each match
    for sequence, prefix in leaves:
        n = len(sequence)
        for i in range(len(tokens) - n + 1):
            if all(tokens[i + k] == sequence[k] for k in range(n - 1)) and (
                (tokens[i + n - 1] or "").startswith(sequence[-1]) if prefix else tokens[i + n - 1] == sequence[-1]
            ):
                found.append((i, i + n - 1))
    found.sort()
    merged: list[list[int]] = []
    for first, last in found:
        if merged and first <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    begin, stop = 0, len(spans)
    if len(spans) > _SNIPPET_TOKENS:
        # The window holding the most matches, starting a little before one of them.
        best = -1
        for first in [first for first, _ in merged] or [0]:
            start = min(max(0, first - _SNIPPET_LEAD), len(spans) - _SNIPPET_TOKENS)
            held = sum(1 for a, b in merged if a >= start and b < start + _SNIPPET_TOKENS)
            if held > best:
                best, begin = held, start
        stop = begin + _SNIPPET_TOKENS
    open_mark, close_mark = marks
    out = ["…" if begin else ""]
    cursor = 0 if begin == 0 else spans[begin][0]
    for first, last in merged:
        if first < begin or last >= stop:
            continue
        out += [text[cursor : spans[first][0]], open_mark, text[spans[first][0] : spans[last][1]], close_mark]
        cursor = spans[last][1]
    end = len(text) if stop == len(spans) else spans[stop - 1][1]
    out += [text[cursor:end], "" if stop == len(spans) else "…"]
    return " ".join("".join(out).replace(_ZWSP, "").split())


# ---- the index -----------------------------------------------------------------------------------


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
    ) -> None:
        self._engine = engine
        self._rows = rows
        self._row_of = _row_of_doc(rows)
        self._tie = tie  # each row's place in the order that breaks equal scores (None: the rows' order)
        self._names = names  # the conversation columns of rows, when the rows do not hold them
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
                    engine = _open_engine(None, create=True)
                    return cls(engine, _fill(engine, history, fingerprint))
            folder = tempfile.TemporaryDirectory(prefix="memvelope-search-", ignore_cleanup_errors=True)
            try:
                index = cls.build(history, path=Path(folder.name) / INDEX_DIR, fingerprint=fingerprint)
            except BaseException:
                folder.cleanup()
                raise
            index.path, index._temporary = None, folder
            return index
        with _new_folder(path) as made:
            with engine_errors(os.fspath(path)):
                rows = _fill(_open_engine(made, create=True), history, fingerprint)
            _write_rows(made, rows)
            del rows
        for name in _OLD_FILES:
            with contextlib.suppress(OSError):
                (path.parent / name).unlink()
        return cls.open(path)

    @classmethod
    def open(cls, path: Path) -> SearchIndex:
        """The index kept in the folder ``path``.

        Raises :class:`ValueError` (:class:`pyarrow.ArrowInvalid` among them), :class:`OSError` or
        :class:`~memvelope_tools.errors.SearchIndexError` when it cannot be read.
        """
        if os.path.lexists(path / _PARTS_FILE):
            return _open_history_index(path.parent)
        rows = pa.ipc.open_file(pa.memory_map(os.fspath(path / _ROWS))).read_all()
        if (rows.schema.metadata or {}).get(b"format") is None:
            raise ValueError(f"{path / _ROWS} is not a search index's rows")
        files = (rows.schema.metadata or {}).get(b"files")
        if files is not None and files.decode() != _engine_stamps(path):
            raise ValueError("its files changed since it was written (damaged?)")
        with engine_errors(os.fspath(path)):
            index = cls(_open_engine(path, create=False), rows, path)
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
        """Messages matching ``query``, best first (see the module docstring)."""
        tree = parse_query(query)
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
            raise ValueError(f"limit must be a non-negative int or None, got {limit!r}")
        _check_filters(role, since, until)
        with self._lock, self._engine_errors():
            hits = self._best(_filtered(_engine_query(tree, self._searcher), role, since, until), limit)
        # Row by row: taking rows from a table in many chunks joins its chunks first.
        shown: tuple[str, ...] = ("ts", "role", "position", "text")
        if self._names is None:
            shown += ("source", "conv_index", "conversation_id", "title")
        columns = {name: [self._rows.column(name)[i].as_py() for i, _ in hits] for name in shown}
        if self._names is not None:
            columns.update(self._names([i for i, _ in hits]))
        leaves = _marked(tree)
        frame = pd.DataFrame(
            {
                "source": columns["source"],
                "conv_index": np.array(columns["conv_index"], dtype=np.int64),
                "conversation_id": columns["conversation_id"],
                "title": columns["title"],
                "ts": pd.to_datetime(pd.array(columns["ts"], dtype="Int64"), unit="ms", utc=True),
                "role": pd.Categorical.from_codes([-1 if r is None else r for r in columns["role"]], dtype=ROLE),
                "position": np.array(columns["position"], dtype=np.int64),
                "snippet": [_snippet(text, leaves, marks) for text in columns["text"]],
                "score": np.array([score for _, score in hits], dtype=np.float64),
            }
        )
        return conform(frame, RESULT_COLUMNS)

    def count(self, query: str, *, role: str | None = None, since: Any = None, until: Any = None) -> int:
        """How many messages match ``query`` (and the filters, as :meth:`search` takes them)."""
        tree = parse_query(query)
        _check_filters(role, since, until)
        with self._lock, self._engine_errors():
            matching = _filtered(_engine_query(tree, self._searcher), role, since, until)
            return _count(self._searcher, matching)

    @contextlib.contextmanager
    def _engine_errors(self) -> Iterator[None]:
        with engine_errors(None if self.path is None else os.fspath(self.path)):
            yield

    def _best(self, query: tantivy.Query, limit: int | None) -> list[tuple[int, float]]:
        """Row and score of the best ``limit`` matches: by score, then by row (rows follow the
        order that breaks equal scores, see :func:`_fill`)."""
        if limit == 0 or len(self) == 0:
            return []
        want = _count(self._searcher, query) if limit is None else min(limit, len(self))
        if want == 0:
            return []
        fetch = want + 16
        while True:
            # The engine orders equal scores its own way: fetch until the score at the cut is
            # passed (or every match is in), then order equal scores by row.
            hits = self._searcher.search(query, fetch, count=False).hits
            if len(hits) < fetch or hits[-1][0] < hits[want - 1][0]:
                break
            fetch *= 4
        rows = self._searcher.fast_field_values("id", [address for _, address in hits])
        if self._row_of is not None:
            rows = [int(self._row_of[cast(int, doc)]) for doc in rows]
        tie = self._tie
        ranked = sorted(
            zip(rows, (score for score, _ in hits), strict=True),
            key=lambda hit: (-hit[1], hit[0] if tie is None else int(tie[cast(int, hit[0])])),
        )
        return [(int(cast(int, row)), float(score)) for row, score in ranked[:want]]

    def close(self) -> None:
        """Let the index go (and remove the folder of one kept in a temporary folder)."""
        with self._lock:
            self._searcher = self._engine = self._rows = self._row_of = None  # type: ignore[assignment]
            self._tie = self._names = None
            if self._temporary is not None:
                self._temporary.cleanup()


@contextlib.contextmanager
def engine_errors(source: str | None) -> Iterator[None]:
    """Turn what the engine raises (its I/O and value errors, and its panics, which are no
    ``Exception``) into a :class:`~memvelope_tools.errors.SearchIndexError` naming ``source`` (the
    index's folder, None for one in memory)."""
    try:
        yield
    except (QueryError, SearchIndexError):
        raise
    except (KeyboardInterrupt, SystemExit, GeneratorExit, MemoryError):
        raise
    except BaseException as exc:
        if not isinstance(exc, ValueError | OSError | RuntimeError) and type(exc).__name__ != "PanicException":
            raise
        detail = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise SearchIndexError(f"the search engine failed: {detail}", reason="bad-index", source=source) from None


def _count(searcher: tantivy.Searcher, query: tantivy.Query) -> int:
    """How many messages ``query`` matches (a search for none at all is refused by the engine)."""
    found: int = searcher.search(query, 1, count=True).count  # type: ignore[attr-defined]  # not in its stubs
    return found


def _engine_stamps(path: Path) -> str:
    """Name, size and modification time of each file of the engine's index in the folder ``path``:
    written once, they never change unless something damages them."""
    stamps = []
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.name.endswith(_ENGINE_FILES):
            info = entry.stat(follow_symlinks=False)
            stamps.append(f"{entry.name}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.blake2b("\n".join(stamps).encode(), digest_size=16).hexdigest()


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
    rows = _result_rows(history, fingerprint)
    _add_documents(engine, rows, np.arange(rows.num_rows), 0)
    return rows


def _result_rows(history: pd.DataFrame, fingerprint: str) -> pa.Table:
    """The rows a result shows, one per message of ``history`` in the order that breaks equal scores
    (dated first, the most recent first, then history order), ``text`` as indexed."""
    n = len(history)
    undated = history["ts"].isna().to_numpy()
    ms = np.where(undated, 0, history["ts"].to_numpy(dtype="datetime64[ms]").view(np.int64))
    order = np.lexsort((np.arange(n), -ms, undated))
    codes = history["role"].cat.codes.to_numpy().astype(np.int8) if n else np.zeros(0, dtype=np.int8)
    role = pa.array(codes[order], mask=codes[order] < 0)
    ts = pa.array(ms[order], mask=undated[order])
    texts = list(_index_batches(history["text"], order))
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
        }
    ).replace_schema_metadata({"format": _FORMAT, "fingerprint": fingerprint})


def _add_documents(engine: tantivy.Index, rows: pa.Table, which: np.ndarray, first: int) -> None:
    """Add the rows ``which`` of ``rows`` to ``engine`` as documents numbered from ``first`` on."""
    with _writing(engine, _HEAP) as writer:
        _add_rows(writer, rows, which, first)


@contextlib.contextmanager
def _writing(engine: tantivy.Index, heap: int) -> Iterator[tantivy.IndexWriter]:
    """A writer of ``engine`` whose indexing threads buffer ``heap`` bytes at most, committed at the end."""
    writer = engine.writer(heap_size=heap, num_threads=max(1, min(2, os.cpu_count() or 1)))
    yield writer
    writer.commit()
    writer.wait_merging_threads()


def _add_rows(writer: tantivy.IndexWriter, rows: pa.Table, which: np.ndarray, first: int) -> None:
    """Add the rows ``which`` of ``rows`` as documents numbered from ``first`` on."""
    import tantivy as t

    picked = (
        rows.select(["role", "ts", "text"]).take(pa.array(which, pa.int64())) if len(which) < rows.num_rows else rows
    )
    roles, times = picked.column("role").to_pylist(), picked.column("ts").to_pylist()
    doc = first
    row = 0
    for batch in picked.column("text").chunks:
        for start in range(0, len(batch), _BATCH):
            for text in batch.slice(start, _BATCH).to_pylist():
                fields: dict[str, Any] = {"id": doc, "text": text}
                if roles[row] is not None:
                    fields["role"] = roles[row]
                if times[row] is not None:
                    fields["ts"] = times[row]
                writer.add_document(t.Document(**fields))
                row += 1
                doc += 1


def _row_of_doc(rows: pa.Table) -> np.ndarray | None:
    """Each engine document's row in ``rows`` (None: document ``i`` is row ``i``)."""
    if "doc" not in rows.column_names:
        return None
    docs = rows.column("doc").to_numpy()
    row_of = np.full(int(docs.max()) + 1 if len(docs) else 0, -1, dtype=np.int64)
    row_of[docs] = np.arange(len(docs))
    return row_of


def _doc_keys(rows: pa.Table, texts: np.ndarray) -> pa.Table:
    """What the engine holds of each row: role, time and text (``texts``: a number per distinct text),
    with the row's occurrence number among equal ones, so that equal documents pair up one to one."""
    keys = pd.DataFrame(
        {
            "role": rows.column("role").cast(pa.int8()).fill_null(-1).to_numpy(),
            "dated": pc.is_valid(rows.column("ts")).to_numpy(zero_copy_only=False),
            "ts": rows.column("ts").fill_null(0).to_numpy(),
            "text": texts,
        }
    )
    keys["occurrence"] = keys.groupby(["role", "dated", "ts", "text"], sort=False).cumcount().to_numpy()
    keys["row"] = np.arange(len(keys))
    return pa.Table.from_pandas(keys, preserve_index=False)


def _text_numbers(first: pa.ChunkedArray, second: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A number per distinct text, shared by the two columns (null as the empty text)."""
    both = pa.chunked_array([*first.chunks, *second.chunks], type=pa.string())  # filling the nulls would copy it
    coded = both.dictionary_encode().unify_dictionaries()
    distinct = coded.chunks[0].dictionary if coded.num_chunks else pa.array([], pa.string())
    empty = pc.index(distinct, "").as_py()
    null = empty if empty >= 0 else len(distinct)
    numbers = np.concatenate(
        [chunk.indices.fill_null(null).to_numpy() for chunk in coded.chunks] or [np.zeros(0, np.int64)]
    )
    return numbers[: len(first)].astype(np.int64), numbers[len(first) :].astype(np.int64)


def update_folder_index(folder: Path) -> None:
    """Bring the index beside the Parquet folder ``folder`` up to date with its files as they are now:
    an index kept there whose every document is still among the folder's messages gets only the new
    ones (its results are then those of an index built anew); otherwise it is built anew. Written
    beside the old one, then moved into place; raises as :func:`build_folder_index` does."""
    if is_parted(folder):
        _update_history_index(folder)
        return
    path = folder / INDEX_DIR
    try:
        old = SearchIndex.open(path) if path.is_dir() else None
    except (ValueError, OSError, SearchIndexError):
        old = None
    if old is None or old.meta("format") != _FORMAT:
        if old is not None:
            old.close()
        build_folder_index(folder)
        return
    fingerprint = _folder_fingerprint(folder)
    rows = _result_rows(corpus.from_parquet(folder), fingerprint)
    before = old._rows
    old_docs = before.column("doc").to_numpy() if "doc" in before.column_names else np.arange(before.num_rows)
    old.close()
    now_texts, old_texts = _text_numbers(rows.column("text"), before.column("text"))
    on = ["role", "dated", "ts", "text", "occurrence"]
    joined = _doc_keys(rows, now_texts).join(
        _doc_keys(before, old_texts), keys=on, join_type="full outer", right_suffix="_old"
    )
    new_row = joined.column("row").to_numpy(zero_copy_only=False)
    old_row = joined.column("row_old").to_numpy(zero_copy_only=False)
    if pc.any(pc.is_null(joined.column("row"))).as_py():  # a document the history no longer holds
        build_folder_index(folder)
        return
    matched = pc.is_valid(joined.column("row_old")).to_numpy(zero_copy_only=False)
    docs = np.full(rows.num_rows, -1, dtype=np.int64)
    docs[new_row[matched].astype(np.int64)] = old_docs[old_row[matched].astype(np.int64)]
    added = np.flatnonzero(docs < 0)
    first = int(old_docs.max()) + 1 if len(old_docs) else 0
    docs[added] = np.arange(first, first + len(added))
    rows = rows.append_column("doc", pa.array(docs, pa.int64()))
    with folder_lock(folder), _new_folder(path) as made:
        _share_files(path, made, but=_ROWS)
        with engine_errors(os.fspath(path)):
            _add_documents(_open_engine(made, create=False), rows, added, first)
        _write_rows(made, rows)
        del rows


def _share_files(path: Path, made: Path, *, but: str) -> None:
    """The files of the index in the folder ``path`` in the folder ``made`` too, all ``but`` one."""
    for entry in os.scandir(path):
        if entry.name == but or not entry.is_file(follow_symlinks=False):
            continue
        try:  # the engine never writes into a file it made: linking shares it safely
            os.link(entry.path, made / entry.name, follow_symlinks=False)
        except OSError:
            shutil.copy2(entry.path, made / entry.name, follow_symlinks=False)


@contextlib.contextmanager
def _new_folder(path: Path) -> Iterator[Path]:
    """A temporary folder beside ``path`` that replaces it when the block ends well, and is removed otherwise."""
    made = Path(tempfile.mkdtemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent))
    try:
        yield made
        _replace_folder(made, path)
    except BaseException:
        shutil.rmtree(made, ignore_errors=True)
        raise


def _write_rows(made: Path, rows: pa.Table) -> None:
    """Write the rows beside the engine's files in the folder ``made``, with the stamp of those files."""
    rows = rows.replace_schema_metadata({**(rows.schema.metadata or {}), b"files": _engine_stamps(made)})
    with pa.OSFile(os.fspath(made / _ROWS), "wb") as sink, pa.ipc.new_file(sink, rows.schema) as out:
        out.write_table(rows, max_chunksize=_BATCH)


def _column(values: pd.Series, order: np.ndarray) -> pa.Array:
    """A text column in ``order``."""
    # pandas before 3.0 holds its Arrow strings as large_string whatever type is asked for.
    return pa.array(values.astype(STRING).array, type=pa.string()).take(pa.array(order)).cast(pa.string())


def _index_batches(text: pd.Series, order: np.ndarray) -> Iterator[pa.StringArray]:
    """The texts as indexed, in ``order`` (see :func:`_as_indexed`)."""
    array = pa.chunked_array([pa.array(text.astype(STRING).array, type=pa.string())])
    for start in range(0, len(order), _BATCH):
        # pandas before 3.0 holds its Arrow strings as large_string whatever type is asked for.
        yield _as_indexed(array.take(order[start : start + _BATCH]).combine_chunks())


def _as_indexed(batch: pa.Array) -> pa.StringArray:
    """Texts as indexed: null as empty, a zero-width space after each ideograph and kana."""
    batch = batch.fill_null("").cast(pa.string())
    wide = pc.invert(pc.string_is_ascii(batch))  # only text beyond ASCII can hold an ideograph
    if pc.any(wide).as_py():
        spaced = pc.replace_substring_regex(batch.filter(wide), pattern=_CJK_RE2, replacement="\\1" + _ZWSP)
        batch = pc.replace_with_mask(batch, wide, spaced)
    return cast(pa.StringArray, batch)


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
    inputs = resolve(source, "history", list_means="documents", caller="search()")
    if len(inputs) == 1 and inputs[0].kind == "parquet" and inputs[0].path is not None:
        return _folder_index(inputs[0].path)
    items = [i.path if i.kind in ("envelope", "ir") and i.value is None else None for i in inputs]
    file_key = _file_key(items) if items else None
    if file_key is not None and (index := _recall(file_key)) is not None:
        return index
    history = corpus.history_of(inputs)
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


def _forget_damaged(key: str, path: Path, damaged: str) -> None:
    """Let go of the index ``key`` held in memory, which the engine failed on (``damaged``: how), saying
    that the index in the folder ``path`` is rebuilt."""
    with _memory_lock:
        entry = _memory.pop(key, None)
    if entry is not None:
        entry[0].close()
    warnings.warn(f"search index {path} is damaged ({damaged}); rebuilding it", stacklevel=5)


def _folder_index(folder: Path, damaged: str | None = None) -> SearchIndex:
    """The index beside the Parquet folder ``folder``; ``damaged`` (what failed) rebuilds it whatever it holds."""
    if is_parted(folder):
        return _history_folder_index(folder, damaged)
    fingerprint = _folder_fingerprint(folder)
    key = f"folder:{folder.resolve()}:{fingerprint}"
    path = folder / INDEX_DIR
    if damaged is not None:
        _forget_damaged(key, path, damaged)
    elif (index := _recall(key)) is not None:
        return index
    elif path.exists():
        stored: SearchIndex | None = None
        try:
            stored = SearchIndex.open(path)
            if stored.meta("format") != _FORMAT:
                why = "is out of date (it was built by another version)"
            elif stored.meta("fingerprint") == fingerprint:
                return _remember(key, stored)
            else:
                why = "is out of date (the Parquet files changed since it was built)"
        except (ValueError, OSError, SearchIndexError) as exc:
            why = f"cannot be read ({exc.msg if isinstance(exc, SearchIndexError) else exc})"
        if stored is not None:
            stored.close()
        warnings.warn(f"search index {path} {why}; rebuilding it", stacklevel=4)
    history = corpus.from_parquet(folder)
    try:
        with folder_lock(folder):
            index = SearchIndex.build(history, path=path, fingerprint=fingerprint)
    except (OSError, SearchIndexError) as exc:
        failure = (exc.strerror or str(exc)) if isinstance(exc, OSError) else exc.msg
        warnings.warn(f"cannot write {path} ({failure}); keeping the index in memory only", stacklevel=4)
        index = SearchIndex.build(history, fingerprint=fingerprint)
    return _remember(key, index)


def build_folder_index(folder: Path) -> None:
    """Build the index beside the Parquet folder ``folder`` for its files as they are now, in place of any
    index kept there; raises :class:`OSError` or :class:`~memvelope_tools.errors.SearchIndexError` when
    it cannot be written."""
    if is_parted(folder):
        _update_history_index(folder, anew=True)
        return
    history = corpus.from_parquet(folder)
    with folder_lock(folder):
        SearchIndex.build(history, path=folder / INDEX_DIR, fingerprint=_folder_fingerprint(folder)).close()


def _folder_fingerprint(folder: Path) -> str:
    """The fingerprint of the Parquet files an index beside ``folder`` is built from."""
    names = ("messages.parquet", "state.parquet", "conversations.parquet")
    files = [folder / name for name in names if (folder / name).is_file()]
    return _files_fingerprint(files)


# ---- the index of a history folder ---------------------------------------------------------------
#
# A history folder's messages come in parts that never change (see memvelope_tools._frames.folders).
# Its index holds a document per message, numbered in the parts' order, and beside the engine's
# files a rows file per part (what a result shows of its messages, and their conversation's key) and
# parts.json. An add indexes its new part only. The conversation columns of a result, and the order
# that breaks equal scores, come from the folder's conversations and state as they are when the
# index is opened.
#
# parts.json says, for each part indexed, what identifies the part's content (its name, rows and
# size, and the digest its name carries or else the sha256 of its file), and the size and sha256 of
# its rows file; and the stamp of the engine's files. It ends with the sha256 of all that. A part
# whose file is no longer the one indexed makes the index out of date; a file of the index that is
# not as written (a link, a pipe or a device in its place, or other bytes, timestamps kept or not)
# makes it damaged: it is built anew. It is written under the folder's lock, which an add holds
# from start to end, and read without it.

_PARTS_FORMAT = f"{_FORMAT}+parts-2"
_PARTS_FILE_MAX = 64 << 20  # bytes of parts.json read at most: a few hundred per part
_PART_FIELDS = ("name", "rows", "size", "digest", "mtime_ns", "rows_size", "rows_sha256")
_HEX = re.compile(r"[0-9a-f]+")


class _Unusable(ValueError):
    """The index of a history folder cannot be used as it is; the message says why."""


class _Damaged(_Unusable):
    """A file of the index of a history folder is not as it was written."""


class _Stale(_Unusable):
    """The index of a history folder does not hold the folder's parts as they are now, or another version wrote it."""


@dataclass(frozen=True)
class _Indexed:
    """A part as the index of a history folder holds it: its name, rows, size and digest (the one its
    name carries, else the sha256 of its file), its modification time then (a part whose name carries
    no digest is hashed again only when that changed), and the size and sha256 of its rows file."""

    name: str
    rows: int
    size: int
    digest: str
    mtime_ns: int
    rows_size: int
    rows_sha256: str


def _part_rows_file(name: str) -> str:
    return f"rows-{name.removesuffix('.parquet')}.arrow"


def _kind(mode: int) -> str:
    """What a file of ``mode`` is, as a message says it."""
    kinds = [
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a pipe"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def check_index_place(path: Path) -> None:
    """SearchIndexError when ``path``, where a history folder keeps its index, holds something other
    than a folder of its own (a symbolic link, a file): the index is neither read nor written through it."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise SearchIndexError(f"cannot read it: {exc.strerror or exc}", source=os.fspath(path)) from None
    if not stat.S_ISDIR(info.st_mode):
        what = _kind(info.st_mode) if not stat.S_ISREG(info.st_mode) else "a file"
        raise SearchIndexError(
            f"{INDEX_DIR} is {what}, not a folder of its own, so the search index is not kept there; "
            "remove it and the next search builds the index",
            source=os.fspath(path),
        )


@contextlib.contextmanager
def _regular_file(path: Path) -> Iterator[int]:
    """A descriptor of the regular file ``path``, opened without following a link or waiting on a
    pipe; _Damaged when it is missing, unreadable or not a regular file."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            raise _Damaged(f"{path.name} is {_kind(info.st_mode)}")
        fd = os.open(path, flags)
    except OSError as exc:
        raise _Damaged(f"cannot read {path.name}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since it was looked at
            raise _Damaged(f"{path.name} is not a regular file")
        yield fd
    finally:
        os.close(fd)


def _sha256_file(path: Path) -> str:
    """The sha256 of the regular file ``path`` (_Damaged when it is not one or cannot be read)."""
    digest = hashlib.sha256()
    with _regular_file(path) as fd:
        try:
            while block := os.read(fd, 1 << 20):
                digest.update(block)
        except OSError as exc:
            raise _Damaged(f"cannot read {path.name}: {exc.strerror or exc}") from None
    return digest.hexdigest()


def _json_digest(told: dict[str, Any]) -> str:
    """The sha256 parts.json ends with: of what it says, but that digest, in one canonical form."""
    canonical = json.dumps({k: v for k, v in told.items() if k != "sha256"}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _write_parts_file(made: Path, parts: list[_Indexed]) -> None:
    """Write parts.json into the folder ``made``, beside the engine's files and the rows files of ``parts``."""
    told: dict[str, Any] = {
        "format": _PARTS_FORMAT,
        "parts": [{field: getattr(part, field) for field in _PART_FIELDS} for part in parts],
        "files": _engine_stamps(made),
    }
    told["sha256"] = _json_digest(told)
    (made / _PARTS_FILE).write_text(json.dumps(told), encoding="utf-8")


def _read_parts_file(path: Path) -> list[_Indexed]:
    """The parts the index in the folder ``path`` holds, once each of its files is found to be a
    regular file, parts.json to be as written and the engine's files as they were then: _Damaged
    otherwise, _Stale when there is no index or another version wrote it."""
    try:
        entries = list(os.scandir(path))
    except FileNotFoundError:
        raise _Stale("there is none") from None
    except OSError as exc:
        raise _Damaged(f"cannot read it: {exc.strerror or exc}") from None
    for entry in entries:
        if not entry.is_file(follow_symlinks=False):
            try:
                what = _kind(entry.stat(follow_symlinks=False).st_mode)
            except OSError:
                what = "gone"
            raise _Damaged(f"{entry.name} is {what}")
    if not os.path.lexists(path / _PARTS_FILE) and os.path.lexists(path / _ROWS):
        raise _Stale("it is the index of a Parquet folder, not of a history folder")
    with _regular_file(path / _PARTS_FILE) as fd:
        try:
            data = os.read(fd, _PARTS_FILE_MAX + 1)
        except OSError as exc:
            raise _Damaged(f"cannot read {_PARTS_FILE}: {exc.strerror or exc}") from None
    if len(data) > _PARTS_FILE_MAX:
        raise _Damaged(f"{_PARTS_FILE} is larger than {_PARTS_FILE_MAX >> 20} MiB")
    try:
        told = json.loads(data)
    except (ValueError, RecursionError):
        raise _Damaged(f"{_PARTS_FILE} is not JSON") from None
    if not isinstance(told, dict):
        raise _Damaged(f"{_PARTS_FILE} is not as written")
    if "sha256" not in told and isinstance(told.get("format"), str) and told["format"] != _PARTS_FORMAT:
        raise _Stale("another version built it")
    if told.get("sha256") != _json_digest(told):
        raise _Damaged(f"{_PARTS_FILE} is not as written (its sha256 differs)")
    if told.get("format") != _PARTS_FORMAT:
        raise _Stale("another version built it")
    if set(told) != {"format", "parts", "files", "sha256"} or not isinstance(told["parts"], list):
        raise _Damaged(f"{_PARTS_FILE} is not as written")
    parts = [_indexed(item) for item in told["parts"]]
    if len({part.name for part in parts}) != len(parts):
        raise _Damaged(f"{_PARTS_FILE} names a part twice")
    if told["files"] != _engine_stamps(path):
        raise _Damaged("the engine's files changed since it was written")
    return parts


def _indexed(item: Any) -> _Indexed:
    """A part as parts.json says it; _Damaged when it does not say one."""
    bad = _Damaged(f"{_PARTS_FILE} is not as written")
    if not isinstance(item, dict) or set(item) != set(_PART_FIELDS):
        raise bad
    name, digest, rows_sha256 = item["name"], item["digest"], item["rows_sha256"]
    numbers = [item[field] for field in ("rows", "size", "mtime_ns", "rows_size")]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers):
        raise bad
    if not (isinstance(name, str) and isinstance(digest, str) and isinstance(rows_sha256, str)):
        raise bad
    if os.path.basename(name) != name or not name.endswith(".parquet") or name.startswith(".") or "\0" in name:
        raise bad
    named = part_digest(name)
    if (digest != named) if named is not None else not (len(digest) == 64 and _HEX.fullmatch(digest)):
        raise bad
    if len(rows_sha256) != 64 or not _HEX.fullmatch(rows_sha256):
        raise bad
    return _Indexed(**item)


def _part_identity(part: Path, name: str, rows: int) -> _Indexed:
    """What identifies a part's content (the rows file's fields left to fill): its size, modification
    time and digest, the one its name carries or else the sha256 of its file."""
    try:
        info = os.stat(part)
        digest = part_digest(name) or _sha256_file(part)
    except (OSError, _Damaged) as exc:
        raise SearchIndexError(f"cannot read {part}: {exc}", source=os.fspath(part)) from None
    return _Indexed(name, rows, info.st_size, digest, info.st_mtime_ns, 0, "")


def _same_part(held: _Indexed, part: Path, *, hash_all: bool = False) -> bool:
    """Whether the file ``part`` is the part ``held`` says was indexed: of its size and with the digest
    its name carries, or, for a name that carries none, of its modification time then or its sha256
    (``hash_all``: its sha256 whatever the time)."""
    try:
        info = os.stat(part)
    except OSError:
        return False
    if info.st_size != held.size:
        return False
    named = part_digest(held.name)
    if named is not None:
        return named == held.digest
    if info.st_mtime_ns == held.mtime_ns and not hash_all:
        return True
    try:
        return _sha256_file(part) == held.digest
    except _Damaged:
        return False


def _holds(held: list[_Indexed], folder: Path, parts: list[tuple[str, int]], *, hash_all: bool = False) -> bool:
    """Whether the parts ``held`` are the first parts of the history folder ``folder`` as they are now."""
    return len(held) <= len(parts) and all(
        part.name == name and part.rows == rows and _same_part(part, folder / PARTS / name, hash_all=hash_all)
        for part, (name, rows) in zip(held, parts[: len(held)], strict=True)
    )


def _rows_table(path: Path, part: _Indexed) -> pa.Table:
    """The rows file of ``part`` in the index in the folder ``path``, memory-mapped, once found to be
    as written; _Damaged otherwise."""
    file = path / _part_rows_file(part.name)
    with _regular_file(file) as fd:
        size = os.fstat(fd).st_size
        if size != part.rows_size or size == 0:
            raise _Damaged(f"{file.name} holds {size} bytes, {_PARTS_FILE} says {part.rows_size}")
        try:
            mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except OSError as exc:
            raise _Damaged(f"cannot read {file.name}: {exc.strerror or exc}") from None
    if hashlib.sha256(mapped).hexdigest() != part.rows_sha256:
        raise _Damaged(f"{file.name} is not as written (its sha256 differs)")
    try:
        rows = pa.ipc.open_file(pa.BufferReader(pa.py_buffer(mapped))).read_all()
    except (pa.ArrowException, ValueError, OSError) as exc:
        raise _Damaged(f"cannot read {file.name}: {exc}") from None
    if not rows.schema.equals(_part_rows_schema()) or rows.num_rows != part.rows:
        raise _Damaged(f"{file.name} does not hold the rows of {part.name}")
    role = pc.min_max(rows.column("role")).as_py()
    position = pc.min(rows.column("position")).as_py()
    if (role["min"] is not None and (role["min"] < 0 or role["max"] >= len(ROLES))) or (position or 0) < 0:
        raise _Damaged(f"{file.name} holds values out of range")
    return rows


def _file_digest(path: Path) -> tuple[int, str]:
    """Size and sha256 of a file just written."""
    return path.stat().st_size, _sha256_file(path)


def _kept_parts(folder: Path, parts: list[tuple[str, int]]) -> list[_Indexed] | None:
    """The parts the index of the history folder ``folder`` holds, when they are the first of its
    ``parts`` as they are now and their rows files are as written; None otherwise."""
    try:
        held = _read_parts_file(folder / INDEX_DIR)
        if not _holds(held, folder, parts):
            return None
        for part in held:
            _rows_table(folder / INDEX_DIR, part)
    except _Unusable:
        return None
    return held


def _update_history_index(folder: Path, *, anew: bool = False) -> None:
    """Index the parts of the history folder ``folder`` that its index does not hold (all of them, in an
    index built anew, when ``anew`` or when the index holds parts the folder does not, or is damaged),
    under the folder's lock."""
    path = folder / INDEX_DIR
    with folder_lock(folder):
        check_index_place(path)
        parts = parts_of_file(folder / "state.parquet")
        kept = None if anew else _kept_parts(folder, parts)
        if kept is not None and len(kept) == len(parts):
            return
        held = kept or []
        with _new_folder(path) as made:
            if held:
                _share_files(path, made, but=_PARTS_FILE)
            first = sum(part.rows for part in held)
            with engine_errors(os.fspath(path)), _writing(_open_engine(made, create=not held), _PART_HEAP) as writer:
                for name, rows in parts[len(held) :]:
                    part = _part_identity(folder / PARTS / name, name, rows)
                    target = made / _part_rows_file(name)
                    with contextlib.suppress(FileNotFoundError):
                        target.unlink()  # a file shared with the index replaced is never written into
                    first = _index_part(writer, folder / PARTS / name, rows, target, first)
                    rows_size, rows_sha256 = _file_digest(target)
                    held.append(replace(part, rows_size=rows_size, rows_sha256=rows_sha256))
            _write_parts_file(made, held)
        for name in _OLD_FILES:
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
            with pa.ipc.new_file(sink, _part_rows_schema()) as out:
                for group in range(file.num_row_groups):
                    table = _part_rows(file.read_row_group(group, columns=list(_part_rows_schema().names)))
                    _add_rows(writer, table, np.arange(table.num_rows), first)
                    out.write_table(table, max_chunksize=_BATCH)
                    first += table.num_rows
    except (pa.ArrowException, OSError) as exc:
        raise SearchIndexError(f"cannot read {part}: {exc}", reason="bad-index", source=os.fspath(part)) from None
    return first


def _part_rows(table: pa.Table) -> pa.Table:
    """What the index keeps of a part's messages: their conversation's key, position, role, time and text as indexed."""
    codes = pd.Categorical(table.column("role").to_pandas(), categories=list(ROLES)).codes.astype(np.int8)
    text = table.column("text")
    return pa.table(
        {
            "conversation_key": table.column("conversation_key").cast(pa.string()),
            "position": table.column("position").cast(pa.int64()),
            "role": pa.array(codes, mask=codes < 0),
            "ts": table.column("ts").cast(pa.int64()),
            "text": pa.chunked_array([_as_indexed(c) for c in text.chunks] or [pa.array([], pa.string())]),
        },
        schema=_part_rows_schema(),
    )


def _history_columns(folder: Path, name: str, columns: list[str]) -> pa.Table:
    """Columns of one of the history folder's small tables; FormatError naming the file when it cannot be read."""
    path = folder / f"{name}.parquet"
    try:
        return pq.read_table(path, columns=columns)
    except (pa.ArrowException, OSError) as exc:
        raise unreadable(path, exc) from None


def _open_history_index(folder: Path) -> SearchIndex:
    """The index kept beside the history folder ``folder``: _Stale when it does not hold the folder's
    parts as they are now, _Damaged when a file of it is not as written, SearchIndexError when
    ``search-index`` is not a folder of its own, FormatError when the folder's files cannot be read."""
    path = folder / INDEX_DIR
    check_index_place(path)
    held = _read_parts_file(path)
    parts = parts_of_file(folder / "state.parquet")
    if len(held) != len(parts) or not _holds(held, folder, parts):
        raise _Stale("it does not hold the history's messages as they are now")
    chunks = [_rows_table(path, part) for part in held]
    rows = pa.concat_tables(chunks) if chunks else _part_rows_schema().empty_table()
    rows = rows.replace_schema_metadata({"format": _FORMAT})
    convs = _history_columns(folder, "conversations", ["conversation_key", "source", "conversation_id", "title"])
    first_seen = _history_columns(folder, "state", ["first_seen"]).column("first_seen")
    if len(first_seen) != rows.num_rows:
        raise FormatError(
            f"the history's state has {len(first_seen)} messages, its parts {rows.num_rows} (damaged?)",
            reason="bad-parquet",
            source=str(folder / "state.parquet"),
        )
    rank = pd.Index(convs.column("conversation_key").to_numpy(zero_copy_only=False)).get_indexer(
        rows.column("conversation_key").to_numpy(zero_copy_only=False)
    )
    if (rank < 0).any():
        raise FormatError(
            "a message's conversation is not in conversations.parquet (damaged?)",
            reason="bad-parquet",
            source=str(folder),
        )
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

    def names(found: list[int]) -> dict[str, list[Any]]:
        at = [int(rank[i]) for i in found]
        return {
            "source": [source[r].as_py() for r in at],
            "conv_index": at,
            "conversation_id": [conv_id[r].as_py() for r in at],
            "title": [title[r].as_py() for r in at],
        }

    try:
        with engine_errors(os.fspath(path)):
            index = SearchIndex(_open_engine(path, create=False), rows, path, tie=tie, names=names)
            held_docs = index._searcher.num_docs
    except SearchIndexError as exc:
        raise _Damaged(exc.msg) from None
    if held_docs != rows.num_rows:
        index.close()
        raise _Damaged(f"the engine holds {held_docs} messages, the rows {rows.num_rows}")
    return index


def _part_rows_schema() -> pa.Schema:
    return pa.schema(
        [
            ("conversation_key", pa.string()),
            ("position", pa.int64()),
            ("role", pa.int8()),
            ("ts", pa.int64()),
            ("text", pa.string()),
        ]
    )


def _history_folder_index(folder: Path, damaged: str | None) -> SearchIndex:
    """The index beside the history folder ``folder``, brought up to date first when it is not (with a
    warning that says why) under the folder's lock; ``damaged`` (what failed) rebuilds it whatever it holds."""
    require_history_files(folder)
    stamp = [
        f"{name}:{(folder / name).stat().st_size}:{(folder / name).stat().st_mtime_ns}"
        for name in ("state.parquet", "conversations.parquet")
    ]
    with contextlib.suppress(FileNotFoundError):  # a part renamed into place changes its folder's time
        stamp.append(f"{PARTS}:{(folder / PARTS).stat().st_mtime_ns}")
    key = f"history:{folder.resolve()}:{':'.join(stamp)}"
    path = folder / INDEX_DIR
    check_index_place(path)
    found: _Unusable | None = None
    if damaged is None:
        if (index := _recall(key)) is not None:
            return index
        try:
            return _remember(key, _open_history_index(folder))
        except _Unusable:
            pass
    with folder_lock(folder):
        if damaged is None:
            try:  # another process may have brought it up to date meanwhile
                return _remember(key, _open_history_index(folder))
            except _Unusable as exc:
                found = exc
        if damaged is not None or isinstance(found, _Damaged):
            _forget_damaged(key, path, damaged or str(found))
        elif os.path.lexists(path):
            warnings.warn(f"search index {path} is out of date ({found}); bringing it up to date", stacklevel=4)
        try:
            _update_history_index(folder, anew=not isinstance(found, _Stale))
        except (OSError, SearchIndexError) as exc:
            if isinstance(exc, SearchIndexError) and exc.source != os.fspath(path):
                raise  # a part that cannot be read
            failure = (exc.strerror or str(exc)) if isinstance(exc, OSError) else exc.msg
            warnings.warn(f"cannot write {path} ({failure}); keeping the index in memory only", stacklevel=4)
            return _remember(key, SearchIndex.build(corpus.from_parquet(folder), fingerprint=key))
        try:
            return _remember(key, _open_history_index(folder))
        except _Unusable as exc:
            raise SearchIndexError(f"the index just written cannot be read: {exc}", source=os.fspath(path)) from None


def check_history_index(folder: str | os.PathLike[str]) -> list[str]:
    """What is wrong with the search index kept in the history folder ``folder``, one line per problem
    found (none when it is sound or there is none: search builds it); reads the index, writes nothing.

    Every file of the index is checked: ``search-index`` is a folder of its own, each file in it a
    regular file, ``parts.json`` as written, the engine's files as they were then, each part indexed
    the folder's file of that name (hashed when its name carries no digest), each rows file as written
    and holding its part's rows, and the engine holding one document per row. A part the index does not
    hold yet is said too (the next search indexes it).

    Parameters
    ----------
    folder
        A history folder (``memvelope history add``).

    Returns
    -------
    list of str
        One line per problem, each naming the file it is about; empty when there is none.

    Raises
    ------
    memvelope_tools.errors.FormatError
        The folder's state cannot be read.

    Examples
    --------
    >>> from memvelope_tools._search import check_history_index
    >>> check_history_index("my-history/")  # doctest: +SKIP
    []
    """
    base = Path(folder)
    path = base / INDEX_DIR
    if not os.path.lexists(path):
        return []
    try:
        check_index_place(path)
        held = _read_parts_file(path)
    except (_Unusable, SearchIndexError) as exc:
        return [f"{path}: {exc.msg if isinstance(exc, SearchIndexError) else exc}"]
    parts = parts_of_file(base / "state.parquet")
    problems = []
    for at, part in enumerate(held):
        name, rows = parts[at] if at < len(parts) else (None, 0)
        if name is None:
            problems.append(f"{path}: holds {part.name}, which the history does not list")
        elif (part.name, part.rows) != (name, rows):
            problems.append(f"{path}: holds {part.name} ({part.rows} messages) where the history lists {name} ({rows})")
        elif not _same_part(part, base / PARTS / name, hash_all=True):
            problems.append(f"{path}: holds {part.name} as it was, not as the file is now")
        try:
            _rows_table(path, part)
        except _Damaged as exc:
            problems.append(f"{path}: {exc}")
    if len(parts) > len(held) and not problems:
        problems.append(f"{path}: does not hold {', '.join(name for name, _ in parts[len(held) :])} yet")
    if not problems:
        try:
            with engine_errors(os.fspath(path)):
                engine = _open_engine(path, create=False)
                engine.reload()
                docs = engine.searcher().num_docs
            if docs != sum(part.rows for part in held):
                problems.append(f"{path}: the engine holds {docs} messages, the rows files {sum(p.rows for p in held)}")
        except SearchIndexError as exc:
            problems.append(f"{path}: {exc.msg}")
    return problems


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
    (``None``, or any number past the messages held: all); see the module docstring for the query
    syntax, the filters and the columns. An index kept beside a Parquet folder that the engine fails
    on is rebuilt once, with a warning.

    Parameters
    ----------
    source
        A history: envelopes or exports (paths, bytes, binary file objects or parsed dicts), a messages
        frame, a Parquet folder written by :func:`to_parquet` (its index is kept there), or a list of them.
    query
        Words, "a phrase", a prefix*, AND / OR / NOT, (parentheses).
    role
        Only messages of this role (``"user"`` or ``"assistant"``).
    since, until
        Only messages sent at or after ``since`` and before ``until`` (dates or timestamps; UTC unless they say).
    limit
        At most this many matches (``None``: all).

    Returns
    -------
    pandas.DataFrame
        The matches, best first, with their score and a snippet.

    Raises
    ------
    memvelope_tools.errors.QueryError
        The query cannot be run (the message says why).
    memvelope_tools.errors.InputError
        An input is missing, empty, not JSON or a file of another kind.
    memvelope_tools.errors.SearchIndexError
        The search engine failed, and rebuilding the index did not help.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> hits = mv.search(mv.sample_path("claude"), "the", limit=3)
    >>> len(hits) <= 3
    True
    """
    parse_query(query)  # a bad query fails before any index is built
    inputs = resolve(source, "history", list_means="documents", caller="search()")
    folder = inputs[0].path if len(inputs) == 1 and inputs[0].kind == "parquet" else None
    index = index_for(inputs)
    try:
        hits = index.search(query, role=role, since=since, until=until, limit=limit)
    except SearchIndexError as exc:
        if folder is None or index.path is None:
            raise
        index = _folder_index(folder, damaged=exc.msg)
        hits = index.search(query, role=role, since=since, until=until, limit=limit)
    if folder is not None:
        from ._history import is_history_folder, message_status

        if is_history_folder(folder):
            return message_status(hits, folder)
    return hits
