"""The Parquet folders the toolkit writes, read back as Arrow tables: those of
:func:`memvelope_tools.to_parquet` and history folders (see below).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .._lookup import positions
from .._plural import count
from .._sources import HISTORY_PARTS, Found, is_history_folder, is_partitioned_dataset, refuse
from .._tags import ENVELOPE_TAG, IR_TAG
from ..errors import FormatError
from .columns import (
    CONVERSATION_COLUMNS,
    FACT_COLUMNS,
    INT,
    MESSAGE_COLUMNS,
    MS,
    NODE_COLUMNS,
    STRING,
    TIMESTAMP,
    arrow_schema,
    categorical,
)

if TYPE_CHECKING:
    import pyarrow.dataset as pads

#: The tables of a folder written by :func:`memvelope_tools.to_parquet`, each a file of its name.
TABLES: dict[str, dict[str, Any]] = {
    "conversations": CONVERSATION_COLUMNS,
    "messages": MESSAGE_COLUMNS,
    "facts": FACT_COLUMNS,
    "nodes": NODE_COLUMNS,
}
#: The schema metadata key holding the id shared by the files of one :func:`to_parquet` call.
RUN_KEY = b"memvelope.run"


def folder_tables(folder: str | os.PathLike[str]) -> dict[str, pa.Table]:
    """The tables of a folder written by :func:`memvelope_tools.to_parquet` or a history folder, as Arrow
    tables of the usual columns (:data:`TABLES`): ``conversations``, ``messages`` and ``facts``, those it has."""
    return read_folder(Path(folder))[0]


def read_folder(base: Path) -> tuple[dict[str, pa.Table], dict[bytes, bytes]]:
    """:func:`folder_tables`, and the schema metadata of its ``facts.parquet`` (empty without one)."""
    _require_folder(base)
    if is_partitioned(base):
        return read_partitioned(base), {}
    if is_parted(base):
        held = read_tables(base)
        assert held is not None
        return {
            name: held[name].select(list(TABLES[name])).cast(arrow_schema(TABLES[name]))
            for name in TABLES
            if name in held
        }, {}
    tables = _checked_files(base, pq.read_table)
    facts_meta = dict(tables["facts"].schema.metadata or {}) if "facts" in tables else {}
    return {name: table.select(list(TABLES[name])) for name, table in tables.items()}, facts_meta


def _require_folder(base: Path) -> None:
    """A FormatError when ``base`` is missing or is a file."""
    if not base.exists():
        refuse(Found("missing"), os.fspath(base), "history")
    if not base.is_dir():
        raise FormatError("a file, not a folder written by to_parquet", reason="not-found", source=str(base))


_Read = TypeVar("_Read", pa.Table, pa.Schema)


def _opened(path: Path, read: Callable[[Path], _Read]) -> _Read:
    """``read(path)``; a FormatError naming the file when it is not Parquet that Arrow can read."""
    try:
        return read(path)
    except (pa.ArrowException, OSError) as exc:
        raise FormatError(f"cannot read Parquet file: {exc}", reason="bad-parquet", source=str(path)) from None


def _checked_files(base: Path, read: Callable[[Path], _Read]) -> dict[str, _Read]:
    """The files of :data:`TABLES` in the folder ``base`` written by the run that wrote its
    ``conversations.parquet``, each as ``read`` gives it (the whole table, or its schema); a FormatError
    naming the file when one cannot be read or lacks a column of its table, when the folder holds none of
    them, or when its conversations and messages were written by two runs."""
    found: dict[str, _Read] = {}
    runs: dict[str, bytes | None] = {}
    for table_name, columns in TABLES.items():
        path = base / f"{table_name}.parquet"
        if not path.is_file():
            continue
        item = _opened(path, read)
        schema = item if isinstance(item, pa.Schema) else item.schema
        missing = [c for c in columns if c not in schema.names]
        if missing:
            raise FormatError(f"missing column(s) {', '.join(missing)}", reason="bad-parquet", source=str(path))
        runs[table_name] = (schema.metadata or {}).get(RUN_KEY)
        found[table_name] = item
    if not found:
        raise FormatError(
            "no conversations.parquet, messages.parquet or facts.parquet here", reason="not-found", source=str(base)
        )
    _same_run(base, runs)
    for name in _earlier(runs):
        del found[name]
    return found


#: The whole exports' tables a folder written by :func:`memvelope_tools.to_parquet` holds beside those of
#: :data:`TABLES` (when an export was given by path), each a file of its name in the columns it was written with.
WHOLE_FILES = ("assets", "projects")


def folder_contents(base: Path) -> tuple[dict[str, pa.Table], list[dict[str, Any]]]:
    """Every table of a Parquet folder, as :func:`memvelope_tools.to_parquet` writes them again: those
    :func:`folder_tables` reads, then ``assets`` and ``projects`` when the run that wrote its other files wrote
    them; and a record per document it was written from, envelopes first (``source``, ``format``,
    ``provider``, and for a Facts IR document ``meta`` and ``archetype``, as
    :class:`memvelope_tools._tables.Tables` holds them; ``meta`` and ``archetype`` are None for a
    ``facts.parquet`` that does not carry them)."""
    tables, facts_meta = read_folder(base)
    runs = {name: (table.schema.metadata or {}).get(RUN_KEY) for name, table in tables.items()}
    for name in WHOLE_FILES:
        path = base / f"{name}.parquet"
        if not path.is_file() or is_partitioned(base) or is_history_folder(base):
            continue
        table = _opened(path, pq.read_table)
        if name not in _earlier({**runs, name: (table.schema.metadata or {}).get(RUN_KEY)}):
            tables[name] = table
    return tables, _envelope_records(tables.get("conversations")) + _ir_records(tables.get("facts"), facts_meta)


def _envelope_records(conversations: pa.Table | None) -> list[dict[str, Any]]:
    """The envelopes a folder's conversations were read from: as its metadata describes them, else one per
    ``source`` of its rows."""
    if conversations is None:
        return []
    described = (conversations.schema.metadata or {}).get(b"memvelope.sources")
    if described is not None:
        return [{**d, "format": ENVELOPE_TAG} for d in json.loads(described)]
    pairs = conversations.select(["source", "provider"]).to_pylist()
    return [
        {"source": s, "format": ENVELOPE_TAG, "provider": p}
        for s, p in dict.fromkeys((r["source"], r["provider"]) for r in pairs)
    ]


def _ir_records(facts: pa.Table | None, facts_meta: dict[bytes, bytes]) -> list[dict[str, Any]]:
    """The Facts IR documents a folder's facts were read from: with their ``meta`` and ``archetype`` where
    ``facts.parquet`` carries them, else one per ``source`` of its rows."""
    if facts is None:
        return []
    if b"memvelope.ir" in facts_meta:
        docs = json.loads(facts_meta[b"memvelope.ir"])
        return [{"source": d["source"], "format": IR_TAG, "provider": d["meta"]["provider"], **d} for d in docs]
    providers = {d["source"]: d["provider"] for d in json.loads(facts_meta.get(b"memvelope.sources", b"[]"))}
    labels = dict.fromkeys(facts.column("source").to_pylist())
    return [
        {"source": s, "format": IR_TAG, "provider": providers.get(s, ""), "meta": None, "archetype": None}
        for s in labels
    ]


def _earlier(runs: dict[str, bytes | None]) -> list[str]:
    """The tables (name -> the run that wrote its file) left by an earlier write than the one that wrote
    ``conversations.parquet``: a write replaces only the files of the tables it has."""
    latest = runs.get("conversations")
    return [] if latest is None else [name for name, run in runs.items() if run != latest]


def _same_run(base: Path, runs: dict[str, bytes | None]) -> None:
    if "conversations" in runs and "messages" in runs and runs["conversations"] != runs["messages"]:
        raise FormatError(
            "conversations.parquet and messages.parquet were written by two different runs (a write that failed "
            "part-way, or two at once); write the folder again",
            reason="bad-parquet",
            source=str(base),
        )


def lazy_tables(base: Path) -> dict[str, pads.Dataset]:
    """The tables of a folder written by :func:`memvelope_tools.to_parquet`, or of a partitioned dataset,
    as pyarrow datasets in the schema of :data:`TABLES` (see :func:`memvelope_tools.read_parquet`)."""
    import pyarrow.dataset as ds

    _require_folder(base)
    if is_partitioned(base):
        return datasets(base)
    if is_history_folder(base):
        raise FormatError(
            "a history folder is read whole (its messages are assembled from its parts): read it without lazy",
            reason="bad-source",
            source=str(base),
        )
    return {
        name: ds.dataset(str(base / f"{name}.parquet"), schema=arrow_schema(TABLES[name]), format="parquet")
        for name in _checked_files(base, pq.read_schema)
    }


# ---- partitioned datasets -------------------------------------------------------------------------
#
# The folder :func:`memvelope_tools.convert_many` writes a donation at a time (its layout and how it
# is written: :mod:`memvelope_tools._partitions`), read back here.

#: The tables of a partitioned dataset, each a folder of partitions.
PARTITIONED_TABLES: dict[str, dict[str, Any]] = {"conversations": CONVERSATION_COLUMNS, "messages": MESSAGE_COLUMNS}
#: The column that names a donation, and the key of its partitions' folders.
KEY = "source"
MARKER = "_donation.json"
PART = "part-0.parquet"

#: Whether a folder is a partitioned dataset (it holds its manifest, written before any partition).
is_partitioned = is_partitioned_dataset


def partition(base: Path, table: str, label: str) -> Path:
    """The folder of ``label``'s partition of ``table``."""
    return base / table / f"{KEY}={label}"


