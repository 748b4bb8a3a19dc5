"""The search function: a history's messages matching a query, best first."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._convert.log import ConversionLog
from .._sources import Input, resolve
from ..errors import SearchIndexError
from .cache import folder_index, index_for
from .query import parse_query

if TYPE_CHECKING:
    import pandas as pd


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
    (``None``, or any number past the messages held: all); see :mod:`memvelope_tools._search` for the
    query syntax, the filters and the columns. An index kept beside a Parquet folder that the engine fails
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
        The matches, best first, with their score, a snippet and what they matched by (their text,
        their conversation's title, or both); for a history folder, each message's status there.

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
    return search_inputs(inputs, query, role=role, since=since, until=until, limit=limit)


def search_inputs(
    inputs: list[Input],
    query: str,
    *,
    role: str | None = None,
    since: Any = None,
    until: Any = None,
    limit: int | None = 50,
    on_conversion: Callable[[ConversionLog, str], object] | None = None,
) -> pd.DataFrame:
    """:func:`search` of inputs already resolved; ``on_conversion`` is called with what each export
    converted now read and left out, and its provider."""
    parse_query(query)
    folder = inputs[0].path if len(inputs) == 1 and inputs[0].kind == "parquet" else None
    index = index_for(inputs, on_conversion=on_conversion)
    try:
        hits = index.search(query, role=role, since=since, until=until, limit=limit)
    except SearchIndexError as exc:
        if folder is None or index.path is None:
            raise
        index = folder_index(folder, damaged=exc.msg)
        hits = index.search(query, role=role, since=since, until=until, limit=limit)
    if folder is not None:
        from .._frames.folders import check_tables
        from .._sources import is_history_folder

        if is_history_folder(folder):
            check_tables(folder)  # the statuses its index gave are of one history, none of its tables damaged
    return hits
