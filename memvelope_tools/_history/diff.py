"""What changed between two exports of one account: one row per conversation."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .._frames.columns import NULLABLE_INT, STRING, TIMESTAMP, conform
from .._read import Source
from .keys import Side, first_hashes, match_conversations
from .paths import Comparable, common_prefix, path_status
from .snapshots import Snapshot, read_snapshots

#: What :func:`diff` says of a conversation.
DIFF_STATUSES = ("new", "missing", "unchanged", "grown", "edited", "unmatched")


DIFF_COLUMNS: dict[str, Any] = {
    "provider": STRING,
    "id": STRING,
    "title": STRING,
    "status": pd.CategoricalDtype(list(DIFF_STATUSES)),
    "messages_before": NULLABLE_INT,
    "messages_after": NULLABLE_INT,
    "first_difference": NULLABLE_INT,
    "matched_by": STRING,
    "created_at": TIMESTAMP,
    "updated_at": TIMESTAMP,
    "last_ts": TIMESTAMP,
}


def diff(old: Source, new: Source, *, workers: int | None = 1, progress: bool | None = None) -> pd.DataFrame:
    """What changed between two exports (or envelopes) of one account: one row per conversation.

    Parameters
    ----------
    old, new
        The older and the newer export: anything :func:`memvelope_tools.load` takes (an export as
        downloaded, an envelope file, a parsed envelope).
    workers
        Worker processes that convert an export (1: none; None: one per core for an export of 32 MB
        or more, as ``memvelope convert`` does; a script that asks for them must guard its entry point
        with ``if __name__ == "__main__":``).
    progress
        Show progress bars on long work (None: when the output is a terminal).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`DIFF_COLUMNS`: ``provider``, ``id``, ``title``,
        ``status`` (``new``, ``missing``, ``unchanged``, ``grown``, ``edited``, ``unmatched``),
        ``messages_before``, ``messages_after`` (null where the conversation is absent),
        ``first_difference`` (index of the first message that differs, null when none does),
        ``matched_by``, ``created_at``, ``updated_at``, ``last_ts`` (``title`` and these from the
        newer export, from the older one for a conversation only it holds). Rows follow
        the newer export's order, then the conversations only the older one holds, in its order.

    Raises
    ------
    memvelope_tools.errors.MemvelopeError
        When either input is not an export or envelope.

    Warns
    -----
    UserWarning
        When the two exports are of different providers (no conversation can match).

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> changes = mv.diff("old-export.zip", "new-export.zip")  # doctest: +SKIP
    >>> changes["status"].value_counts()  # doctest: +SKIP
    """
    a, b = read_snapshots([old, new], ["old", "new"], [None, None], dated=False, workers=workers, progress=progress)
    if a.provider != b.provider:
        warnings.warn(
            f"the two exports are of different providers ({a.provider} and {b.provider}), so no conversation "
            "matches: compare two exports of one account",
            stacklevel=2,
        )
    return diff_snapshots(a, b)


def diff_snapshots(a: Snapshot, b: Snapshot) -> pd.DataFrame:
    """:func:`diff` of two snapshots already read."""
    matching = match_conversations(side(a), side(b))
    match = matching.match
    found = np.flatnonzero(match >= 0)
    a_rows = match[found]
    a_len = a.convs.column("n_messages").to_numpy()
    b_len = b.convs.column("n_messages").to_numpy()
    prefix = common_prefix(
        Comparable(a.msgs),
        np.arange(a.msgs.num_rows),
        a.starts[a_rows],
        a_len[a_rows],
        Comparable(b.msgs),
        np.arange(b.msgs.num_rows),
        b.starts[found],
        b_len[found],
    )
    status_b = np.empty(len(b.keys), dtype=object)
    first_b = np.full(len(b.keys), -1, dtype=np.int64)
    status_b[found] = path_status(prefix, a_len[a_rows], b_len[found])
    first_b[found] = np.where(status_b[found] == "unchanged", -1, prefix)
    for row in np.flatnonzero(match < 0):
        status_b[row] = "unmatched" if matching.new_open[row] else "new"
    gone = np.ones(len(a.keys), dtype=bool)
    gone[a_rows] = False
    gone_rows = np.flatnonzero(gone)
    status_a = ["unmatched" if matching.old_open[row] else "missing" for row in gone_rows]

    newer = b.convs.to_pandas(types_mapper={pa.string(): STRING.pandas}.get)
    older = a.convs.take(pa.array(gone_rows, pa.int64())).to_pandas(types_mapper={pa.string(): STRING.pandas}.get)
    before_b = np.full(len(b.keys), -1, dtype=np.int64)
    before_b[found] = a_len[a_rows]
    rows_b = pd.DataFrame(
        {
            "provider": newer["provider"],
            "id": newer["conversation_id"],
            "title": newer["title"],
            "status": status_b,
            "messages_before": _nullable(before_b),
            "messages_after": newer["n_messages"],
            "first_difference": _nullable(first_b),
            "matched_by": matching.rule,
            "created_at": newer["created_at"],
            "updated_at": newer["updated_at"],
            "last_ts": newer["last_ts"],
        }
    )
    rows_a = pd.DataFrame(
        {
            "provider": older["provider"],
            "id": older["conversation_id"],
            "title": older["title"],
            "status": status_a,
            "messages_before": older["n_messages"],
            "messages_after": pd.array([None] * len(older), dtype=NULLABLE_INT.pandas),
            "first_difference": pd.array([None] * len(older), dtype=NULLABLE_INT.pandas),
            "matched_by": pd.array([None] * len(older), dtype=STRING.pandas),
            "created_at": older["created_at"],
            "updated_at": older["updated_at"],
            "last_ts": older["last_ts"],
        }
    )
    frames = [f for f in (rows_b, rows_a) if len(f)]
    out = pd.concat(frames, ignore_index=True) if frames else rows_b
    return conform(out, DIFF_COLUMNS)


def side(snap: Snapshot) -> Side:
    """A snapshot as one side of :func:`match_conversations`."""
    lengths = snap.convs.column("n_messages").to_numpy()
    starts = snap.starts
    return Side(
        snap.keys,
        snap.matched_by,
        snap.convs.column("provider").to_numpy(zero_copy_only=False),
        snap.convs.column("conversation_id").to_pylist(),
        lambda rows: first_hashes(snap.msgs, starts[rows], lengths[rows]),
    )


def _nullable(values: np.ndarray) -> pd.arrays.IntegerArray:
    return pd.arrays.IntegerArray(values, values < 0)


def status_counts(changes: pd.DataFrame) -> dict[str, int]:
    """How many conversations :func:`diff` gave each status, every status listed."""
    counts = changes["status"].value_counts()
    return {status: int(counts.get(status, 0)) for status in DIFF_STATUSES}
