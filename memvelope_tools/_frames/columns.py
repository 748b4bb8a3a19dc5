"""The frames' columns: each one's name and dtype, declared once, and their Arrow and pandas forms.

The declarations (:data:`CONVERSATION_COLUMNS`, :data:`MESSAGE_COLUMNS`, :data:`FACT_COLUMNS`,
:data:`ARCHETYPE_COLUMNS`, :data:`NODE_COLUMNS`) give the frames' dtypes and the Parquet schema; the
rest turns values into those columns: timestamps, categories, and Arrow tables into conforming DataFrames.
A declared type (:class:`Dtype`) names its pandas dtype without importing pandas, so what writes Arrow
tables and files runs without it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from .._providers.nodes import KINDS, NODE_ROLES
from .._spec import CATEGORIES, ROLES, SUBJECT_TYPES
from ..errors import FormatError
from .text import utf8_ok

if TYPE_CHECKING:
    import pandas as pd

#: The Arrow type of :data:`TIMESTAMP` columns.
MS = pa.timestamp("ms", tz="UTC")


@dataclass(frozen=True)
class Dtype:
    """A declared column type: the Arrow type it is stored as (Parquet, DuckDB; None for a column that has
    none) and its pandas dtype, by name (``categories`` for a category column; ``arrow`` for the Arrow
    type itself, as :class:`pandas.ArrowDtype`)."""

    name: str
    arrow: pa.DataType | None
    categories: tuple[str, ...] | None = None

    @property
    def pandas(self) -> Any:
        """The pandas dtype."""
        return _pandas_dtype(self)


@functools.cache
def _pandas_dtype(dtype: Dtype) -> Any:
    import pandas as pd

    if dtype.categories is not None:
        return pd.CategoricalDtype(list(dtype.categories))
    if dtype.name == "arrow":
        return pd.ArrowDtype(dtype.arrow)
    return pd.api.types.pandas_dtype(dtype.name)


def pandas_dtype(dtype: Any) -> Any:
    """The pandas dtype of a declared column type (a pandas or NumPy dtype is its own)."""
    return dtype.pandas if isinstance(dtype, Dtype) else dtype


def pandas_dtypes(columns: dict[str, Any]) -> dict[str, Any]:
    """The pandas dtypes of a column declaration, by column."""
    return {name: pandas_dtype(dtype) for name, dtype in columns.items()}


def categorical(categories: Iterable[str]) -> Dtype:
    """The declared type of a category column whose categories are ``categories``, in order."""
    return Dtype("category", pa.dictionary(pa.int8(), pa.string()), tuple(categories))


STRING = Dtype("string[pyarrow]", pa.string())
TIMESTAMP = Dtype("datetime64[ms, UTC]", MS)
TIMESTAMP_US = Dtype("datetime64[us, UTC]", pa.timestamp("us", tz="UTC"))
INT = Dtype("int64", pa.int64())
NULLABLE_INT = Dtype("Int64", pa.int64())
FLOAT = Dtype("Float64", pa.float64())
ROLE = categorical(ROLES)
SUBJECT_TYPE = categorical(SUBJECT_TYPES)
CATEGORY = categorical(CATEGORIES)
OBJECT = Dtype("object", None)
BOOL = Dtype("bool", pa.bool_())
NODE_ROLE = categorical(NODE_ROLES)
KIND = categorical(KINDS)
NAMES = Dtype("arrow", pa.list_(pa.string()))

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


def arrow_type(dtype: Dtype) -> pa.DataType:
    """The Arrow type a declared column type is stored as (Parquet, DuckDB)."""
    if dtype.arrow is None:
        raise TypeError(f"no Arrow type for {dtype.name}")
    return dtype.arrow


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
    import pandas as pd

    out = frame.loc[:, list(columns)]
    for name, declared in columns.items():
        dtype = pandas_dtype(declared)
        if out[name].dtype != dtype:
            out[name] = out[name].astype(dtype)
        if tz is not None and isinstance(dtype, pd.DatetimeTZDtype):
            out[name] = out[name].dt.tz_convert(tz)
    return out.reset_index(drop=True)


def to_pandas(table: pa.Table, columns: dict[str, Any], tz: str | None) -> pd.DataFrame:
    """An Arrow table of declared ``columns`` as the conforming DataFrame (timestamps shown in ``tz``)."""
    frame = table.to_pandas(types_mapper={pa.string(): STRING.pandas, NAMES.arrow: NAMES.pandas}.get)
    return conform(frame, columns, tz=tz)


def dictionary(values: list[Any], dtype: Dtype) -> pa.DictionaryArray:
    """``values`` (each a category of ``dtype`` or None) as the Arrow form of a category column."""
    assert dtype.categories is not None, dtype
    code_of = {category: code for code, category in enumerate(dtype.categories)}
    codes = np.fromiter((code_of.get(v, -1) for v in values), dtype=np.int8, count=len(values))
    categories = pa.array(list(dtype.categories), pa.string())
    return pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0), categories)


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
