"""Where values sit among distinct keys, looked up in Arrow."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def positions(values: Any, keys: Any) -> np.ndarray:
    """The position of each of ``values`` among ``keys`` (distinct strings), -1 for one that is not among them.

    Both are sequences of strings (or None) or Arrow string arrays.
    """
    if not len(values):
        return np.zeros(0, dtype=np.int64)
    found = pc.index_in(_strings(values), value_set=_strings(keys))
    return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


def _strings(values: Any) -> pa.Array:
    if isinstance(values, pa.ChunkedArray | pa.Array):
        values = values.cast(pa.string())
        return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    return pa.array(values, pa.string())
