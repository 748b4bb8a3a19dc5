"""The envelope frames: one row per conversation, one row per message (see :mod:`memvelope_tools._frames`)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .._read import Source
from .columns import CONVERSATION_COLUMNS, MESSAGE_COLUMNS, to_pandas
from .documents import envelope_tables


def conversations_frame(
    doc_or_docs: Source | Sequence[Source],
    *,
    dedupe: bool = False,
    tz: str | None = None,
    sources: Sequence[str] | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """One row per conversation of one or several envelopes (see :mod:`memvelope_tools._frames`).

    Parameters
    ----------
    doc_or_docs
        An envelope or an export (a path, bytes, a binary file object or a parsed dict; an export is
        converted in memory), or a list of them: a list is several documents, each with its own label.
    dedupe
        Keep one copy of a conversation that several documents hold.
    tz
        Time zone of the timestamp columns (default UTC).
    sources
        One label per document (default: see :func:`memvelope_tools._sources.labels_of`).
    progress
        Show a bar on long work (``None``: only on a terminal or in a notebook).

    Returns
    -------
    pandas.DataFrame
        One row per conversation, in document order.

    Raises
    ------
    memvelope_tools.errors.InputError
        An input is missing, empty, not JSON or a file of another kind (the message says which).
    memvelope_tools.errors.FormatError
        An input is not an envelope (``wrong-layer``) or its shape is not the spec's.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> frame = mv.conversations_frame(mv.sample_path("claude"))
    >>> set(frame["provider"])
    {'claude'}
    """
    convs, _ = envelope_tables(doc_or_docs, dedupe=dedupe, sources=sources, progress=progress, with_messages=False)
    return to_pandas(convs, CONVERSATION_COLUMNS, tz)


def messages_frame(
    doc_or_docs: Source | Sequence[Source],
    *,
    dedupe: bool = False,
    tz: str | None = None,
    sources: Sequence[str] | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """One row per message of one or several envelopes (see :mod:`memvelope_tools._frames`).

    Parameters
    ----------
    doc_or_docs
        An envelope or an export (a path, bytes, a binary file object or a parsed dict; an export is
        converted in memory), or a list of them: a list is several documents, each with its own label.
    dedupe
        Keep one copy of a conversation that several documents hold.
    tz
        Time zone of the timestamp columns (default UTC).
    sources
        One label per document (default: see :func:`memvelope_tools._sources.labels_of`).
    progress
        Show a bar on long work (``None``: only on a terminal or in a notebook).

    Returns
    -------
    pandas.DataFrame
        One row per message, in document order.

    Raises
    ------
    memvelope_tools.errors.InputError
        An input is missing, empty, not JSON or a file of another kind (the message says which).
    memvelope_tools.errors.FormatError
        An input is not an envelope (``wrong-layer``) or its shape is not the spec's.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> frame = mv.messages_frame(mv.sample_path("claude"))
    >>> set(frame["provider"])
    {'claude'}
    """
    _, msgs = envelope_tables(doc_or_docs, dedupe=dedupe, sources=sources, progress=progress)
    assert msgs is not None
    return to_pandas(msgs, MESSAGE_COLUMNS, tz)
