"""What the provider remembered about the user, read from the export itself.

An export holds the provider's own memory beside the conversations, and conversion leaves almost all of
it aside (the one exception: a ChatGPT memory write is assistant text, which the envelope keeps when it is
on the active path, conformance A9). The kinds of item:

``saved``
    A ChatGPT memory write: an assistant message addressed to the ``bio`` tool. Every node of the
    conversation's mapping is read, abandoned branches too; ``on_active_path`` says where it sits.
``snapshot``
    One entry of a ChatGPT memory snapshot (``content_type: "model_editable_context"``,
    ``model_set_context``): the memory as the model was shown it when that conversation began. A snapshot
    lists its entries as ``N. [YYYY-MM-DD]. text``; the bracketed day is ``stated_date``.
``about_user`` / ``about_model``
    ChatGPT custom instructions: ``user_editable_context`` (``user_profile`` / ``user_instructions``, the
    text inside their fenced block) or, in older exports, ``metadata.user_context_message_data``
    (``about_user_message`` / ``about_model_message``).
``claude_account`` / ``claude_project``
    Claude's ``memories.json`` (``conversations_memory``; ``project_memories``, project id -> text), or the
    same objects under ``memories/``, read from the zip or folder the conversations came from.
``cited``
    A saved memory ChatGPT cited in an answer (``conversation_context_type: "user_memory"``), all an export
    in the sharded format keeps of its memory (:mod:`memvelope_tools._whole.citations`): one item per
    ``memory_id``, its text what the citations quote of it; ``count`` is the number of citations,
    ``conversation_ids`` the conversations that cite it.

The same text seen again (in another conversation, another snapshot) is one item: ``first_seen``,
``last_seen`` and ``count`` (the number of conversations, or memory files, it was seen in; for a cited
memory, of citations). A changed text is a new item; items of one custom-instruction field, one Claude
project or one Claude account are numbered by ``version`` in order of first sight, and ``current`` is
False for every version but the one seen last. A snapshot entry is ``current`` while the latest
snapshot still lists it. Empty values are skipped.
"""

from __future__ import annotations

import os
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, ClassVar, Final, NamedTuple, Protocol

from ._convert import chatgpt as chatgpt_core
from ._convert.assemble import detect_provider
from ._convert.prose import Message
from ._convert.sources import Part, ZipLimits, expand, side_parts
from ._convert.timestamps import render_timestamp
from ._json.elements import FIELDS, JS, PartElements, Reader, Refused, load_part
from ._progress import progress_bar
from ._providers import registry
from ._providers.registry import DETECTION_WINDOW
from ._sources import resolve
from ._whole import citations as cited
from .errors import ConversionError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "KINDS",
    "MEMORY_COLUMNS",
    "NO_RECORDS",
    "MemoryItem",
    "MemoryRead",
    "collect",
    "memory_frame",
    "memory_parts",
    "read_memory",
]

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
_NO_CLAUDE_FILE: Final = (
    "no memories.json or memories/ file was found beside the conversations; Claude's memory is not in what was given"
)

_SNAPSHOT_ENTRY: Final = re.compile(r"^\s*\d{1,4}\.\s+(?:\[(\d{4}-\d{2}-\d{2})\]\.?\s+)?(.*\S)\s*$", re.DOTALL)
_FENCE: Final = re.compile(r"```(.*?)```", re.DOTALL)
_BIO: Final = "bio"
_CONTEXT_TYPES: Final = frozenset({"model_editable_context", "user_editable_context"})


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


class _Seen(NamedTuple):
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


# --- reading the export ----------------------------------------------------------------------------


# Bytes every element holding a memory item contains; an element without them is not parsed. A key or
# value written with \u escapes would hide them, which no export does. ``editable_context`` stands for
# both context types (a snapshot opens a conversation, so it is met first; one search is cheaper than two).
_MEMORY_MARKS: Final = (b"editable_context", b'"bio"', b"user_context_message_data", cited.MARK)
# A system or tool message: where ChatGPT keeps its memory records (as json.dumps writes a role, spaced or not).
_RECORD_ROLES: Final = (b'"role": "system"', b'"role":"system"', b'"role": "tool"', b'"role":"tool"')


