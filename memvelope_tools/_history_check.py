"""A history folder checked file by file: what ``memvelope history check`` prints."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ._atomic import folder_lock
from ._frames.folders import (
    OLD_MESSAGES,
    PARTS,
    file_digest,
    part_digest,
    parts_of,
    read_table,
    remove_litter,
    require_real_folders,
    same_history,
)
from ._plural import count
from ._search.check import check_history_index
from ._sources import is_history_folder
from .errors import FormatError

__all__ = ["Checked", "check_history"]


@dataclass
class Checked:
    """What :func:`check_history` found: the problems (one line each, empty when the folder is whole),
    the temporary files of interrupted runs it removed, and what the folder holds."""

    problems: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    snapshots: int = 0
    parts: int = 0
    messages: int = 0

    @property
    def ok(self) -> bool:
        """Whether the folder is whole."""
        return not self.problems


def check_history(folder: str | os.PathLike[str]) -> Checked:
    """Check every file of the history folder ``folder`` against what its state lists.

    The small tables are read whole and must share one history id; each part the state lists must be
    a regular file of the folder, hold the rows the state says and the content its name's digest
    says; the state's messages must belong to conversations the folder holds; the search index's files
    are checked too. Temporary files left by interrupted runs are removed, with the folder's lock held
    (so none belongs to a run still going).

    Parameters
    ----------
    folder
        The history folder.

    Returns
    -------
    Checked
        The problems found (``ok`` when none) and the temporaries removed.

    Raises
    ------
    memvelope_tools.errors.FormatError
        When ``folder`` is not a history folder at all.

    Examples
    --------
    >>> from memvelope_tools._history_check import check_history
    >>> check_history("my-history/").ok  # doctest: +SKIP
    True
    """
    base = Path(folder)
    if not base.is_dir() or not is_history_folder(base):
        raise FormatError("not a history folder", reason="not-found", source=str(base))
    checked = Checked()
    with folder_lock(base):
        try:
            require_real_folders(base)
        except FormatError as exc:
            checked.problems.append(exc.msg)
            return checked
        checked.removed = remove_litter(base)
        _check_files(base, checked)
    return checked


def _check_files(base: Path, checked: Checked) -> None:
    tables: dict[str, pa.Table] = {}
    old = (base / OLD_MESSAGES).is_file() and not os.path.lexists(base / "state.parquet")
    names = ["snapshots", "conversations", "messages" if old else "state"]
    for name in names:
        table = _read(base, f"{name}.parquet", name, checked)
        if table is not None:
            tables[name] = table
    if len(tables) == len(names):
        try:
            same_history(base, tables)
        except FormatError as exc:
            checked.problems.append(exc.msg)
    if "snapshots" in tables:
        checked.snapshots = tables["snapshots"].num_rows
    if old:
        if "messages" in tables:
            checked.messages = tables["messages"].num_rows
        return
    state = tables.get("state")
    if state is None:
        return
    checked.messages = state.num_rows
    listed = parts_of(state)
    checked.parts = len(listed)
    rows = sum(_check_part(base, name, expected, checked) for name, expected in listed)
    if rows != state.num_rows and not checked.problems:
        checked.problems.append(f"state.parquet has {count(state.num_rows, 'message')}, its parts {rows:,}")
    parts = base / PARTS
    if parts.is_dir():
        known = {name for name, _ in listed}
        for entry in sorted(os.scandir(parts), key=lambda e: e.name):
            if entry.name.endswith(".parquet") and entry.name not in known:
                checked.problems.append(
                    f"{PARTS}/{entry.name} is not listed by state.parquet, so it is not part of the history (left by "
                    "an add that did not finish, or copied in); move it out of the folder"
                )
    if "conversations" in tables:
        _check_keys(tables["conversations"], state, checked)
    _check_index(base, checked)


def _read(base: Path, file: str, name: str, checked: Checked) -> pa.Table | None:
    path = base / file
    if not os.path.lexists(path):
        checked.problems.append(f"{file} is missing: put back the folder's own copy")
        return None
    if path.is_symlink() or not path.is_file():
        checked.problems.append(f"{file} is not a regular file of the folder (a link, a folder or a device)")
        return None
    try:
        return read_table(path, name)
    except FormatError as exc:
        checked.problems.append(f"{file}: {exc.msg}")
        return None


def _check_part(base: Path, name: str, expected: int, checked: Checked) -> int:
    """The rows of the part ``name`` as read (0 when it cannot be), its problems added to ``checked``."""
    file = f"{PARTS}/{name}"
    table = _read(base, file, "part", checked)
    if table is None:
        return 0
    if table.num_rows != expected:
        checked.problems.append(f"{file} holds {count(table.num_rows, 'message')}, state.parquet says {expected:,}")
    digest = part_digest(name)
    if digest is not None and file_digest(base / file) != digest:
        checked.problems.append(f"{file}: its content is not what its name's digest says (damaged, or replaced)")
    return int(table.num_rows)


def _check_keys(conversations: pa.Table, state: pa.Table, checked: Checked) -> None:
    keys = state.column("conversation_key").combine_chunks()
    if not len(keys):
        return
    used = keys.dictionary.take(pc.unique(keys.indices))
    missing = pc.invert(pc.is_in(used, conversations.column("conversation_key"))).to_numpy(zero_copy_only=False)
    if missing.any():
        checked.problems.append(
            f"state.parquet places messages in {count(int(missing.sum()), 'conversation')} that "
            "conversations.parquet does not hold"
        )


def _check_index(base: Path, checked: Checked) -> None:
    for problem in check_history_index(base):
        checked.problems.append(f"{problem} (search builds the index again)")
