"""The memory frame: one row per remembered item."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from .._convert.sources import ZipLimits
from .items import KINDS, MEMORY_COLUMNS, MemoryRead
from .read import combined, paths_of, read_memories

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


def memory_frame(
    export: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *more: str | os.PathLike[str],
    facts: Any = None,
    zip_limits: ZipLimits | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """One row per item the provider remembered about the user, read from the export itself.

    Parameters
    ----------
    export
        An export as downloaded (its zip or folder) or a conversation file, or a list of paths: several
        exports, or the parts of one. Each path is read; the paths of one provider make that provider's
        memory (an export's conversation zip and memory zip, its part files), and exports of both
        providers give the items of each.
    *more
        Further paths, as if in the list.
    facts
        Optional: a Facts IR distilled from the same history (a document, or a path to one). The frame
        then gains ``supporting_facts``, ``traced`` and ``superseded_by``: the facts that support each
        item, whether the user's own words hold any trace of it, and what superseded it (the rules are
        in :mod:`memvelope_tools._memory_trace`). Facts the IR took from the provider's memory itself
        (those with ``memory_kind``) are left out of this.
    zip_limits
        Limits against zip bombs (the defaults of ``convert``).
    progress
        Show a progress bar while the export is read (None: when stderr is a terminal or in a notebook).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`MEMORY_COLUMNS`, oldest first (undated items last). ``kind`` is one of
        :data:`KINDS`; ``ts``, ``first_seen`` and ``last_seen`` are UTC timestamps; ``message_id`` is the
        envelope's ``m…`` id where the text is also in the envelope. ``frame.attrs["notes"]`` lists what
        the export cannot say (a format that keeps no memory records is named there, never reported as
        "no memories"; with both providers' exports, each note begins with the provider's name);
        ``frame.attrs["provider"]`` is the export's provider (None for exports of both: the ``provider``
        column says whose each item is).

    Raises
    ------
    ConversionError
        When a path cannot be read, or no path holds a conversation or a memory file.
    InputError
        When a path is not an export (a manifest, an envelope: the message says what it is), or the list
        holds something other than paths.
    FormatError
        When ``facts`` is given and is not a Facts IR.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> frame = mv.memory_frame(mv.sample_path("chatgpt"))      # doctest: +SKIP
    >>> frame[["kind", "text", "ts"]].head()                     # doctest: +SKIP
    """
    preparing: list[threading.Thread] = []

    def prepare() -> None:
        # pandas is imported while the export is read (the scanner and the workers leave the GIL free)
        thread = threading.Thread(target=_import_frames, daemon=True)
        thread.start()
        preparing.append(thread)

    from .._gc import gc_paused

    with gc_paused():  # the items are gone before the collector runs again: it has nothing of them to visit
        read = combined(read_memories(paths_of(export, more), zip_limits, progress, prepare))
        for thread in preparing:
            thread.join()
        frame = items_frame(read)
        del read
    if facts is None:
        return frame
    from .._frames.facts import facts_frame
    from .._load import read as read_document
    from .._memory_trace import add_trace, from_memory

    doc = facts if isinstance(facts, dict) else read_document(facts)
    table = facts_frame(doc)
    return add_trace(frame, table[~table["fact_index"].isin(from_memory(doc))])


def _import_frames() -> None:
    import pandas  # noqa: F401

    from .._frames import columns  # noqa: F401


def items_table(read: MemoryRead) -> pa.Table:
    """The items already read as an Arrow table: the columns of :func:`memory_frame`, in their Arrow form
    (``kind`` dictionary-encoded, ``conversation_ids`` a list of strings).

    Parameters
    ----------
    read
        What :func:`read_memory` returned.

    Returns
    -------
    pyarrow.Table
        One row per item, columns :data:`MEMORY_COLUMNS`.

    Raises
    ------
    None

    Examples
    --------
    >>> items_table(read_memory("export.zip")).num_rows  # doctest: +SKIP
    15
    """
    import pyarrow as pa

    from .._frames.columns import categorical, dictionary, timestamps
    from .._frames.text import strings
    from .._gc import gc_paused

    kinds = categorical(KINDS)
    items = read.items
    arrays: dict[str, pa.Array] = {}
    with gc_paused():  # many small objects, no cycles
        for name, kind in MEMORY_COLUMNS.items():
            values = list(map(attrgetter(name), items))
            if kind == "timestamp":
                arrays[name] = timestamps(values, name, lambda i: f"items[{i}]")
            elif kind == "string":  # unpaired surrogates become U+FFFD, with a warning, as in the other frames
                arrays[name] = strings(values, name)
            elif kind == "kind":
                arrays[name] = dictionary(values, kinds)
            elif kind == "list":
                listed = [v if v is None else strings(v, name).to_pylist() for v in values]
                arrays[name] = pa.array(listed, pa.list_(pa.string()))
            else:
                arrays[name] = pa.array(values, pa.int64() if kind == "int" else pa.bool_())
    return pa.table(arrays)


def items_frame(read: MemoryRead) -> pd.DataFrame:
    """The frame of :func:`memory_frame` for items already read.

    Parameters
    ----------
    read
        What :func:`read_memory` returned.

    Returns
    -------
    pandas.DataFrame
        One row per item, columns :data:`MEMORY_COLUMNS`.

    Raises
    ------
    None

    Examples
    --------
    >>> items_frame(read_memory("export.zip"))  # doctest: +SKIP
    """
    import pandas as pd
    import pyarrow as pa

    from .._frames.columns import INT, OBJECT, STRING, TIMESTAMP, conform
    from .._gc import gc_paused

    kinds = pd.CategoricalDtype(list(KINDS))
    dtypes = {
        "string": STRING,
        "timestamp": TIMESTAMP,
        "int": INT,
        "bool": pd.BooleanDtype(),
        "kind": kinds,
        "list": OBJECT,
    }
    columns = {name: dtypes[kind] for name, kind in MEMORY_COLUMNS.items()}
    table = items_table(read)
    with gc_paused():  # many small objects, no cycles
        frame = table.to_pandas(types_mapper={pa.string(): STRING.pandas, pa.bool_(): pd.BooleanDtype()}.get)
        for name in (name for name, kind in MEMORY_COLUMNS.items() if kind == "list"):
            frame[name] = table.column(name).to_pylist()  # lists, not arrays
        frame = conform(frame, columns)
    frame.attrs["notes"] = list(read.notes)
    frame.attrs["provider"] = read.provider
    return frame
