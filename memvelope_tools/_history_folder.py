"""A history folder that grows: the merged history of every export added to it, as a Parquet dataset.

The folder's files are described in :mod:`memvelope_tools._frames.folders`. Adding an export reads
that export a batch of conversations at a time, and of the folder only its small tables and its
state (a hash per message, never the texts): each conversation's messages are compared by hash with
the path the history holds for it, as :mod:`memvelope_tools._history` compares them. The messages
seen for the first time go to a new part; the state, the conversations and the snapshots are
written again. An add that changes nothing (the folder's newest export added again) writes no
file. The new files are written beside the old ones and renamed over them together at the end, so
an add that is interrupted leaves the folder as it was. An add that gains messages also brings the
search index kept beside them up to date (the one :func:`memvelope_tools.search` keeps beside a
Parquet folder), indexing only the new part.

An export whose conversations do not all have ids of their own (a null or repeated id), or that is
not read from a file, is read whole and compared as one batch, by the same rules.
"""

from __future__ import annotations

import contextlib
import gc
import os
import tempfile
import uuid
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ._atomic import atomic_outputs, check_output_folder, folder_lock, output_folder
from ._frames.columns import MS
from ._frames.folders import (
    HISTORY_ID_KEY,
    INDEX_FOLDER,
    OLD_MESSAGES,
    PART_COLUMNS,
    PARTS,
    STATE_SCHEMA,
    TABLE_FILES,
    empty_table,
    file_digest,
    part_name,
    parts_of,
    read_table,
    remove_litter,
    require_history_files,
    require_real_folders,
    same_history,
    with_parts,
)
from ._history.dates import snapshot_date
from ._history.folder import snapshots_table
from ._history.keys import message_hashes
from ._history.merge import Held, HeldAlready, Merge, Merged, Whole
from ._history.snapshots import read_snapshot
from ._json.walker import Fallback
from ._parquet import schema_metadata
from ._pool import give_back_memory, lean_pool
from ._read import Source
from ._search.parts import check_index_place
from ._sources import is_history_folder, labels_of, resolve_one
from ._stream import stream
from ._tags import ENVELOPE_TAG
from .errors import FormatError, OutputError, SearchIndexError

__all__ = ["add_export", "add_to_history", "is_history_folder"]

# Messages of an export compared at a time, at least: one, so that a batch is the conversations a window of
# the envelope holds, bounded in bytes whatever the length of their messages.
_BATCH_ROWS = 1
_ROW_GROUP = 1 << 16  # rows of a part's row group, at most
_GROUP_BYTES = 8 << 20  # bytes of a part's row group, about: the index reads and indexes a row group at a time
_WINDOW = 4 << 20  # bytes of the envelope file read at a time: memory holds a few times this


