"""The documents a frame function is given, loaded and checked one at a time, with their labels."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any, overload

import pyarrow as pa

from .._json.elements import parse_json, read_file, read_windows
from .._json.walker import Fallback
from .._load import convert_export, open_input
from .._read import Source, check
from .._sources import Input, resolve
from .._tags import ENVELOPE_TAG, IR_TAG
from ..errors import FormatError
from .flatten import flatten_export, flatten_file


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
    flattened while parsed, so its whole tree never exists at once; so does an export given by path,
    converted to its envelope's bytes in memory and read as that envelope's file would be. Every
    input is resolved before this returns, so a wrong one is reported before anything is read or written.
    """
    found = resolve(doc_or_docs, "any", list_means="documents", labels=sources, caller="a frame function")
    return _documents(found, layer, progress=progress, stream=stream)


def _documents(
    inputs: list[Input], layer: str | None, *, progress: bool | None, stream: bool | None
) -> Iterator[Document | tuple[str, Flat, str, bool]]:
    for found in inputs:
        label = found.label
        name = found.name
        data: Any = None
        if stream is not None and (found.kind == "export" or (found.path is not None and found.value is None)):
            flat = _flat(found, stream, progress)
            if flat is not None:
                yield label, flat, name or label, True
                continue
        if found.kind != "export" and found.path is not None and found.value is None:
            data = read_file(os.fspath(found.path), progress)
        if found.kind == "export":
            doc = open_input(found, progress=progress, conversations=False)
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


def _flat(found: Input, with_messages: bool, progress: bool | None) -> Flat | None:
    """An envelope file, or an export as its envelope's bytes, flattened a window at a time; None when it
    must be read whole instead (not a plain envelope, no regular file, an export given as bytes)."""
    label, name = found.label, found.name or found.label
    if found.kind == "export":
        try:
            flat = flatten_export(
                lambda write: convert_export(found, write, progress=progress), label, name, with_messages
            )
        except Fallback:
            return None
        return None if flat is None else Flat(*flat)
    with read_windows(os.fspath(found.path)) as windows:  # type: ignore[arg-type]
        if windows is None:
            return None
        try:
            return Flat(*flatten_file(windows, label, name, with_messages, progress))
        except Fallback:
            windows.finish()  # a file that changed meanwhile is refused, not read again
            return None
