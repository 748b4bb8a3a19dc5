"""Every message node of one conversation as a row: ChatGPT ``mapping`` nodes that hold a message, on
every branch, and Claude ``chat_messages`` entries.

Which nodes the envelope keeps, in which order, and their ids are the converter's own answers
(:func:`memvelope_tools._convert.chatgpt.select`, :func:`memvelope_tools._convert.claude.kept`), and a
node's kind, tools, model and custom GPT are the provider registry's (:mod:`memvelope_tools._providers.nodes`);
this module only puts them side by side. The columns are those of ``nodes_frame`` (see
:mod:`memvelope_tools._whole.nodes`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, NamedTuple

from .._convert import chatgpt, claude
from .._convert.prose import Drop, Message, join_blocks, map_role, message_id
from .._convert.timestamps import render_timestamp
from .._providers import nodes as kinds

_SOURCE_ROLES: Final = frozenset({"system", "tool"})
# The text of a ChatGPT content without prose, in this order (besides its parts and thoughts).
_TEXT_FIELDS: Final = ("text", "result", "content", "model_set_context", "user_profile", "user_instructions")


class Node(NamedTuple):
    """One message node. ``ordinal`` numbers the conversations of a batch (from 0), ``conv_index`` the
    conversations the envelope keeps (from 0 within the batch, None when it omits the conversation);
    ``ts`` is the rendered timestamp; ``text`` the node's text (see :func:`chatgpt_text`)."""

    ordinal: int
    conv_index: int | None
    conversation_id: str | None
    node_id: str | None
    parent_id: str | None
    role: str
    author: str | None
    recipient: str | None
    content_type: str | None
    kind: str
    tools: list[str]
    model: str | None
    custom_gpt: str | None
    ts: str | None
    on_active_path: bool
    message_id: str | None
    sibling: int
    siblings: int
    text: str
    attachments: int


def role_of(token: object) -> str:
    """A node's role: ``user`` or ``assistant`` by the envelope's role mapping, else ``system``, ``tool`` or
    ``other``, as ``memvelope doctor`` names the roles the envelope drops."""
    role = map_role(token)
    if role is not None:
        return role
    lowered = token.lower() if type(token) is str else ""
    return lowered if lowered in _SOURCE_ROLES else "other"


def _string(value: object) -> str | None:
    return value if type(value) is str else None


def places(
    parents: list[tuple[Any, object]], order: Callable[[str], dict[Any, int] | None] | None = None
) -> dict[Any, tuple[int, int]]:
    """The place of each node that has siblings among the nodes with the same parent, and how many there
    are (a node left out is place 1 of 1): ``parents`` holds ``(node key, parent)`` in document order; a
    node whose parent is no string has none. ``order`` gives, for a parent, the rank of its children as it
    lists them (those it does not list come after, in document order), or None when it lists none."""
    groups: dict[str, list[Any]] = {}
    for key, parent in parents:
        if type(parent) is str:
            groups.setdefault(parent, []).append(key)
    found: dict[Any, tuple[int, int]] = {}
    for parent, group in groups.items():
        if len(group) < 2:
            continue
        if order is not None and (ranks := order(parent)):
            group.sort(key=lambda key: ranks.get(key, len(ranks)))
        for n, key in enumerate(group, 1):
            found[key] = (n, len(group))
    return found


# ---- ChatGPT ---------------------------------------------------------------------------------------


def chatgpt_text(content: object) -> str:
    """A ChatGPT node's text: its prose as the envelope extracts it, else (a content without prose) its
    string parts and the ``text`` of object parts, its ``text``, ``result``, ``content``,
    ``model_set_context``, ``user_profile`` and ``user_instructions``, and the ``content`` of each of its
    ``thoughts``; each trimmed, the empty ones dropped, joined by a blank line."""
    if type(content) is not dict:
        return ""
    prose = chatgpt.prose_text(content)
    if not isinstance(prose, Drop):
        return prose
    blocks: list[str] = []
    parts = content.get("parts")
    if type(parts) is list:
        for part in parts:
            if type(part) is str:
                blocks.append(part)
            elif type(part) is dict and type(part.get("text")) is str:
                blocks.append(part["text"])
    blocks += [content[f] for f in _TEXT_FIELDS if type(content.get(f)) is str]
    thoughts = content.get("thoughts")
    if type(thoughts) is list:
        blocks += [t["content"] for t in thoughts if type(t) is dict and type(t.get("content")) is str]
    return join_blocks(blocks)


class ChatgptTree(NamedTuple):
    """A ChatGPT conversation's nodes as the rows see them: the envelope's ``selection``, the ``id()`` of
    the nodes on the path it takes (``on_path``; None: every node, in the spec's fallback), the mapping's
    nodes that are objects (``(key, node)`` in its own-property order) and the place of each one that
    has siblings (``where``, see :func:`places`; a node missing there is place 1 of 1)."""

    selection: chatgpt.Selection
    on_path: set[int] | None
    nodes: list[tuple[str, dict[str, Any]]]
    where: dict[Any, tuple[int, int]]