def _holds(buf: Any, marks: tuple[bytes, ...], start: int, end: int) -> bool:
    return any(buf.find(mark, start, end) >= 0 for mark in marks)


@dataclass
class _Scan:
    """What one pass over the export's conversation parts found."""

    head: list[Any] = field(default_factory=list)  # the first elements, for provider detection
    provider: str | None = None
    error: ConversionError | None = None  # why no provider could be detected
    decided: bool = False
    seen: _Folding = field(default_factory=lambda: _Folding())
    records: bool = False  # some element holds a system or tool message
    singles: list[Any] = field(default_factory=list)  # parts holding one conversation object
    documents: list[tuple[str, str]] = field(default_factory=list)  # parts showing another provider's export
    source: str | None = None  # the part the first elements are in

    def decide(self) -> None:
        """Detect the provider from the first elements, as conversion does, and read those elements;
        raise InputError at once for an export of a provider the spec does not define."""
        self.decided = True
        try:
            self.provider = detect_provider(self.head, self.source, non_arrays=0, documents=self.documents)
        except ConversionError as exc:
            if exc.reason == "unsupported-provider":
                raise
            self.error = exc
        if self.provider == "chatgpt":
            for element in self.head:
                _chatgpt_conversation(element, self.seen)


def _scan(
    paths: Sequence[str | os.PathLike[str]],
    limits: ZipLimits,
    progress: bool | None,
    started: Callable[[], object] | None = None,
    workers: int | None = None,
) -> _Scan:
    """Read the conversation parts as conversion does, parsing only the elements that may hold memory:
    in this process, or, for a large export, in worker processes (a batch of elements each, as
    conversion's, their sightings taken in order). ``started`` is called once the workers run (at once
    when there are none)."""
    from ._convert.parallel import workers_for
    from ._convert.pipeline import gc_paused

    found = _Scan()
    expansion = expand(paths, limits)
    parts = expansion.parts
    total = sum(p.size or 0 for p in parts) or None
    count = workers_for(total or 0, workers)
    pool = _Workers(count) if count > 1 else None
    try:
        if started is not None:
            started()
        with progress_bar(total, desc="reading memory", unit="B", enabled=progress) as bar, gc_paused():
            for part in parts:
                elements = PartElements(part, Reader(JS), on_bytes=bar.update)
                try:
                    _scan_part(part, elements, found, pool)
                except ConversionError:
                    if pool is not None:
                        pool.drain(found, elements)  # an earlier element's error comes first
                    raise
                if pool is not None:
                    pool.drain(found, elements)
                if elements.is_array is False:
                    value = load_part(part, Reader(JS))
                    if registry.provider_of(value) in registry.SUPPORTED:
                        found.singles.append(value)
                    elif (shown := registry.document_provider(value)) is not None:
                        found.documents.append((shown, part.name))
            if not found.decided:
                found.decide()
            if found.error is not None and found.error.reason == "no-provider":
                found.error = expansion.without_conversations(read=True) or found.error
    finally:
        if pool is not None:
            pool.close()
    return found


def _scan_part(part: Part, elements: PartElements, found: _Scan, pool: _Workers | None) -> None:
    """Read the elements of one part that may hold memory into ``found``, or hand them to ``pool``."""
    reader = elements.reader
    for buf, children, offset in elements.ranges():
        if elements.is_array is False:
            break
        k = 0
        while k < len(children) and not found.decided:  # the first elements tell the provider
            start, end, flags, depth = children[k + 2 : k + FIELDS]
            found.records = found.records or _holds(buf, _RECORD_ROLES, start, end)
            try:
                found.head.append(reader.value(buf, start, end, flags, depth, offset))
            except Refused as exc:
                raise elements.error(exc) from None
            found.source = found.source or part.name
            if len(found.head) == DETECTION_WINDOW:
                found.decide()
            k += FIELDS
        if k == len(children) or found.provider != "chatgpt":
            continue
        rest = children[k:] if k else children
        if pool is not None:
            stamp = elements.stamp
            at = None if part.path is None or stamp is None else (part.path, offset + elements.skip, stamp)
            pool.submit(buf, rest, offset, at, found, elements)
            continue
        records, refused = _read_elements(buf, rest, offset, found.seen)
        found.records = found.records or records
        if refused is not None:
            raise elements.error(Refused(*refused))