def finished(base: Path) -> dict[str, dict[str, Any]]:
    """The finished donations of the dataset ``base``: label -> the record its partitions carry."""
    done: dict[str, dict[str, Any]] = {}
    first, *others = PARTITIONED_TABLES
    folder = base / first
    if not folder.is_dir():
        return done
    for entry in os.scandir(folder):
        if not entry.name.startswith(f"{KEY}=") or not entry.is_dir(follow_symlinks=False):
            continue
        label = entry.name[len(KEY) + 1 :]
        record = _marker(Path(entry.path))
        if record is None or any(_marker(partition(base, t, label)) != record for t in others):
            continue
        done[label] = record
    return done


def _marker(folder: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((folder / MARKER).read_bytes())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and (folder / PART).is_file() else None


def datasets(base: Path) -> dict[str, pads.Dataset]:
    """Each table of the partitioned dataset ``base`` as a pyarrow dataset of its finished partitions,
    ``source`` a partition key (a filter on it reads only the partitions it keeps)."""
    import pyarrow.dataset as ds

    done = sorted(finished(base))
    key = ds.partitioning(pa.schema([(KEY, pa.string())]), flavor="hive")
    out = {}
    for table, columns in PARTITIONED_TABLES.items():
        files = [str(partition(base, table, label) / PART) for label in done]
        out[table] = ds.dataset(
            files,
            schema=arrow_schema(columns),
            format="parquet",
            partitioning=key,
            partition_base_dir=str(base / table),
        )
    return out


def read_partitioned(base: Path) -> dict[str, pa.Table]:
    """The tables of the partitioned dataset ``base``, whole, donations in label order."""
    try:
        return {name: dataset.to_table() for name, dataset in datasets(base).items()}
    except (pa.ArrowException, OSError) as exc:
        raise FormatError(f"cannot read Parquet file: {exc}", reason="bad-parquet", source=str(base)) from None


# ---- history folders ------------------------------------------------------------------------------
#
# The files of a history folder, and the history they hold as tables.
#
# A history folder holds:
#
# * ``snapshots.parquet``: one row per export added (see :data:`SNAPSHOT_COLUMNS`);
# * ``conversations.parquet``: every conversation ever seen, as :func:`memvelope_tools.history` gives
#   them (in its order, with ``conversation_key``, ``first_seen``, ``last_seen`` and ``status``);
# * ``messages/part-NNNNN-<digest>.parquet``: the messages each add saw first, one file per add that
#   saw any, named by its number and the first 16 hex digits of the sha256 of its bytes (the previous
#   layout's parts have the number alone), never rewritten (the usual message columns except
#   ``source`` and ``conv_index``, which name the conversation as the history orders it now, plus
#   ``conversation_key``);
# * ``state.parquet``: a row per message of the parts, in their order: ``conversation_key``,
#   ``position``, ``hash`` (of role, timestamp and text), ``first_seen``, and ``last_seen`` where an
#   edit took the message off its conversation's path (null while it is on it: it was last seen when
#   its conversation was). Its schema metadata lists the parts and their row counts: a part it does
#   not list is not part of the history.
#
# A folder written before the parts existed holds ``messages.parquet`` instead (the assembled
# messages); it is read as it is, and the next add rewrites it in parts. :func:`read_tables` gives
# either as the tables :func:`memvelope_tools.history` gives.

#: What :func:`memvelope_tools.history` says of a conversation or message.
HISTORY_STATUSES = ("current", "edited-away", "deleted-upstream")

_HISTORY_EXTRA: dict[str, Any] = {
    "conversation_key": STRING,
    "first_seen": TIMESTAMP,
    "last_seen": TIMESTAMP,
    "status": categorical(HISTORY_STATUSES),
}
CONVERSATION_HISTORY_COLUMNS: dict[str, Any] = {**CONVERSATION_COLUMNS, **_HISTORY_EXTRA}
MESSAGE_HISTORY_COLUMNS: dict[str, Any] = {**MESSAGE_COLUMNS, **_HISTORY_EXTRA}
SNAPSHOT_COLUMNS: dict[str, Any] = {
    "snapshot": INT,
    "source": STRING,
    "provider": STRING,
    "date": TIMESTAMP,
    "date_source": STRING,
    "conversations": INT,
    "messages": INT,
    "new": INT,
    "grown": INT,
    "edited": INT,
    "unchanged": INT,
    "missing": INT,
}
#: The columns of a part of the messages.
PART_COLUMNS: dict[str, Any] = {
    **{k: v for k, v in MESSAGE_COLUMNS.items() if k not in ("source", "conv_index")},
    "conversation_key": STRING,
}
STATE_SCHEMA = pa.schema(
    [
        ("conversation_key", pa.dictionary(pa.int32(), pa.string())),
        ("position", pa.int64()),
        ("hash", pa.uint64()),
        ("first_seen", MS),
        ("last_seen", MS),
    ]
)
#: The folder of the parts, and the file the previous layout kept the messages in.
PARTS = HISTORY_PARTS
OLD_MESSAGES = "messages.parquet"
#: The folder of the search index kept beside a Parquet folder's files (see :mod:`memvelope_tools._search`).
INDEX_FOLDER = "search-index"
#: The files of the small tables, in the order they are replaced; the state is replaced with them.
TABLE_FILES = ("state", "conversations", "snapshots")
_PARTS_KEY = b"memvelope.history.parts"
_SCHEMAS = {
    "conversations": arrow_schema(CONVERSATION_HISTORY_COLUMNS),
    "snapshots": arrow_schema(SNAPSHOT_COLUMNS),
    "messages": arrow_schema(MESSAGE_HISTORY_COLUMNS),
    "part": arrow_schema(PART_COLUMNS),
}


def is_parted(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a history folder that keeps its messages in parts (not the previous layout's
    one ``messages.parquet``)."""
    base = Path(os.path.expanduser(os.fspath(path)))
    return is_history_folder(base) and not _old_layout(base)


def _old_layout(base: Path) -> bool:
    return (base / OLD_MESSAGES).is_file() and not os.path.lexists(base / "state.parquet")


def require_history_files(base: Path) -> None:
    """A FormatError naming the file, and saying how to repair the folder, when the history folder
    ``base`` lacks one of the files that hold its history or one of them is not a regular file (a
    link, a folder, a device); its parts are checked as they are read."""
    old = _old_layout(base)
    needed = ["snapshots.parquet", "conversations.parquet", OLD_MESSAGES if old else "state.parquet"]
    for name in needed:
        path = base / name
        if not os.path.lexists(path):
            raise FormatError(
                f"this history folder has no {name}: {_REPAIR[name]}", reason="bad-history", source=str(base)
            )
        if path.is_symlink() or not path.is_file():
            raise FormatError(
                f"{name} is not a regular file of the folder (a link, a folder or a device): {_REPAIR[name]}",
                reason="bad-history",
                source=str(base),
            )
    require_real_folders(base)


def require_real_folders(base: Path) -> None:
    """A FormatError when the history folder's ``messages/`` is there but is not a folder of its own (a
    link or a file): nothing is written through it, or read from it (the search index's folder is
    checked where the index is kept, :mod:`memvelope_tools._search`)."""
    path = base / PARTS
    if os.path.lexists(path) and (path.is_symlink() or not path.is_dir()):
        raise FormatError(
            f"{PARTS} is not a folder inside the history folder (a link or a file): move what it holds into "
            f"a real {PARTS}/ folder inside it",
            reason="bad-history",
            source=str(base),
        )


_RESTORE = "put back the folder's own copy (from a backup, or let the sync that lost it finish)"
_REPAIR = {
    "snapshots.parquet": _RESTORE,
    "conversations.parquet": _RESTORE,
    "state.parquet": f"it places every message of {PARTS}/ in the history and cannot be made from them; {_RESTORE}",
    OLD_MESSAGES: _RESTORE,
}


#: The schema metadata key holding the id shared by the small tables of one history folder.
HISTORY_ID_KEY = b"memvelope.history.id"


def history_id(table: pa.Table) -> str | None:
    """The id of the history folder ``table`` was written for (None for a folder written before ids)."""
    value = (table.schema.metadata or {}).get(HISTORY_ID_KEY)
    return None if value is None else value.decode("ascii", "replace")


def same_history(base: Path, tables: dict[str, pa.Table]) -> str | None:
    """The id the tables (name -> table, as read from ``base``) share; a FormatError naming the first
    whose id differs from the others' (a file from another history folder, or from another add)."""
    ids = {name: history_id(table) for name, table in tables.items()}
    counts = Counter(ids.values())
    first = max(ids.values(), key=lambda found: counts[found]) if ids else None  # the most files' id
    for name, found in ids.items():
        if found != first:
            others = ", ".join(f"{n}.parquet" for n in ids if n != name)
            raise FormatError(
                f"{name}.parquet belongs to another history than {others} (their ids differ): put back this "
                "folder's own copy; `memvelope history check` lists what else is wrong",
                reason="bad-history",
                source=str(base / f"{name}.parquet"),
            )
    return first


def remove_litter(base: Path) -> list[str]:
    """Remove the temporary files and folders that earlier writers of the history folder ``base`` left
    (killed, or stopped by a full disk); the names removed, relative to ``base``. Call it with the
    folder's lock held: every writer of the folder holds that lock while its temporaries exist, so
    those found then are no process's."""
    return remove_entries(base, [base, base / PARTS], lambda _folder, name: is_litter(name))


def is_litter(name: str) -> bool:
    """Whether ``name`` is that of a writer's temporary file or folder (hidden, ending ``.tmp``)."""
    return name.startswith(".") and name.endswith(".tmp")


def remove_entries(base: Path, folders: Iterable[Path], unwanted: Callable[[Path, str], bool]) -> list[str]:
    """Remove the entries of ``folders`` (each a real folder inside ``base``; others are passed over) that
    ``unwanted(folder, name)`` picks, files and whole folders alike; the names removed, relative to
    ``base``. An entry that cannot be removed is left."""
    removed = []
    for folder in folders:
        if folder.is_symlink() or not folder.is_dir():
            continue
        for entry in os.scandir(folder):
            if not unwanted(folder, entry.name):
                continue
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
                removed.append(os.path.relpath(entry.path, base))
    return removed


def part_name(number: int, digest: str) -> str:
    """The file name of the history's part ``number``, whose content has the digest ``digest``."""
    return f"part-{number:05d}-{digest}.parquet"


def part_digest(name: str) -> str | None:
    """The content digest a part's file name carries (None for a name that carries none)."""
    match = _PART_NAME.fullmatch(name)
    return match.group(1) if match else None


def file_digest(path: Path) -> str:
    """The digest of the file ``path``'s bytes that its part name carries (see :func:`part_name`)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()[:16]


_PART_NAME = re.compile(r"part-\d{5,}-([0-9a-f]{16})\.parquet")


def read_table(path: Path, name: str, columns: list[str] | None = None) -> pa.Table:
    """One of a history folder's files (``name``: ``conversations``, ``snapshots``, ``messages`` for the
    previous layout's, ``part``, or ``state``), in its schema (only ``columns`` of it, when given);
    FormatError naming it when it cannot be read."""
    try:
        if name == "state":
            table = pq.read_table(path, read_dictionary=["conversation_key"])
            return table.select(STATE_SCHEMA.names).cast(STATE_SCHEMA.with_metadata(table.schema.metadata))
        schema = _SCHEMAS[name]
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns])
        table = pq.read_table(path, columns=columns)
        return table.select(schema.names).cast(schema.with_metadata(table.schema.metadata))
    except (pa.ArrowException, OSError, KeyError, ValueError) as exc:
        raise unreadable(path, exc) from None


def unreadable(path: Path, exc: Exception) -> FormatError:
    """The error for a history folder's file that cannot be read: one line naming it and how to repair it."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return FormatError(
        f"cannot read this history file ({first}): put back the folder's own copy; `memvelope history check` "
        "lists every problem",
        reason="bad-history",
        source=str(path),
    )


