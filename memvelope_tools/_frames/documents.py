"""The documents a frame function is given, loaded and checked one at a time, with their labels, and
read into Arrow tables (:func:`read_documents`), which the pandas frames, the corpus, the history and the
table set are made from."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._convert.pipeline import export_conversations, open_export
from .._json.elements import parse_json, read_file, read_windows
from .._json.walker import Fallback
from .._read import Source, check
from .._sources import Input, Use, resolve
from .._tags import ENVELOPE_TAG, IR_TAG
from ..errors import FormatError
from .columns import CONVERSATION_COLUMNS, FACT_COLUMNS, MESSAGE_COLUMNS, arrow_schema
from .flatten import fact_table, flatten, flatten_export, flatten_file
from .folders import folder_tables

if TYPE_CHECKING:
    from .._convert.parallel import Beside
    from .._whole.tap import ExportPass

#: What gives the pass an export's conversion hands its batches to, beside its envelope (see
#: :class:`~memvelope_tools._whole.tap.ExportPass`), or None for none.
Passes = Callable[[Input], "ExportPass[Any] | None"]


class Flat:
    """An envelope file already flattened while it was parsed (see :func:`flatten_file`)."""

    def __init__(self, tables: tuple[pa.Table, pa.Table | None], provider: str) -> None:
        self.tables = tables
        self.provider = provider


#: ``(label, document, name for errors, owned)``, see :func:`documents`.
Document = tuple[str, dict[str, Any], str, bool]


@overload
def documents(
    doc_or_docs: Source | Sequence[Source],
    sources: Sequence[str] | None,
    layer: str | None,
    *,
    progress: bool | None,
    stream: None = None,
    whole: Passes | None = None,
) -> Iterator[Document]: ...


@overload
def documents(
    doc_or_docs: Source | Sequence[Source],
    sources: Sequence[str] | None,
    layer: str | None,
    *,
    progress: bool | None,
    stream: bool,
    whole: Passes | None = None,
) -> Iterator[Document | tuple[str, Flat, str, bool]]: ...


def documents(
    doc_or_docs: Source | Sequence[Source],
    sources: Sequence[str] | None,
    layer: str | None,
    *,
    progress: bool | None,
    stream: bool | None = None,
    whole: Passes | None = None,
) -> Iterator[Document | tuple[str, Flat, str, bool]]:
    """Yield ``(label, document, name for errors, owned)`` per input, loaded and checked one at a time.

    ``layer`` (``"envelope"``, ``"ir"`` or None for either) is the layer every document must have.
    ``owned`` is true when the document was parsed here, so nobody else holds it. With ``stream``
    set (True: with messages, False: without), an envelope file comes as a :class:`Flat` instead:
    flattened while parsed, so its whole tree never exists at once; so does an export given by path,
    its tables built from its envelope's conversations as conversion makes them. With ``whole``, an
    export's conversion also hands its batches to the pass ``whole`` gives for it. Every input is
    resolved before this returns, so a wrong one is reported before anything is read or written.
    """
    use: Use = "any" if stream is None else "frames"  # read by tables: a Parquet folder's tables are taken too
    found = resolve(doc_or_docs, use, list_means="documents", labels=sources, caller="a frame function")
    return _documents(found, layer, progress=progress, stream=stream, whole=whole)


def _documents(
    inputs: list[Input], layer: str | None, *, progress: bool | None, stream: bool | None, whole: Passes | None
) -> Iterator[Document | tuple[str, Flat, str, bool]]:
    for found in inputs:
        label = found.label
        name = found.name
        data: Any = None
        passing = whole(found) if whole is not None and found.kind == "export" else None
        beside = None if passing is None else passing.beside()
        if found.kind == "parquet":
            assert found.path is not None and stream is not None
            yield label, _folder(found.path, stream), name or label, True
            continue
        if stream is not None and (found.kind == "export" or (found.path is not None and found.value is None)):
            flat = _flat(found, stream, progress, beside)
            if flat is not None:
                yield label, flat, name or label, True
                continue
            if passing is not None:
                passing.restart()  # the export is read again, whole
        if found.kind != "export" and found.path is not None and found.value is None:
            data = read_file(os.fspath(found.path), progress)
        if found.kind == "export":
            doc = open_export(found, progress=progress, beside=beside)
        elif data is not None:
            doc = parse_json(data, name)
            del data
        else:
            doc = found.document(progress)
        # Conversations and messages are checked batch by batch while they are flattened (see Builder).
        layer_found = check(doc, source_name=name, conversations=False)
        if layer is not None and layer_found != layer:
            want = f"an envelope ({ENVELOPE_TAG})" if layer == "envelope" else f"a Facts IR document ({IR_TAG})"
            got = "a Facts IR document" if layer_found == "ir" else "an envelope"
            raise FormatError(f"expected {want}, found {got}", reason="wrong-layer", source=name or label)
        yield label, doc, name or label, not (found.path is None and isinstance(found.value, dict))


def _flat(found: Input, with_messages: bool, progress: bool | None, beside: Beside | None = None) -> Flat | None:
    """An envelope file flattened a window at a time, or an export's tables built as it is converted (its
    conversion handing its elements to ``beside`` too); None when it must be read whole instead (not a
    plain envelope, no regular file, an export given as bytes)."""
    label, name = found.label, found.name or found.label
    if found.kind == "export":
        flat = flatten_export(
            lambda take: export_conversations(found, take, progress=progress, beside=beside),
            label,
            name,
            with_messages,
        )
        return None if flat is None else Flat(*flat)
    with read_windows(os.fspath(found.path)) as windows:  # type: ignore[arg-type]
        if windows is None:
            return None
        try:
            return Flat(*flatten_file(windows, label, name, with_messages, progress))
        except Fallback:
            windows.finish()  # a file that changed meanwhile is refused, not read again
            return None


def _folder(path: Path, with_messages: bool) -> Flat:
    """A Parquet folder (``to_parquet``'s or a history folder) as the tables it holds, its rows
    labelled as they were when written."""
    tables = folder_tables(path)
    convs = tables.get("conversations", arrow_schema(CONVERSATION_COLUMNS).empty_table())
    msgs = tables.get("messages", arrow_schema(MESSAGE_COLUMNS).empty_table()) if with_messages else None
    providers = ",".join(dict.fromkeys(str(p) for p in convs.column("provider").unique().to_pylist()))
    return Flat((convs, msgs), providers)


def envelope_tables(
    doc_or_docs: Source | Sequence[Source],
    *,
    dedupe: bool = False,
    sources: Sequence[str] | None = None,
    progress: bool | None = None,
    with_messages: bool = True,
) -> tuple[pa.Table, pa.Table | None]:
    """Flatten envelopes into Arrow tables of conversations and (optionally) messages."""
    read = read_documents(
        doc_or_docs, "envelope", dedupe=dedupe, sources=sources, progress=progress, with_messages=with_messages
    )
    return read.conversations, read.messages


@dataclass
class Read:
    """The tables of documents read by :func:`read_documents`, and a record per document.

    A record holds the document's ``source`` label, ``format`` (its tag) and ``provider``, and for
    a Facts IR document its ``meta`` and ``archetype``.
    """

    conversations: pa.Table
    messages: pa.Table | None
    facts: pa.Table
    records: list[dict[str, Any]]


def read_documents(
    doc_or_docs: Source | Sequence[Source],
    layer: str | None,
    *,
    dedupe: bool = False,
    sources: Sequence[str] | None = None,
    progress: bool | None = None,
    with_messages: bool = True,
    whole: Passes | None = None,
) -> Read:
    """Read documents (each loaded and checked once, see :func:`documents`) into tables, in order.

    ``layer`` (``"envelope"``, ``"ir"`` or None for either) is the layer every document must have; with
    ``whole``, an export's conversion also hands its batches to the pass ``whole`` gives for it.
    """
    conv_parts: list[pa.Table] = []
    msg_parts: list[pa.Table] = []
    fact_parts: list[pa.Table] = []
    records: list[dict[str, Any]] = []
    for label, doc, name, owned in documents(
        doc_or_docs, sources, layer, progress=progress, stream=with_messages, whole=whole
    ):
        if isinstance(doc, Flat) or "memvelope" in doc:
            if isinstance(doc, Flat):
                convs, msgs = doc.tables
                provider = doc.provider
            else:
                convs, msgs = flatten(doc, label, name, with_messages, progress, owned=owned)
                provider = doc["meta"]["source_provider"]
            conv_parts.append(convs)
            if msgs is not None:
                msg_parts.append(msgs)
            records.append({"source": label, "format": ENVELOPE_TAG, "provider": provider})
        else:
            fact_parts.append(fact_table(doc, label))
            meta = doc["meta"]
            records.append(
                {
                    "source": label,
                    "format": IR_TAG,
                    "provider": meta["provider"],
                    "meta": meta,
                    "archetype": doc["archetype"],
                }
            )
        del doc
    conv_table = pa.concat_tables(conv_parts) if conv_parts else arrow_schema(CONVERSATION_COLUMNS).empty_table()
    msg_table = None
    if with_messages:
        msg_table = pa.concat_tables(msg_parts) if msg_parts else arrow_schema(MESSAGE_COLUMNS).empty_table()
    if dedupe:
        conv_table, msg_table = dedupe_tables(conv_table, msg_table)
    facts = pa.concat_tables(fact_parts) if fact_parts else arrow_schema(FACT_COLUMNS).empty_table()
    return Read(conv_table, msg_table, facts, records)


def dedupe_tables(conv_table: pa.Table, msg_table: pa.Table | None) -> tuple[pa.Table, pa.Table | None]:
    """The tables without the conversations ``dedupe=True`` drops (see :mod:`memvelope_tools._frames`)."""
    if not conv_table.num_rows:
        return conv_table, msg_table
    keep = dedupe_mask(conv_table)
    if msg_table is not None:
        # Map each message to its conversation's row number in the concatenated table.
        counts = conv_table.column("n_messages").to_numpy()
        msg_table = msg_table.filter(pa.array(np.repeat(keep, counts)))
    return conv_table.filter(pa.array(keep)), msg_table


def dedupe_mask(convs: pa.Table) -> np.ndarray:
    """Which conversations ``dedupe=True`` keeps: of those sharing an id, the one updated last (the later
    one of a tie); every conversation without an id."""
    ids = convs.column("conversation_id")
    rows = np.flatnonzero(pc.is_valid(ids).to_numpy(zero_copy_only=False))
    keep = np.ones(convs.num_rows, dtype=bool)
    if not len(rows):
        return keep
    codes = pc.dictionary_encode(ids.take(pa.array(rows)).combine_chunks()).indices.to_numpy()
    updated = convs.column("updated_at").cast(pa.int64()).fill_null(np.iinfo(np.int64).min).to_numpy()[rows]
    order = np.lexsort((rows, updated, codes))  # by id, then the last one updated last
    ordered = codes[order]
    last = np.append(ordered[1:] != ordered[:-1], True)
    keep[rows] = False
    keep[rows[order[last]]] = True
    return keep
