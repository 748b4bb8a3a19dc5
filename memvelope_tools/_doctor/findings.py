"""The doctor's findings: what an export holds, what the envelope keeps, what it drops and why."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from .._convert.prose import MALFORMED as MALFORMED_DROP
from .._convert.timestamps import render_timestamp
from .._jsontypes import json_type
from .timestamps import unaccepted_form

if TYPE_CHECKING:
    import pandas as pd

EXAMPLE_LIMIT: Final = 3
TEXT_EXCERPT: Final = 120
CONVERSATION_EMPTY: Final = "conversation omitted because empty"
#: A conversation (and its messages) of the provider conversion did not keep, in an input mixing both.
OTHER_PROVIDER: Final = "another provider's conversation"
MALFORMED: Final = MALFORMED_DROP.reason


@dataclass
class Example:
    """Where a finding occurs: a conversation (id and title), the element in it, a detail, maybe text."""

    conversation_id: str | None
    title: str
    at: str | None = None
    detail: str | None = None
    text: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"conversation_id": self.conversation_id, "title": self.title}
        for key in ("at", "detail", "text"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass
class PartInfo:
    """One part read, in the order conversion reads it."""

    order: int
    name: str
    size: int | None
    top_level: str  # "array", "object", "string", ...
    elements: int
    replaced: int = 0  # invalid UTF-8 sequences replaced with U+FFFD
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "order": self.order,
            "name": self.name,
            "bytes": self.size,
            "top_level": self.top_level,
            "elements": self.elements,
        }
        if self.replaced:
            out["replaced_utf8"] = self.replaced
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class ConversationFacts:
    """Figures for one element of the merged array (one conversation, kept or omitted)."""

    index: int  # position in the merged array, from 0
    part: str | None
    provider: str | None = None  # whose rules read it: the export's, or the other provider's
    id: str | None = None
    title: str = ""
    omitted: str | None = None  # why the envelope has no such conversation
    nodes: int = 0  # ChatGPT mapping nodes; Claude chat_messages entries
    structural: int = 0  # ChatGPT nodes without a message object (null roots)
    messages: int = 0
    messages_kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    fallback: str | None = None  # ChatGPT: why the timestamp-sorted fallback was used
    regenerated: int = 0  # branch points whose message children are >= 2 assistant replies
    edited: int = 0  # branch points whose message children are >= 2 user prompts
    other_branches: int = 0
    off_path: int = 0  # ChatGPT nodes the active path left out
    linked_branches: int = 0  # Claude parents with >= 2 children via parent_message_uuid
    hidden_branch_messages: int = 0  # Claude messages off the chain that ends at the last message
    inversions: int = 0
    backwards: int = 0
    equal_reply: int = 0

    @property
    def kept(self) -> bool:
        return self.omitted is None

    def example(self, at: str | None = None, detail: str | None = None, text: str | None = None) -> Example:
        return Example(self.id, self.title, at, detail, text)

    def row(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ROW_FIELDS}
        out["kept"] = self.kept
        out["messages_dropped"] = sum(self.dropped.values())
        return out


ROW_FIELDS: Final = (
    "index",
    "part",
    "provider",
    "id",
    "title",
    "omitted",
    "nodes",
    "structural",
    "messages",
    "messages_kept",
    "fallback",
    "regenerated",
    "edited",
    "other_branches",
    "off_path",
    "linked_branches",
    "hidden_branch_messages",
    "inversions",
    "backwards",
    "equal_reply",
)


@dataclass
class TimestampTally:
    """One timestamp field: how many values it had, how many were null, unparseable ones by form."""

    values: int = 0
    null: int = 0
    unparseable: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        return {"values": self.values, "null": self.null, "unparseable": _ranked(self.unparseable)}


class Analysis:
    """The accumulator the provider analysers fill in."""

    def __init__(self, show_text: bool) -> None:
        self.show_text = show_text
        self.conversations: list[ConversationFacts] = []
        self.examples: dict[str, list[Example]] = {}
        self.timestamps: dict[str, TimestampTally] = {}
        self.types: dict[str, Counter[str]] = {}
        self.unknown: dict[str, Counter[str]] = {}
        self.mixed: str | None = None  # what conversion keeps and leaves out of an input mixing providers

    def example(self, topic: str, example: Example) -> None:
        """Keep ``example`` under ``topic`` unless that topic already has enough."""
        found = self.examples.setdefault(topic, [])
        if len(found) < EXAMPLE_LIMIT:
            if not self.show_text:
                example.text = None
            elif example.text is not None and len(example.text) > TEXT_EXCERPT:
                example.text = example.text[:TEXT_EXCERPT] + "…"
            found.append(example)

    def timestamp(self, field_name: str, raw: object, where: ConversationFacts, at: str | None) -> str | None:
        """Tally one source timestamp value that reaches the envelope; return its rendering."""
        tally = self.timestamps.setdefault(field_name, TimestampTally())
        tally.values += 1
        rendered = render_timestamp(raw)
        if raw is None:
            tally.null += 1
        elif rendered is None:
            form = unaccepted_form(raw)
            tally.unparseable[form] += 1
            self.example(f"timestamp: {form}", where.example(at, f"{field_name}: {_shape(raw)}"))
        return rendered

    def finish_conversation(self, element: dict[str, Any], facts: ConversationFacts, keys: tuple[str, str]) -> None:
        """Mark a conversation with no kept message as omitted; else tally its timestamps (source ``keys``)."""
        if not facts.messages_kept:
            facts.omitted = CONVERSATION_EMPTY
            self.example(f"conversation: {CONVERSATION_EMPTY}", facts.example())
            return
        for key in keys:
            self.timestamp(f"conversation {key}", element.get(key), facts, None)

    def seen_type(
        self, family: str, name: object, known: frozenset[str], where: ConversationFacts, at: str | None
    ) -> None:
        """Count one content/block type; remember it as unknown when it is not in ``known``."""
        label = name if type(name) is str else f"({json_type(name)})"
        self.types.setdefault(family, Counter())[label] += 1
        if label not in known:
            self.unknown.setdefault(family, Counter())[label] += 1
            self.example(f"unknown {family}: {label}", where.example(at))


def _shape(value: object) -> str:
    """A timestamp's form with its digits masked (``2024-01-01T00:00:00+`` -> ``9999-99-99T99:99:99+``)."""
    if type(value) is not str:
        return json_type(value)
    masked = "".join("9" if c.isdigit() else c for c in value[:40])
    return repr(masked + ("…" if len(value) > 40 else ""))


