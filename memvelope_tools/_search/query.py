"""Queries: the syntax :mod:`memvelope_tools._search` describes, parsed into a tree of words and operators."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import QueryError

_OPERATORS = frozenset(("AND", "OR", "NOT"))

#: Parentheses nested deeper than this are refused (no real query comes near it).
MAX_NESTING = 32
_QUERY_TOKEN = re.compile(r'\s*(?:(")([^"]*)("?)(\*?)|(\()|(\))|([^\s()"]+))')
_SEARCHABLE = re.compile(r"[^\W_]")


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
    """A query (see :mod:`memvelope_tools._search`) as a tree of :class:`Words` and :class:`Operation`.

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


def timestamp_ms(value: Any, name: str) -> int | None:
    if value is None:
        return None
    import pandas as pd

    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError):
        raise QueryError(f"{name}={value!r} is not a date or time") from None
    if ts is pd.NaT:  # type: ignore[comparison-overlap]
        raise QueryError(f"{name}={value!r} is not a date or time")
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    return int(ts.as_unit("ns").value) // 1_000_000
