"""The frames' columns: each one's name and dtype, declared once, and their Arrow and pandas forms.

The declarations (:data:`CONVERSATION_COLUMNS`, :data:`MESSAGE_COLUMNS`, :data:`FACT_COLUMNS`,
:data:`ARCHETYPE_COLUMNS`, :data:`NODE_COLUMNS`) give the frames' dtypes and the Parquet schema; the
rest turns values into those columns: timestamps, categories, and Arrow tables into conforming DataFrames.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .._providers.nodes import KINDS, NODE_ROLES
from .._spec import CATEGORIES, ROLES, SUBJECT_TYPES
from ..errors import FormatError
from .text import utf8_ok

STRING = pd.StringDtype("pyarrow")
TIMESTAMP = pd.DatetimeTZDtype("ms", "UTC")
TIMESTAMP_US = pd.DatetimeTZDtype("us", "UTC")
INT = np.dtype("int64")
NULLABLE_INT = pd.Int64Dtype()
FLOAT = pd.Float64Dtype()
ROLE = pd.CategoricalDtype(list(ROLES))
SUBJECT_TYPE = pd.CategoricalDtype(list(SUBJECT_TYPES))
CATEGORY = pd.CategoricalDtype(list(CATEGORIES))
OBJECT = np.dtype("O")
BOOL = np.dtype("bool")
NODE_ROLE = pd.CategoricalDtype(list(NODE_ROLES))
KIND = pd.CategoricalDtype(list(KINDS))
NAMES = pd.ArrowDtype(pa.list_(pa.string()))

CONVERSATION_COLUMNS: dict[str, Any] = {
    "source": STRING,
    "provider": STRING,
    "conv_index": INT,
    "conversation_id": STRING,
    "title": STRING,
    "created_at": TIMESTAMP,
    "updated_at": TIMESTAMP,
    "n_messages": INT,
    "n_user": INT,
    "n_assistant": INT,
    "first_ts": TIMESTAMP,
    "last_ts": TIMESTAMP,
    "chars": INT,
}
MESSAGE_COLUMNS: dict[str, Any] = {
    "source": STRING,
    "provider": STRING,
    "conv_index": INT,
    "conversation_id": STRING,
    "message_id": STRING,
    "position": INT,
    "role": ROLE,
    "ts": TIMESTAMP,
    "text": STRING,
    "chars": INT,
    "words": INT,
}
FACT_COLUMNS: dict[str, Any] = {
    "source": STRING,
    "fact_index": INT,
    "subject": STRING,
    "subject_type": SUBJECT_TYPE,
    "category": CATEGORY,
    "content": STRING,
    "effective_date": STRING,
    "in_text_date": STRING,
    "provenance": STRING,
    "convo_id": STRING,
}
ARCHETYPE_COLUMNS: dict[str, Any] = {
    "source": STRING,
    "format": STRING,
    "provider": STRING,
    "mode": STRING,
    "generated_at": TIMESTAMP_US,
    "n_facts": INT,
    "style": STRING,
    "archetype_facts": INT,
    "self_ratio": FLOAT,
    "distinct_entities": NULLABLE_INT,
    "belief_ratio": FLOAT,
    "categories": OBJECT,
}

NODE_COLUMNS: dict[str, Any] = {
    "source": STRING,
    "provider": STRING,
    "conv_index": NULLABLE_INT,
    "conversation_id": STRING,
    "node_id": STRING,
    "parent_id": STRING,
    "role": NODE_ROLE,
    "author": STRING,
    "recipient": STRING,
    "content_type": STRING,
    "kind": KIND,
    "tools": NAMES,
    "model": STRING,
    "custom_gpt": STRING,
    "ts": TIMESTAMP,
    "on_active_path": BOOL,
    "message_id": STRING,
    "sibling": INT,
    "siblings": INT,
    "chars": INT,
    "attachments": INT,
}

#: The Arrow type of :data:`TIMESTAMP` columns.
MS = pa.timestamp("ms", tz="UTC")


def arrow_type(dtype: Any) -> pa.DataType:
    """The Arrow type a declared column dtype is stored as (Parquet, DuckDB)."""
    if isinstance(dtype, pd.CategoricalDtype):
        return pa.dictionary(pa.int8(), pa.string())
    if isinstance(dtype, pd.StringDtype):
        return pa.string()
    if isinstance(dtype, pd.DatetimeTZDtype):
        return pa.timestamp(dtype.unit, tz=str(dtype.tz))
    if dtype in (INT, NULLABLE_INT):
        return pa.int64()
    if dtype == FLOAT:
        return pa.float64()
    if dtype == BOOL:
        return pa.bool_()
    if isinstance(dtype, pd.ArrowDtype):
        return dtype.pyarrow_dtype
    raise TypeError(f"no Arrow type for {dtype!r}")


def arrow_schema(columns: dict[str, Any]) -> pa.Schema:
    """The explicit Arrow schema of a column declaration such as :data:`MESSAGE_COLUMNS`."""
    return pa.schema([pa.field(name, arrow_type(dtype)) for name, dtype in columns.items()])


def require_columns(frame: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise FormatError (``wrong-frame``) naming the columns of ``columns`` that ``frame`` lacks, if any;
    ``what`` says what kind of frame was expected."""
    missing = [name for name in columns if name not in frame.columns]
    if missing:
        raise FormatError(
            f"expected {what} (missing column(s) {', '.join(missing)}), got columns "
            f"{', '.join(map(str, frame.columns)) or 'none'}",
            reason="wrong-frame",
        )