def chatgpt_tree(element: object) -> ChatgptTree | None:
    """The tree of one ChatGPT conversation; None when ``element`` is no ChatGPT conversation."""
    mapping = chatgpt.mapping_of(element)
    if mapping is None:
        return None
    assert type(element) is dict
    selection = chatgpt.select(mapping, element.get("current_node"))
    on_path = None if selection.fallback else {id(node) for node in selection.path}
    nodes = [(key, node) for key in chatgpt.own_property_keys(mapping) if type(node := mapping[key]) is dict]

    def order(parent: str) -> dict[Any, int] | None:
        node = mapping.get(parent)
        children = node.get("children") if type(node) is dict else None
        if type(children) is not list or len(children) < 2:
            return None
        return {c: r for r, c in reversed(list(enumerate(children))) if type(c) is str}

    where = places([(key, node.get("parent")) for key, node in nodes], order)
    return ChatgptTree(selection, on_path, nodes, where)


def chatgpt_rows(
    element: object, ordinal: int, conv_index: int, out: list[Node], with_text: bool = True
) -> bool | None:
    """Append a row per message node of one ChatGPT conversation (every branch, in the mapping's
    own-property order) to ``out``. Returns None when ``element`` is no ChatGPT conversation, else whether
    the envelope keeps it (its rows then carry ``conv_index``). Without ``with_text`` only the nodes the
    envelope keeps get their text (the others get ``""``)."""
    tree = chatgpt_tree(element)
    if tree is None:
        return None
    assert type(element) is dict
    selection, on_path, nodes, where = tree
    ids = chatgpt.message_ids(selection)
    index = conv_index if selection.kept else None
    cid = chatgpt.conversation_id(element)
    texts = {id(node): found.text for node, found in selection.kept}
    for key, node in nodes:
        message = node.get("message")
        if type(message) is not dict:
            continue
        facts = kinds.chatgpt_facts(message, element)
        sibling, siblings = where.get(key, (1, 1))
        text = texts.get(id(node))
        if text is None:
            text = chatgpt_text(message.get("content")) if with_text else ""
        out.append(
            Node(
                ordinal,
                index,
                cid,
                key,
                _string(node.get("parent")),
                role_of(facts.role),
                facts.author,
                facts.recipient,
                facts.content_type,
                facts.kind,
                facts.tools,
                facts.model,
                facts.custom_gpt,
                render_timestamp(chatgpt.stamp(node, message)),
                True if on_path is None else id(node) in on_path,
                ids.get(id(node)),
                sibling,
                siblings,
                text,
                facts.attachments,
            )
        )
    return index is not None


# ---- Claude ----------------------------------------------------------------------------------------


def claude_rows(element: object, ordinal: int, conv_index: int, out: list[Node], with_text: bool = True) -> bool | None:
    """Append a row per entry of one Claude conversation's ``chat_messages`` (in their order) to ``out``.
    Every entry is on the path the envelope takes (conformance A28). Returns None when ``element`` is no
    Claude conversation, else whether the envelope keeps it (its rows then carry ``conv_index``)."""
    tree = claude_tree(element)
    if tree is None:
        return None
    assert type(element) is dict
    kept, entries, where = tree
    index = conv_index if kept else None
    cid = claude.conversation_id(element)
    for i, message in entries:
        prose, mid = claude_prose(kept, i, message)
        facts = kinds.claude_facts(message, element, bool(prose))
        sibling, siblings = where.get(i, (1, 1))
        out.append(
            Node(
                ordinal,
                index,
                cid,
                _string(message.get("uuid")),
                _string(message.get("parent_message_uuid")),
                role_of(facts.role),
                facts.author,
                facts.recipient,
                facts.content_type,
                facts.kind,
                facts.tools,
                facts.model,
                facts.custom_gpt,
                render_timestamp(message.get("created_at")),
                True,
                mid,
                sibling,
                siblings,
                prose or (_thinking(message) if with_text else ""),
                facts.attachments,
            )
        )
    return index is not None


class ClaudeTree(NamedTuple):
    """A Claude conversation's entries as the rows see them: those the envelope keeps (``kept``: by their
    index in ``chat_messages``, their number from 1 and their message), the entries that are objects
    (``(index, entry)`` in order) and each one's place among its siblings (``where``, see :func:`places`)."""

    kept: dict[int, tuple[int, Message]]
    entries: list[tuple[int, dict[str, Any]]]
    where: dict[Any, tuple[int, int]]


def claude_tree(element: object) -> ClaudeTree | None:
    """The entries of one Claude conversation; None when ``element`` is no Claude conversation."""
    chat = claude.chat_messages(element)
    if chat is None:
        return None
    kept = {i: (n, found) for n, (i, found) in enumerate(claude.kept(chat), 1)}
    entries = [(i, m) for i, m in enumerate(chat) if type(m) is dict]
    return ClaudeTree(kept, entries, places([(i, m.get("parent_message_uuid")) for i, m in entries]))


def claude_prose(kept: dict[int, tuple[int, Message]], i: int, message: dict[str, Any]) -> tuple[str, str | None]:
    """The prose of the entry at ``i`` (the envelope's text when it keeps the entry, else its text as
    Claude's rule reads it, which tells its kind) and its envelope id (None when not kept)."""
    if i in kept:
        number, found = kept[i]
        return found.text, message_id(number)
    return claude.message_text(message), None


def _thinking(message: dict[str, Any]) -> str:
    """The text of a Claude message's ``thinking`` blocks, trimmed and joined by a blank line."""
    content = message.get("content")
    if type(content) is not list:
        return ""
    return join_blocks(
        b["thinking"]
        for b in content
        if type(b) is dict and b.get("type") == "thinking" and type(b.get("thinking")) is str
    )


#: The row function of each provider: ``(element, ordinal, conv_index, out, with_text) -> kept or None``.
ROWS: Final = {"chatgpt": chatgpt_rows, "claude": claude_rows}