def empty_table(name: str) -> pa.Table:
    """An empty table in the schema of a history folder's file (``name`` as :func:`read_table` takes it)."""
    return STATE_SCHEMA.empty_table() if name == "state" else _SCHEMAS[name].empty_table()


def parts_of(state: pa.Table) -> list[tuple[str, int]]:
    """The parts the state lists: each one's file name (in :data:`PARTS`) and number of rows."""
    listed = json.loads((state.schema.metadata or {}).get(_PARTS_KEY, b"[]"))
    return [(str(name), int(rows)) for name, rows in listed]


def parts_of_file(state: Path) -> list[tuple[str, int]]:
    """The parts the state file ``state`` lists (see :func:`parts_of`), read from its footer alone."""
    try:
        metadata = pq.read_schema(state).metadata or {}
    except (pa.ArrowException, OSError) as exc:
        raise unreadable(state, exc) from None
    return [(str(name), int(rows)) for name, rows in json.loads(metadata.get(_PARTS_KEY, b"[]"))]


def with_parts(state: pa.Table, parts: list[tuple[str, int]]) -> pa.Table:
    """``state`` listing ``parts`` in its schema metadata."""
    return state.replace_schema_metadata({_PARTS_KEY: json.dumps([[n, r] for n, r in parts]).encode()})


