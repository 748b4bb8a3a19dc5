"""The engine: Tantivy's schema, analyzer and queries, the snippet of a match, the documents written and the
names of the files an index keeps."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._spec import ROLES
from ..errors import QueryError, SearchIndexError
from .query import Query, Words, timestamp_ms

if TYPE_CHECKING:
    import tantivy


ROWS = "rows.arrow"  # what a result row shows, beside the engine's files
PARTS_FILE = "parts.json"  # in the index of a history folder: the parts indexed (see memvelope_tools._frames.folders)
_ENGINE_FILES = (".term", ".idx", ".store", ".fast", ".fieldnorm", ".pos", "meta.json")  # what a change damages
FORMAT = "memvelope-search-3"
_ANALYZER = "memvelope"
_SNIPPET_TOKENS = 24
_SNIPPET_LEAD = 3  # words shown before the first match of a long message
BATCH = 1 << 16  # rows of a record batch in a rows file, and texts made ready for the engine at a time
_DOCS = 128  # texts converted to Python at a time while indexing

# Ideographs and kana: a zero-width space (a separator to the tokenizer, invisible in a snippet)
# after each makes every one a token of its own.
_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_CJK_RE2 = "[" + "".join(f"\\x{{{ord(c):04x}}}" if c != "-" else "-" for c in _CJK_CLASS) + "]"
_CJK = re.compile(f"([{_CJK_CLASS}])")
_ZWSP = "\u200b"
_WORD = re.compile(r"[^\W_]+")  # a run of letters and digits: a token to the engine


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


def open_engine(directory: Path | None, *, create: bool) -> tantivy.Index:
    import tantivy as t

    if directory is None:
        engine = t.Index(_schema())
    elif create:
        engine = t.Index(_schema(), path=os.fspath(directory))
    else:
        engine = t.Index.open(os.fspath(directory))
    engine.register_tokenizer(_ANALYZER, _analyzer())
    return engine


def engine_query(tree: Query, searcher: tantivy.Searcher) -> tantivy.Query:
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
    parts = [engine_query(part, searcher) for part in tree.parts]
    if tree.operator == "AND":
        return t.Query.boolean_query([(t.Occur.Must, q) for q in parts])
    if tree.operator == "OR":
        return t.Query.boolean_query([(t.Occur.Should, q) for q in parts])
    return t.Query.boolean_query([(t.Occur.Must, parts[0]), *((t.Occur.MustNot, q) for q in parts[1:])])


def filtered(query: tantivy.Query, role: str | None, since: Any, until: Any) -> tantivy.Query:
    """``query`` restricted to a role and an interval of time, scored as ``query`` alone."""
    import tantivy as t

    schema = _schema()
    filters = []
    if role is not None:
        code = ROLES.index(role)
        filters.append(t.Query.range_query(schema, "role", t.FieldType.Integer, code, code))
    low, high = timestamp_ms(since, "since"), timestamp_ms(until, "until")
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


def check_filters(role: str | None, since: Any, until: Any) -> None:
    if role is not None and role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)} or None, got {role!r}")
    timestamp_ms(since, "since")
    timestamp_ms(until, "until")


def marked(tree: Query) -> list[tuple[list[str], bool]]:
    """The token sequences a matching message is marked at (the words not after a NOT), with their prefix flag."""
    if isinstance(tree, Words):
        tokens = _tokens(tree.text)
        return [(tokens, tree.prefix)] if tokens else []
    parts = tree.parts[:1] if tree.operator == "NOT" else tree.parts
    return [leaf for part in parts for leaf in marked(part)]


def snippet(text: str, leaves: list[tuple[list[str], bool]], marks: Sequence[str]) -> str:
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


def count_matches(searcher: tantivy.Searcher, query: tantivy.Query) -> int:
    """How many messages ``query`` matches (a search for none at all is refused by the engine)."""
    found: int = searcher.search(query, 1, count=True).count  # type: ignore[attr-defined]  # not in its stubs
    return found


def engine_stamps(path: Path) -> str:
    """Name, size and modification time of each file of the engine's index in the folder ``path``:
    written once, they never change unless something damages them."""
    stamps = []
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.name.endswith(_ENGINE_FILES):
            info = entry.stat(follow_symlinks=False)
            stamps.append(f"{entry.name}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.blake2b("\n".join(stamps).encode(), digest_size=16).hexdigest()


@contextlib.contextmanager
def writing(engine: tantivy.Index, heap: int) -> Iterator[tantivy.IndexWriter]:
    """A writer of ``engine`` whose indexing threads buffer ``heap`` bytes at most, committed at the end."""
    writer = engine.writer(heap_size=heap, num_threads=max(1, min(2, os.cpu_count() or 1)))
    yield writer
    writer.commit()
    writer.wait_merging_threads()


def add_rows(writer: tantivy.IndexWriter, rows: pa.Table, which: np.ndarray, first: int) -> None:
    """Add the rows ``which`` of ``rows`` as documents numbered from ``first`` on."""
    picked = (
        rows.select(["role", "ts", "text"]).take(pa.array(which, pa.int64())) if len(which) < rows.num_rows else rows
    )
    roles, times = picked.column("role").to_pylist(), picked.column("ts").to_pylist()
    doc = first
    for batch in picked.column("text").chunks:
        for start in range(0, len(batch), _DOCS):
            texts = batch.slice(start, _DOCS).to_numpy(zero_copy_only=False)
            at = slice(doc - first, doc - first + len(texts))
            add_fields(writer, range(doc, doc + len(texts)), texts, roles[at], times[at])
            doc += len(texts)


def add_fields(
    writer: tantivy.IndexWriter,
    ids: Sequence[int],
    texts: Sequence[str],
    roles: Sequence[int | None],
    times: Sequence[int | None],
) -> None:
    """Add a document per text, numbered ``ids``, with its role's code and time where they are known."""
    import tantivy as t

    document, add = t.Document, writer.add_document
    for doc, text, role, ts in zip(ids, texts, roles, times, strict=True):
        if role is not None and ts is not None:
            add(document(id=doc, text=text, role=role, ts=ts))
            continue
        fields: dict[str, Any] = {"id": doc, "text": text}
        if role is not None:
            fields["role"] = role
        if ts is not None:
            fields["ts"] = ts
        add(document(**fields))