_Source = bytes | tuple[str, int, int, Any]  # a batch's bytes, or the file range holding them
# a Refused's reason, detail and offset: a worker's exception cannot cross to the parent as raised
_Refusal = tuple[str, str, int]
_Rows = list[tuple[Any, ...]]  # sightings as plain tuples, cheaper to send back


def _read_elements(data: Any, found: list[int], offset: int, seen: _Sink) -> tuple[bool, _Refusal | None]:
    """Add to ``seen`` the sightings of the ChatGPT conversations ``found`` in ``data`` (which starts at
    ``offset`` in its part), parsing only those whose bytes hold a memory mark. Returns whether one holds
    a system or tool message, and the refusal that stopped the reading early, if one did."""
    reader = Reader(JS)
    records = False
    for k in range(0, len(found), FIELDS):
        start, end, flags, depth = found[k + 2 : k + FIELDS]
        if not records and _holds(data, _RECORD_ROLES, start, end):
            records = True
        if not _holds(data, _MEMORY_MARKS, start, end):
            continue
        try:
            value = reader.value(data, start, end, flags, depth, offset)
        except Refused as exc:
            return records, (exc.reason, exc.detail, exc.offset)
        _chatgpt_conversation(value, seen)
    return records, None


def _read_batch(source: _Source, found: list[int], offset: int) -> tuple[_Rows, _Refusal | None, bool]:
    """In a worker: :func:`_read_elements` of the elements ``found`` in ``source`` (which starts at
    ``offset`` in its part), the sightings as plain tuples."""
    from ._convert.parallel import read_range
    from ._convert.pipeline import gc_paused

    seen: list[_Seen] = []
    with gc_paused():
        records, refused = _read_elements(read_range(source), found, offset, seen)
        return list(map(tuple, seen)), refused, records


class _Workers:
    """Worker processes reading batches of elements, at most ``_PER_WORKER`` batches each in flight;
    when all of those are taken, this process reads the next batch itself rather than wait (up to
    ``_AHEAD`` batches read here wait for the workers' earlier ones). Sightings are added in
    submission order, so the result is that of one process."""

    _PER_WORKER: ClassVar[int] = 2
    _AHEAD: ClassVar[int] = 4

    def __init__(self, workers: int) -> None:
        from ._convert.parallel import start_pool

        self._executor = start_pool(workers)
        self._limit = self._PER_WORKER * workers
        self._pending: deque[Future[tuple[_Rows, _Refusal | None, bool]]] = deque()

    def submit(
        self,
        buf: bytes,
        found: list[int],
        offset: int,
        at: tuple[str, int, Any] | None,
        scan: _Scan,
        elements: PartElements,
    ) -> None:
        """A batch: the children ``found`` in ``buf`` (which starts at ``offset`` in the part), what they
        hold going to ``scan``. With ``at`` (the file, where ``buf`` starts in it, its stamp as read), the
        worker reads the bytes itself."""
        from ._convert.parallel import batch_source

        while self._pending and self._pending[0].done():
            self._next(scan, elements)
        busy = sum(not f.done() for f in self._pending)
        if busy >= self._limit and len(self._pending) < busy + self._AHEAD:
            seen: _Rows = []
            records, refused = _read_elements(buf, found, offset, seen)
            here: Future[tuple[_Rows, _Refusal | None, bool]] = Future()
            here.set_result((seen, refused, records))
            self._pending.append(here)
            return
        while self._pending and sum(not f.done() for f in self._pending) >= self._limit:
            self._next(scan, elements)
        source, shifted = batch_source(buf, found, at)
        self._pending.append(self._executor.submit(_read_batch, source, shifted, offset + found[2]))

    def drain(self, found: _Scan, elements: PartElements) -> None:
        """Wait for every batch and add what it found to ``found``."""
        while self._pending:
            self._next(found, elements)

    def _next(self, found: _Scan, elements: PartElements) -> None:
        from ._stable import CHANGED, Changed

        future = self._pending.popleft()
        try:
            rows, refused, records = future.result()
        except Changed:
            self._pending.clear()
            raise ConversionError(CHANGED, reason="changed", source=elements.part.name) from None
        found.seen.extend(rows)
        found.records = found.records or records
        if refused is not None:
            self._pending.clear()
            raise elements.error(Refused(*refused))

    def close(self) -> None:
        """Stop the workers (dropping batches not taken) and wait for them to exit."""
        self._executor.shutdown(wait=True, cancel_futures=True)


