"""Remembered items: what is read of each (:class:`MemoryItem`), the sightings they are folded from, and the
folding."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Final, NamedTuple, Protocol

from .._whole import citations as cited

#: Every kind of remembered item, in the order they are listed.
KINDS: Final = ("saved", "snapshot", "about_user", "about_model", "claude_account", "claude_project", cited.CITED)


#: The columns of :func:`memory_frame`, in order, and their kind of value (the dtypes are
#: those of the other frames: ``string``, ``timestamp`` (UTC, ms), ``int``, ``bool`` (nullable), ``kind``;
#: ``list``: a list of strings, or null).
MEMORY_COLUMNS: Final = {
    "provider": "string",
    "kind": "kind",
    "text": "string",
    "ts": "timestamp",
    "first_seen": "timestamp",
    "last_seen": "timestamp",
    "count": "int",
    "version": "int",
    "current": "bool",
    "stated_date": "string",
    "conversation_id": "string",
    "conversation_title": "string",
    "message_id": "string",
    "node_id": "string",
    "on_active_path": "bool",
    "preceding_user_message": "string",
    "project_id": "string",
    "memory_id": "string",
    "conversation_ids": "list",
}


#: The note a ChatGPT export gets when it keeps no system or tool message, where ChatGPT records memory.
NO_RECORDS: Final = (
    "this export format keeps no memory records: it holds no system or tool messages, where ChatGPT "
    "records its memory, so what ChatGPT remembers cannot be read from it (this does not mean it "
    "remembers nothing)"
)

#: The note a ChatGPT export gets when it keeps no system or tool message but custom instructions were read.
INSTRUCTIONS_ONLY: Final = (
    "this export format keeps no memory records (no system or tool messages, where ChatGPT records the "
    "memories it saves and the snapshots it is shown); the custom instructions listed were read from the "
    "conversations, what else ChatGPT remembers is not in them (this does not mean it remembers nothing)"
)


@dataclass(slots=True)
class MemoryItem:
    """One remembered text, with every place it was seen folded in."""

    provider: str
    kind: str
    text: str
    ts: str | None = None
    first_seen: str | None = None
    last_seen: str | None = None
    count: int = 0
    version: int = 1
    current: bool | None = None
    stated_date: str | None = None
    conversation_id: str | None = None
    conversation_title: str | None = None
    message_id: str | None = None
    node_id: str | None = None
    on_active_path: bool | None = None
    preceding_user_message: str | None = None
    project_id: str | None = None
    memory_id: str | None = None
    conversation_ids: list[str] | None = None
    order: int = 0
    seen_in: set[str] = field(default_factory=set, repr=False)


@dataclass
class MemoryRead:
    """Everything :func:`read_memory` found: the provider, its items (oldest first) and notes."""

    provider: str | None
    items: list[MemoryItem]
    notes: list[str]
    singles: list[str] = field(default_factory=list)  # the parts read as single conversations, by name


class Seen(NamedTuple):
    """One sighting of a remembered text."""

    kind: str
    text: str
    stamp: str | None
    where: str  # conversation id or memory file name: what ``count`` counts
    conversation_id: str | None = None
    conversation_title: str | None = None
    message_id: str | None = None
    node_id: str | None = None
    on_active_path: bool | None = None
    preceding_user_message: str | None = None
    project_id: str | None = None
    stated_date: str | None = None
    key: str | None = None  # what one version replaces another of (a field, a project, an account)
    memory_id: str | None = None  # the memory a citation cites


class Sink(Protocol):
    """Where sightings go: a list, or :class:`Folding`."""

    def append(self, sighting: Seen, /) -> None: ...


class Folding:
    """Sightings folded into items as they come (in the order they were made): the same text seen again
    is one item; :meth:`items` gives them, oldest first."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str | None, str], MemoryItem] = {}
        self._keyed: list[tuple[MemoryItem, str]] = []  # the items whose versions are numbered, and their key
        self._spaced: dict[str, str] = {}  # a text -> its words joined by single spaces
        self._order = 0  # the number of sightings folded so far

    def append(self, sighting: Seen, /) -> None:
        """Fold in one sighting."""
        self.extend((sighting,))

    def extend(self, sightings: Iterable[tuple[Any, ...]]) -> None:
        """Fold in ``sightings`` (each a :class:`Seen`, or a plain tuple of its fields), in order."""
        items, keyed, spaced = self._items, self._keyed, self._spaced
        order = self._order - 1
        for order, s in enumerate(sightings, self._order):
            kind, text, stamp, where, cid, title, message_id, node_id, on_path, preceding, project, stated, key, mid = s
            if kind == "snapshot":
                ident = (kind, project, text)
            elif kind == cited.CITED:
                ident = (kind, None, mid)
            else:
                words = spaced.get(text)
                if words is None:
                    words = spaced[text] = " ".join(text.split())
                ident = (kind, project, words)
            item = items.get(ident)
            if item is None:  # its first sighting: all of the item is that sighting's
                item = items[ident] = MemoryItem(
                    "",
                    kind,
                    text,
                    first_seen=stamp,
                    last_seen=stamp,
                    count=1,
                    stated_date=stated,
                    conversation_id=cid,
                    conversation_title=title,
                    message_id=message_id,
                    node_id=node_id,
                    on_active_path=on_path,
                    preceding_user_message=preceding,
                    project_id=project,
                    memory_id=mid,
                    conversation_ids=None if kind != cited.CITED or cid is None else [cid],
                    order=order,
                    seen_in={where},
                )
                if key is not None:
                    keyed.append((item, key))
                continue
            if stamp is not None and (item.first_seen is None or stamp < item.first_seen):
                # an earlier sighting: the item is described by it
                item.first_seen = stamp
                item.conversation_id = cid
                item.conversation_title = title
                item.message_id = message_id
                item.node_id = node_id
                if kind != "snapshot":
                    item.on_active_path = on_path
                item.preceding_user_message = preceding
                item.project_id = project
            if kind == "snapshot" and (
                (stamp is not None and (item.last_seen is None or stamp > item.last_seen))
                or (stamp == item.last_seen and on_path)
            ):  # a snapshot entry is where the last snapshot listing it is
                item.on_active_path = on_path
            if where not in item.seen_in:
                item.seen_in.add(where)
                item.count += 1
                if kind == cited.CITED:
                    item.text = cited.merge_quotes(item.text, text)
                    if cid is not None and cid not in (item.conversation_ids or ()):
                        item.conversation_ids = [*(item.conversation_ids or ()), cid]
            if stamp is not None and (item.last_seen is None or stamp > item.last_seen):
                item.last_seen = stamp
            if item.stated_date is None:
                item.stated_date = stated
        self._order = order + 1

    def items(self, provider: str) -> list[MemoryItem]:
        """The items, of ``provider``: oldest first, undated last; then in the order of :data:`KINDS`,
        then of first sighting. Versions are numbered and ``current`` is set."""
        found = list(self._items.values())  # in order of first sighting
        for item in found:
            item.provider = provider
            item.ts = item.first_seen
        _versions(found, self._keyed)
        by_kind: dict[str, list[MemoryItem]] = {kind: [] for kind in KINDS}
        for item in found:
            by_kind[item.kind].append(item)
        ranked = [item for kind in KINDS for item in by_kind[kind]]
        dated = [item for item in ranked if item.ts is not None]
        dated.sort(key=attrgetter("ts"))  # stable: ties keep the order of kinds, then of first sighting
        return dated + [item for item in ranked if item.ts is None]


def _versions(items: list[MemoryItem], keyed: list[tuple[MemoryItem, str]]) -> None:
    """Number the versions of each keyed text (``keyed``: the items with a key, in order of first
    sighting); mark which item is current."""
    groups: dict[tuple[str, str], list[MemoryItem]] = {}
    for item, key in keyed:
        groups.setdefault((item.kind, key), []).append(item)
    for group in groups.values():
        group.sort(key=lambda i: (i.first_seen is None, i.first_seen or "", i.order))
        latest = max(group, key=lambda i: (i.last_seen or "", i.order))
        for n, item in enumerate(group, 1):
            item.version = n
            item.current = item is latest
    snapshots = [i for i in items if i.kind == "snapshot"]
    newest = max((i.last_seen for i in snapshots if i.last_seen), default=None)
    for item in snapshots:
        item.current = newest is None or item.last_seen == newest
