"""Envelopes and Facts IR documents as one set of Arrow tables, read in one pass.

:func:`read_tables` reads one document or a list of them (as the frame functions take them, see
:mod:`memvelope_tools._frames`) into a :class:`Tables`: the ``conversations`` and ``messages`` of the
envelopes (an export is converted to its envelope's bytes in memory and read as that file is),
the ``facts`` of the Facts IR documents, and a record per document. The frames are its pandas
face (:meth:`Tables.to_pandas`), and the Parquet dataset its files (:meth:`Tables.to_parquet`).

:func:`to_parquet` writes the same files without holding the messages: each envelope and export is read
as a stream of batches (:func:`memvelope_tools._stream.stream`), whose messages are kept in a file of
Arrow record batches beside the output until the dataset's metadata (every document's provider) is
known, then written as the Parquet row groups; an export's nodes (kept in a file the same way), files,
projects and memory are made in the same pass as its conversations.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
import pyarrow as pa

from ._atomic import output_folder
from ._convert.log import ConversionLog
from ._convert.zips import kept_open
from ._frames.columns import (
    CONVERSATION_COLUMNS,
    FACT_COLUMNS,
    MESSAGE_COLUMNS,
    NODE_COLUMNS,
    arrow_schema,
    to_pandas,
)
from ._frames.documents import dedupe_mask, read_documents
from ._frames.facts import archetype_frame
from ._frames.folders import folder_contents, lazy_tables
from ._parquet import Chunks, read_frames, write_dataset, write_tables
from ._read import Source
from ._sources import Input, resolve
from ._stream import stream
from ._tags import ENVELOPE_TAG, IR_TAG
from .errors import FormatError, OutputError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow.dataset as pads

    from ._memory.scan import MemoryReading
    from ._whole.tap import ExportPass


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
        disk their ``assets`` and ``projects``; see :func:`memvelope_tools._whole.export.whole_tables`),
        in the same pass that converts each export.

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
    from ._whole.export import PassedTables

    inputs = resolve(doc_or_docs, "frames", list_means="documents", labels=sources, caller="a frame function")
    resolved: list[Any] = list(inputs)  # taken as they are, so nothing is resolved twice
    passed = PassedTables()  # made from each export's conversion, so that it is read once
    read = read_documents(
        resolved, layer, dedupe=dedupe, progress=progress, with_messages=with_messages, whole=passed.pass_of
    )
    return Tables(read.conversations, read.messages, read.facts, read.records, passed.tables())


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
        Anything :func:`memvelope_tools.load` takes (an export is converted as it is read), or a Parquet
        folder, whose every table is written again; a list is several documents.
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
    with kept_open():
        inputs = resolve(doc_or_docs, "frames", list_means="documents", labels=sources, caller="a frame function")
        return stream_to_parquet(inputs, folder, dedupe=dedupe, progress=progress)


def stream_to_parquet(
    inputs: Sequence[Input],
    folder: str | os.PathLike[str],
    *,
    dedupe: bool = False,
    progress: bool | None = None,
    on_conversion: Callable[[ConversionLog, str], object] | None = None,
) -> dict[str, Path]:
    """:func:`to_parquet` of inputs already resolved, each envelope and export read once as a stream of
    batches (see the module docstring); ``on_conversion`` is called with what each export's conversion read
    and left out, and its provider."""
    out = Path(folder)
    with (
        _made_for(out),
        streamed_tables(inputs, out, dedupe=dedupe, progress=progress, on_conversion=on_conversion) as (
            documents,
            parts,
            whole,
        ),
    ):
        return write_dataset(out, documents, parts, whole, progress)


@contextlib.contextmanager
def streamed_tables(
    inputs: Sequence[Input],
    folder: Path,
    *,
    dedupe: bool = False,
    progress: bool | None = None,
    on_conversion: Callable[[ConversionLog, str], object] | None = None,
    memory: MemoryTable | None = None,
) -> Iterator[tuple[list[dict[str, Any]], dict[str, pa.Table | Chunks], dict[str, pa.Table | Chunks]]]:
    """Every table of inputs already resolved, as :func:`to_parquet` writes them, for the block: a record per
    document (as :attr:`Tables.documents`), the ``conversations``, ``messages`` (as :class:`Chunks`, read
    back from a file of Arrow record batches in the existing ``folder``, removed when the block ends) and
    ``facts`` there are, and the whole exports' tables (``nodes``, as :class:`Chunks` read back as the
    messages are, ``assets``, ``projects``, and with ``memory`` the ``memory`` of each export given by path,
    as ``memory`` makes it (see :data:`MemoryTable`)). Each envelope and export is read once as a stream of
    batches, an export's nodes, files, projects and memory made in the same pass as its conversations;
    ``on_conversion`` is called with what each export's conversion read and left out, and its provider."""
    documents: list[dict[str, Any]] = []
    facts: list[pa.Table] = []
    whole: dict[str, list[pa.Table]] = {}
    with _Spool(folder) as spool, _Nodes(folder) as nodes:
        for found in inputs:
            if found.kind == "parquet" and found.path is not None:
                held, records = folder_contents(found.path)
                documents += records
                if "conversations" in held:
                    spool.begin()
                    empty = arrow_schema(MESSAGE_COLUMNS).empty_table()
                    spool.add(held.pop("conversations"), held.pop("messages", empty))
                if "facts" in held:
                    facts.append(held.pop("facts"))
                for name, table in held.items():
                    if name == "nodes":
                        nodes.add_table(table)
                    else:
                        whole.setdefault(name, []).append(table)
                continue
            if found.kind in ("export", "envelope"):
                spool.begin()
                log = ConversionLog()
                reading = nodes.reading(found, memory is not None) if found.kind == "export" else None
                try:
                    provider = stream(found, spool, progress=progress, log=log, whole=reading)
                except FormatError as exc:
                    if exc.reason != "wrong-layer":
                        raise
                    spool.restart()  # a Facts IR document the resolver could not tell: read as one below
                else:
                    if log.parts and on_conversion is not None:
                        on_conversion(log, provider)
                    documents.append({"source": found.label, "format": ENVELOPE_TAG, "provider": provider})
                    if reading is not None:
                        for name, table in _whole_of(found, reading, provider, memory).items():
                            whole.setdefault(name, []).append(table)
                    continue
            taken: list[Any] = [found]  # as it is, so it is not resolved again
            read = read_documents(taken, None, progress=progress)
            documents += read.records
            facts.append(read.facts)
            if any(d["format"] == ENVELOPE_TAG for d in read.records):
                spool.begin()
                spool.add(read.conversations, read.messages)
        parts: dict[str, pa.Table | Chunks] = {}
        if any(d["format"] == ENVELOPE_TAG for d in documents):
            conversations, messages = spool.tables(dedupe)
            parts.update(conversations=conversations, messages=messages)
        if any(d["format"] == IR_TAG for d in documents):
            parts["facts"] = pa.concat_tables(facts)
        tables: dict[str, pa.Table | Chunks] = {}
        if nodes.held:
            tables["nodes"] = nodes.chunks()
        tables.update({name: pa.concat_tables(held) for name, held in whole.items()})
        yield documents, parts, tables


