"""Doctor's view of one Claude conversation: every ``chat_messages`` entry, kept or dropped, and why.

Whether a message is kept, and why not, is the conversion core's ``classify``. ``parent_message_uuid``
is read only to report branches and ordering: the envelope keeps source order and every branch (conformance A28).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Final

from .._convert import claude as core
from .._convert.prose import Message, map_role
from .._convert.timestamps import render_timestamp
from .findings import MALFORMED, Analysis, ConversationFacts

# content block types Claude exports are known to carry; any other is listed as unknown.
KNOWN_BLOCK_TYPES: Final = frozenset(
    {
        "text",
        "thinking",
        "redacted_thinking",
        "tool_use",
        "tool_result",
        "image",
        "document",
        "server_tool_use",
        "web_search_tool_result",
    }
)


def _raw_text(message: dict[str, Any]) -> str | None:
    content = message.get("content")
    pieces: list[str] = []
    if type(content) is list:
        for block in content:
            if type(block) is dict:
                pieces += [block[k] for k in ("text", "thinking") if type(block.get(k)) is str]
    if type(message.get("text")) is str:
        pieces.append(message["text"])
    joined = " ".join(p for p in pieces if p.strip())
    return joined or None


def _key(message: dict[str, Any], index: int) -> str:
    uuid = message.get("uuid")
    return uuid if type(uuid) is str and uuid else f"chat_messages[{index}]"


def analyse(element: object, facts: ConversationFacts, acc: Analysis) -> None:
    """Fill ``facts`` (and ``acc``) for one element of a Claude export."""
    facts.id = core.conversation_id(element)
    facts.title = core.title(element)
    chat = core.chat_messages(element)
    if chat is None:
        facts.omitted = MALFORMED
        detail = "no chat_messages array" if type(element) is dict else "element is not an object"
        acc.example(f"conversation: {MALFORMED}", facts.example(detail=detail))
        return
    assert type(element) is dict
    for index, message in enumerate(chat):
        facts.nodes += 1
        facts.messages += 1
        verdict = core.classify(message)
        key = f"chat_messages[{index}]"
        text = None
        if type(message) is dict:
            key = _key(message, index)
            text = _raw_text(message)
            content = message.get("content")
            for block in content if type(content) is list else ():
                if type(block) is dict:
                    acc.seen_type("block type", block.get("type"), KNOWN_BLOCK_TYPES, facts, key)
        if isinstance(verdict, Message):
            facts.messages_kept += 1
            acc.timestamp("message created_at", verdict.stamp, facts, key)
            continue
        facts.dropped[verdict.reason] += 1
        acc.example(f"message: {verdict.reason}", facts.example(key, text=text))
    _ordering(chat, facts, acc)
    acc.finish_conversation(element, facts, ("created_at", "updated_at"))


def _ordering(chat: list[Any], facts: ConversationFacts, acc: Analysis) -> None:
    """Backwards created_at, equal timestamps with the reply, branches described by parent links."""
    entries = [(i, m) for i, m in enumerate(chat) if type(m) is dict]
    stamps = {i: render_timestamp(m.get("created_at")) for i, m in entries}
    by_uuid = {m["uuid"]: i for i, m in entries if type(m.get("uuid")) is str and m["uuid"]}
    parent_of: dict[int, int] = {}
    for i, m in entries:
        parent = m.get("parent_message_uuid")
        if type(parent) is str and parent in by_uuid and by_uuid[parent] != i:
            parent_of[i] = by_uuid[parent]
    linked = bool(parent_of)
    previous: tuple[int, str] | None = None
    prior: int | None = None
    for i, m in entries:
        key, stamp = _key(m, i), stamps[i]
        if stamp is not None:
            if previous is not None and stamp < previous[1]:
                facts.backwards += 1
                acc.example("ordering: created_at going backwards", facts.example(key, f"{stamp} < {previous[1]}"))
            previous = (i, stamp)
        # the message this one replies to: its linked parent, else (unlinked exports) the entry before it
        before = parent_of.get(i) if linked else prior
        prior = i
        if before is None or stamp is None:
            continue
        if stamps[before] == stamp and map_role(chat[before].get("sender")) != map_role(m.get("sender")):
            facts.equal_reply += 1
            acc.example("ordering: reply with equal timestamp", facts.example(key, stamp))
        elif linked and stamps[before] is not None and stamp < stamps[before]:  # type: ignore[operator]
            facts.inversions += 1
            acc.example("timestamp: child before parent", facts.example(key, f"{stamp} < {stamps[before]}"))
    _linked_branches(chat, entries, parent_of, facts, acc)


def _linked_branches(
    chat: list[Any], entries: list[tuple[int, Any]], parent_of: dict[int, int], facts: ConversationFacts, acc: Analysis
) -> None:
    children: defaultdict[int, list[int]] = defaultdict(list)
    for child, parent in parent_of.items():
        children[parent].append(child)
    for parent, kids in children.items():
        if len(kids) < 2:
            continue
        facts.linked_branches += 1
        roles = Counter(map_role(chat[k].get("sender")) for k in kids)
        kind = (
            "regenerated reply"
            if roles["assistant"] >= 2
            else "edited prompt"
            if roles["user"] >= 2
            else "other branch"
        )
        if kind == "regenerated reply":
            facts.regenerated += 1
        elif kind == "edited prompt":
            facts.edited += 1
        else:
            facts.other_branches += 1
        acc.example(f"branch: {kind}", facts.example(_key(chat[parent], parent), f"{len(kids)} children"))
    if facts.linked_branches and entries:
        last = entries[-1][0]
        chain = {last}
        while last in parent_of and parent_of[last] not in chain:
            last = parent_of[last]
            chain.add(last)
        facts.hidden_branch_messages = sum(1 for i, _ in entries if i not in chain)