def add_to_history(
    export: Source,
    folder: str | os.PathLike[str],
    *,
    date: Any = None,
    workers: int | None = 1,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Add one export (or envelope) to the history folder ``folder`` (created if missing).

    Parameters
    ----------
    export
        Anything :func:`memvelope_tools.load` takes. Its date is ``date``, else the one in its file
        name, else its newest timestamp (see :mod:`memvelope_tools._history`).
    folder
        The history folder.
    date
        The export's date, when given.
    workers
        Worker processes that convert an export read whole (one whose conversations do not all have ids of
        their own), as :func:`memvelope_tools.diff` takes them; any other export is read a batch at a time as
        this process converts it.
    progress
        Show progress bars on long work (None: when the output is a terminal).

    Returns
    -------
    dict
        The export's snapshot row (``source``, ``provider``, ``date``, ``date_source``, counts and
        what changed) and ``added``: False when the folder already held this very export (its newest or
        an older one: the same date and provider, the same numbers of conversations and messages, no
        message the folder lacks), in which case no file was written and the row is the held one's.

    Raises
    ------
    memvelope_tools.errors.FormatError
        When the export cannot be read, is older than the folder's newest export of its provider
        and not held (the message lists the commands that build a new folder with it in its place),
        or the folder is not a history folder.
    memvelope_tools.errors.OutputError
        When the folder cannot be written.

    Warns
    -----
    UserWarning
        When the history was added but its search index could not be written (search builds it).

    Examples
    --------
    >>> from memvelope_tools._history_folder import add_to_history
    >>> add_to_history("data-2025-06-01-09-30-00-batch-0000.zip", "my-history/")  # doctest: +SKIP
    """
    import pandas as pd

    row = add_export(export, folder, date=date, workers=workers, progress=progress)
    return {**row, "date": pd.Timestamp(row["date"]).as_unit("ms")}


def add_export(
    export: Source,
    folder: str | os.PathLike[str],
    *,
    date: Any = None,
    named: Source | None = None,
    workers: int | None = 1,
    progress: bool | None = None,
) -> dict[str, Any]:
    """:func:`add_to_history`, the export's label and date read from the name of ``named`` when given
    (an envelope converted from a download names the download)."""
    base = Path(folder)
    check_output_folder(base)
    [label] = labels_of([export if named is None else named])
    made = not base.exists()
    output_folder(base)
    try:
        # The lock: no other add, check or index write runs meanwhile. The pool: the folder's tables too, as
        # the default pool kept what they freed.
        with folder_lock(base), lean_pool():
            written = _merge_in(base, export, label, date, named, workers, progress)
            if written["added"]:
                gc.collect()  # a traceback of the batches' reading (an export then read whole) holds the merge
                give_back_memory()  # what the merge held, let go with it, before the index takes its own
                _index(base)
    except BaseException:
        if made:
            with contextlib.suppress(OSError):
                base.rmdir()  # only when the failed add left it empty
        raise
    return written


def _merge_in(
    base: Path,
    export: Source,
    label: str,
    date: Any,
    named: Source | None,
    workers: int | None,
    progress: bool | None,
) -> dict[str, Any]:
    """The export merged into the folder's history and the files it changed written (its search index left as
    it is); the snapshot's row and ``added``."""
    require_real_folders(base)
    check_index_place(base / INDEX_FOLDER)
    remove_litter(base)
    found = _Folder.read(base)
    part = _Part(base)
    try:
        merge = Merge(found.held, label, on_new=part.write)
        try:
            provider = _read_batches(export, label, merge, progress)
        except (Whole, Fallback):
            part.discard()
            merge = Merge(found.held, label, on_new=part.write, whole=True)
            snap = read_snapshot(export, label=label, dated=False, workers=workers, progress=progress)
            merge.add(snap.convs, snap.msgs)
            provider = snap.provider
        when, rule = snapshot_date(named if named is not None else export, date, label, merge.newest)
        try:
            merged = merge.finish(provider, when, rule)
        except HeldAlready as held:
            return {**held.row, "added": False}
        return _commit(base, found, merged, part)
    finally:
        part.discard()


def _read_batches(source: Source, label: str, merge: Merge, progress: bool | None) -> str:
    """Give ``merge`` the tables of the export or envelope file ``source`` a batch at a time, as they are
    read (an export as it is converted); its provider. Fallback (or Whole, from the merge) when it is to be
    read whole instead."""
    found = resolve_one(source, "any", label=label)
    from_file = found.files() is not None or (found.kind == "envelope" and found.path is not None)
    if not from_file or found.value is not None:
        raise Fallback
    return stream(found, _Merging(merge), rows=_BATCH_ROWS, progress=progress, window=_WINDOW)


class _Merging:
    """The stream's sink of an add: each batch to the merge. An input the stream reads again from its start
    is merged whole instead."""

    def __init__(self, merge: Merge) -> None:
        self.merge = merge

    def add(self, conversations: pa.Table, messages: pa.Table) -> None:
        self.merge.add(conversations, messages)

    def restart(self) -> None:
        raise Fallback