def check_tables(base: Path) -> None:
    """Read the small tables of the history folder ``base`` (not its parts) and check that they are of
    one history: a FormatError naming the file when one is missing, damaged or from another history."""
    require_history_files(base)
    names = ("snapshots", "conversations") if _old_layout(base) else ("snapshots", "conversations", "state")
    same_history(base, {name: read_table(base / f"{name}.parquet", name) for name in names})


def read_tables(base: Path, columns: list[str] | None = None) -> dict[str, pa.Table] | None:
    """The tables of the history folder ``base``: ``snapshots``, ``conversations`` and ``messages`` as
    :func:`memvelope_tools.history` gives them (only the message ``columns`` given, when given); None
    when it is not a history folder; a FormatError naming the file when one is missing, damaged or
    from another history."""
    if not is_history_folder(base):
        return None
    require_history_files(base)
    tables = {name: read_table(base / f"{name}.parquet", name) for name in ("snapshots", "conversations")}
    if _old_layout(base):
        tables["messages"] = read_table(base / OLD_MESSAGES, "messages", columns)
        same_history(base, tables)
        return tables
    state = read_table(base / "state.parquet", "state")
    same_history(base, {**tables, "state": state})
    in_parts = None if columns is None else [c for c in PART_COLUMNS if c in columns]
    parts = []
    for name, rows in parts_of(state):
        part = read_table(base / PARTS / name, "part", in_parts)
        if part.num_rows != rows:
            raise FormatError(
                f"holds {count(part.num_rows, 'message')}, the history's state says {rows:,} (damaged?)",
                reason="bad-parquet",
                source=str(base / PARTS / name),
            )
        parts.append(part)
    empty = _SCHEMAS["part"].empty_table()
    messages = pa.concat_tables(parts) if parts else empty.select(in_parts or empty.column_names)
    if messages.num_rows != state.num_rows:
        raise FormatError(
            f"the history's state has {count(state.num_rows, 'message')}, its parts {messages.num_rows:,} (damaged?)",
            reason="bad-parquet",
            source=str(base / "state.parquet"),
        )
    tables["messages"] = assemble(tables["conversations"], state, messages, source=str(base), columns=columns)
    return tables