def read_memory(
    *paths: str | os.PathLike[str], zip_limits: ZipLimits | None = None, progress: bool | None = None
) -> MemoryRead:
    """Read every remembered item of one export (the paths ``convert`` takes).

    Parameters
    ----------
    *paths
        The export: a zip as downloaded, a folder, or conversation files.
    zip_limits
        Limits against zip bombs (the defaults of ``convert``).
    progress
        Show a progress bar (None: when stderr is a terminal or in a notebook).

    Returns
    -------
    MemoryRead
        The provider, the items oldest first (undated last) and notes on what the export cannot say.

    Raises
    ------
    ConversionError
        When the export cannot be read (missing file, bad zip, invalid JSON) or holds neither a
        conversation nor a memory file.

    Examples
    --------
    >>> read_memory("export.zip").items[0].kind  # doctest: +SKIP
    'saved'
    """
    return _read_memory(paths, zip_limits, progress)


def _read_memory(
    paths: Sequence[str | os.PathLike[str]],
    zip_limits: ZipLimits | None,
    progress: bool | None,
    started: Callable[[], object] | None = None,
    workers: int | None = None,
) -> MemoryRead:
    """:func:`read_memory`; ``started`` is called once the export's reading has begun, ``workers`` is
    the number of processes reading it (None: as ``convert`` chooses)."""
    limits = zip_limits or ZipLimits()
    [export] = resolve(list(paths), "diagnose", list_means="parts", caller="memory_frame()")
    paths = tuple(p for p in export.parts if isinstance(p, str | os.PathLike))
    found = memory_parts(paths, limits)
    try:
        scanned = _scan(paths, limits, progress, started, workers)
    except ConversionError as exc:
        if not found or exc.reason not in ("no-parts", "no-provider"):
            raise
        scanned = _Scan(decided=True)
    if not scanned.head and scanned.singles:
        try:
            read = collect(detect_provider(scanned.singles), scanned.singles, found)
        except ConversionError:
            if not found:
                raise
            read = collect("claude", [], found)
        read.notes.insert(
            0,
            "read single-conversation files (a top-level object, not an array): conversion takes only "
            "arrays, so message_id is the id the message would have with the conversation inside [ ]",
        )
        return read
    provider = scanned.provider
    if provider is None:
        if not found:
            raise scanned.error or ConversionError("the export holds no conversations", reason="no-provider")
        provider = "claude"
    return _finish(provider, scanned.seen, found, scanned.records)


def collect(
    provider: str | None, elements: Sequence[Any], memory_parts: Sequence[Part], *, records: bool | None = None
) -> MemoryRead:
    """The remembered items of conversations already read (``elements``, of ``provider``) and of Claude
    memory files (``memory_parts``).

    Parameters
    ----------
    provider
        ``"chatgpt"`` or ``"claude"`` (None reads nothing from ``elements``).
    elements
        The export's conversations, as parsed.
    memory_parts
        Claude memory files, from :func:`memory_parts`.
    records
        Whether the export holds a system or tool message (where ChatGPT records memory); by default,
        whether ``elements`` do.

    Returns
    -------
    MemoryRead
        Items oldest first, and notes.

    Raises
    ------
    ConversionError
        When a memory file is not valid JSON.

    Examples
    --------
    >>> collect("chatgpt", [], []).notes == [NO_RECORDS]
    True
    """
    from ._convert.pipeline import gc_paused

    seen = _Folding()
    found = False
    with gc_paused():  # many small objects, no cycles
        if provider == "chatgpt":
            for element in elements:
                found = _chatgpt_conversation(element, seen) or found
        return _finish(provider, seen, memory_parts, found if records is None else records)


