"""ChatGPT export conversations (``mapping`` trees) to envelope conversations.

Messages follow the active path (``current_node`` back through ``parent``, reversed; spec v0.2.0 and
conformance A1). The timestamp-sorted enumeration of every node is only the fallback for the three cases the
spec names (conformance A1, A2, A7).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from .._jsontypes import json_type
from .prose import EMPTY, MALFORMED, Drop, Message, join_blocks, map_role, message_id, role_drop, trimmed_string
from .timestamps import is_number, render_timestamp, to_double

_ARRAY_INDEX: Final = re.compile(r"0|[1-9][0-9]{0,9}", re.ASCII)
_MAX_ARRAY_INDEX: Final = 2**32 - 2
_PROSE_TYPES: Final = frozenset({"text", "multimodal_text"})
_MISSING: Final = object()
NO_MESSAGE: Final = Drop("no message")
_HIDDEN: Final = Drop("hidden")
_NO_TEXT_PARTS: Final = Drop("no text parts")


@dataclass(frozen=True, slots=True)
class Selection:
    """Which mapping nodes give the envelope's messages, in envelope order.

    ``kept`` pairs each kept node with its message; ``path`` is the active path (root first);
    ``fallback`` is True when the path holds no message and every node was enumerated by timestamp.
    """

    kept: list[tuple[Any, Message]]
    path: list[Any]
    fallback: bool


def own_property_values(mapping: dict[str, Any]) -> list[Any]:
    """``Object.values(mapping)``: array-index keys first in ascending order, then insertion order."""
    index_keys = _index_keys(mapping)
    if not index_keys:
        return list(mapping.values())
    chosen = set(index_keys)
    return [mapping[k] for k in index_keys] + [v for k, v in mapping.items() if k not in chosen]


def own_property_keys(mapping: dict[str, Any]) -> list[str]:
    """``Object.keys(mapping)``: the keys in the order of :func:`own_property_values`."""
    index_keys = _index_keys(mapping)
    if not index_keys:
        return list(mapping)
    chosen = set(index_keys)
    return index_keys + [k for k in mapping if k not in chosen]


def _index_keys(mapping: dict[str, Any]) -> list[str]:
    """The array-index keys of ``mapping`` (conformance A3), in ascending order."""
    index_keys = [k for k in mapping if k.isdigit() and _is_array_index(k)]
    index_keys.sort(key=int)
    return index_keys


def _is_array_index(key: str) -> bool:
    return _ARRAY_INDEX.fullmatch(key) is not None and int(key) <= _MAX_ARRAY_INDEX


def classify(node: object) -> Message | Drop:
    """The message a mapping node gives the envelope, or the rule that drops it."""
    if type(node) is not dict:
        return MALFORMED
    message = node.get("message")
    if type(message) is not dict:
        return NO_MESSAGE if message is None else MALFORMED
    metadata = message.get("metadata")
    if type(metadata) is dict and metadata.get("is_visually_hidden_from_conversation") is True:
        return _HIDDEN
    author = message.get("author")
    token = author.get("role") if type(author) is dict else None
    role = map_role(token)
    if role is None:
        return role_drop(token)
    content = message.get("content")
    if type(content) is not dict:
        return MALFORMED
    text = prose_text(content)
    if isinstance(text, Drop):
        return text
    if not text:
        return EMPTY
    return Message(role, text, stamp(node, message))


def prose_text(content: dict[str, Any]) -> str | Drop:
    """The prose of a message's ``content`` (possibly empty), or the rule that drops a content that has
    none: a present, non-prose ``content_type`` or a prose one without text parts."""
    kind = content.get("content_type", _MISSING)
    if kind is _MISSING or (type(kind) is str and (kind == "" or kind in _PROSE_TYPES)):
        parts = content.get("parts")
        if type(parts) is not list:
            return _NO_TEXT_PARTS
        blocks: list[str] = []
        for part in parts:
            if type(part) is str:
                blocks.append(part)
            elif type(part) is dict:
                text = part.get("text")
                if type(text) is str:
                    blocks.append(text)
        if not blocks:
            return _NO_TEXT_PARTS
        return join_blocks(blocks)
    if kind == "user_editable_context":
        return join_blocks(v for v in (content.get("user_profile"), content.get("user_instructions")) if type(v) is str)
    # a present, non-prose content_type (null included: conformance A10)
    return Drop("content type", kind if type(kind) is str else json_type(kind))


def stamp(node: dict[str, Any], message: dict[str, Any]) -> object:
    """A node's source timestamp: ``message.create_time``, else the node's own ``create_time`` when the
    message's is absent or null (conformance A27)."""
    value = message.get("create_time")
    return node.get("create_time") if value is None else value


