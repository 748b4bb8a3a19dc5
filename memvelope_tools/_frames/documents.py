"""The documents a frame function is given, loaded and checked one at a time, with their labels."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, overload

import pyarrow as pa

from .._load import export_bytes, load
from .._read import Fallback, Source, check, map_file, parse_json, read_file, source_label
from .._sniffing import document_file
from .._tags import IR_TAG
from ..errors import FormatError
from .flatten import flatten_file


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
) -> Iterator[Document]: ...


@overload
def documents(
    doc_or_docs: Source | Sequence[Source],
    sources: Sequence[str] | None,
    layer: str | None,
    *,
    progress: bool | None,
    stream: bool,
) -> Iterator[Document | tuple[str, Flat, str, bool]]: ...


def documents(
    doc_or_docs: Source | Sequence[Source],
    sources: Sequence[str] | None,
    layer: str | None,
    *,
    progress: bool | None,
    stream: bool | None = None,
) -> Iterator[Document | tuple[str, Flat, str, bool]]:
    """Yield ``(label, document, name for errors, owned)`` per input, loaded and checked one at a time.

    ``layer`` (``"envelope"``, ``"ir"`` or None for either) is the layer every document must have.
    ``owned`` is true when the document was parsed here, so nobody else holds it. With ``stream``
    set (True: with messages, False: without), an envelope file comes as a :class:`Flat` instead:
    flattened while parsed, so its whole tree never exists at once; so does an export, converted
    to its envelope's bytes in memory and read as that envelope's file would be.
    """
    inputs = list(doc_or_docs) if isinstance(doc_or_docs, list | tuple) else [doc_or_docs]
    if sources is not None:
        labels = [str(s) for s in sources]
        if len(labels) != len(inputs):
            raise ValueError(f"sources= has {len(labels)} labels for {len(inputs)} documents")
    else:
        labels = [source_label(x, i) for i, x in enumerate(inputs)]
        seen = Counter(labels)  # two files with the same name in different folders: use their paths
        labels = [
            os.fspath(x) if seen[label] > 1 and isinstance(x, str | os.PathLike) else label
            for x, label in zip(inputs, labels, strict=True)
        ]
    for label, source in zip(labels, inputs, strict=True):
        path = document_file(source)
        data: Any = None
        if path is None and stream is not None:
            # An export as its envelope's bytes, read as an envelope file is: the same frames, the same path.
            data = export_bytes(source, progress=progress)
        if path is not None or data is not None:
            name = os.fspath(source) if isinstance(source, str | os.PathLike) else os.fspath(path)  # type: ignore[arg-type]
            if data is None:
                assert path is not None
                data = map_file(os.fspath(path)) if stream is not None else read_file(os.fspath(path), progress)
            if stream is not None:
                try:
                    flat = Flat(*flatten_file(data, label, name, stream, progress))
                except Fallback:
                    flat = None
                if flat is not None:
                    yield label, flat, name, True
                    continue
            doc = parse_json(data, name)
            del data
        else:
            doc = load(source, progress=progress, conversations=False)  # type: ignore[arg-type]
            name = os.fspath(source) if isinstance(source, str | os.PathLike) else None
        # Conversations and messages are checked batch by batch while they are flattened (see Builder).
        found = check(doc, source_name=name, conversations=False)
        if layer is not None and found != layer:
            want = "an envelope (envelope-v0)" if layer == "envelope" else f"a Facts IR document ({IR_TAG})"
            got = "a Facts IR document" if found == "ir" else "an envelope"
            raise FormatError(f"expected {want}, found {got}", reason="wrong-layer", source=name or label)
        yield label, doc, name or label, not isinstance(source, dict)