class _Folder:
    """What an add reads of a history folder: the history (its small tables and its state), its parts,
    and the messages of a folder of the previous layout, to be written as a part."""

    def __init__(self) -> None:
        self.held = Held.empty()
        self.parts: list[tuple[str, int]] = []
        self.old_messages: pa.Table | None = None
        self.id: str | None = None

    @classmethod
    def read(cls, base: Path) -> _Folder:
        folder = cls()
        if not is_history_folder(base):
            if (base / "conversations.parquet").exists() or (base / OLD_MESSAGES).exists():
                raise FormatError(
                    "this folder holds Parquet files but no snapshots.parquet: not a history folder",
                    reason="bad-source",
                    source=str(base),
                )
            return folder
        require_history_files(base)
        snapshots_file = read_table(base / "snapshots.parquet", "snapshots")
        snapshots = snapshots_file.to_pylist()
        convs = read_table(base / "conversations.parquet", "conversations")
        if (base / "state.parquet").is_file():
            state = read_table(base / "state.parquet", "state")
            folder.parts = parts_of(state)
            folder.id = same_history(base, {"snapshots": snapshots_file, "conversations": convs, "state": state})
            _check_parts(base, folder.parts)
        else:
            old = read_table(base / OLD_MESSAGES, "messages")
            folder.id = same_history(base, {"snapshots": snapshots_file, "conversations": convs, "messages": old})
            off = pc.equal(old.column("status").cast(pa.string()), "edited-away").to_numpy(zero_copy_only=False)
            state = pa.table(
                {
                    "conversation_key": old.column("conversation_key").dictionary_encode(),
                    "position": old.column("position"),
                    "hash": pa.array(message_hashes(old), pa.uint64()),
                    "first_seen": old.column("first_seen"),
                    "last_seen": pa.array(old.column("last_seen").cast(pa.int64()).to_numpy(), mask=~off).cast(MS),
                }
            ).cast(STATE_SCHEMA)
            folder.old_messages = old.select(list(PART_COLUMNS))
        folder.held = Held(snapshots, convs, state)
        return folder


def _check_parts(base: Path, parts: list[tuple[str, int]]) -> None:
    """A FormatError naming the first part the state lists that is missing, not a regular file of the
    folder, or of another row count (from its footer: the add never reads the parts' texts)."""
    for name, rows in parts:
        path = base / PARTS / name
        if not os.path.lexists(path):
            raise FormatError(
                f"{PARTS}/{name} is missing, and the history's state lists it: put back the folder's own copy "
                "(from a backup, or let the sync that lost it finish)",
                reason="bad-history",
                source=str(base),
            )
        if path.is_symlink() or not path.is_file():
            raise FormatError(
                f"{PARTS}/{name} is not a regular file of the folder (a link, a folder or a device)",
                reason="bad-history",
                source=str(base),
            )
        try:
            found = pq.ParquetFile(path).metadata.num_rows
        except (pa.ArrowException, OSError) as exc:
            raise FormatError(
                f"cannot read {PARTS}/{name} ({exc}): put back the folder's own copy",
                reason="bad-history",
                source=str(base),
            ) from None
        if found != rows:
            raise FormatError(
                f"{PARTS}/{name} holds {found} messages, the history's state says {rows}: put back the folder's "
                "own copy",
                reason="bad-history",
                source=str(base),
            )


