"""Rows of the whole-export readers as Arrow tables, and those tables as frames: one column declaration
each (name -> kind of value), the dtypes those of the other frames."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["DOC", "arrow_table", "frame_of", "schema_of"]

#: The kinds of value a column may hold: text, an instant (UTC, ms), a whole number, a yes/no, one of a
#: fixed list of words (the column's ``kinds``), a list of ``{name, size_bytes, created_at}`` (:data:`DOC`).
KINDS: Final = ("string", "timestamp", "int", "bool", "category", "docs")
#: The fields of one entry of a ``docs`` column.
DOC: Final = ("name", "size_bytes", "created_at")
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def schema_of(columns: Mapping[str, str]) -> pa.Schema:
    """The Arrow schema of a column declaration."""
    import pyarrow as pa

    from .._frames.columns import MS

    doc = pa.struct([("name", pa.string()), ("size_bytes", pa.int64()), ("created_at", MS)])
    types = {
        "string": pa.string(),
        "timestamp": MS,
        "int": pa.int64(),
        "bool": pa.bool_(),
        "category": pa.dictionary(pa.int8(), pa.string()),
        "docs": pa.list_(doc),
    }
    return pa.schema([(name, types[kind]) for name, kind in columns.items()])


def arrow_table(rows: Sequence[Any], columns: Mapping[str, str], kinds: Mapping[str, Sequence[str]]) -> pa.Table:
    """``rows`` (objects with an attribute per column) as an Arrow table of ``columns``; ``kinds`` gives
    each category column's words. Text with unpaired surrogates becomes U+FFFD, with a warning, as in
    the other frames."""
    import pyarrow as pa

    from .._frames.columns import categorical, dictionary, timestamps
    from .._frames.text import strings

    schema = schema_of(columns)
    arrays: list[pa.Array] = []
    for name, kind in columns.items():
        values = [getattr(row, name) for row in rows]
        if kind == "string":
            arrays.append(strings(values, name))
        elif kind == "timestamp":
            arrays.append(timestamps(values, name, lambda i: f"rows[{i}]"))
        elif kind == "category":
            arrays.append(dictionary(values, categorical(kinds[name])))
        elif kind == "docs":
            arrays.append(pa.array([_docs(v) for v in values], schema.field(name).type))
        else:
            arrays.append(pa.array(values, schema.field(name).type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _docs(value: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    return [
        {
            "name": None if d["name"] is None else _LONE_SURROGATE.sub("\ufffd", d["name"]),
            "size_bytes": d["size_bytes"],
            "created_at": datetime.fromisoformat(d["created_at"]) if d["created_at"] else None,
        }
        for d in value
    ]


def frame_of(table: pa.Table, columns: Mapping[str, str], kinds: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """The frame of an Arrow table of ``columns``: text as ``string``, instants tz-aware UTC, whole numbers
    and yes/no nullable, categories in the order of ``kinds``, ``docs`` as lists of dicts."""
    import pandas as pd
    import pyarrow as pa

    from .._frames.columns import STRING, TIMESTAMP, conform

    dtypes = {"string": STRING.pandas, "timestamp": TIMESTAMP.pandas, "int": pd.Int64Dtype(), "bool": pd.BooleanDtype()}
    declared = {
        name: pd.CategoricalDtype(list(kinds[name])) if kind == "category" else dtypes.get(kind, object)
        for name, kind in columns.items()
    }
    mapper = {pa.string(): STRING.pandas, pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}.get
    frame = table.to_pandas(types_mapper=mapper)
    for name, kind in columns.items():
        if kind == "docs":
            frame[name] = [None if v is None else [_doc(d) for d in v] for v in table.column(name).to_pylist()]
    return conform(frame, declared)


def _doc(entry: dict[str, Any]) -> dict[str, Any]:
    import pandas as pd

    stamp = entry["created_at"]
    return {**entry, "created_at": None if stamp is None else pd.Timestamp(stamp).tz_convert("UTC")}
