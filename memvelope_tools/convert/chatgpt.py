"""ChatGPT export conversations (``mapping`` trees) to envelope conversations.

Messages follow the active path (``current_node`` back through ``parent``, reversed; spec v0.2.0 and
NOTES A1). The timestamp-sorted enumeration of every node is only the fallback for the three cases the
spec names (NOTES A1, A2, A7).
"""

from __future__ import annotations

import re
from typing import Any, Final

from .prose import join_blocks, map_role, role_drop_reason, trimmed_string
from .timestamps import is_number, render_timestamp, to_double

Message = tuple[str, str, object]  # role, text, raw timestamp
_ARRAY_INDEX: Final = re.compile(r"0|[1-9][0-9]{0,9}", re.ASCII)
_MAX_ARRAY_INDEX: Final = 2**32 - 2
_PROSE_TYPES: Final = frozenset({"text", "multimodal_text"})
_MISSING: Final = object()
_JSON_KINDS: Final = {
    type(None): "null",
    bool: "boolean",
    int: "number",
    float: "number",
    list: "array",
    dict: "object",
}


def looks_like(element: object) -> bool:
    """True iff ``element`` has a ``mapping`` that is a non-null, non-array object."""
    return type(element) is dict and type(element.get("mapping")) is dict


def own_property_values(mapping: dict[str, Any]) -> list[Any]:
    """``Object.values(mapping)``: array-index keys first in ascending order, then insertion order."""
    index_keys = [k for k in mapping if k[:1].isdigit() and _is_array_index(k)]
    if not index_keys:
        return list(mapping.values())
    index_keys.sort(key=int)
    chosen = set(index_keys)
    return [mapping[k] for k in index_keys] + [v for k, v in mapping.items() if k not in chosen]


def _is_array_index(key: str) -> bool:
    return _ARRAY_INDEX.fullmatch(key) is not None and int(key) <= _MAX_ARRAY_INDEX


def _content_text(content: object) -> str:
    if type(content) is not dict:
        return ""
    kind = content.get("content_type", _MISSING)
    if kind is _MISSING or (type(kind) is str and (kind == "" or kind in _PROSE_TYPES)):
        parts = content.get("parts")
        if type(parts) is not list:
            return ""
        blocks: list[str] = []
        for part in parts:
            if type(part) is str:
                blocks.append(part)
            elif type(part) is dict:
                text = part.get("text")
                if type(text) is str:
                    blocks.append(text)
        return join_blocks(blocks)
    if kind == "user_editable_context":
        return join_blocks(v for v in (content.get("user_profile"), content.get("user_instructions")) if type(v) is str)
    return ""  # a present, non-prose content_type (null included: NOTES A10)


def node_message(node: object) -> Message | None:
    """The envelope-eligible message a mapping node holds, or None when the node is dropped."""
    if type(node) is not dict:
        return None
    message = node.get("message")
    if type(message) is not dict:
        return None
    metadata = message.get("metadata")
    if type(metadata) is dict and metadata.get("is_visually_hidden_from_conversation") is True:
        return None
    author = message.get("author")
    role = map_role(author.get("role")) if type(author) is dict else None
    if role is None:
        return None
    text = _content_text(message.get("content"))
    if not text:
        return None
    stamp = message.get("create_time")
    if stamp is None:  # absent or null only (NOTES A27)
        stamp = node.get("create_time")
    return role, text, stamp


def drop_reason(node: object) -> str | None:
    """Why :func:`node_message` drops ``node`` (None when it keeps it); for ``memvelope doctor`` only.

    ``"no message"`` marks a structural node (a null root); the others name the rule that dropped it.
    """
    if type(node) is not dict:
        return "malformed element"
    message = node.get("message")
    if message is None:
        return "no message"
    if type(message) is not dict:
        return "malformed element"
    metadata = message.get("metadata")
    if type(metadata) is dict and metadata.get("is_visually_hidden_from_conversation") is True:
        return "hidden"
    author = message.get("author")
    token = author.get("role") if type(author) is dict else None
    if map_role(token) is None:
        return role_drop_reason(token)
    content = message.get("content")
    if type(content) is not dict:
        return "malformed element"
    kind = content.get("content_type", _MISSING)
    prose = kind is _MISSING or (type(kind) is str and (kind == "" or kind in _PROSE_TYPES))
    if not prose and kind != "user_editable_context":
        return f"content type {kind if type(kind) is str else _JSON_KINDS.get(type(kind), 'other')}"
    if _content_text(content):
        return None
    parts = content.get("parts")
    if kind != "user_editable_context" and (
        type(parts) is not list
        or not any(type(p) is str or (type(p) is dict and type(p.get("text")) is str) for p in parts)
    ):
        return "no text parts"
    return "empty after trimming"


def active_path(mapping: dict[str, Any], current: object) -> list[Any]:
    """Nodes from the root to ``current_node``; empty when ``current_node`` does not resolve."""
    if type(current) is not str or current not in mapping:
        return []
    path: list[Any] = []
    seen: set[str] = set()
    key: str = current
    while key not in seen:  # a cycle ends the walk before revisiting a node (NOTES A4)
        seen.add(key)
        node = mapping[key]
        if type(node) is not dict:  # a malformed node ends the walk (NOTES A5)
            break
        path.append(node)
        parent = node.get("parent")
        if type(parent) is not str or parent not in mapping:  # root, dangling or non-string (A5, A6)
            break
        key = parent
    path.reverse()
    return path


def _fallback_messages(mapping: dict[str, Any]) -> list[Message]:
    dated: list[tuple[float, Message]] = []
    undated: list[Message] = []
    for node in own_property_values(mapping):
        found = node_message(node)
        if found is None:
            continue
        stamp = found[2]
        if is_number(stamp):
            dated.append((to_double(stamp), found))  # type: ignore[arg-type]
        else:
            undated.append(found)
    dated.sort(key=lambda item: item[0])  # stable: ties keep own-property order
    return [m for _, m in dated] + undated


def path_messages(mapping: dict[str, Any], current: object) -> list[Message]:
    """The conversation's messages in envelope order (active path, else the fallback)."""
    found = [m for m in map(node_message, active_path(mapping, current)) if m is not None]
    return found or _fallback_messages(mapping)


def conversation_id(element: dict[str, Any]) -> str | None:
    for key in ("conversation_id", "id"):
        value = element.get(key)
        if type(value) is str and value:
            return value
    return None


def normalise(element: object) -> dict[str, Any] | None:
    """One ChatGPT conversation as an envelope conversation, or None when it yields no message."""
    if type(element) is not dict:
        return None
    mapping = element.get("mapping")
    if type(mapping) is not dict:  # NOTES A19
        return None
    found = path_messages(mapping, element.get("current_node"))
    if not found:
        return None
    messages = [
        {"id": f"m{i}", "role": role, "ts": render_timestamp(stamp), "text": text}
        for i, (role, text, stamp) in enumerate(found, 1)
    ]
    created = render_timestamp(element.get("create_time"))
    return {
        "id": conversation_id(element),
        "title": trimmed_string(element.get("title")),
        "created_at": created if created is not None else messages[0]["ts"],
        "updated_at": render_timestamp(element.get("update_time")),
        "messages": messages,
    }
