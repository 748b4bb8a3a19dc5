"""A history read once and answered from memory, for an assistant: what ``memvelope mcp`` serves.

:class:`HistoryView` holds one input's conversations and messages (with their status, first and last
sighting when the input is a history folder), its search index (built in memory, or for a history of
:data:`memvelope_tools._search.index.DISK_MIN` messages or more in a temporary folder only the user can
read, never beside the input) and, for an export, what the provider remembered. :meth:`HistoryView.call`
answers the four tools of :data:`TOOLS`; nothing it does writes a file. An argument it cannot use raises
:class:`~memvelope_tools.errors.QueryError` with one line saying which and why.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

import numpy as np
import pandas as pd

from . import _corpus as corpus
from ._frames import CONVERSATION_COLUMNS, MESSAGE_COLUMNS
from ._frames.columns import to_pandas
from ._frames.documents import envelope_tables
from ._history.folder import read_history
from ._memory.items import MemoryRead
from ._memory.read import read_memory
from ._search.index import SearchIndex
from ._search.query import timestamp_ms
from ._sources import Input, is_history_folder
from ._spec import ROLES
from .errors import QueryError

SEARCH_LIMIT: Final = (10, 100)  # default and most hits of one search
LIST_LIMIT: Final = (50, 500)  # default and most conversations of one listing

_DATE = (
    "a date or time in ISO 8601 (2024-05-01, 2024-05-01T14:00, 2024-05-01T14:00+02:00); UTC unless it gives an offset"
)

#: Each tool: what it does (as the assistant reads it) and the JSON Schema of its arguments.
TOOLS: Final[dict[str, dict[str, Any]]] = {
    "search": {
        "description": (
            "Full-text search over the messages of the user's chat history, best matches first (BM25). "
            'Query: words (all must occur; case and accents do not matter), "a phrase", a prefix*, '
            "AND / OR / NOT in capitals, (parentheses). Each hit gives the conversation's id, index and "
            "title, the message's time (UTC), role and position, a snippet with each match between ⟦ and ⟧, "
            "and its status (from a history folder: current, edited-away or deleted-upstream; else null). "
            "Read the whole conversation with get_conversation."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to search for"},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": SEARCH_LIMIT[1],
                    "default": SEARCH_LIMIT[0],
                    "description": "at most this many hits",
                },
                "since": {"type": "string", "description": f"only messages sent at or after this: {_DATE}"},
                "until": {"type": "string", "description": f"only messages sent before this: {_DATE}"},
                "role": {"type": "string", "enum": list(ROLES), "description": "only messages of this role"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    "get_conversation": {
        "description": (
            "One conversation of the user's chat history with all its messages in order: each message's "
            "role, time (UTC), position and text, and from a history folder its status (current, "
            "edited-away, deleted-upstream) with when it was first and last seen. Give the id that search "
            "or list_conversations returned, or the index for a conversation without an id (or to pick one "
            "of several sharing an id)."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "the conversation's id"},
                "index": {"type": "integer", "minimum": 0, "description": "the conversation's index"},
            },
            "additionalProperties": False,
        },
    },
    "list_conversations": {
        "description": (
            "The conversations of the user's chat history, most recently active first: id, index, title, "
            "provider, created and updated times (UTC), number of messages, and from a history folder the "
            "status (current, deleted-upstream) with when each was first and last seen. since and until "
            "keep the conversations with a message sent in that interval."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "since": {"type": "string", "description": f"only conversations active at or after this: {_DATE}"},
                "until": {"type": "string", "description": f"only conversations active before this: {_DATE}"},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": LIST_LIMIT[1],
                    "default": LIST_LIMIT[0],
                    "description": "at most this many conversations",
                },
            },
            "additionalProperties": False,
        },
    },
    "memory": {
        "description": (
            "What the provider (ChatGPT or Claude) itself remembered about the user, read from the export: "
            "saved memories, memory snapshots, custom instructions, Claude's account and project memory, "
            "oldest first, each dated and with the conversation it came from. Notes say what the input "
            "cannot tell (an envelope, a Parquet folder or a history folder keeps no memory)."
        ),
        "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
    },
}

_HISTORY_ONLY = ("status", "first_seen", "last_seen")  # the columns a history folder adds


class HistoryView:
    """One input's history, read once, answering the tools of :data:`TOOLS` from memory."""

    def __init__(
        self,
        conversations: pd.DataFrame,
        messages: pd.DataFrame,
        *,
        label: str,
        memory: MemoryRead | None = None,
        memory_note: str | None = None,
    ) -> None:
        self.label = label
        self._convs = conversations.reset_index(drop=True)
        self._msgs = messages.reset_index(drop=True)
        self._history = all(name in self._msgs.columns for name in _HISTORY_ONLY)
        self._memory = memory
        self._memory_note = memory_note
        keys = zip(self._convs["source"].tolist(), self._convs["conv_index"].tolist(), strict=True)
        self._row_of = {key: row for row, key in enumerate(keys)}
        groups = cast(
            "dict[Any, np.ndarray]", self._msgs.groupby(["source", "conv_index"], sort=False, observed=True).indices
        )
        position = self._msgs["position"].to_numpy()
        self._messages_of = {key: rows[np.argsort(position[rows], kind="stable")] for key, rows in groups.items()}
        self._index = SearchIndex.build(corpus.from_tables(self._msgs, self._convs, history_folder=self._history))
        self._handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "search": self._search,
            "get_conversation": self._get_conversation,
            "list_conversations": self._list_conversations,
            "memory": self._memory_items,
        }

    @property
    def counts(self) -> tuple[int, int]:
        """How many conversations and messages the view holds."""
        return len(self._convs), len(self._msgs)

    def close(self) -> None:
        """Let go of the search index (and its temporary folder, when it has one)."""
        self._index.close()

    def call(self, tool: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The answer of ``tool`` to ``arguments``, as JSON-ready values; QueryError for a tool or an
        argument it cannot use."""
        handler = self._handlers.get(tool)
        if handler is None:
            raise QueryError(f"no tool named {tool!r}: the tools are {', '.join(TOOLS)}")
        return handler(checked(tool, arguments or {}))

    def _search(self, args: dict[str, Any]) -> dict[str, Any]:
        query, limit = args["query"], args.get("limit", SEARCH_LIMIT[0])
        role, since, until = args.get("role"), args.get("since"), args.get("until")
        hits = self._index.search(query, role=role, since=since, until=until, limit=limit)
        rows = []
        for hit in hits.to_dict("records"):
            rows.append(
                {
                    "conversation_id": _value(hit["conversation_id"]),
                    "conversation_index": self._row_of.get((hit["source"], hit["conv_index"])),
                    "title": _value(hit["title"]),
                    "time": _iso(hit["ts"]),
                    "role": _value(hit["role"]),
                    "position": int(hit["position"]),
                    "snippet": hit["snippet"],
                    "status": _value(hit.get("status")),
                    "score": round(float(hit["score"]), 3),
                }
            )
        return {"matches": self._index.count(query, role=role, since=since, until=until), "hits": rows}

    def _get_conversation(self, args: dict[str, Any]) -> dict[str, Any]:
        row = self._find(args.get("id"), args.get("index"))
        conv = self._convs.iloc[row]
        found: np.ndarray = self._messages_of.get((conv["source"], conv["conv_index"]), np.array([], dtype=np.int64))
        shown = ["position", "role", "ts", "text", *(_HISTORY_ONLY if self._history else ())]
        messages = []
        for message in self._msgs.take(found).loc[:, shown].to_dict("records"):
            item = {"position": int(message["position"]), "role": _value(message["role"]), "time": _iso(message["ts"])}
            item["text"] = _value(message["text"])
            if self._history:
                item.update(_history_fields(message))
            messages.append(item)
        return {**self._conversation(row), "messages": messages}

    def _list_conversations(self, args: dict[str, Any]) -> dict[str, Any]:
        since, until = timestamp_ms(args.get("since"), "since"), timestamp_ms(args.get("until"), "until")
        convs = self._convs
        keep = np.ones(len(convs), dtype=bool)
        if since is not None or until is not None:
            sent = self._msgs["ts"]
            active = sent.notna()
            if since is not None:
                active &= sent >= pd.Timestamp(since, unit="ms", tz="UTC")
            if until is not None:
                active &= sent < pd.Timestamp(until, unit="ms", tz="UTC")
            pairs = self._msgs.loc[active, ["source", "conv_index"]].drop_duplicates()
            wanted = set(zip(pairs["source"].tolist(), pairs["conv_index"].tolist(), strict=True))
            keep = np.array([key in wanted for key in self._row_of], dtype=bool)
        latest = convs["last_ts"].fillna(convs["updated_at"]).fillna(convs["created_at"])
        order = latest[keep].sort_values(ascending=False, na_position="last", kind="stable").index
        limit = args.get("limit", LIST_LIMIT[0])
        return {"total": len(order), "conversations": [self._conversation(int(row)) for row in order[:limit]]}

    def _memory_items(self, args: dict[str, Any]) -> dict[str, Any]:
        if self._memory is None:
            return {"provider": None, "items": [], "notes": [self._memory_note or "no memory was read"]}
        shown = ("kind", "text", "first_seen", "last_seen", "current", "stated_date", "conversation_id")
        items = []
        for item in self._memory.items:
            entry = {"time": item.ts, **{name: getattr(item, name) for name in shown}}
            entry.update(conversation_title=item.conversation_title, project_id=item.project_id)
            items.append(entry)
        return {"provider": self._memory.provider, "items": items, "notes": list(self._memory.notes)}

    def _find(self, conversation_id: str | None, index: int | None) -> int:
        """The row of the conversation named by ``conversation_id`` or ``index`` (both: they must agree)."""
        if conversation_id is None and index is None:
            raise QueryError("give the conversation's id (or its index), as search or list_conversations return it")
        if index is not None:
            if index >= len(self._convs):
                raise QueryError(f"index={index} is past the last conversation (there are {len(self._convs)})")
            if conversation_id is not None and _value(self._convs["conversation_id"].iloc[index]) != conversation_id:
                raise QueryError(f"the conversation at index={index} does not have the id {conversation_id!r}")
            return index
        rows = np.flatnonzero((self._convs["conversation_id"] == conversation_id).fillna(False).to_numpy(dtype=bool))
        if len(rows) == 0:
            raise QueryError(f"no conversation has the id {conversation_id!r}; search or list_conversations give ids")
        if len(rows) > 1:
            several = ", ".join(str(r) for r in rows[:10])
            raise QueryError(f"{len(rows)} conversations have the id {conversation_id!r}: give index, one of {several}")
        return int(rows[0])

    def _conversation(self, row: int) -> dict[str, Any]:
        conv = self._convs.iloc[row]
        out = {
            "id": _value(conv["conversation_id"]),
            "index": row,
            "title": _value(conv["title"]),
            "provider": _value(conv["provider"]),
            "created": _iso(conv["created_at"]),
            "updated": _iso(conv["updated_at"]),
            "messages": int(conv["n_messages"]),
        }
        if self._history:
            out.update(_history_fields(conv))
        return out


def load_view(found: Input, source: Any) -> HistoryView:
    """The view of one resolved input: ``source`` is what the frame functions read for it (for an export,
    its envelope converted in memory). A history folder is read as :func:`read_history` reads it; the
    provider's memory is read from an export only."""
    memory = None
    note = None
    if found.kind == "parquet" and found.path is not None and is_history_folder(found.path):
        frames = read_history(found.path)
        conversations, messages = frames["conversations"], frames["messages"]
        note = "a history folder keeps no memory of the provider's: serve an export (its zip or folder) to read it"
    else:
        conv_table, msg_table = envelope_tables([source], sources=[found.label], progress=False)
        assert msg_table is not None
        conversations = to_pandas(conv_table, CONVERSATION_COLUMNS, None)
        messages = to_pandas(msg_table, MESSAGE_COLUMNS, None)
        if found.kind == "export":
            memory = read_memory(*found.parts, progress=False)
        else:
            what = "a Parquet folder" if found.kind == "parquet" else "an envelope"
            note = f"{what} keeps no memory of the provider's: serve the export it came from (its zip or folder)"
    return HistoryView(conversations, messages, label=found.label, memory=memory, memory_note=note)


def checked(tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` of ``tool`` checked against its schema in :data:`TOOLS` (nulls dropped); QueryError
    naming the first argument that does not fit."""
    schema = TOOLS[tool]["input_schema"]
    properties: dict[str, Any] = schema["properties"]
    args = {name: value for name, value in arguments.items() if value is not None}
    for name, value in args.items():
        spec = properties.get(name)
        if spec is None:
            takes = ", ".join(properties) or "no arguments"
            raise QueryError(f"{tool} takes {takes}; got an argument {name!r}")
        if spec["type"] == "string":
            if not isinstance(value, str):
                raise QueryError(f"{name} must be a string, got {_shown(value)}")
            if "enum" in spec and value not in spec["enum"]:
                raise QueryError(f"{name} must be one of {', '.join(spec['enum'])}, got {value!r}")
        elif spec["type"] == "integer":
            whole = isinstance(value, int) or (isinstance(value, float) and math.isfinite(value) and value.is_integer())
            if isinstance(value, bool) or not whole:
                raise QueryError(f"{name} must be a whole number, got {_shown(value)}")
            value = args[name] = int(value)
            low, high = spec.get("minimum"), spec.get("maximum")
            if (low is not None and value < low) or (high is not None and value > high):
                bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
                raise QueryError(f"{name} must be {bounds}, got {value}")
    for name in schema.get("required", ()):
        if name not in args:
            raise QueryError(f"{tool} needs the argument {name!r}")
    return args


def _shown(value: Any) -> str:
    """A value of the wrong type, as a message shows it: its JSON type and a short repr."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:39] + '…'}"


def _history_fields(row: Any) -> dict[str, Any]:
    """The status and the first and last sighting of a history folder's conversation or message."""
    return {"status": _value(row["status"]), "first_seen": _iso(row["first_seen"]), "last_seen": _iso(row["last_seen"])}


def _value(value: Any) -> Any:
    """A frame's value as JSON takes it: missing values as None."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value) if not isinstance(value, int | float | bool) else value


def _iso(value: Any) -> str | None:
    """A UTC timestamp as ISO 8601 with milliseconds and ``Z``; None when missing."""
    if value is None or value is pd.NaT or (not isinstance(value, pd.Timestamp) and pd.isna(value)):
        return None
    stamp = pd.Timestamp(value)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"
