"""A history's tables as frames, and a history folder's files for the readers that meet one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from .._frames.columns import to_pandas
from .._frames.folders import (
    CONVERSATION_HISTORY_COLUMNS,
    MESSAGE_HISTORY_COLUMNS,
    SNAPSHOT_COLUMNS,
    empty_table,
    read_tables,
)
from ..errors import FormatError

if TYPE_CHECKING:
    import pandas as pd


def snapshots_table(snapshots: list[dict[str, Any]]) -> pa.Table:
    """The snapshots' rows as a table (:data:`SNAPSHOT_COLUMNS`)."""
    rows = [{name: snapshot.get(name) for name in SNAPSHOT_COLUMNS} for snapshot in snapshots]
    return pa.Table.from_pylist(rows, schema=empty_table("snapshots").schema)


def frames_of(tables: dict[str, pa.Table], tz: str | None = None) -> dict[str, pd.DataFrame]:
    """History tables (see :meth:`History.tables`) as conforming frames, timestamps shown in ``tz``."""
    columns = {
        "snapshots": SNAPSHOT_COLUMNS,
        "conversations": CONVERSATION_HISTORY_COLUMNS,
        "messages": MESSAGE_HISTORY_COLUMNS,
    }
    return {name: to_pandas(tables[name], columns[name], tz) for name in columns if name in tables}


def read_history(folder: str | os.PathLike[str], *, tz: str | None = None) -> dict[str, pd.DataFrame]:
    """The history a history folder holds, as :func:`memvelope_tools.history` gives it.

    Parameters
    ----------
    folder
        A folder written by :func:`add_to_history` (``memvelope history add``).
    tz
        Show timestamps in this time zone (the instants are unchanged).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``snapshots``, ``conversations`` and ``messages``.

    Raises
    ------
    memvelope_tools.errors.FormatError
        When the folder is missing or is not a history folder.

    Examples
    --------
    >>> from memvelope_tools._history.folder import read_history
    >>> read_history("my-history/")["snapshots"]  # doctest: +SKIP
    """
    tables = read_tables(Path(folder))
    if tables is None:
        raise FormatError("not a history folder (no snapshots.parquet)", reason="not-found", source=str(folder))
    return frames_of(tables, tz)
