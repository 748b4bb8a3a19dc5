"""ChatGPT mapping trees: active path, fallback, node filters, content types (NOTES A1-A10, A19-A21, A25, A27)."""

from __future__ import annotations

import json
from typing import Any

from reference_json import convert_values, loads_js

from memvelope_tools._convert import chatgpt


def node(
    key: str, parent: str | None, role: str | None = "user", text: str | None = None, t: object = None, **message: Any
) -> dict[str, Any]:
    msg: dict[str, Any] | None = None
    if role is not None:
        msg = {
            "author": {"role": role},
            "create_time": t,
            "content": {"content_type": "text", "parts": [text if text is not None else key]},
        }
        msg.update(message)
    return {"id": key, "parent": parent, "message": msg}


def conv(nodes: list[dict[str, Any]], current: object = "__last__", **extra: Any) -> dict[str, Any]:
    mapping = {n["id"]: n for n in nodes}
    out: dict[str, Any] = {"conversation_id": "c1", "title": "T", "mapping": mapping}
    out["current_node"] = nodes[-1]["id"] if current == "__last__" else current
    out.update(extra)
    return out


def texts(element: dict[str, Any]) -> list[str]:
    result = chatgpt.normalise(element)
    return [] if result is None else [m["text"] for m in result["messages"]]


def test_active_path_excludes_regenerated_sibling() -> None:  # A1
    nodes = [
        node("root", None, None),
        node("u", "root", t=1),
        node("a-old", "u", "assistant", t=2),
        node("a-new", "u", "assistant", t=3),
    ]
    assert texts(conv(nodes)) == ["u", "a-new"]
    assert texts(conv(nodes, current="a-old")) == ["u", "a-old"]


def test_edited_prompt_keeps_only_the_current_branch() -> None:  # A1
    nodes = [
        node("root", None, None),
        node("u1", "root", t=1),
        node("u2", "root", t=5),
        node("a2", "u2", "assistant", t=6),
    ]
    assert texts(conv(nodes)) == ["u2", "a2"]


def test_path_is_not_resorted_by_time() -> None:  # A1: child-before-parent inversion
    nodes = [node("u", None, t=100), node("a", "u", "assistant", t=50)]
    assert texts(conv(nodes)) == ["u", "a"]


def test_fallback_when_current_node_absent_sorts_by_time() -> None:
    nodes = [node("x", None, t=30), node("y", "x", "assistant", t=10), node("z", "y", t=20)]
    element = conv(nodes)
    del element["current_node"]
    assert texts(element) == ["y", "z", "x"]


def test_fallback_when_current_node_not_an_own_key() -> None:
    nodes = [node("x", None, t=2), node("y", "x", "assistant", t=1)]
    assert texts(conv(nodes, current="nope")) == ["y", "x"]


def test_fallback_when_path_renders_nothing() -> None:  # A7: current_node on a hidden system node
    nodes = [node("a", None, t=2), node("b", None, "assistant", t=1), node("sys", None, "system", t=0)]
    assert texts(conv(nodes, current="sys")) == ["b", "a"]


def test_fallback_undated_after_dated_ties_in_own_property_order() -> None:  # A2, A3
    nodes = [
        node("b", None, t=5),
        node("10", None, t=None),
        node("2", None, t=5),
        node("a", None, t="7"),
        node("007", None, t=1),
    ]
    element = conv(nodes, current=None)
    # own-property order: "2", "10", then "b", "a", "007"; dated: 007(1), 2(5), b(5); undated: 10, a
    assert texts(element) == ["007", "2", "b", "10", "a"]


def test_array_index_keys() -> None:  # A3
    mapping = {"b": 1, "4294967295": 2, "4294967294": 3, "01": 4, "0": 5, "-1": 6, "1.0": 7, " 1": 8}
    assert chatgpt.own_property_values(mapping) == [5, 3, 1, 2, 4, 6, 7, 8]