class _Part:
    """The part an add writes: the messages it saw first, in row groups, beside the folder's parts until
    the add is committed (see :meth:`take`), removed otherwise (:meth:`discard`)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.writer: pq.ParquetWriter | None = None
        self.buffered: list[pa.Table] = []
        self.buffered_rows = self.buffered_bytes = 0
        self.path: Path | None = None
        self.made_folder = False

    def write(self, part: pa.Table) -> None:
        """Write new messages, in row groups of :data:`_ROW_GROUP` rows or :data:`_GROUP_BYTES` at most."""
        self.buffered.append(part)
        self.buffered_rows += part.num_rows
        self.buffered_bytes += part.get_total_buffer_size()
        if self.buffered_rows >= _ROW_GROUP or self.buffered_bytes >= _GROUP_BYTES:
            self._flush()

    def _flush(self) -> None:
        if not self.buffered:
            return
        part = pa.concat_tables(self.buffered)
        self.buffered, self.buffered_rows, self.buffered_bytes = [], 0, 0
        if self.writer is None:
            folder = self.base / PARTS
            self.made_folder = not folder.exists()
            output_folder(folder)
            fd, name = tempfile.mkstemp(prefix=".part-", suffix=".tmp", dir=folder)
            os.close(fd)
            self.path = Path(name)
            self.writer = pq.ParquetWriter(name, empty_table("part").schema, compression="zstd")
        self.writer.write_table(part.cast(empty_table("part").schema), row_group_size=part.num_rows or 1)

    def take(self) -> Path:
        """The part written in full and synced, to be renamed into place by the commit."""
        self._flush()
        assert self.writer is not None and self.path is not None
        self.writer.close()
        self.writer = None
        with open(self.path, "rb+") as fh:
            os.fsync(fh.fileno())
        path, self.path, self.made_folder = self.path, None, False
        return path

    def discard(self) -> None:
        """Remove what was written (an add that failed, or is to begin again)."""
        self.buffered, self.buffered_rows, self.buffered_bytes = [], 0, 0
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.close()
            self.writer = None
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()
            self.path = None
        if self.made_folder:
            with contextlib.suppress(OSError):
                (self.base / PARTS).rmdir()
            self.made_folder = False


def _commit(base: Path, folder: _Folder, merged: Merged, part: _Part) -> dict[str, Any]:
    """Write what the add changed, nothing when it changed nothing (the folder's newest export again);
    the snapshot's row and ``added``."""
    held = folder.held
    if (
        held.snapshots
        and (held.snapshots[-1]["date"], held.snapshots[-1]["provider"]) == (merged.row["date"], merged.row["provider"])
        and merged.new == 0
        and folder.old_messages is None
        and merged.held.state.column("last_seen").equals(held.state.column("last_seen"))
        and _same_but_label(merged.held.convs, held.convs)
    ):
        return {**held.snapshots[-1], "added": False}
    parts = list(folder.parts)
    also: list[tuple[Path, Path]] = []
    written = []
    if folder.old_messages is not None:
        written.append((_write_whole(base, folder.old_messages), folder.old_messages.num_rows))
    if merged.new:
        written.append((part.take(), merged.new))
    for path, rows in written:
        name = part_name(len(parts), file_digest(path))
        also.append((path, base / PARTS / name))
        parts.append((name, rows))
    tables = {
        "state": with_parts(merged.held.state, parts),
        "conversations": merged.held.convs,
        "snapshots": snapshots_table(merged.held.snapshots),
    }
    described = [
        {"source": s["source"], "format": ENVELOPE_TAG, "provider": s["provider"]} for s in merged.held.snapshots
    ]
    meta = {**schema_metadata(described), HISTORY_ID_KEY: (folder.id or uuid.uuid4().hex).encode("ascii")}
    try:
        with atomic_outputs(output_folder(base), [f"{n}.parquet" for n in TABLE_FILES], also=also) as open_file:
            for name in TABLE_FILES:
                table = tables[name]
                write_table(
                    table.replace_schema_metadata({**(table.schema.metadata or {}), **meta}),
                    open_file(f"{name}.parquet"),
                )
    except OSError as exc:
        failure = exc.strerror or exc
        raise OutputError(f"cannot write the history: {failure}", reason="output", source=str(base)) from exc
    if folder.old_messages is not None:
        with contextlib.suppress(OSError):
            (base / OLD_MESSAGES).unlink()
    return {**merged.row, "added": True}


def _same_but_label(convs: pa.Table, held: pa.Table) -> bool:
    """Whether the history's conversations are as the folder holds them, but for the label of the export
    that last held them (the same download saved twice is named ``NAME (1).zip``)."""
    kept = [name for name in convs.column_names if name != "source"]
    return bool(convs.select(kept).equals(held.select(kept)))


def _write_whole(base: Path, table: pa.Table) -> Path:
    """Write ``table`` as a part beside the parts (synced); the file written."""
    folder = output_folder(base / PARTS)
    fd, name = tempfile.mkstemp(prefix=".part-", suffix=".tmp", dir=folder)
    with os.fdopen(fd, "wb") as fh:
        pq.write_table(table.cast(empty_table("part").schema), fh, compression="zstd", row_group_size=_ROW_GROUP)
        fh.flush()
        os.fsync(fh.fileno())
    return Path(name)


def write_table(table: pa.Table, fh: Any) -> None:
    """Write one of the folder's small tables."""
    pq.write_table(table, fh, compression="zstd", row_group_size=1 << 20)


def _index(base: Path) -> None:
    """Bring the search index kept beside the folder's files up to date with them."""
    from ._search.folder import update_folder_index

    try:
        update_folder_index(base)
    except (OSError, SearchIndexError) as exc:
        failure = (exc.strerror or str(exc)) if isinstance(exc, OSError) else exc.msg
        warnings.warn(f"cannot write the search index of {base} ({failure}); search will build it", stacklevel=3)