def _finish(provider: str | None, seen: _Folding, memory_parts: Sequence[Part], records: bool) -> MemoryRead:
    """The items of the sightings folded in ``seen`` and of the Claude memory files, with the notes."""
    from ._convert.pipeline import gc_paused

    notes: list[str] = []
    with gc_paused():  # many small objects, no cycles
        if provider == "claude":
            for part in memory_parts:
                _claude_memory_file(part, seen)
            if not memory_parts:
                notes.append(_NO_CLAUDE_FILE)
        items = seen.items(provider or "claude")
        if provider == "chatgpt" and not records:
            notes.append(cited.CITED_ONLY if any(i.kind == cited.CITED for i in items) else NO_RECORDS)
        return MemoryRead(provider, items, notes)


# --- ChatGPT ---------------------------------------------------------------------------------------


def _chatgpt_conversation(element: object, seen: _Sink) -> bool:
    """Add the memory items of one conversation; True when it holds a system or tool message."""
    mapping = chatgpt_core.mapping_of(element)
    if mapping is None:
        return False
    assert type(element) is dict
    records = False
    found: list[tuple[str, Any, dict[str, Any], list[tuple[str, str, str | None]], list[Any]]] = []
    for key, node in mapping.items():
        message = node.get("message") if type(node) is dict else None
        if type(message) is not dict:
            continue
        if not records:
            author = message.get("author")
            records = type(author) is dict and author.get("role") in ("system", "tool")
        content = message.get("content")
        metadata = message.get("metadata")
        if not (
            message.get("recipient") == _BIO
            or (type(content) is dict and content.get("content_type") in _CONTEXT_TYPES)
            or (type(metadata) is dict and "user_context_message_data" in metadata)
            or cited.is_citing(metadata)
        ):
            continue  # no memory item here (the test _chatgpt_items would make, done cheaply)
        items = list(_chatgpt_items(message))
        quotes = list(cited.citations(metadata))
        if items or quotes:
            found.append((key, node, message, items, quotes))
    if not found:
        return records
    cid = chatgpt_core.conversation_id(element)
    title = chatgpt_core.title(element)
    current = element.get("current_node")
    path = chatgpt_core.active_path(mapping, current)
    on_path = {id(node): i for i, node in enumerate(path)}
    targets = [node for _, node, _, _, _ in found if isinstance(chatgpt_core.classify(node), Message)]
    ids = _envelope_ids(mapping, current, path, on_path, targets) if targets else {}
    where = cid or f"conversation {title!r}"
    for key, node, message, items, quotes in found:
        stamp = render_timestamp(message.get("create_time")) or render_timestamp(element.get("create_time"))
        for memory, quote, citation in quotes:  # counted by citation, told apart by memory id
            seen.append(
                _Seen(
                    cited.CITED,
                    quote,
                    stamp,
                    citation or f"{where}/{key}/{memory}",
                    conversation_id=cid,
                    conversation_title=title,
                    message_id=ids.get(id(node)),
                    node_id=key,
                    on_active_path=id(node) in on_path,
                    memory_id=memory,
                )
            )
        for kind, text, stated in items:
            seen.append(
                _Seen(
                    kind,
                    text,
                    stamp,
                    where,
                    conversation_id=cid,
                    conversation_title=title,
                    message_id=ids.get(id(node)),
                    node_id=key,
                    on_active_path=id(node) in on_path,
                    preceding_user_message=_preceding_user(mapping, node) if kind == "saved" else None,
                    stated_date=stated,
                    key=kind if kind.startswith("about_") else None,
                )
            )
    return records