def active_path(mapping: dict[str, Any], current: object) -> list[Any]:
    """Nodes from the root to ``current_node``; empty when ``current_node`` does not resolve."""
    if type(current) is not str or current not in mapping:
        return []
    path: list[Any] = []
    seen: set[str] = set()
    key: str = current
    while key not in seen:  # a cycle ends the walk before revisiting a node (conformance A4)
        seen.add(key)
        node = mapping[key]
        if type(node) is not dict:  # a malformed node ends the walk (conformance A5)
            break
        path.append(node)
        parent = node.get("parent")
        if type(parent) is not str or parent not in mapping:  # root, dangling or non-string (A5, A6)
            break
        key = parent
    path.reverse()
    return path


def _fallback(mapping: dict[str, Any]) -> list[tuple[Any, Message]]:
    dated: list[tuple[float, tuple[Any, Message]]] = []
    undated: list[tuple[Any, Message]] = []
    for node in own_property_values(mapping):
        found = classify(node)
        if type(found) is not Message:
            continue
        stamp = found.stamp
        if is_number(stamp):
            dated.append((to_double(stamp), (node, found)))  # type: ignore[arg-type]
        else:
            undated.append((node, found))
    dated.sort(key=lambda item: item[0])  # stable: ties keep own-property order
    return [m for _, m in dated] + undated


def select(mapping: dict[str, Any], current: object) -> Selection:
    """The nodes whose messages the envelope keeps: the active path's, else the fallback order's."""
    path = active_path(mapping, current)
    kept: list[tuple[Any, Message]] = []
    for node in path:
        found = classify(node)
        if type(found) is Message:
            kept.append((node, found))
    if kept:
        return Selection(kept, path, False)
    return Selection(_fallback(mapping), path, True)


def message_ids(selection: Selection) -> dict[int, str]:
    """The envelope id of each node the envelope keeps, by the node's ``id()``."""
    return {id(node): message_id(n) for n, (node, _) in enumerate(selection.kept, 1)}


def conversation_id(element: object) -> str | None:
    """``conversation_id``, else ``id``: the first that is a non-empty string."""
    if type(element) is not dict:
        return None
    for key in ("conversation_id", "id"):
        value = element.get(key)
        if type(value) is str and value:
            return value
    return None


def title(element: object) -> str:
    """The trimmed ``title``; the empty string when it is missing or no string."""
    return trimmed_string(element.get("title")) if type(element) is dict else ""


def mapping_of(element: object) -> dict[str, Any] | None:
    """The conversation's ``mapping`` object; None when the element is no conversation (conformance A19)."""
    if type(element) is not dict:
        return None
    mapping = element.get("mapping")
    return mapping if type(mapping) is dict else None


def normalise(element: object) -> dict[str, Any] | None:
    """One ChatGPT conversation as an envelope conversation, or None when it yields no message."""
    mapping = mapping_of(element)
    if mapping is None:
        return None
    assert type(element) is dict
    kept = select(mapping, element.get("current_node")).kept
    if not kept:
        return None
    messages = [
        {"id": message_id(n), "role": found.role, "ts": render_timestamp(found.stamp), "text": found.text}
        for n, (_, found) in enumerate(kept, 1)
    ]
    created = render_timestamp(element.get("create_time"))
    return {
        "id": conversation_id(element),
        "title": title(element),
        "created_at": created if created is not None else messages[0]["ts"],
        "updated_at": render_timestamp(element.get("update_time")),
        "messages": messages,
    }
