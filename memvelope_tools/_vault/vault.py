"""A folder of Markdown notes (a "vault"), one per conversation, kept current export after export.

A note depends only on its conversation (and, from a history folder, on its status), so writing the
vault again writes only the notes whose content changes. The folder keeps a manifest,
:data:`MANIFEST`, listing each note the toolkit wrote: the conversation it holds and the sha256 of the
bytes written. The rule for every note:

* a conversation keeps the name the manifest gives it; a new one gets its date and title (see
  :mod:`.names`), with a suffix from its key when another file of the folder has that name (the
  earliest created keeps the plain name), so a file the toolkit did not write is never replaced;
* a note renamed inside the folder while unedited (found by its sha256) keeps its new name;
* a note whose file already holds the bytes it would get is not written (its time is kept);
* a note whose file holds what the manifest says was written is replaced (atomically), as is one
  whose file is missing;
* a note whose file holds anything else was edited since it was written: it is left as it is, with a
  warning naming it, unless ``force`` is given, which replaces it.

A conversation the input does not hold (deleted upstream, or not in this export) keeps its note.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pyarrow as pa

from .._atomic import atomic_write, check_output_folder, output_folder
from .._frames.folders import read_tables as history_tables
from .._history.keys import conversation_keys
from .._read import Source
from .._sources import is_history_folder, resolve_one
from .._tables import read_tables
from .._workers.threads import run_on_threads
from ..errors import FormatError
from .front_matter import front_matter, timestamp
from .names import NOTE_SUFFIX, base_name, folded, suffixed

__all__ = ["MANIFEST", "to_markdown"]

#: The vault's manifest: the notes the toolkit wrote, each one's conversation and the sha256 written.
MANIFEST: Final = ".memvelope-vault.json"
_FORMAT: Final = "memvelope-vault-v1"
_ROLES: Final = {"user": "User", "assistant": "Assistant"}
_PLAIN: Final = frozenset({"provider", "status"})


def to_markdown(
    source: Source,
    folder: str | os.PathLike[str],
    *,
    force: bool = False,
    progress: bool | None = None,
) -> dict[str, list[Path]]:
    """Write one Markdown note per conversation into ``folder``, writing only the notes that change.

    Each note has YAML front matter (``id``, ``title``, ``provider``, ``created``, ``updated``,
    ``messages``; from a history folder, for a conversation that is not current, also ``status``,
    ``first_seen`` and ``last_seen``), the title as a heading, and each message under a heading
    naming its role and time (a message an edit took off the conversation's path says so). A file is
    named by the conversation's date and title (``2025-01-05 Trip to Lisbon.md``), safely for every
    system, and keeps its name. Writing the vault again writes no note whose content would not change;
    a later export rewrites only the conversations that grew or were edited; from a history folder a
    conversation deleted upstream keeps its note, marked ``status: deleted-upstream``. A note edited
    since it was written is left as it is, with a warning, unless ``force``. The folder's manifest,
    ``.memvelope-vault.json``, records what was written; nothing outside ``folder`` is touched.

    Parameters
    ----------
    source : path, bytes, file object or dict
        One export (converted in memory), envelope, Parquet folder written by :func:`to_parquet`, or
        history folder (``memvelope history add``).
    folder : str or os.PathLike
        The vault (created if missing); other files in it are left alone.
    force : bool, default False
        Replace the notes edited since they were written too.
    progress : bool, optional
        Show a bar on stderr while a large input is read (default: on a terminal).

    Returns
    -------
    dict of str to list of pathlib.Path
        The notes by what happened to them: ``new``, ``updated`` (written over an earlier note; with
        ``force``, edited ones too), ``unchanged`` (not written) and ``edited`` (edited since written,
        left as they are; empty with ``force``).

    Raises
    ------
    memvelope_tools.errors.InputError
        The input is missing, empty, not JSON or a file of another kind (nothing is written).
    memvelope_tools.errors.FormatError
        The input is not an envelope or export (``wrong-layer`` for a Facts IR document), breaks the
        spec, or is a damaged history folder; or the vault's manifest is damaged (``bad-vault``).
        Nothing is written.
    memvelope_tools.errors.OutputError
        The folder or a note cannot be written; every note already written is whole and listed in the
        manifest.

    Examples
    --------
    >>> import tempfile
    >>> import memvelope_tools as mv
    >>> with tempfile.TemporaryDirectory() as vault:
    ...     first = mv.to_markdown(mv.sample_path("claude"), vault)
    ...     again = mv.to_markdown(mv.sample_path("claude"), vault)
    >>> len(first["new"]) > 0, len(again["unchanged"]) == len(first["new"]), again["new"] + again["updated"]
    (True, True, [])
    """
    check_output_folder(folder)
    found = resolve_one(source, "frames")
    manifest = Manifest.read(Path(folder))
    convs = _conversations(found, progress)
    out = output_folder(folder)
    manifest.follow_renames(out)
    names = _names(convs, manifest, out)
    done: dict[str, list[Path]] = {"new": [], "updated": [], "unchanged": [], "edited": []}
    try:
        for start in range(0, len(names), _BATCH):
            _write_batch(out, names, convs, range(start, min(start + _BATCH, len(names))), manifest, force, done)
    finally:
        manifest.write(out)
    return done


_BATCH: Final = 256  # notes decided, then written together
_AT_ONCE: Final = 16  # notes written at a time: their syncs to disk go together, many times faster than one by one


def _write_batch(
    out: Path,
    names: list[str],
    convs: _Conversations,
    rows: range,
    manifest: Manifest,
    force: bool,
    done: dict[str, list[Path]],
) -> None:
    """Decide what happens to the notes of ``rows`` (see the module's rule), then write those to write,
    several at a time, each atomically; the manifest records each note once it is in place."""
    writes: list[tuple[Path, bytes, str, str]] = []
    for row in rows:
        path = out / names[row]
        data = convs.note(row)
        digest = hashlib.sha256(data).hexdigest()
        what = _decide(path, data, manifest, force)
        if what == "unchanged":
            manifest.record(path.name, convs.keys[row], digest)
        if what in ("unchanged", "edited"):
            done[what].append(path)
        else:
            writes.append((path, data, convs.keys[row], what))
    written: list[tuple[Path, bytes, str, str]] = []

    def write(item: tuple[Path, bytes, str, str]) -> None:
        atomic_write(item[0], item[1])
        written.append(item)

    try:
        run_on_threads([functools.partial(write, item) for item in writes], _AT_ONCE, name="memvelope-notes")
    finally:
        for path, data, key, what in sorted(written, key=writes.index):
            manifest.record(path.name, key, hashlib.sha256(data).hexdigest())
            done[what].append(path)


@dataclass
class _Conversations:
    """The conversations to write: their table, messages, keys and where each one's messages start."""

    table: pa.Table
    messages: pa.Table
    keys: list[str]
    starts: np.ndarray
    counts: np.ndarray
    history: bool

    def __post_init__(self) -> None:
        self.columns = {name: self.table.column(name).to_pylist() for name in _CONVERSATION_FIELDS[self.history]}
        wanted = _MESSAGE_FIELDS[self.history]
        self.messages = pa.table({name: self.messages.column(name).cast(_PLAIN_TYPES[name]) for name in wanted})

    def note(self, row: int) -> bytes:
        """The note of conversation ``row``, as written."""
        conv = {name: values[row] for name, values in self.columns.items()}
        part = self.messages.slice(int(self.starts[row]), int(self.counts[row])).to_pylist()
        return render(conv, part, self.history)


_FIELDS: Final = ("conversation_id", "title", "provider", "created_at", "updated_at", "n_messages")
_CONVERSATION_FIELDS: Final = {False: _FIELDS, True: (*_FIELDS, "status", "first_seen", "last_seen")}
_MESSAGE_FIELDS: Final = {False: ("role", "ts", "text"), True: ("role", "ts", "text", "status", "last_seen")}
_PLAIN_TYPES: Final = {
    "role": pa.string(),
    "ts": pa.int64(),
    "text": pa.string(),
    "status": pa.string(),
    "last_seen": pa.int64(),
}


def _conversations(found: Any, progress: bool | None) -> _Conversations:
    """The input's conversations and messages, read by the frames' readers (a history folder with its
    statuses and dates)."""
    if found.kind == "parquet" and is_history_folder(found.path):
        tables = history_tables(Path(found.path))
        assert tables is not None
        convs, msgs = tables["conversations"], tables["messages"]
        keys = [str(k) for k in convs.column("conversation_key").to_pylist()]
        index = msgs.column("conv_index").to_numpy()
        counts = np.bincount(index, minlength=convs.num_rows) if len(index) else np.zeros(convs.num_rows, np.int64)
        history = True
    else:
        read = read_tables([found], layer="envelope", progress=progress)
        convs, msgs = read.conversations, read.messages
        assert msgs is not None
        keys = [str(k) for k in conversation_keys(convs, msgs)[0]]
        counts = convs.column("n_messages").to_numpy()
        history = False
    counts = counts.astype(np.int64)
    for name in ("created_at", "updated_at", *(("first_seen", "last_seen") if history else ())):
        convs = convs.set_column(convs.column_names.index(name), name, convs.column(name).cast(pa.int64()))
    return _Conversations(convs, msgs, keys, np.cumsum(counts) - counts, counts, history)


def render(conv: dict[str, Any], messages: Sequence[dict[str, Any]], history: bool) -> bytes:
    """The note of one conversation (times in milliseconds since the epoch, UTC): its front matter,
    title and messages."""
    fields: dict[str, Any] = {
        "id": conv["conversation_id"],
        "title": conv["title"],
        "provider": conv["provider"],
        "created": _when(conv["created_at"]),
        "updated": _when(conv["updated_at"]),
        "messages": conv["n_messages"],
    }
    if history and conv["status"] != "current":
        fields["status"] = conv["status"]
        fields["first_seen"] = _when(conv["first_seen"])
        fields["last_seen"] = _when(conv["last_seen"])
    parts = [front_matter(fields, _PLAIN), f"\n# {_one_line(conv['title']) or 'Untitled'}\n"]
    for message in messages:
        heading = _ROLES.get(message["role"], str(message["role"]).capitalize())
        if message["ts"] is not None:
            heading += f" · {timestamp(message['ts']).strftime('%Y-%m-%d %H:%M:%S')} UTC"
        if message.get("status") == "edited-away":
            heading += " · edited away"
            if message.get("last_seen") is not None:
                heading += f", last seen {timestamp(message['last_seen']).strftime('%Y-%m-%d')}"
        parts.append(f"\n## {heading}\n")
        text = (message["text"] or "").rstrip()
        if text:
            parts.append(f"\n{text}\n")
    return "".join(parts).encode("utf-8", "replace")


def _when(ms: int | None) -> Any:
    return None if ms is None else timestamp(ms)


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _names(convs: _Conversations, manifest: Manifest, folder: Path) -> list[str]:
    """Each conversation's note name: the manifest's, else a new one no other file of ``folder`` has."""
    given = manifest.names_by_key()
    names = [given.get(key, "") for key in convs.keys]
    try:
        present = os.listdir(folder)
    except OSError:
        present = []
    used = {folded(n) for n in (*manifest.notes, *present)}
    created = convs.columns["created_at"]
    titles = convs.columns["title"]
    fresh = [row for row, name in enumerate(names) if not name]
    fresh.sort(key=lambda row: (created[row] is None, created[row] or 0, convs.keys[row]))
    for row in fresh:
        name = base_name(created[row], titles[row])
        if folded(name) in used and not _same_file(folder / name, convs, row, manifest):
            name = next(
                (c for c in (suffixed(name, convs.keys[row], d) for d in (8, 16, 64)) if folded(c) not in used),
                suffixed(name, f"{convs.keys[row]}:{row}", 64),
            )
        used.add(folded(name))
        names[row] = name
    return names


def _same_file(path: Path, convs: _Conversations, row: int, manifest: Manifest) -> bool:
    """Whether ``path`` is a file the manifest does not list that holds exactly the note of ``row``:
    one the toolkit wrote before the manifest was lost, taken back."""
    if path.name in manifest.notes or path.is_symlink() or not path.is_file():
        return False
    try:
        return path.read_bytes() == convs.note(row)
    except OSError:
        return False


def _decide(path: Path, data: bytes, manifest: Manifest, force: bool) -> str:
    """What the module's rule does with the note ``data`` for ``path``: ``unchanged`` (already there),
    ``new`` or ``updated`` (to write), or ``edited`` (left as it is, with a warning)."""
    current = _current(path)
    if current == data:
        return "unchanged"
    if current is None:
        return "new"
    written = manifest.notes.get(path.name, {}).get("sha256")
    ours = current is not _OTHER and current is not _FOLDER and hashlib.sha256(current).hexdigest() == written
    if not ours and not (force and current is not _FOLDER):
        warnings.warn(f"{path} was edited since memvelope wrote it: left as it is", UserWarning, stacklevel=4)
        return "edited"
    return "updated"


_OTHER: Final = b"\0not a file written here"
_FOLDER: Final = b"\0a folder"


def _current(path: Path) -> bytes | None:
    """The bytes of the note at ``path``: None when there is none, :data:`_OTHER` for a link, device
    or unreadable file, :data:`_FOLDER` for a folder."""
    if path.is_symlink():
        return _OTHER
    if path.is_dir():
        return _FOLDER
    if not path.exists():
        return None
    if not path.is_file():
        return _OTHER
    try:
        return path.read_bytes()
    except OSError:
        return _OTHER


class Manifest:
    """The vault's :data:`MANIFEST`: each note written, the conversation it holds and its sha256."""

    def __init__(self, notes: dict[str, dict[str, str]]) -> None:
        self.notes = notes
        self._read = json.dumps(notes, sort_keys=True)

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        """The manifest of ``folder`` (empty when it has none); a FormatError (``bad-vault``) when it
        cannot be read or is not one."""
        path = folder / MANIFEST
        if not os.path.lexists(path):
            return cls({})
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError) as exc:
            raise _damaged(path, f"cannot be read as JSON ({type(exc).__name__})") from None
        notes = data.get("notes") if isinstance(data, dict) and data.get("format") == _FORMAT else None
        if not isinstance(notes, dict):
            raise _damaged(path, f"is not a manifest of {_FORMAT}")
        for name, entry in notes.items():
            ok = isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in ("conversation", "sha256"))
            if not ok or not _plain_name(name):
                raise _damaged(path, f"lists {name!r} wrongly")
        return cls(notes)

    def follow_renames(self, folder: Path) -> None:
        """Take a note renamed inside ``folder`` under its new name: a note the manifest lists whose file is
        missing, when a file of the folder it does not list holds exactly the bytes written."""
        missing = {e["sha256"]: n for n, e in sorted(self.notes.items()) if not os.path.lexists(folder / n)}
        if not missing:
            return
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.name in self.notes or not _plain_name(entry.name) or not entry.is_file(follow_symlinks=False):
                continue
            try:
                digest = hashlib.sha256(Path(entry.path).read_bytes()).hexdigest()
            except OSError:
                continue
            if digest in missing:
                self.notes[entry.name] = self.notes.pop(missing.pop(digest))

    def names_by_key(self) -> dict[str, str]:
        """The note name of each conversation key the manifest lists."""
        by_key: dict[str, str] = {}
        for name in sorted(self.notes):
            by_key.setdefault(self.notes[name]["conversation"], name)
        return by_key

    def record(self, name: str, key: str, digest: str) -> None:
        """Note that the file ``name`` holds conversation ``key``'s note, of sha256 ``digest``."""
        self.notes[name] = {"conversation": key, "sha256": digest}

    def write(self, folder: Path) -> None:
        """Write the manifest into ``folder`` (atomically) when it changed since it was read."""
        if json.dumps(self.notes, sort_keys=True) == self._read:
            return
        data = {"format": _FORMAT, "notes": self.notes}
        atomic_write(
            folder / MANIFEST, (json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()
        )
        self._read = json.dumps(self.notes, sort_keys=True)


def _plain_name(name: str) -> bool:
    """Whether ``name`` is a note's name: a file directly inside the vault, so a manifest cannot point
    outside it."""
    return (
        name.endswith(NOTE_SUFFIX)
        and not name.startswith(".")
        and "/" not in name
        and "\\" not in name
        and "\0" not in name
        and os.path.basename(name) == name
    )


def _damaged(path: Path, what: str) -> FormatError:
    return FormatError(
        f"the vault's manifest {what}: restore it, or delete it to start again (notes whose content then "
        "differs get new names rather than being replaced)",
        reason="bad-vault",
        source=str(path),
    )