def message_statuses(conv_status: pa.Array | pa.ChunkedArray, own_last: pa.Array | pa.ChunkedArray) -> Any:
    """Each message's status in a history: ``edited-away`` when an edit took it off its conversation's path
    (it has a ``last_seen`` of its own, ``own_last``), else its conversation's (``conv_status``)."""
    return pc.if_else(pc.is_valid(own_last), pa.scalar("edited-away"), conv_status)


def assemble(
    conversations: pa.Table, state: pa.Table, messages: pa.Table, *, source: str, columns: list[str] | None = None
) -> pa.Table:
    """The history's messages (:data:`MESSAGE_HISTORY_COLUMNS`, or only ``columns`` of them, in
    :func:`memvelope_tools.history`'s order) from its conversations, its state and the rows of its
    parts (those columns of them) in the state's order."""
    keys = state.column("conversation_key").combine_chunks()
    code_rank = positions(keys.dictionary, conversations.column("conversation_key")) if len(keys) else np.zeros(0, int)
    rank = code_rank[keys.indices.to_numpy()].astype(np.int64) if len(keys) else np.zeros(0, np.int64)
    if (rank < 0).any():
        raise FormatError(
            "a message's conversation is not in conversations.parquet (damaged?)", reason="bad-parquet", source=source
        )
    taken = pa.array(rank)
    conv_last = conversations.column("last_seen").cast(pa.int64()).take(taken)
    own_last = state.column("last_seen").cast(pa.int64())
    off_path = pc.is_valid(own_last)
    last_seen = pc.if_else(off_path, own_last, conv_last).cast(MS)
    status = message_statuses(conversations.column("status").cast(pa.string()).take(taken), own_last)
    first_seen = state.column("first_seen")
    order = np.lexsort((first_seen.cast(pa.int64()).to_numpy(), state.column("position").to_numpy(), rank))
    made = {
        "source": conversations.column("source").take(taken),
        "conv_index": taken,
        **{name: messages.column(name) for name in messages.column_names},
        "first_seen": first_seen,
        "last_seen": last_seen,
        "status": status,
    }
    wanted = list(MESSAGE_HISTORY_COLUMNS) if columns is None else columns
    schema = pa.schema([_SCHEMAS["messages"].field(name) for name in wanted])
    table = pa.table({name: made[name] for name in wanted})
    return table.take(pa.array(order, pa.int64())).cast(schema)