def _envelope_ids(
    mapping: dict[str, Any],
    current: object,
    path: list[Any],
    position: dict[int, int],
    targets: list[Any],
) -> dict[int, str]:
    """Envelope ids (``m1`` ...) covering the nodes ``targets`` (each gives an envelope message), as
    conversion numbers them: the kept messages of the active path, classified only as far as needed;
    the fallback order when the path keeps none."""
    last = max((position[id(t)] for t in targets if id(t) in position), default=-1)
    ids: dict[int, str] = {}
    for i, node in enumerate(path):
        if i > last and ids:
            return ids
        if isinstance(chatgpt_core.classify(node), Message):
            ids[id(node)] = f"m{len(ids) + 1}"
    if ids:
        return ids
    return {id(node): f"m{i}" for i, (node, _) in enumerate(chatgpt_core.select(mapping, current).kept, 1)}


def _chatgpt_items(message: dict[str, Any]) -> Iterator[tuple[str, str, str | None]]:
    """(kind, text, stated date) of each remembered text one message carries."""
    content = message.get("content")
    content = content if type(content) is dict else {}
    kind = content.get("content_type")
    if message.get("recipient") == _BIO:
        author = message.get("author")
        if type(author) is dict and author.get("role") == "assistant":
            written = _parts_text(content)
            if written:
                yield "saved", written, None
    if kind == "model_editable_context":
        snapshot = content.get("model_set_context")
        if type(snapshot) is str:
            yield from (("snapshot", entry, stated) for entry, stated in snapshot_entries(snapshot))
    elif kind == "user_editable_context":
        for key, name in (("user_profile", "about_user"), ("user_instructions", "about_model")):
            field_text = instruction_text(content.get(key))
            if field_text:
                yield name, field_text, None
    metadata = message.get("metadata")
    data = metadata.get("user_context_message_data") if type(metadata) is dict else None
    if type(data) is dict:
        for key, name in (("about_user_message", "about_user"), ("about_model_message", "about_model")):
            value = data.get(key)
            if type(value) is str and value.strip():
                yield name, value.strip(), None


def _parts_text(content: dict[str, Any]) -> str:
    parts = content.get("parts")
    texts = [p for p in parts if type(p) is str] if type(parts) is list else []
    if type(content.get("text")) is str:
        texts.append(content["text"])
    return "\n\n".join(t.strip() for t in texts if t.strip())


def snapshot_entries(snapshot: str) -> list[tuple[str, str | None]]:
    """The entries of a ``model_set_context`` snapshot: ``(text, stated day)`` each.

    Parameters
    ----------
    snapshot
        The snapshot text.

    Returns
    -------
    list of (str, str or None)
        One pair per numbered entry (``N. [YYYY-MM-DD]. text``); a snapshot not in that form is one
        entry with no day. Empty entries are skipped.

    Examples
    --------
    >>> snapshot_entries("1. [2024-09-29]. User likes tea.\\n\\n2. User lives in Oslo.")
    [('User likes tea.', '2024-09-29'), ('User lives in Oslo.', None)]
    """
    blocks = [b for b in re.split(r"\n\s*\n", snapshot) if b.strip()]
    matches = [_SNAPSHOT_ENTRY.match(b) for b in blocks]
    if not blocks or not all(matches):
        text = snapshot.strip()
        return [(text, None)] if text else []
    return [(" ".join(m.group(2).split()), m.group(1)) for m in matches if m is not None]


def instruction_text(value: object) -> str | None:
    """The user's own words in a custom-instructions field: the text of its fenced block when it has
    one (the provider's preamble around it is not the user's), else the whole value; None when empty.

    Parameters
    ----------
    value
        A ``user_profile`` or ``user_instructions`` value.

    Returns
    -------
    str or None
        The text, stripped.

    Examples
    --------
    >>> instruction_text("The user provided ...:\\n```I am a nurse.```")
    'I am a nurse.'
    """
    if type(value) is not str:
        return None
    blocks = [b.strip() for b in _FENCE.findall(value) if b.strip()]
    text = "\n\n".join(blocks) if blocks else value.strip()
    return text or None


def _preceding_user(mapping: dict[str, Any], node: Any) -> str | None:
    """The text of the nearest user message above ``node``."""
    seen: set[int] = set()
    current = node
    while type(current) is dict and id(current) not in seen:
        seen.add(id(current))
        parent = current.get("parent")
        if type(parent) is not str or parent not in mapping:
            return None
        current = mapping[parent]
        found = chatgpt_core.classify(current)
        if isinstance(found, Message) and found.role == "user":
            return found.text
    return None