def conform(frame: pd.DataFrame, columns: dict[str, Any], *, tz: str | None = None) -> pd.DataFrame:
    """Give ``frame`` exactly the declared columns and dtypes (optionally shown in ``tz``)."""
    out = frame.loc[:, list(columns)]
    for name, dtype in columns.items():
        if out[name].dtype != dtype:
            out[name] = out[name].astype(dtype)
        if tz is not None and isinstance(dtype, pd.DatetimeTZDtype):
            out[name] = out[name].dt.tz_convert(tz)
    return out.reset_index(drop=True)


def to_pandas(table: pa.Table, columns: dict[str, Any], tz: str | None) -> pd.DataFrame:
    """An Arrow table of declared ``columns`` as the conforming DataFrame (timestamps shown in ``tz``)."""
    frame = table.to_pandas(types_mapper={pa.string(): STRING, NAMES.pyarrow_dtype: NAMES}.get)
    return conform(frame, columns, tz=tz)


def dictionary(values: list[Any], dtype: pd.CategoricalDtype) -> pa.DictionaryArray:
    """``values`` (each a category of ``dtype`` or None) as the Arrow form of a category column."""
    codes = pd.Categorical(values, dtype=dtype).codes.astype(np.int8)
    return pa.DictionaryArray.from_arrays(
        pa.array(codes, mask=codes < 0), pa.array(list(dtype.categories), pa.string())
    )


def timestamps(values: list[str | None], name: str, path_of: Callable[[int], str]) -> pa.Array:
    """Parse ``YYYY-MM-DDTHH:mm:ss.sssZ`` strings (null → null) in one vectorized cast.

    A value that is none is a FormatError citing ``name`` and ``path_of(index)``.
    """

    def not_a_timestamp(i: int) -> FormatError:
        return FormatError(
            f"not a timestamp: {values[i]!r} (expected YYYY-MM-DDTHH:mm:ss.sssZ)",
            reason="bad-timestamp",
            source=name,
            path=path_of(i),
        )

    try:
        strings = pa.array(values, pa.string())
    except UnicodeEncodeError:  # a lone surrogate, which no timestamp holds
        raise not_a_timestamp(next(i for i, v in enumerate(values) if isinstance(v, str) and not utf8_ok(v))) from None
    try:
        return strings.cast(MS)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        for i, v in enumerate(values):
            try:
                pa.array([v], pa.string()).cast(MS)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise not_a_timestamp(i) from None
        raise