#: What makes the memory table of an export given by path (its rows as
#: :func:`memvelope_tools.memory_frame` reads them, in Arrow): called with the export, its provider, the
#: :class:`~memvelope_tools._memory.scan.MemoryReading` its conversion's pass handed every element, and the
#: first elements' providers of each of its parts (:attr:`memvelope_tools._whole.tap.ExportPass.heads`).
MemoryTable = Callable[[Input, str, "MemoryReading", "dict[str, list[str | None]] | None"], pa.Table]


def _whole_of(found: Input, reading: ExportPass[Any], provider: str, memory: MemoryTable | None) -> dict[str, pa.Table]:
    """The ``assets``, ``projects`` (and with ``memory`` the ``memory``) of an export whose conversations
    ``reading`` was handed (see :meth:`_Nodes.reading`), each with a ``source`` column first."""
    from ._whole.export import assets_table, finish, projects_table
    from ._whole.files import list_export

    files = found.files()
    if files is None:
        return {}
    on_disk = tuple(files)
    assets, projects = finish(on_disk, list_export(on_disk), reading.readers[:2], provider)
    tables = {"assets": assets_table(assets), "projects": projects_table(projects)}
    if memory is not None:
        tables["memory"] = memory(found, provider, reading.readers[2], reading.heads)
    return {
        name: table.add_column(0, "source", pa.array([found.label] * table.num_rows, pa.string()))
        for name, table in tables.items()
    }


