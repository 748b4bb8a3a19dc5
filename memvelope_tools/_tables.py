"""Envelopes and Facts IR documents as one set of Arrow tables, read in one pass.

:func:`read_tables` reads one document or a list of them (as the frame functions take them, see
:mod:`memvelope_tools._frames`) into a :class:`Tables`: the ``conversations`` and ``messages`` of the
envelopes (an export is converted to its envelope's bytes in memory and read as that file is),
the ``facts`` of the Facts IR documents, and a record per document. The frames are its pandas
face (:meth:`Tables.to_pandas`), and the Parquet dataset its files (:meth:`Tables.to_parquet`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

import pandas as pd
import pyarrow as pa

from ._frames.columns import CONVERSATION_COLUMNS, FACT_COLUMNS, MESSAGE_COLUMNS, NODE_COLUMNS, to_pandas
from ._frames.documents import read_documents
from ._frames.facts import archetype_frame
from ._frames.folders import lazy_tables
from ._parquet import read_frames, write_tables
from ._read import Source
from ._sources import resolve
from ._tags import ENVELOPE_TAG, IR_TAG

if TYPE_CHECKING:
    import pyarrow.dataset as pads


@dataclass
class Tables:
    """The tables of one or several documents, in the order given (columns as in :mod:`memvelope_tools._frames`).

    ``conversations`` and ``messages`` hold the envelopes' rows (``messages`` is None when read
    without them), ``facts`` the Facts IR documents' facts. ``documents`` has one record per
    document: its ``source`` label, ``format`` (the tag), ``provider``, and for a Facts IR
    document its ``meta`` and ``archetype``. ``whole`` holds the tables read from the whole exports
    among the documents, when they were read: ``nodes`` (their message nodes, see
    :func:`memvelope_tools.nodes_frame`), and for the exports on disk ``assets`` and ``projects`` (see
    :func:`memvelope_tools._whole.export.whole_tables`), written beside the others.
    """

    conversations: pa.Table
    messages: pa.Table | None
    facts: pa.Table
    documents: list[dict[str, Any]] = field(default_factory=list)
    whole: dict[str, pa.Table] = field(default_factory=dict)

    @property
    def envelopes(self) -> list[dict[str, Any]]:
        """The records of the envelopes among :attr:`documents`."""
        return [d for d in self.documents if d["format"] == ENVELOPE_TAG]

    @property
    def irs(self) -> list[dict[str, Any]]:
        """The records of the Facts IR documents among :attr:`documents`."""
        return [d for d in self.documents if d["format"] == IR_TAG]

    def to_pandas(self, *, tz: str | None = None) -> dict[str, pd.DataFrame]:
        """The frames: ``conversations``, ``messages`` (when read), ``facts``, ``archetype`` and ``nodes``
        (when the whole exports were read).

        Parameters
        ----------
        tz : str, optional
            A time zone to show the timestamp columns in (the instants are unchanged).

        Returns
        -------
        dict of str to pandas.DataFrame
            The frames, with the columns and dtypes of the frame functions.

        Raises
        ------
        memvelope_tools.errors.FormatError
            A Facts IR document's archetype does not fit its columns.

        Examples
        --------
        >>> from memvelope_tools._tables import read_tables
        >>> from memvelope_tools.samples import sample_path
        >>> frames = read_tables(sample_path("chatgpt")).to_pandas()
        >>> sorted(frames)
        ['archetype', 'conversations', 'facts', 'messages']
        """
        frames = {"conversations": to_pandas(self.conversations, CONVERSATION_COLUMNS, tz)}
        if self.messages is not None:
            frames["messages"] = to_pandas(self.messages, MESSAGE_COLUMNS, tz)
        frames["facts"] = to_pandas(self.facts, FACT_COLUMNS, None)
        irs = self.irs
        frames["archetype"] = archetype_frame(
            [{"meta": d["meta"], "archetype": d["archetype"], "facts": []} for d in irs],
            sources=[d["source"] for d in irs],
            tz=tz,
        )
        if "nodes" in self.whole:
            frames["nodes"] = to_pandas(self.whole["nodes"], NODE_COLUMNS, tz)
        return frames

    def to_parquet(self, folder: str | os.PathLike[str], *, progress: bool | None = None) -> dict[str, Path]:
        """Write the tables as a Parquet dataset into ``folder`` (see :mod:`memvelope_tools._parquet`).

        Parameters
        ----------
        folder : str or os.PathLike
            The folder (created if missing).
        progress : bool, optional
            Show a bar on stderr for large tables (default: on a terminal).

        Returns
        -------
        dict of str to pathlib.Path
            The files written, by table name.

        Raises
        ------
        memvelope_tools.errors.OutputError
            The folder or a file cannot be written.

        Examples
        --------
        >>> import tempfile
        >>> from memvelope_tools._tables import read_tables
        >>> from memvelope_tools.samples import sample_path
        >>> with tempfile.TemporaryDirectory() as out:
        ...     sorted(read_tables(sample_path("chatgpt")).to_parquet(out))
        ['conversations', 'messages']
        """
        return write_tables(self, folder, progress)


def read_tables(
    doc_or_docs: Source | Sequence[Source],
    *,
    layer: str | None = None,
    dedupe: bool = False,
    sources: Sequence[str] | None = None,
    progress: bool | None = None,
    with_messages: bool = True,
    with_whole: bool = False,
) -> Tables:
    """Read documents into one :class:`Tables`, each document loaded and checked once.

    Parameters
    ----------
    doc_or_docs : document or list of documents
        What the frame functions take (see :mod:`memvelope_tools._frames`); a list is several documents.
    layer : {"envelope", "ir"}, optional
        The layer every document must have (default: either).
    dedupe : bool, default False
        Keep one copy of each repeated conversation, as the frames' ``dedupe=True`` does.
    sources : list of str, optional
        One label per document (default: see :func:`memvelope_tools._sources.labels_of`).
    progress : bool, optional
        Show bars on stderr for large inputs (default: on a terminal).
    with_messages : bool, default True
        Read the messages' texts (else ``messages`` is None and reading is faster).
    with_whole : bool, default False
        Also read the documents that are exports whole (``whole``: their ``nodes``, and for those on
        disk their ``assets`` and ``projects``; see :func:`memvelope_tools._whole.export.whole_tables`):
        each export is read once more for them.

    Returns
    -------
    Tables
        The tables, rows in the order of the documents.

    Raises
    ------
    memvelope_tools.errors.MemvelopeError
        A document cannot be read, is not of ``layer``, or breaks the spec.

    Examples
    --------
    >>> from memvelope_tools._tables import read_tables
    >>> from memvelope_tools.samples import sample_path
    >>> tables = read_tables(sample_path("chatgpt"))
    >>> tables.conversations.num_rows > 0 and tables.facts.num_rows == 0
    True
    """
    if not with_whole:
        read = read_documents(
            doc_or_docs, layer, dedupe=dedupe, sources=sources, progress=progress, with_messages=with_messages
        )
        return Tables(read.conversations, read.messages, read.facts, read.records)
    from ._whole.export import whole_tables

    inputs = resolve(doc_or_docs, "frames", list_means="documents", labels=sources, caller="a frame function")
    resolved: list[Any] = list(inputs)  # taken as they are, so nothing is resolved twice
    read = read_documents(resolved, layer, dedupe=dedupe, progress=progress, with_messages=with_messages)
    whole = whole_tables(inputs, progress=progress)
    return Tables(read.conversations, read.messages, read.facts, read.records, whole)


def to_parquet(
    doc_or_docs: Source | Sequence[Source],
    folder: str | os.PathLike[str],
    *,
    sources: Sequence[str] | None = None,
    dedupe: bool = False,
    progress: bool | None = None,
) -> dict[str, Path]:
    """Write the documents' tables into ``folder`` (created if missing); return the paths written.

    Parameters
    ----------
    doc_or_docs : document or list of documents
        Anything :func:`memvelope_tools.load` takes (an export is converted in memory); a list is
        several documents.
    folder : str or os.PathLike
        The folder to write ``conversations.parquet``, ``messages.parquet`` and ``facts.parquet`` into,
        ``nodes.parquet`` when an input is an export: its every message node, on every branch (the
        columns of :func:`memvelope_tools.nodes_frame`; ``dedupe`` does not apply to it), and, when an
        export is given by path, ``assets.parquet`` and ``projects.parquet`` (the columns of
        :func:`memvelope_tools.assets_frame` and :func:`memvelope_tools.projects_frame`, after ``source``),
        read in the same pass as its nodes.
    sources : list of str, optional
        One label per document (default: see :func:`memvelope_tools._sources.labels_of`).
    dedupe : bool, default False
        Keep one copy of a conversation that several documents hold, as the frames' ``dedupe=True`` does.
    progress : bool, optional
        Show bars on stderr for large inputs (default: on a terminal).

    Returns
    -------
    dict of str to pathlib.Path
        The files written, by table name (only tables that have documents).

    Raises
    ------
    memvelope_tools.errors.InputError
        An input is missing, empty, not JSON or a file of another kind (nothing is written).
    memvelope_tools.errors.MemvelopeError
        A document breaks the spec (nothing is written).
    memvelope_tools.errors.OutputError
        The folder cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> import memvelope_tools as mv
    >>> with tempfile.TemporaryDirectory() as out:
    ...     sorted(mv.to_parquet(mv.sample_path("chatgpt"), out))
    ['assets', 'conversations', 'messages', 'nodes', 'projects']
    """
    tables = read_tables(doc_or_docs, dedupe=dedupe, sources=sources, progress=progress, with_whole=True)
    return tables.to_parquet(folder, progress=progress)


@overload
def read_parquet(folder: str | os.PathLike[str], *, lazy: Literal[False] = False) -> dict[str, pd.DataFrame]: ...


@overload
def read_parquet(folder: str | os.PathLike[str], *, lazy: Literal[True]) -> dict[str, pads.Dataset]: ...


def read_parquet(
    folder: str | os.PathLike[str], *, lazy: bool = False
) -> dict[str, pd.DataFrame] | dict[str, pads.Dataset]:
    """Read a folder written by :func:`to_parquet`, or the partitioned dataset of
    :func:`memvelope_tools.convert_many`, back into frames, dtypes included; or, ``lazy``, open its
    tables as pyarrow datasets that read nothing until asked.

    Keys are ``conversations``, ``messages``, ``facts`` and ``nodes`` for the files present, plus
    ``archetype`` when ``facts.parquet`` carries the documents' ``meta`` and ``archetype``. A
    partitioned dataset gives ``conversations`` and ``messages`` of its finished donations, ``source``
    being each donation's label.

    Parameters
    ----------
    folder
        A folder written by :func:`to_parquet` or by :func:`memvelope_tools.convert_many`.
    lazy : bool, default False
        Give each table as a ``pyarrow.dataset.Dataset`` in the frames' Arrow schema: filters and
        column choices given to its ``to_table``, ``scanner`` or ``to_batches`` are pushed down (in a
        partitioned dataset a filter on ``source`` opens only the donations it keeps), and a table is
        read only as far as it is asked for.

    Returns
    -------
    dict of str to pandas.DataFrame, or of str to pyarrow.dataset.Dataset
        The frames (or, ``lazy``, the datasets), by table name.

    Raises
    ------
    memvelope_tools.errors.InputError
        No such folder (``not-found``, worded as for every input).
    memvelope_tools.errors.FormatError
        The path is a file or a folder holding none of the files, or a file cannot be read
        (``bad-parquet``); a history folder asked for ``lazy`` (``bad-source``: its messages are
        assembled from its parts when read).

    Examples
    --------
    >>> import tempfile, memvelope_tools as mv
    >>> folder = tempfile.mkdtemp()
    >>> _ = mv.to_parquet(mv.sample_path("claude"), folder)
    >>> sorted(mv.read_parquet(folder))
    ['conversations', 'messages', 'nodes']
    >>> import pyarrow.dataset as ds
    >>> messages = mv.read_parquet(folder, lazy=True)["messages"]
    >>> messages.to_table(columns=["role"], filter=ds.field("role") == "user").num_rows
    45
    """
    if lazy:
        return lazy_tables(Path(folder))
    return read_frames(folder, archetype_frame)