def role_codes(roles: pa.ChunkedArray) -> pa.ChunkedArray:
    """Each role's code (its place in :data:`~memvelope_tools._spec.ROLES`; null for none or another)."""
    known = pa.array(ROLES, pa.string())
    chunks = []
    for chunk in roles.chunks:
        if isinstance(chunk, pa.DictionaryArray):
            codes = pc.index_in(chunk.dictionary.cast(pa.string()), value_set=known).take(chunk.indices)
        else:
            codes = pc.index_in(chunk.cast(pa.string()), value_set=known)
        chunks.append(codes.cast(pa.int8()))
    return pa.chunked_array(chunks, type=pa.int8())


def as_indexed(batch: pa.Array) -> pa.StringArray:
    """Texts as indexed: null as empty, a zero-width space after each ideograph and kana."""
    batch = batch.fill_null("").cast(pa.string())
    wide = pc.invert(pc.string_is_ascii(batch))  # only text beyond ASCII can hold an ideograph
    held = pc.sum(wide).as_py() or 0
    # The whole match (\0) rather than a group: with no group to fill, RE2 needs its DFA alone (far less memory).
    spaced = functools.partial(pc.replace_substring_regex, pattern=_CJK_RE2, replacement="\\0" + _ZWSP)
    if 2 * held > len(batch):  # most texts: spaced all at once rather than picked out and put back
        batch = spaced(batch)
    elif held:
        batch = pc.replace_with_mask(batch, wide, spaced(batch.filter(wide)))
    return cast(pa.StringArray, batch)