# --- Claude ----------------------------------------------------------------------------------------


def _is_memory_name(name: str) -> bool:
    path = PurePosixPath(name)
    return path.suffix == ".json" and (path.name == "memories.json" or "memories" in path.parts[:-1])


def _is_memory_zip(name: str) -> bool:
    base = PurePosixPath(name).name
    return base.startswith("memories") and base.endswith(".zip")


def memory_parts(paths: Sequence[str | os.PathLike[str]], limits: ZipLimits) -> list[Part]:
    """Claude memory files among the inputs: ``memories.json`` or ``memories/*.json`` in a folder or zip
    (also inside a ``memories*.zip``), or given as files.

    Parameters
    ----------
    paths
        The export's inputs, as ``convert`` takes them.
    limits
        Limits against zip bombs.

    Returns
    -------
    list of Part
        The memory files, in input order, then path order.

    Raises
    ------
    ConversionError
        When a zip cannot be opened.

    Examples
    --------
    >>> [p.name for p in memory_parts(["claude-export/"], ZipLimits())]  # doctest: +SKIP
    ['claude-export/memories.json']
    """
    return side_parts(paths, _is_memory_name, _is_memory_zip, limits)


def _claude_memory_file(part: Part, seen: _Sink) -> None:
    value = load_part(part, Reader(JS))
    objects = value if type(value) is list else [value]
    for obj in objects:
        if type(obj) is not dict:
            continue
        account = obj.get("account_uuid") if type(obj.get("account_uuid")) is str else None
        where = part.name
        text = obj.get("conversations_memory")
        if type(text) is str and text.strip():
            seen.append(_Seen("claude_account", text.strip(), None, where, key=account or "account"))
        projects = obj.get("project_memories")
        for project, ptext in projects.items() if type(projects) is dict else ():
            if type(ptext) is str and ptext.strip():
                seen.append(_Seen("claude_project", ptext.strip(), None, where, project_id=project, key=project))


# --- folding sightings into items ------------------------------------------------------------------


class _Sink(Protocol):
    """Where sightings go: a list, or :class:`_Folding`."""

    def append(self, sighting: _Seen, /) -> None: ...