class _Nodes:
    """The exports' nodes, a batch at a time, in a file of Arrow record batches in ``folder`` (removed when
    the block ends), as each export's conversion pass makes them."""

    def __init__(self, folder: Path) -> None:
        from ._whole.arrow import SCHEMA

        self.file = _BatchFile(folder, SCHEMA, "nodes")
        self.sources: set[str] = set()
        self.held = False  # whether an input gave a nodes table (an export, or a folder holding one)

    def __enter__(self) -> _Nodes:
        self.file.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.file.__exit__(*exc)

    def add_table(self, table: pa.Table) -> None:
        """An input's nodes, read whole (a Parquet folder's)."""
        self.held = True
        self.file.begin()
        self.file.add(table)
        self.sources.update(table.column("source").unique().to_pylist())

    def reading(self, found: Input, memory: bool) -> ExportPass[Any]:
        """What the conversion pass of the export ``found`` hands its batches to: its nodes go to the file,
        its files and projects and (with ``memory``) its memory, for an export on disk, to readers."""
        from ._memory.scan import MemoryReading
        from ._whole.arrow import shifted, unpack
        from ._whole.export import READERS
        from ._whole.pack import pack
        from ._whole.read import Job, Piece
        from ._whole.tap import ExportPass

        files = found.files()
        beside = READERS if files is not None else ()
        elements = (MemoryReading,) if memory and files is not None else ()
        job = Job(functools.partial(pack, source=found.label), beside=beside, elements=elements)
        self.held = True
        self.file.begin()

        def each(piece: Piece[Any], before: int) -> None:
            batch = shifted(unpack(piece.value), before)
            if batch.num_rows:
                self.sources.add(found.label)
            self.file.add(batch)

        return ExportPass(found, job, each, again=self.file.restart)

    def chunks(self) -> Chunks:
        """The nodes, as they are read back from the file."""
        self.file.finish()
        return Chunks(self.file.rows, self.file.read(), frozenset(self.sources))


