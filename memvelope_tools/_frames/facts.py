"""The Facts IR frames: one row per fact, one row per document (see :mod:`memvelope_tools._frames`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from .._read import Source
from ..errors import FormatError
from .columns import (
    ARCHETYPE_COLUMNS,
    FACT_COLUMNS,
    INT,
    NULLABLE_INT,
    STRING,
    arrow_schema,
    conform,
    to_pandas,
)
from .documents import documents
from .flatten import fact_table
from .text import strings

if TYPE_CHECKING:
    import pandas as pd


def facts_frame(ir_or_irs: Source | Sequence[Source], *, sources: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per fact of one or several Facts IR documents (see :mod:`memvelope_tools._frames`).

    Parameters
    ----------
    ir_or_irs
        One Facts IR document (a path, bytes, a binary file object or a parsed dict) or a list of them.
    sources
        One label per document (default: see :func:`memvelope_tools._sources.labels_of`).

    Returns
    -------
    pandas.DataFrame
        One row per fact, with the document's label in ``source``.

    Raises
    ------
    memvelope_tools.errors.InputError
        An input is missing, empty, not JSON or a file of another kind.
    memvelope_tools.errors.FormatError
        An input is not a Facts IR document (``wrong-layer``) or its shape is not the spec's.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> ir = mv.distill_structured(mv.convert(mv.sample_path("claude")))
    >>> len(mv.facts_frame(ir)) == ir["meta"]["facts"]
    True
    """
    return to_pandas(facts_table(ir_or_irs, sources=sources), FACT_COLUMNS, None)


def archetype_frame(
    ir_or_irs: Source | Sequence[Source], *, sources: Sequence[str] | None = None, tz: str | None = None
) -> pd.DataFrame:
    """One row per Facts IR document: its ``meta`` and ``archetype`` (see :mod:`memvelope_tools._frames`).

    Parameters
    ----------
    ir_or_irs
        One Facts IR document (a path, bytes, a binary file object or a parsed dict) or a list of them.
    sources
        One label per document (default: see :func:`memvelope_tools._sources.labels_of`).
    tz
        Time zone for ``generated_at`` (default UTC).

    Returns
    -------
    pandas.DataFrame
        One row per document.

    Raises
    ------
    memvelope_tools.errors.InputError
        An input is missing, empty, not JSON or a file of another kind.
    memvelope_tools.errors.FormatError
        An input is not a Facts IR document (``wrong-layer``) or its shape is not the spec's.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> env = mv.convert(mv.sample_path("claude"))
    >>> int(mv.archetype_frame(mv.distill_structured(env))["n_facts"].iloc[0]) >= 0
    True
    """
    import pandas as pd

    rows: dict[str, list[Any]] = {name: [] for name in ARCHETYPE_COLUMNS}
    names: list[str] = []
    for label, doc, name, _ in documents(ir_or_irs, sources, "ir", progress=False):
        meta, arch = doc["meta"], doc["archetype"]
        for key, value in (
            ("source", label),
            ("format", meta["format"]),
            ("provider", meta["provider"]),
            ("mode", meta["mode"]),
            ("n_facts", meta["facts"]),
            ("style", arch["style"]),
            ("archetype_facts", arch["facts"]),
            ("self_ratio", arch["self_ratio"]),
            ("distinct_entities", arch["distinct_entities"]),
            ("belief_ratio", arch["belief_ratio"]),
            ("categories", arch["categories"]),
        ):
            rows[key].append(value)
        rows["generated_at"].append(_instant(meta["generated_at"], name))
        names.append(name)
    for col, dtype in ARCHETYPE_COLUMNS.items():
        if dtype == STRING:  # unpaired surrogates become U+FFFD, with a warning, as in the other frames
            rows[col] = strings(rows[col], col).to_pylist()
        elif dtype in (INT, NULLABLE_INT):
            for i, v in enumerate(rows[col]):
                if v is not None and not -(2**63) <= v < 2**63:
                    raise FormatError(
                        f"{v} does not fit a 64-bit integer",
                        reason="bad-shape",
                        source=names[i],
                        path=_ARCHETYPE_PATHS[col],
                    )
    frame = pd.DataFrame(
        {
            name: pd.Series(rows[name], dtype=dtype.pandas, index=range(len(rows[name])))
            for name, dtype in ARCHETYPE_COLUMNS.items()
        }
    )
    return conform(frame, ARCHETYPE_COLUMNS, tz=tz)


_ARCHETYPE_PATHS = {
    "n_facts": "$.meta.facts",
    "archetype_facts": "$.archetype.facts",
    "distinct_entities": "$.archetype.distinct_entities",
}


def facts_table(ir_or_irs: Source | Sequence[Source], *, sources: Sequence[str] | None = None) -> pa.Table:
    """Flatten Facts IR documents into one Arrow table of facts (see :data:`FACT_COLUMNS`)."""
    parts = [fact_table(doc, label) for label, doc, _, _ in documents(ir_or_irs, sources, "ir", progress=False)]
    return pa.concat_tables(parts) if parts else arrow_schema(FACT_COLUMNS).empty_table()


def _instant(value: str, name: str) -> pd.Timestamp:
    import pandas as pd

    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError):
        raise FormatError(
            f"not a timestamp: {value!r}", reason="bad-timestamp", source=name, path="$.meta.generated_at"
        ) from None
    if ts.tzinfo is None:
        return pd.NaT  # type: ignore[return-value]
    return ts.tz_convert("UTC").floor("us").as_unit("us")  # digits beyond microseconds are cut, not rounded
