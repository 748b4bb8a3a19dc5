"""Claude export conversations (``chat_messages`` arrays) to envelope conversations.

Source order is kept verbatim; ``parent_message_uuid`` branches are not linearised (NOTES A28).
"""

from __future__ import annotations

from typing import Any, Final

from .prose import join_blocks, js_trim, map_role, role_drop_reason, trimmed_string
from .timestamps import render_timestamp

PLACEHOLDER: Final = "not supported on your current device"


def looks_like(element: object) -> bool:
    """True iff ``element`` has a string ``uuid`` and an array ``chat_messages``."""
    return type(element) is dict and type(element.get("uuid")) is str and type(element.get("chat_messages")) is list


def message_text(message: dict[str, Any]) -> str:
    """Text blocks joined; else the flat ``text`` unless it holds the placeholder (NOTES A26)."""
    content = message.get("content")
    text = ""
    if type(content) is list:
        text = join_blocks(
            block["text"]
            for block in content
            if type(block) is dict and block.get("type") == "text" and type(block.get("text")) is str
        )
    if not text:
        flat = message.get("text")
        if type(flat) is str and PLACEHOLDER not in flat:
            text = js_trim(flat)
    return text


def drop_reason(message: object) -> str | None:
    """Why :func:`normalise` drops a ``chat_messages`` entry (None when kept); for ``memvelope doctor`` only.

    A message without text is named by its blocks: tool_use/tool_result first, then thinking, then the
    first other block type; else by its flat text (placeholder text, or empty after trimming).
    """
    if type(message) is not dict:
        return "malformed element"
    sender = message.get("sender")
    if map_role(sender) is None:
        return role_drop_reason(sender)
    if message_text(message):
        return None
    content = message.get("content")
    kinds = [b.get("type") for b in content if type(b) is dict] if type(content) is list else []
    if "tool_use" in kinds or "tool_result" in kinds:
        return "tool_use/tool_result"
    if "thinking" in kinds or "redacted_thinking" in kinds:
        return "thinking"
    others = [k for k in kinds if k != "text"]
    if others:
        return f"block type {others[0]}" if type(others[0]) is str else "block type missing"
    flat = message.get("text")
    if type(flat) is str and PLACEHOLDER in flat:
        return "placeholder text"
    return "empty after trimming"


def normalise(element: object) -> dict[str, Any] | None:
    """One Claude conversation as an envelope conversation, or None when it yields no message."""
    if type(element) is not dict:
        return None
    chat = element.get("chat_messages")
    if type(chat) is not list:
        return None
    messages: list[dict[str, Any]] = []
    for message in chat:
        if type(message) is not dict:
            continue
        role = map_role(message.get("sender"))
        if role is None:
            continue
        text = message_text(message)
        if not text:
            continue
        messages.append(
            {
                "id": f"m{len(messages) + 1}",
                "role": role,
                "ts": render_timestamp(message.get("created_at")),
                "text": text,
            }
        )
    if not messages:
        return None
    uuid = element.get("uuid")
    title = trimmed_string(element.get("name")) or trimmed_string(element.get("summary"))
    created = render_timestamp(element.get("created_at"))
    return {
        "id": uuid if type(uuid) is str and uuid else None,
        "title": title,
        "created_at": created if created is not None else messages[0]["ts"],
        "updated_at": render_timestamp(element.get("updated_at")),
        "messages": messages,
    }