class _Folding:
    """Sightings folded into items as they come (in the order they were made): the same text seen again
    is one item; :meth:`items` gives them, oldest first."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str | None, str], MemoryItem] = {}
        self._keyed: list[tuple[MemoryItem, str]] = []  # the items whose versions are numbered, and their key
        self._spaced: dict[str, str] = {}  # a text -> its words joined by single spaces
        self._order = 0  # the number of sightings folded so far

    def append(self, sighting: _Seen, /) -> None:
        """Fold in one sighting."""
        self.extend((sighting,))

    def extend(self, sightings: Iterable[tuple[Any, ...]]) -> None:
        """Fold in ``sightings`` (each a :class:`_Seen`, or a plain tuple of its fields), in order."""
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
                item.on_active_path = on_path
                item.preceding_user_message = preceding
                item.project_id = project
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


# --- the frame -------------------------------------------------------------------------------------


def memory_frame(
    *paths: str | os.PathLike[str],
    facts: Any = None,
    zip_limits: ZipLimits | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """One row per item the provider remembered about the user, read from the export itself.

    Parameters
    ----------
    *paths
        The export, as ``convert`` takes it: a zip as downloaded, a folder, or conversation files.
    facts
        Optional: a Facts IR distilled from the same history (a document, or a path to one). The frame
        then gains ``supporting_facts``, ``traced`` and ``superseded_by``: the facts that support each
        item, whether the user's own words hold any trace of it, and what superseded it (the rules are
        in :mod:`memvelope_tools._memory_trace`). Facts the IR took from the provider's memory itself
        (those with ``memory_kind``) are left out of this.
    zip_limits
        Limits against zip bombs (the defaults of ``convert``).
    progress
        Show a progress bar while the export is read (None: when stderr is a terminal or in a notebook).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`MEMORY_COLUMNS`, oldest first (undated items last). ``kind`` is one of
        :data:`KINDS`; ``ts``, ``first_seen`` and ``last_seen`` are UTC timestamps; ``message_id`` is the
        envelope's ``m…`` id where the text is also in the envelope. ``frame.attrs["notes"]`` lists what
        the export cannot say (a format that keeps no memory records is named there, never reported as
        "no memories"); ``frame.attrs["provider"]`` is the export's provider.

    Raises
    ------
    ConversionError
        When the export cannot be read or holds neither a conversation nor a memory file.
    FormatError
        When ``facts`` is given and is not a Facts IR.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> frame = mv.memory_frame(mv.sample_path("chatgpt"))      # doctest: +SKIP
    >>> frame[["kind", "text", "ts"]].head()                     # doctest: +SKIP
    """
    preparing: list[threading.Thread] = []

    def prepare() -> None:
        # pandas is imported while the export is read (the scanner and the workers leave the GIL free)
        thread = threading.Thread(target=_import_frames, daemon=True)
        thread.start()
        preparing.append(thread)

    from ._convert.pipeline import gc_paused

    with gc_paused():  # the items are gone before the collector runs again: it has nothing of them to visit
        read = _read_memory(paths, zip_limits, progress, prepare)
        for thread in preparing:
            thread.join()
        frame = items_frame(read)
        del read
    if facts is None:
        return frame
    from ._frames.facts import facts_frame
    from ._load import read as read_document
    from ._memory_trace import add_trace, from_memory

    doc = facts if isinstance(facts, dict) else read_document(facts)
    table = facts_frame(doc)
    return add_trace(frame, table[~table["fact_index"].isin(from_memory(doc))])


def _import_frames() -> None:
    import pandas  # noqa: F401

    from ._frames import columns  # noqa: F401


def items_frame(read: MemoryRead) -> pd.DataFrame:
    """The frame of :func:`memory_frame` for items already read.

    Parameters
    ----------
    read
        What :func:`read_memory` returned.

    Returns
    -------
    pandas.DataFrame
        One row per item, columns :data:`MEMORY_COLUMNS`.

    Raises
    ------
    None

    Examples
    --------
    >>> items_frame(read_memory("export.zip"))  # doctest: +SKIP
    """
    import pandas as pd
    import pyarrow as pa

    from ._convert.pipeline import gc_paused
    from ._frames.columns import INT, OBJECT, STRING, TIMESTAMP, conform, dictionary, timestamps
    from ._frames.text import strings

    kinds = pd.CategoricalDtype(list(KINDS))
    dtypes = {
        "string": STRING,
        "timestamp": TIMESTAMP,
        "int": INT,
        "bool": pd.BooleanDtype(),
        "kind": kinds,
        "list": OBJECT,
    }
    columns = {name: dtypes[kind] for name, kind in MEMORY_COLUMNS.items()}
    items = read.items
    arrays: dict[str, pa.Array] = {}
    with gc_paused():  # many small objects, no cycles
        for name, kind in MEMORY_COLUMNS.items():
            values = list(map(attrgetter(name), items))
            if kind == "timestamp":
                arrays[name] = timestamps(values, name, lambda i: f"items[{i}]")
            elif kind == "string":  # unpaired surrogates become U+FFFD, with a warning, as in the other frames
                arrays[name] = strings(values, name)
            elif kind == "kind":
                arrays[name] = dictionary(values, kinds)
            elif kind == "list":
                arrays[name] = pa.array([v if v is None else strings(v, name).to_pylist() for v in values])
            else:
                arrays[name] = pa.array(values, pa.int64() if kind == "int" else pa.bool_())
        table = pa.table(arrays)
        frame = table.to_pandas(types_mapper={pa.string(): STRING, pa.bool_(): pd.BooleanDtype()}.get)
        for name in (name for name, kind in MEMORY_COLUMNS.items() if kind == "list"):
            frame[name] = table.column(name).to_pylist()  # lists, not arrays
        frame = conform(frame, columns)
    frame.attrs["notes"] = list(read.notes)
    frame.attrs["provider"] = read.provider
    return frame