def _ranked(counts: Counter[str]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass
class Diagnosis:
    """Everything ``memvelope doctor`` found; ``to_json()``, ``summary()`` and ``frames()`` present it."""

    inputs: list[str]
    parts: list[PartInfo]
    ignored: list[tuple[str, str]]
    provider: str | None
    error: tuple[str, str] | None  # (reason, message) when conversion would fail
    elements: int
    conversations: list[ConversationFacts]
    examples: dict[str, list[Example]]
    timestamps: dict[str, TimestampTally]
    types: dict[str, Counter[str]]
    unknown_types: dict[str, Counter[str]]
    show_text: bool = False
    # When no part is an array but some hold one conversation each: what they would give inside [ ].
    if_wrapped: Diagnosis | None = None
    # What conversion keeps and leaves out when the input mixes ChatGPT and Claude conversations.
    mixed: str | None = None
    # What the provider remembered (saved memories, snapshots, custom instructions, Claude memory files):
    # items by kind, how many of them the envelope also holds as a message, and what the export cannot say.
    memory: dict[str, Any] | None = None

    @property
    def converts(self) -> bool:
        return self.error is None

    @property
    def conversations_kept(self) -> int:
        return 0 if self.error else sum(1 for c in self.conversations if c.kept)

    @property
    def messages_kept(self) -> int:
        return 0 if self.error else sum(c.messages_kept for c in self.conversations if c.kept)

    @property
    def messages_total(self) -> int:
        return sum(c.messages for c in self.conversations)

    @property
    def messages_dropped(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for c in self.conversations:
            total.update(c.dropped)
        return _ranked(total)

    @property
    def conversations_dropped(self) -> dict[str, int]:
        return _ranked(Counter(c.omitted for c in self.conversations if c.omitted is not None))

    def mixed_providers(self) -> dict[str, Any] | None:
        """The other provider's conversations in an input mixing both, read by their own provider's
        rules: how many, their messages, and how many of those converting them on their own keeps."""
        others = [c for c in self.conversations if c.omitted == OTHER_PROVIDER]
        if not others:
            return None
        return {
            "provider": others[0].provider,
            "conversations": len(others),
            "messages": sum(c.messages for c in others),
            "messages_kept_on_their_own": sum(c.messages_kept for c in others),
            "note": self.mixed,
        }

    def branches(self) -> dict[str, int]:
        cs = self.conversations
        out = {
            "conversations_with_regenerated_replies": sum(1 for c in cs if c.regenerated),
            "conversations_with_edited_prompts": sum(1 for c in cs if c.edited),
            "regenerated_reply_points": sum(c.regenerated for c in cs),
            "edited_prompt_points": sum(c.edited for c in cs),
            "other_branch_points": sum(c.other_branches for c in cs),
        }
        if self.provider == "chatgpt":
            out["nodes_left_out_by_active_path"] = sum(c.off_path for c in cs)
            out["messages_left_out_by_active_path"] = self.messages_dropped.get("abandoned branch", 0)
            out["conversations_using_fallback"] = sum(1 for c in cs if c.fallback)
        if self.provider == "claude":
            out["parent_link_branch_points"] = sum(c.linked_branches for c in cs)
            out["messages_on_hidden_branches"] = sum(c.hidden_branch_messages for c in cs)
        return out

    def ordering(self) -> dict[str, int]:
        cs = self.conversations
        out = {"child_before_parent_inversions": sum(c.inversions for c in cs)}
        if self.provider == "claude":
            out["created_at_going_backwards"] = sum(c.backwards for c in cs)
            out["conversations_going_backwards"] = sum(1 for c in cs if c.backwards)
            out["reply_with_equal_timestamp"] = sum(c.equal_reply for c in cs)
        return out

    def to_json(self) -> dict[str, Any]:
        """The findings as plain JSON data; ``messages_kept`` equals the envelope's ``message_count``."""
        cs = self.conversations
        fallback = Counter(c.fallback for c in cs if c.fallback)
        return {
            "report": "memvelope-doctor",
            "inputs": self.inputs,
            "provider": self.provider,
            "converts": self.converts,
            "error": None if self.error is None else {"reason": self.error[0], "message": self.error[1]},
            "mixed_providers": self.mixed_providers(),
            "conversations_kept": self.conversations_kept,
            "conversations_total": self.elements,
            "conversations_dropped": self.conversations_dropped,
            "messages_kept": self.messages_kept,
            "messages_total": self.messages_total,
            "messages_dropped": self.messages_dropped,
            "nodes": {"total": sum(c.nodes for c in cs), "without_message": sum(c.structural for c in cs)},
            "parts": [p.to_json() for p in self.parts],
            "ignored": [{"name": n, "why": w} for n, w in self.ignored],
            "fallback": _ranked(fallback),
            "branches": self.branches(),
            "ordering": self.ordering(),
            "timestamps": {k: v.to_json() for k, v in sorted(self.timestamps.items())},
            "types": {k: _ranked(v) for k, v in sorted(self.types.items())},
            "unknown_types": {k: _ranked(v) for k, v in sorted(self.unknown_types.items())},
            "examples": {k: [e.to_json() for e in v] for k, v in sorted(self.examples.items())},
            "if_wrapped": None if self.if_wrapped is None else self.if_wrapped.to_json(),
            "memory": self.memory,
        }

    def summary(self) -> str:
        """A readable multi-line summary for a terminal."""
        from .text import render

        return render(self)

    def frames(self) -> dict[str, pd.DataFrame]:
        """The findings as pandas DataFrames: conversations, drops, parts, ignored, types, timestamps, examples."""
        import pandas as pd

        drops = [("conversation", r, n) for r, n in self.conversations_dropped.items()]
        drops += [("message", r, n) for r, n in self.messages_dropped.items()]
        types = [
            (fam, name, n, name in self.unknown_types.get(fam, {}))
            for fam, counts in self.types.items()
            for name, n in _ranked(counts).items()
        ]
        stamps = [(f, "null", n.null) for f, n in self.timestamps.items()]
        stamps += [(f, form, c) for f, n in self.timestamps.items() for form, c in n.unparseable.items()]
        examples = [{"topic": t, **e.to_json()} for t, es in self.examples.items() for e in es]
        conv_columns = [*ROW_FIELDS, "kept", "messages_dropped"]
        return {
            "conversations": pd.DataFrame([c.row() for c in self.conversations], columns=conv_columns),
            "drops": pd.DataFrame(drops, columns=["level", "reason", "count"]),
            "parts": pd.DataFrame(
                [p.to_json() for p in self.parts], columns=["order", "name", "bytes", "top_level", "elements"]
            ),
            "ignored": pd.DataFrame(self.ignored, columns=["name", "why"]),
            "types": pd.DataFrame(types, columns=["family", "type", "count", "unknown"]),
            "timestamps": pd.DataFrame(stamps, columns=["field", "form", "count"]),
            "examples": pd.DataFrame(examples, columns=["topic", "conversation_id", "title", "at", "detail", "text"]),
        }