def test_infinity_sorts_as_a_number_after_finite() -> None:  # A8
    element = loads_js(
        '[{"mapping": {"a": {"message": {"author": {"role": "user"}, "create_time": 1e400,'
        ' "content": {"parts": ["inf"]}}}, "b": {"message": {"author": {"role": "user"},'
        ' "create_time": "1", "content": {"parts": ["str"]}}}, "c": {"message": {"author":'
        ' {"role": "user"}, "create_time": 5, "content": {"parts": ["five"]}}}}}]',
        "t",
    )[0]
    result = chatgpt.normalise(element)
    assert result is not None
    assert [m["text"] for m in result["messages"]] == ["five", "inf", "str"]
    assert [m["ts"] for m in result["messages"]] == ["1970-01-01T00:00:05.000Z", None, "1970-01-01T00:00:01.000Z"]


def test_cycle_terminates() -> None:  # A4
    nodes = [node("a", "c", t=1), node("b", "a", "assistant", t=2), node("c", "b", t=3)]
    assert texts(conv(nodes)) == ["a", "b", "c"]


def test_self_parent_terminates() -> None:  # A4
    assert texts(conv([node("a", "a", t=1)])) == ["a"]


def test_dangling_parent_ends_the_walk() -> None:  # A5
    nodes = [node("other", None, t=0), node("a", "missing", t=1), node("b", "a", "assistant", t=2)]
    assert texts(conv(nodes)) == ["a", "b"]


def test_malformed_node_value_ends_the_walk() -> None:  # A5
    element = conv([node("a", "bad", t=1), node("b", "a", "assistant", t=2)])
    element["mapping"]["bad"] = ["not", "an", "object"]
    assert texts(element) == ["a", "b"]


def test_non_string_current_node_counts_as_absent() -> None:  # A6
    nodes = [node("1", None, t=2), node("x", "1", "assistant", t=1)]
    assert texts(conv(nodes, current=1)) == ["x", "1"]


def test_non_string_parent_ends_the_walk_and_null_never_resolves() -> None:  # A6
    nodes = [node("null", None, t=0), node("a", None, t=1), node("b", "a", "assistant", t=2)]
    nodes[1]["parent"] = 5
    assert texts(conv(nodes)) == ["a", "b"]
    nodes[1]["parent"] = None
    assert texts(conv(nodes)) == ["a", "b"]


def test_links_resolve_by_key_not_node_id() -> None:  # A25
    element = {
        "mapping": {
            "k1": {"id": "zzz", "parent": None, "message": {"author": {"role": "user"}, "content": {"parts": ["one"]}}},
            "k2": {
                "id": "k1",
                "parent": "k1",
                "message": {"author": {"role": "assistant"}, "content": {"parts": ["two"]}},
            },
        },
        "current_node": "k2",
    }
    assert texts(element) == ["one", "two"]


def test_hidden_node_dropped() -> None:
    hidden = node("h", "u", "assistant", "secret", t=2, metadata={"is_visually_hidden_from_conversation": True})
    element = conv([node("u", None, t=1), hidden, node("a", "h", "assistant", t=3)])
    assert texts(element) == ["u", "a"]


def test_tool_addressed_text_is_emitted() -> None:  # A9
    call = node("call", "u", "assistant", "a cat in a hat", t=2, recipient="dalle.text2im")
    assert texts(conv([node("u", None, t=1), call])) == ["u", "a cat in a hat"]


def test_content_types() -> None:  # A10 and the content_type rules
    def with_content(content: object) -> list[str]:
        element = conv([node("u", None, t=1)])
        element["mapping"]["u"]["message"]["content"] = content
        return texts(element)

    assert with_content({"parts": ["absent type"]}) == ["absent type"]
    assert with_content({"content_type": "", "parts": ["empty type"]}) == ["empty type"]
    assert with_content({"content_type": None, "parts": ["null type"]}) == []
    assert with_content({"content_type": "code", "text": "print(1)", "parts": ["x"]}) == []
    assert with_content({"content_type": "execution_output", "text": "1"}) == []
    assert with_content({"content_type": "thoughts", "thoughts": [{"content": "hm"}]}) == []
    assert with_content({"content_type": ["text"], "parts": ["list type"]}) == []
    assert with_content(
        {
            "content_type": "multimodal_text",
            "parts": [
                {"content_type": "image_asset_pointer", "asset_pointer": "file://x"},
                " look ",
                {"text": "\tthis\n"},
                5,
                None,
                {"text": 7},
            ],
        }
    ) == ["look\n\nthis"]
    assert with_content({"content_type": "text", "parts": "not a list"}) == []
    assert with_content("text") == []


