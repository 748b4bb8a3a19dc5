"""Claude chat_messages: blocks, flat-text fallback, placeholder, ids and titles (NOTES A26, A28)."""

from __future__ import annotations

from typing import Any

from memvelope_tools._convert import claude


def msg(sender: object = "human", text: object = "", content: object = None, t: object = None) -> dict[str, Any]:
    out: dict[str, Any] = {"uuid": "x", "sender": sender, "text": text, "created_at": t}
    if content is not None:
        out["content"] = content
    return out


def conv(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"uuid": "c1", "name": "N", "chat_messages": list(messages), **extra}


def texts(element: dict[str, Any]) -> list[str]:
    result = claude.normalise(element)
    return [] if result is None else [m["text"] for m in result["messages"]]


def test_text_blocks_joined_others_dropped() -> None:
    content = [
        {"type": "thinking", "thinking": "hmm"},
        {"type": "text", "text": " one "},
        {"type": "tool_use", "name": "web_search", "input": {}},
        {"type": "tool_result", "content": []},
        {"type": "text", "text": "   "},
        {"type": "text", "text": "two"},
        {"type": "text", "text": 5},
    ]
    assert texts(conv(msg("assistant", "flat", content))) == ["one\n\ntwo"]


def test_flat_text_fallback_and_placeholder() -> None:  # A26
    tool_only = [{"type": "tool_use", "name": "x"}]
    assert texts(conv(msg("assistant", " flat ", tool_only))) == ["flat"]
    placeholder = "This block is not supported on your current device yet."
    assert texts(conv(msg("assistant", placeholder, tool_only), msg("human", "hi"))) == ["hi"]
    assert texts(conv(msg("assistant", "x Not Supported on your current device", None))) == [
        "x Not Supported on your current device"
    ]  # case-sensitive
    block = [{"type": "text", "text": "not supported on your current device is fine here"}]
    assert texts(conv(msg("assistant", "", block))) == ["not supported on your current device is fine here"]


def test_non_array_content_uses_flat_text() -> None:  # A26
    for content in ("string", {"type": "text", "text": "obj"}, 5):
        assert texts(conv(msg("human", "flat", content))) == ["flat"]


def test_roles() -> None:
    element = conv(
        msg("Human", "a"),
        msg("ASSISTANT", "b"),
        msg("model", "c"),
        msg("ai", "d"),
        msg("system", "e"),
        msg(" user", "f"),
        msg(None, "g"),
        msg(1, "h"),
    )
    result = claude.normalise(element)
    assert result is not None
    assert [(m["role"], m["text"], m["id"]) for m in result["messages"]] == [
        ("user", "a", "m1"),
        ("assistant", "b", "m2"),
        ("assistant", "c", "m3"),
        ("assistant", "d", "m4"),
    ]


def test_source_order_kept_and_branches_not_linearised() -> None:  # A28
    element = conv(
        msg("human", "q", t="2024-01-02"),
        msg("assistant", "first try", t="2024-01-01"),
        msg("assistant", "retry", t="2024-01-03"),
    )
    element["chat_messages"][2]["parent_message_uuid"] = element["chat_messages"][0]["uuid"]
    assert texts(element) == ["q", "first try", "retry"]


def test_ids_titles_and_timestamps() -> None:
    one = msg("human", "hi", t="2024-05-01T10:00:00.123456Z")
    result = claude.normalise(
        conv(one, uuid="", name="  ", summary=" Sum ", created_at=None, updated_at="2024-06-01T00:00:00+02:00")
    )
    assert result is not None
    assert result["id"] is None
    assert result["title"] == "Sum"
    assert result["created_at"] == "2024-05-01T10:00:00.123Z"
    assert result["updated_at"] == "2024-05-31T22:00:00.000Z"
    assert claude.normalise(conv(one, name=5, summary=None))["title"] == ""  # type: ignore[index]


def test_malformed_conversations_omitted() -> None:
    assert claude.normalise({"uuid": "x", "chat_messages": "nope"}) is None
    assert claude.normalise(conv(msg("human", "   "))) is None
    assert claude.normalise(["not", "a", "dict"]) is None
    assert texts(conv(5, None, msg("human", "ok"))) == ["ok"]  # type: ignore[arg-type]
