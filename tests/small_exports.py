"""The smallest conversations of each provider's export that convert to something, shared by the tests
of loading, the CLI and start-up: a ChatGPT conversation of one user and one assistant message, and a
Claude conversation of one human message."""

from __future__ import annotations

from typing import Any

CHATGPT_CONV: dict[str, Any] = {
    "id": "g-1",
    "title": "Hello",
    "create_time": 1_700_000_000,
    "update_time": 1_700_000_100,
    "current_node": "b",
    "mapping": {
        "a": {
            "id": "a",
            "parent": None,
            "children": ["b"],
            "message": {
                "author": {"role": "user"},
                "create_time": 1_700_000_000,
                "content": {"content_type": "text", "parts": ["Hi there"]},
            },
        },
        "b": {
            "id": "b",
            "parent": "a",
            "children": [],
            "message": {
                "author": {"role": "assistant"},
                "create_time": 1_700_000_050,
                "content": {"content_type": "text", "parts": ["Hello!"]},
            },
        },
    },
}
CLAUDE_CONV: dict[str, Any] = {
    "uuid": "k-1",
    "name": "Claude chat",
    "created_at": "2024-01-01T00:00:00Z",
    "updated_at": "2024-01-01T00:00:00Z",
    "chat_messages": [{"uuid": "m", "sender": "human", "text": "hello", "created_at": "2024-01-01T00:00:00Z"}],
}