def test_user_editable_context() -> None:  # A21
    def ctx(**fields: object) -> list[str]:
        element = conv([node("u", None, t=1)])
        element["mapping"]["u"]["message"]["content"] = {
            "content_type": "user_editable_context",
            "parts": ["never read"],
            **fields,
        }
        return texts(element)

    assert ctx(user_profile=" I am Ana ", user_instructions="Be brief.\n") == ["I am Ana\n\nBe brief."]
    assert ctx(user_instructions="Only this") == ["Only this"]
    assert ctx(user_profile=42, user_instructions=None) == []
    assert ctx(user_profile="  ", user_instructions="x") == ["x"]


def test_node_create_time_fallback() -> None:  # A27
    def stamp(message_time: object, node_time: object, drop: bool = False) -> object:
        element = conv([node("u", None, t=message_time)])
        if drop:
            del element["mapping"]["u"]["message"]["create_time"]
        element["mapping"]["u"]["create_time"] = node_time
        result = chatgpt.normalise(element)
        assert result is not None
        return result["messages"][0]["ts"]

    assert stamp(None, 60) == "1970-01-01T00:01:00.000Z"
    assert stamp(None, 60, drop=True) == "1970-01-01T00:01:00.000Z"
    assert stamp(0, 60) == "1970-01-01T00:00:00.000Z"
    assert stamp("garbage", 60) is None


def test_ids_and_titles() -> None:
    base = [node("u", None, t=1)]
    assert chatgpt.normalise(conv(base, conversation_id="", id="x"))["id"] == "x"  # type: ignore[index]
    assert chatgpt.normalise(conv(base, conversation_id=5, id=7))["id"] is None  # type: ignore[index]
    assert chatgpt.normalise(conv(base, title="  Hi\u3000"))["title"] == "Hi"  # type: ignore[index]
    assert chatgpt.normalise(conv(base, title=None))["title"] == ""  # type: ignore[index]


def test_created_at_falls_back_to_first_message_updated_at_never() -> None:
    result = chatgpt.normalise(
        conv([node("u", None, t=1), node("a", "u", "assistant", t=2)], create_time="bad", update_time=None)
    )
    assert result is not None
    assert result["created_at"] == "1970-01-01T00:00:01.000Z"
    assert result["updated_at"] is None


def test_array_mapping_is_omitted() -> None:  # A19
    assert chatgpt.normalise({"mapping": [node("u", None)]}) is None
    assert chatgpt.normalise({"mapping": None}) is None


def test_duplicate_keys_last_value_first_position() -> None:  # A20
    text = (
        '[{"mapping": {"a": {"message": {"author": {"role": "user"}, "content": {"parts": ["first"]}}},'
        ' "b": {"message": {"author": {"role": "user"}, "content": {"parts": ["b"]}}},'
        ' "a": {"message": {"author": {"role": "user"}, "content": {"parts": ["second"]}}}}}]'
    )
    env = convert_values([loads_js(text, "t")])
    assert [m["text"] for m in env["conversations"][0]["messages"]] == ["second", "b"]


def test_proto_key_is_an_ordinary_key() -> None:
    element = json.loads(
        '{"mapping": {"__proto__": {"message": {"author": {"role": "user"},'
        ' "content": {"parts": ["p"]}}}, "constructor": {"parent": "__proto__", "message":'
        ' {"author": {"role": "assistant"}, "content": {"parts": ["c"]}}}},'
        ' "current_node": "constructor"}'
    )
    assert texts(element) == ["p", "c"]