@contextlib.contextmanager
def _made_for(folder: Path) -> Iterator[None]:
    """``folder`` created (with its missing parents) for the block, and removed again, when the block fails,
    if it was made here and nothing else was put in it."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    output_folder(folder)
    try:
        yield
    except BaseException:
        for made in missing:  # the deepest first
            with contextlib.suppress(OSError):
                made.rmdir()
        raise


class _BatchFile:
    """A table written a batch at a time to a file of Arrow record batches in ``folder`` (removed when the
    block ends), read back a batch at a time; the batches of an input read again are left out."""

    def __init__(self, folder: Path, schema: pa.Schema, prefix: str) -> None:
        self.folder = folder
        self.schema = schema
        self.prefix = prefix
        self.batches = 0
        self.rows = 0
        self.dropped: list[range] = []  # the batches of an input read again
        self.mark = (0, 0)

    def __enter__(self) -> _BatchFile:
        with self.writing():
            fd, name = tempfile.mkstemp(prefix=f".{self.prefix}.", suffix=".arrows.tmp", dir=self.folder)
        self.path = Path(name)
        self.file = os.fdopen(fd, "wb")
        self.writer = pa.ipc.new_stream(self.file, self.schema)
        return self

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """A failure to write the file as an OutputError (a full disk, a folder no longer writable)."""
        try:
            yield
        except OSError as exc:
            if isinstance(exc, OutputError):
                raise
            raise OutputError(
                f"cannot write output: {exc.strerror or exc}", reason="output", source=str(self.folder)
            ) from exc

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()
        with contextlib.suppress(OSError):  # the file is removed: what it failed to write is not needed
            self.file.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    def begin(self) -> None:
        """An input starts (see :meth:`restart`)."""
        self.mark = (self.batches, self.rows)

    def restart(self) -> None:
        """Forget what the input begun last gave so far: it is read again."""
        batches, self.rows = self.mark
        self.dropped.append(range(batches, self.batches))

    def add(self, table: pa.Table | pa.RecordBatch) -> None:
        """Write one table's rows."""
        if isinstance(table, pa.RecordBatch):
            table = pa.Table.from_batches([table])
        with self.writing():
            for batch in table.cast(self.schema).to_batches():
                self.writer.write_batch(batch)
                self.batches += 1
        self.rows += table.num_rows

    def finish(self) -> None:
        """Every batch was written."""
        with self.writing():
            self.writer.close()
            self.file.flush()

    def read(self, keep: np.ndarray | None = None) -> Iterator[pa.Table]:
        """The rows written (those ``keep`` marks, when given), a batch at a time."""
        dropped = {i for taken in self.dropped for i in taken}
        at = 0
        with pa.OSFile(os.fspath(self.path)) as source, pa.ipc.open_stream(source) as reader:
            for i, batch in enumerate(reader):
                if i in dropped:
                    continue
                table = pa.Table.from_batches([batch])
                if keep is not None:
                    table = table.filter(pa.array(keep[at : at + batch.num_rows]))
                at += batch.num_rows
                yield table


class _Spool:
    """A sink of the stream keeping the conversations tables it is given, and writing their messages to a
    file of Arrow record batches in ``folder`` (removed when the block ends), read back a batch at a time."""

    def __init__(self, folder: Path) -> None:
        self.messages = _BatchFile(folder, arrow_schema(MESSAGE_COLUMNS), "messages")
        self.convs: list[pa.Table] = []
        self.mark = 0

    def __enter__(self) -> _Spool:
        self.messages.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.messages.__exit__(*exc)

    def begin(self) -> None:
        """An input starts (see :meth:`restart`)."""
        self.mark = len(self.convs)
        self.messages.begin()

    def restart(self) -> None:
        """Forget what the input begun last gave so far: it is read again."""
        del self.convs[self.mark :]
        self.messages.restart()

    def add(self, conversations: pa.Table, messages: pa.Table | None) -> None:
        """Keep one batch: its conversations here, its messages in the file."""
        self.convs.append(conversations)
        if messages is not None:
            self.messages.add(messages)

    def tables(self, dedupe: bool) -> tuple[pa.Table, Chunks]:
        """The conversations, and the messages as they are read back from the file; without the repeated
        conversations ``dedupe`` drops (as the frames' ``dedupe=True``)."""
        self.messages.finish()
        empty = arrow_schema(CONVERSATION_COLUMNS).empty_table()
        convs = pa.concat_tables(self.convs) if self.convs else empty
        self.convs = []
        if not dedupe or not convs.num_rows:
            return convs, Chunks(self.messages.rows, self.messages.read())
        keep = dedupe_mask(convs)
        kept = np.repeat(keep, convs.column("n_messages").to_numpy())
        return convs.filter(pa.array(keep)), Chunks(int(kept.sum()), self.messages.read(kept))


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

    Keys are ``conversations``, ``messages``, ``facts`` and ``nodes`` for the files present (not those an
    earlier write left: a file whose run id differs from ``conversations.parquet``'s), plus
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
