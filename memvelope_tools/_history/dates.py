"""A snapshot's date: the rules that give it (the date given, the one in the export's file name, its
newest timestamp) and how messages show it."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import FormatError

#: Which rule gave a snapshot its date.
DATE_SOURCES = ("given", "file name", "newest timestamp")
_NAME = re.compile(
    r"^(?:data|[0-9a-f]{16,})-(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})(?:-batch-\d+)?(?: \(\d+\))?(?:\.zip)?$",
    re.IGNORECASE,
)


def date_from_name(path: str | os.PathLike[str]) -> datetime | None:
    """The download time in an export's file name (or of the folder holding its part), as UTC; None if none.

    Parameters
    ----------
    path
        The export's zip, its unpacked folder or a ``conversations*.json`` part inside that folder.

    Returns
    -------
    datetime.datetime or None
        The time (in UTC), or None when no name on the path follows the ChatGPT or Claude pattern.

    Raises
    ------
    None

    Examples
    --------
    >>> date_from_name("data-2025-01-31-08-15-00-batch-0000.zip")
    datetime.datetime(2025, 1, 31, 8, 15, tzinfo=datetime.timezone.utc)
    >>> date_from_name("export.zip") is None
    True
    """
    p = Path(os.fspath(path))
    for name in (p.name, p.parent.name):
        found = _NAME.match(name)
        if found:
            try:
                year, month, day, hour, minute, second = (int(g) for g in found.groups())
                return datetime(year, month, day, hour, minute, second, tzinfo=UTC)
            except ValueError:
                return None
    return None


def snapshot_date(source: Any, date: Any, label: str, newest: Any) -> tuple[datetime, str]:
    """An export's snapshot date and the rule that gave it (see the package's rules): ``date`` when
    given (read as :class:`pandas.Timestamp` reads it), else the one in the file name of ``source``, else
    ``newest()``, its newest timestamp (None: none)."""
    if date is not None:
        import pandas as pd

        try:
            stamp = pd.Timestamp(date)
        except (ValueError, TypeError):
            raise FormatError(f"not a date: {date!r}", reason="bad-timestamp", source=label) from None
        if pd.isna(stamp):
            raise FormatError(f"not a date: {date!r}", reason="bad-timestamp", source=label)
        stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
        return stamp.as_unit("ms"), "given"
    if isinstance(source, str | os.PathLike):
        named = date_from_name(source)
        if named is not None:
            return named, "file name"
    found = newest()
    if found is None:
        raise FormatError(
            "no date: the file name has none and the export holds no timestamp; give the date explicitly",
            reason="bad-timestamp",
            source=label,
        )
    return found.astimezone(UTC), "newest timestamp"


def shown_date(stamp: datetime) -> str:
    """A snapshot date as messages show it: ``2025-06-01 09:30 UTC``."""
    return f"{stamp.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_ms(stamp: datetime) -> int:
    """A snapshot date as milliseconds since the epoch (a finer part cut off)."""
    return (stamp - _EPOCH) // timedelta(milliseconds=1)


def from_epoch_ms(ms: int) -> datetime:
    """Milliseconds since the epoch as a snapshot date."""
    return _EPOCH + timedelta(milliseconds=ms)


def newest_in(convs: pa.Table, msgs: pa.Table) -> Any:
    """The newest timestamp of a snapshot's tables (its conversations' times and its messages'), None if none."""
    newest = [
        pc.max(table.column(name)).as_py()
        for table, name in ((convs, "created_at"), (convs, "updated_at"), (msgs, "ts"))
        if table.num_rows
    ]
    found = [t for t in newest if t is not None]
    return max(found) if found else None
