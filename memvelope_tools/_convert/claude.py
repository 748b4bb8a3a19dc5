"""Claude export conversations (``chat_messages`` arrays) to envelope conversations.

Source order is kept verbatim; ``parent_message_uuid`` branches are not linearised (conformance A28).
"""

from __future__ import annotations

from typing import Any, Final

from .prose import (
    EMPTY,
    MALFORMED,
    Drop,
    Message,
    join_blocks,
    js_trim,
    map_role,
    message_id,
    role_drop,
    trimmed_string,
)
from .timestamps import render_timestamp

PLACEHOLDER: Final = "not supported on your current device"
_TOOLS: Final = Drop("tool_use/tool_result")
_THINKING: Final = Drop("thinking")
_PLACEHOLDER_TEXT: Final = Drop("placeholder text")


def message_text(message: dict[str, Any]) -> str:
    """Text blocks joined; else the flat ``text`` unless it holds the placeholder (conformance A26)."""
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


def classify(message: object) -> Message | Drop:
    """The message a ``chat_messages`` entry gives the envelope, or the rule that drops it.

    An entry without text is named by its blocks: tool_use/tool_result first, then thinking, then the
    first other block type; else by its flat text (placeholder text, or empty after trimming).
    """
    if type(message) is not dict:
        return MALFORMED
    sender = message.get("sender")
    role = map_role(sender)
    if role is None:
        return role_drop(sender)
    text = message_text(message)
    if text:
        return Message(role, text, message.get("created_at"))
    content = message.get("content")
    kinds = [b.get("type") for b in content if type(b) is dict] if type(content) is list else []
    if "tool_use" in kinds or "tool_result" in kinds:
        return _TOOLS
    if "thinking" in kinds or "redacted_thinking" in kinds:
        return _THINKING
    others = [k for k in kinds if k != "text"]
    if others:
        return Drop("block type", others[0] if type(others[0]) is str else "missing")
    flat = message.get("text")
    if type(flat) is str and PLACEHOLDER in flat:
        return _PLACEHOLDER_TEXT
    return EMPTY


def conversation_id(element: object) -> str | None:
    """``uuid`` when it is a non-empty string."""
    uuid = element.get("uuid") if type(element) is dict else None
    return uuid if type(uuid) is str and uuid else None


def title(element: object) -> str:
    """The trimmed ``name``, else the trimmed ``summary``; the empty string when neither has text."""
    if type(element) is not dict:
        return ""
    return trimmed_string(element.get("name")) or trimmed_string(element.get("summary"))


def chat_messages(element: object) -> list[Any] | None:
    """The conversation's ``chat_messages`` array; None when the element is no conversation."""
    chat = element.get("chat_messages") if type(element) is dict else None
    return chat if type(chat) is list else None


def kept(chat: list[Any]) -> list[tuple[int, Message]]:
    """The entries of ``chat_messages`` the envelope keeps, in envelope order: each one's index in
    ``chat_messages`` and its message."""
    out: list[tuple[int, Message]] = []
    for i, message in enumerate(chat):
        found = classify(message)
        if type(found) is Message:
            out.append((i, found))
    return out


def normalise(element: object) -> dict[str, Any] | None:
    """One Claude conversation as an envelope conversation, or None when it yields no message."""
    chat = chat_messages(element)
    if chat is None:
        return None
    assert type(element) is dict
    messages = [
        {"id": message_id(n), "role": found.role, "ts": render_timestamp(found.stamp), "text": found.text}
        for n, (_, found) in enumerate(kept(chat), 1)
    ]
    if not messages:
        return None
    created = render_timestamp(element.get("created_at"))
    return {
        "id": conversation_id(element),
        "title": title(element),
        "created_at": created if created is not None else messages[0]["ts"],
        "updated_at": render_timestamp(element.get("updated_at")),
        "messages": messages,
    }
