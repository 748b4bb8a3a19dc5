"""Every message node of an export (``mv.nodes_frame``): both providers, every kind, branch shapes, the
join with the envelope's messages (conformance C17), real exports read in place, the 2026 sharded export,
worker processes."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import memvelope_tools as mv
from memvelope_tools._frames.columns import NODE_COLUMNS
from memvelope_tools._providers.nodes import KINDS
from memvelope_tools._whole.export import export_input
from memvelope_tools._whole.nodes import nodes_table
from memvelope_tools.errors import InputError, MixedProvidersWarning

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "real-exports"
COLLECTED = ROOT.parent / "shared" / "real-exports-collected" / "files"


# ---- building ChatGPT trees ------------------------------------------------------------------------


def msg(role: str, content: Any, t: float | None = None, **extra: Any) -> dict[str, Any]:
    """A ChatGPT message; ``content`` a string is one text part."""
    if isinstance(content, str):
        content = {"content_type": "text", "parts": [content]}
    author = {"role": role, **({"name": extra.pop("name")} if "name" in extra else {})}
    return {"author": author, "create_time": t, "content": content, "recipient": "all", **extra}


def tree(
    *nodes: tuple[str, str | None, dict[str, Any] | None], current: str | None = None, **extra: Any
) -> dict[str, Any]:
    """A ChatGPT conversation of ``(key, parent, message)`` nodes, ``children`` filled in their order."""
    mapping: dict[str, Any] = {}
    for key, parent, message in nodes:
        mapping[key] = {"id": key, "parent": parent, "children": [], "message": message}
    for key, parent, _ in nodes:
        if parent is not None and parent in mapping:
            mapping[parent]["children"].append(key)
    conv: dict[str, Any] = {"id": extra.pop("id", "c1"), "title": "t", "create_time": 1_700_000_000, "mapping": mapping}
    if current is not None:
        conv["current_node"] = current
    conv.update(extra)
    return conv


def write(tmp_path: Path, *conversations: dict[str, Any], name: str = "conversations.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(list(conversations)), encoding="utf-8")
    return path


def by_node(frame: pd.DataFrame) -> dict[str, dict[str, Any]]:
    return {row["node_id"]: row for row in frame.to_dict("records")}


# ---- columns -----------------------------------------------------------------------------------------


def test_columns_dtypes_and_provider(tmp_path: Path) -> None:
    frame = mv.nodes_frame(write(tmp_path, tree(("u", None, msg("user", "hi", 1_700_000_001)), current="u")))
    assert list(frame.columns) == list(NODE_COLUMNS)
    for name, dtype in NODE_COLUMNS.items():
        assert frame[name].dtype == dtype.pandas, name
    assert list(frame["kind"].cat.categories) == list(KINDS)
    assert frame.attrs["provider"] == "chatgpt"
    row = frame.iloc[0]
    assert row["ts"] == pd.Timestamp("2023-11-14T22:13:21Z")
    assert row["source"] == "conversations.json" and row["conversation_id"] == "c1" and row["conv_index"] == 0


def test_text_column_and_tz(tmp_path: Path) -> None:
    path = write(tmp_path, tree(("u", None, msg("user", "  hi  ", 1_700_000_001)), current="u"))
    frame = mv.nodes_frame(path, text=True, tz="Asia/Tokyo")
    assert list(frame.columns) == [*NODE_COLUMNS, "text"]
    assert frame["text"].tolist() == ["hi"] and frame["chars"].tolist() == [2]
    assert str(frame["ts"].dt.tz) == "Asia/Tokyo"


# ---- every kind --------------------------------------------------------------------------------------

# (key, message, the kind the rules of memvelope_tools._providers.nodes give it)
CHATGPT_KINDS: list[tuple[str, dict[str, Any], str]] = [
    ("prose", msg("user", "what is 2+2?"), "prose"),
    ("code", msg("assistant", {"content_type": "code", "text": "2+2"}, recipient="python"), "code"),
    ("out", msg("tool", {"content_type": "execution_output", "text": "4"}, name="python"), "tool_output"),
    (
        "thoughts",
        msg("assistant", {"content_type": "thoughts", "thoughts": [{"summary": "s", "content": "hm"}]}),
        "reasoning",
    ),
    ("recap", msg("assistant", {"content_type": "reasoning_recap", "content": "Thought for 3s"}), "reasoning"),
    ("search", msg("assistant", {"content_type": "code", "text": "search('x')"}, recipient="browser"), "browsing"),
    ("quote", msg("tool", {"content_type": "tether_quote", "text": "q", "url": "u"}, name="browser"), "browsing"),
    ("web", msg("tool", "results", name="web.run"), "browsing"),
    (
        "research",
        msg("assistant", {"content_type": "code", "text": "{}"}, recipient="research_kickoff_tool.start_research_task"),
        "research",
    ),
    ("dalle", msg("assistant", '{"prompt": "a cat"}', recipient="dalle.text2im"), "image"),
    (
        "picture",
        msg(
            "tool",
            {"content_type": "multimodal_text", "parts": [{"content_type": "image_asset_pointer"}]},
            name="dalle.text2im",
        ),
        "image",
    ),
    (
        "alone",
        msg("user", {"content_type": "multimodal_text", "parts": [{"content_type": "image_asset_pointer"}]}),
        "image",
    ),
    (
        "with_text",
        msg("user", {"content_type": "multimodal_text", "parts": [{"content_type": "image_asset_pointer"}, "look"]}),
        "prose",
    ),
    ("files", msg("tool", {"content_type": "tether_quote", "text": "page 3"}, name="myfiles_browser"), "file"),
    (
        "voice",
        msg(
            "assistant",
            {"content_type": "multimodal_text", "parts": [{"content_type": "audio_transcription", "text": "hello"}]},
        ),
        "audio",
    ),
    ("bio", msg("assistant", "User likes tea.", recipient="bio"), "memory"),
    ("bio_reply", msg("tool", "Model set context updated.", name="bio", recipient="assistant"), "memory"),
    ("canvas", msg("assistant", '{"name": "doc"}', recipient="canmore.create_textdoc"), "canvas"),
    ("canvas_reply", msg("tool", "created", name="canmore.create_textdoc"), "canvas"),
    ("profile", msg("user", {"content_type": "user_editable_context", "user_profile": "I am a nurse."}), "context"),
    ("snapshot", msg("assistant", {"content_type": "model_editable_context", "model_set_context": "1. x"}), "context"),
    (
        "old_context",
        msg("system", "", metadata={"user_context_message_data": {"about_user_message": "nurse"}}),
        "context",
    ),
    ("system", msg("system", "You are ChatGPT."), "system"),
    ("plugin", msg("assistant", '{"q": 1}', recipient="show_me.get_MermaidRoute"), "other"),
    ("null_type", msg("assistant", {"content_type": None, "parts": ["x"]}), "other"),
    ("empty", msg("assistant", ""), "other"),
]


def test_every_chatgpt_kind(tmp_path: Path) -> None:
    nodes = [(key, None, message) for key, message, _ in CHATGPT_KINDS]
    frame = mv.nodes_frame(write(tmp_path, tree(*nodes)))
    got = {row["node_id"]: row["kind"] for row in frame.to_dict("records")}
    assert got == {key: kind for key, _, kind in CHATGPT_KINDS}
    assert set(got.values()) == set(KINDS)  # every kind of the vocabulary is met
    rows = by_node(frame)
    assert rows["code"]["tools"] == ["python"] and rows["out"]["tools"] == []
    assert rows["out"]["author"] == "python" and rows["bio_reply"]["recipient"] == "assistant"
    assert rows["thoughts"]["chars"] == len("hm") and rows["recap"]["chars"] == len("Thought for 3s")


CLAUDE_KINDS: list[tuple[str, dict[str, Any], str]] = [
    ("prose", {"sender": "human", "text": "hi"}, "prose"),
    (
        "answer",
        {
            "sender": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hm"},
                {"type": "tool_use", "name": "web_search", "input": {}},
                {"type": "text", "text": "here"},
            ],
        },
        "prose",
    ),
    ("thinking", {"sender": "assistant", "content": [{"type": "thinking", "thinking": "let me see"}]}, "reasoning"),
    ("result", {"sender": "assistant", "content": [{"type": "tool_result", "content": []}]}, "tool_output"),
    ("search", {"sender": "assistant", "content": [{"type": "tool_use", "name": "web_search"}]}, "browsing"),
    ("artifact", {"sender": "assistant", "content": [{"type": "tool_use", "name": "artifacts"}]}, "canvas"),
    ("repl", {"sender": "assistant", "content": [{"type": "tool_use", "name": "repl"}]}, "code"),
    (
        "research",
        {"sender": "assistant", "content": [{"type": "tool_use", "name": "launch_extended_search_task"}]},
        "research",
    ),
    ("unknown_tool", {"sender": "assistant", "content": [{"type": "tool_use", "name": "drive"}]}, "other"),
    ("picture", {"sender": "human", "content": [{"type": "image"}]}, "image"),
    ("upload", {"sender": "human", "text": "", "attachments": [{"file_name": "a.txt"}], "files": [{}]}, "file"),
    ("system", {"sender": "system", "text": "be brief"}, "system"),
    ("blank", {"sender": "assistant", "text": "   "}, "other"),
]


def test_every_claude_kind(tmp_path: Path) -> None:
    chat = [{"uuid": key, "created_at": "2025-01-01T00:00:00Z", **entry} for key, entry, _ in CLAUDE_KINDS]
    conv = {"uuid": "k1", "name": "n", "model": "claude-sonnet-4", "chat_messages": chat}
    frame = mv.nodes_frame(write(tmp_path, conv))
    rows = by_node(frame)
    assert {k: r["kind"] for k, r in rows.items()} == {key: kind for key, _, kind in CLAUDE_KINDS}
    assert rows["answer"]["tools"] == ["web_search"]
    assert rows["answer"]["content_type"] == "thinking+tool_use+text" and pd.isna(rows["prose"]["content_type"])
    assert rows["answer"]["model"] == "claude-sonnet-4" and pd.isna(rows["prose"]["model"])
    assert rows["upload"]["attachments"] == 2
    assert rows["thinking"]["chars"] == len("let me see")
    # the envelope keeps the entries with text, numbered in order: prose m1, answer m2, system dropped
    assert {k: r["message_id"] for k, r in rows.items() if not pd.isna(r["message_id"])} == {
        "prose": "m1",
        "answer": "m2",
    }
    assert frame["on_active_path"].all()  # the envelope keeps every Claude entry it can (A28)
    assert frame["role"].astype(str).tolist().count("system") == 1


def test_model_and_custom_gpt(tmp_path: Path) -> None:
    conv = tree(
        ("u", None, msg("user", "hi", metadata={"model_slug": "auto"})),
        ("a", "u", msg("assistant", "hello", metadata={"model_slug": "gpt-4o"})),
        ("b", "a", msg("assistant", "more", metadata={"default_model_slug": "o3"})),
        ("c", "b", msg("assistant", "again")),
        ("d", "c", msg("user", "and you?")),
        ("e", "d", msg("assistant", "via a GPT", metadata={"gizmo_id": "g-own"})),
        current="e",
        default_model_slug="gpt-5",
        gizmo_id="g-conv",
        gizmo_type="gpt",
    )
    project = tree(("p", None, msg("assistant", "in a project")), id="c2", gizmo_id="g-p-123", gizmo_type="snorlax")
    rows = by_node(mv.nodes_frame(write(tmp_path, conv, project)))
    assert rows["u"]["model"] == "auto"  # what the node records
    assert [rows[k]["model"] for k in "abc"] == ["gpt-4o", "o3", "gpt-5"]  # the conversation's default last
    assert pd.isna(rows["d"]["model"])  # a user node gets no conversation default
    assert rows["a"]["custom_gpt"] == "g-conv" and rows["e"]["custom_gpt"] == "g-own"
    assert pd.isna(rows["p"]["custom_gpt"])  # a project is no custom GPT


# ---- branch shapes -----------------------------------------------------------------------------------


def test_edited_prompt(tmp_path: Path) -> None:
    conv = tree(
        ("root", None, None),
        ("sys", "root", msg("system", "", metadata={"is_visually_hidden_from_conversation": True})),
        ("u1", "sys", msg("user", "first wording", 1)),
        ("a1", "u1", msg("assistant", "answer to the first", 2)),
        ("u2", "sys", msg("user", "second wording", 3)),
        ("a2", "u2", msg("assistant", "answer to the second", 4)),
        current="a2",
    )
    rows = by_node(mv.nodes_frame(write(tmp_path, conv)))
    assert "root" not in rows  # a node without a message is no row
    assert (rows["u1"]["sibling"], rows["u1"]["siblings"]) == (1, 2)
    assert (rows["u2"]["sibling"], rows["u2"]["siblings"]) == (2, 2)
    assert [rows[k]["on_active_path"] for k in ("sys", "u1", "a1", "u2", "a2")] == [True, False, False, True, True]
    assert [rows[k]["message_id"] for k in ("u2", "a2")] == ["m1", "m2"]
    assert pd.isna(rows["u1"]["message_id"]) and pd.isna(rows["sys"]["message_id"])
    assert rows["u1"]["parent_id"] == "sys" and rows["u1"]["kind"] == "prose"


def test_regenerated_reply_in_the_parents_children_order(tmp_path: Path) -> None:
    conv = tree(
        ("u", None, msg("user", "q", 1)),
        ("new", "u", msg("assistant", "second try", 3)),
        ("old", "u", msg("assistant", "first try", 2)),
        current="new",
    )
    conv["mapping"]["u"]["children"] = ["old", "new"]  # the provider lists the first answer first
    rows = by_node(mv.nodes_frame(write(tmp_path, conv)))
    assert (rows["old"]["sibling"], rows["new"]["sibling"]) == (1, 2)
    assert rows["old"]["siblings"] == rows["new"]["siblings"] == 2
    assert not rows["old"]["on_active_path"] and rows["new"]["message_id"] == "m2"


def test_abandoned_branch_with_a_null_message_node(tmp_path: Path) -> None:
    conv = tree(
        ("u", None, msg("user", "q", 1)),
        ("a", "u", msg("assistant", "kept", 2)),
        ("gap", "u", None),
        ("b", "gap", msg("assistant", "abandoned below a node without message", 3)),
        current="a",
    )
    rows = by_node(mv.nodes_frame(write(tmp_path, conv)))
    assert set(rows) == {"u", "a", "b"}
    assert rows["a"]["siblings"] == 2  # the node without a message is a sibling all the same
    assert not rows["b"]["on_active_path"] and rows["b"]["siblings"] == 1


def test_no_current_node_falls_back_to_every_node_as_the_envelope_does(tmp_path: Path) -> None:
    conv = tree(
        ("u", None, msg("user", "q", 1)),
        ("a1", "u", msg("assistant", "one", 2)),
        ("a2", "u", msg("assistant", "two", 3)),
    )
    path = write(tmp_path, conv)
    nodes = mv.nodes_frame(path, text=True)
    messages = mv.messages_frame(path)
    assert nodes["on_active_path"].all()  # the envelope takes every node: the regeneration too
    assert nodes["message_id"].tolist() == ["m1", "m2", "m3"] == messages["message_id"].tolist()
    assert by_node(nodes)["a2"]["sibling"] == 2


def test_current_node_on_a_hidden_node_falls_back(tmp_path: Path) -> None:
    hidden = msg("system", "x", metadata={"is_visually_hidden_from_conversation": True})
    conv = tree(("h", None, hidden), ("u", "h", msg("user", "q", 2)), ("a", "u", msg("assistant", "r", 3)), current="h")
    rows = by_node(mv.nodes_frame(write(tmp_path, conv)))
    # The path holds no renderable message (conformance A7): the envelope falls back to every node.
    assert all(r["on_active_path"] for r in rows.values())
    assert (rows["u"]["message_id"], rows["a"]["message_id"]) == ("m1", "m2")


def test_flat_mapping_without_links(tmp_path: Path) -> None:
    conv = {
        "title": "flat",
        "mapping": {"1": {"message": msg("user", "a", 5)}, "0": {"message": msg("assistant", "b", 6)}},
    }
    frame = mv.nodes_frame(write(tmp_path, conv))
    # own-property order: array-index keys ascending (A3); the fallback sorts by create_time, 1 before 0
    assert frame["node_id"].tolist() == ["0", "1"]
    assert frame["message_id"].tolist() == ["m2", "m1"]
    assert (frame["sibling"] == 1).all() and (frame["siblings"] == 1).all()
    assert frame["parent_id"].isna().all() and frame["conversation_id"].isna().all()


def test_claude_retry_is_a_sibling(tmp_path: Path) -> None:
    root = "00000000-0000-4000-8000-000000000000"
    chat = [
        {"uuid": "h1", "sender": "human", "text": "q", "parent_message_uuid": root},
        {"uuid": "a1", "sender": "assistant", "text": "first", "parent_message_uuid": "h1"},
        {"uuid": "a2", "sender": "assistant", "text": "retry", "parent_message_uuid": "h1"},
        {"uuid": "h2", "sender": "human", "text": "thanks", "parent_message_uuid": "a2"},
    ]
    rows = by_node(mv.nodes_frame(write(tmp_path, {"uuid": "k", "chat_messages": chat})))
    assert [(rows[k]["sibling"], rows[k]["siblings"]) for k in ("h1", "a1", "a2", "h2")] == [
        (1, 1),
        (1, 2),
        (2, 2),
        (1, 1),
    ]
    assert [rows[k]["message_id"] for k in ("h1", "a1", "a2", "h2")] == ["m1", "m2", "m3", "m4"]


def test_conversations_the_envelope_omits_have_no_conv_index(tmp_path: Path) -> None:
    system_only = tree(("s", None, msg("system", "You are ChatGPT.")), id="c0")
    kept = tree(("u", None, msg("user", "q", 1)), id="c1")
    frame = mv.nodes_frame(write(tmp_path, system_only, kept, {"not": "a conversation"}))
    assert frame["node_id"].tolist() == ["s", "u"]
    assert pd.isna(frame["conv_index"].iloc[0]) and frame["conv_index"].iloc[1] == 0


# ---- the join with the envelope's messages ------------------------------------------------------------


def assert_joins(export: Any) -> pd.DataFrame:
    """Every envelope message is exactly one node on the active path with its message_id, with the same
    text, characters, role and time."""
    nodes = mv.nodes_frame(export, text=True)
    messages = mv.messages_frame(export)
    kept = nodes[nodes["message_id"].notna()]
    assert kept["on_active_path"].all()
    keys = ["source", "conv_index", "message_id"]
    assert not kept.duplicated(keys).any()
    joined = kept.merge(messages, on=keys, how="outer", suffixes=("_node", ""), indicator=True, validate="one_to_one")
    assert (joined["_merge"] == "both").all(), joined[joined["_merge"] != "both"]
    assert joined["text_node"].tolist() == joined["text"].tolist()
    assert joined["chars_node"].tolist() == joined["chars"].tolist()
    assert joined["role_node"].astype(str).tolist() == joined["role"].astype(str).tolist()
    pd.testing.assert_series_equal(joined["ts_node"], joined["ts"], check_names=False)
    assert joined["conversation_id_node"].fillna("-").tolist() == joined["conversation_id"].fillna("-").tolist()
    return nodes


@pytest.mark.parametrize("provider", ["chatgpt", "claude"])
def test_nodes_join_the_messages_of_the_samples(provider: str) -> None:
    nodes = assert_joins(mv.sample_path(provider))
    assert len(nodes) > nodes["message_id"].notna().sum() or provider == "claude"


def test_nodes_join_the_messages_of_hand_built_branches(tmp_path: Path) -> None:
    conv = tree(
        ("u1", None, msg("user", " first ", 1)),
        ("a1", "u1", msg("assistant", "one", 2)),
        ("u2", None, msg("user", "edited", 3)),
        ("a2", "u2", msg("assistant", "two\u2028", 4)),
        current="a2",
    )
    assert_joins(write(tmp_path, conv, tree(("x", None, msg("user", "again", 5)), id="c2")))


def test_a_lone_surrogate_becomes_the_replacement_character(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(
        '[{"mapping": {"n\\ud800": {"message": {"author": {"role": "user"}, "content": {"parts": ["x\\udfff"]}}}}}]'
    )
    with pytest.warns(UnicodeWarning, match="unpaired surrogates"):
        frame = mv.nodes_frame(path, text=True)
    assert frame["node_id"].tolist() == ["n\ufffd"] and frame["text"].tolist() == ["x\ufffd"]


def test_surrogates_count_as_the_messages_frame_counts_them(tmp_path: Path) -> None:
    # A text with a lone surrogate travels from the reader as it is and is counted as messages_frame
    # counts it: the pair is one character, the lone surrogate becomes one U+FFFD.
    path = tmp_path / "conversations.json"
    user = '{"author": {"role": "user"}, "content": {"parts": ["pair \\ud83d\\ude00 lone \\ud800"]}}'
    path.write_text('[{"id": "c", "mapping": {"u": {"message": ' + user + "}}}]")
    with pytest.warns(UnicodeWarning):
        nodes = assert_joins(path)
    assert nodes["chars"].tolist() == [len("pair 😀 lone \ufffd")]


def test_surrogates_past_the_first_conversations_are_counted_too(tmp_path: Path) -> None:
    # The conversations after the first few are read a batch at a time, and only the texts of those whose
    # JSON escapes a lone surrogate are looked at for one: here the ninth element (the seventh conversation,
    # after an element that is none), on a branch the envelope leaves out and on its active path. Each lone
    # surrogate counts as the U+FFFD it becomes, the pair as one character.
    plain = [tree(("u", None, msg("user", "plain \u00e9 text", 1)), id=f"c{i}") for i in range(6)]
    odd = tree(
        ("u", None, msg("user", "question", 1)),
        ("a1", "u", msg("assistant", "lost \ud800 branch", 2)),
        ("a2", "u", msg("assistant", "kept \udfff reply \ud83d\ude00", 3)),
        id="odd",
        current="a2",
    )
    body = ", ".join([*map(json.dumps, plain), '{"not": "a conversation"}', json.dumps(odd)])
    path = tmp_path / "conversations.json"
    path.write_text("[" + body + "]")
    nodes = mv.nodes_frame(path)
    odd_rows = nodes[nodes["conversation_id"] == "odd"]
    chars = dict(zip(odd_rows["node_id"], odd_rows["chars"], strict=True))
    assert chars == {"u": len("question"), "a1": len("lost \ufffd branch"), "a2": len("kept \ufffd reply 😀")}
    assert set(nodes["chars"][nodes["conversation_id"] == "c0"]) == {len("plain é text")}


# ---- inputs -------------------------------------------------------------------------------------------


def test_an_envelope_is_refused_in_one_line(tmp_path: Path) -> None:
    envelope = tmp_path / "history.mve.json"
    mv.write_envelope(mv.convert(mv.sample_path("claude")), envelope)
    with pytest.raises(InputError) as caught:
        mv.nodes_frame(envelope)
    assert "an envelope, not an export" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(InputError, match="not an export"):
        mv.nodes_frame(json.loads(envelope.read_text()))


def test_a_zip_bytes_and_parts_give_the_same_nodes(tmp_path: Path) -> None:
    zipped = mv.nodes_frame(mv.sample_path("chatgpt"))
    from_bytes = mv.nodes_frame(Path(mv.sample_path("chatgpt")).read_bytes())
    cols = [c for c in zipped.columns if c != "source"]
    pd.testing.assert_frame_equal(zipped[cols], from_bytes[cols])
    first, second = tree(("a", None, msg("user", "one", 1)), id="x"), tree(("b", None, msg("user", "two", 2)), id="y")
    parts = [
        write(tmp_path, first, name="conversations-000.json"),
        write(tmp_path, second, name="conversations-001.json"),
    ]
    frame = mv.nodes_frame(parts)
    assert frame["conversation_id"].tolist() == ["x", "y"] and frame["conv_index"].tolist() == [0, 1]


def test_a_sharded_folder_with_its_manifest(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    write(folder, tree(("a", None, msg("user", "one", 1)), id="x"), name="conversations-000.json")
    write(folder, tree(("b", None, msg("user", "two", 2)), id="y"), name="conversations-001.json")
    (folder / "export_manifest.json").write_text('{"version": 1, "export_files": []}')
    (folder / "user.json").write_text('{"id": "u"}')
    frame = mv.nodes_frame(folder)  # the conversation parts only, in name order (B1)
    assert frame["conversation_id"].tolist() == ["x", "y"] and set(frame["source"]) == {"export"}
    assert mv.inventory(folder)["conversations"] == 2


def test_another_providers_conversations_are_left_out_with_the_converters_warning(tmp_path: Path) -> None:
    claude = {"uuid": "k", "chat_messages": [{"sender": "human", "text": "hi"}]}
    chatgpt = [tree((f"n{i}", None, msg("user", "one", 1)), id=f"c{i}") for i in range(5)]
    path = write(tmp_path, *chatgpt, claude)  # none of the first five is Claude's: ChatGPT is kept
    with pytest.warns(MixedProvidersWarning, match="1 Claude conversation was left out"):
        frame = mv.nodes_frame(path)
    assert frame["node_id"].tolist() == ["n0", "n1", "n2", "n3", "n4"]


# ---- real exports, read in place -----------------------------------------------------------------------


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path.name} is not here (the shared real exports are not part of the project)")
    return path


def test_chatgpt2graph_code_interpreter() -> None:
    # Counted by hand in the file: 45 mapping nodes, one the null-message root; 11 assistant `code` nodes to
    # python and 11 `tool` execution_output nodes; 2 hidden system nodes, one with user_context_message_data;
    # 20 user and assistant `text` nodes, all on the active path.
    nodes = assert_joins(need(COLLECTED / "chatgpt2graph__conversations.json"))
    assert len(nodes) == 44
    kinds = nodes["kind"].value_counts()
    assert (kinds["code"], kinds["tool_output"], kinds["context"], kinds["system"], kinds["prose"]) == (
        11,
        11,
        1,
        1,
        20,
    )
    assert set(nodes.loc[nodes["kind"] == "code", "recipient"]) == {"python"}
    assert set(nodes.loc[nodes["kind"] == "tool_output", "author"]) == {"python"}
    assert nodes["on_active_path"].all()


def test_librechat_tree_edited_prompt_and_regeneration() -> None:
    # By hand: 13 nodes, 12 with a message; current_node's path holds 8 nodes, 7 with a message; an
    # assistant node has two user children (an edit), a user node two assistant children (a regeneration).
    nodes = assert_joins(need(REAL / "librechat" / "chatgpt-tree.json"))
    assert len(nodes) == 12 and int(nodes["on_active_path"].sum()) == 7
    second = nodes[nodes["sibling"] == 2]
    assert sorted(second["role"].astype(str)) == ["assistant", "user"]


def test_fenixhuman_2026_part_models_and_voice() -> None:
    # By hand: 100 conversations, 1,073 mapping nodes with a message; assistant nodes by model_slug:
    # gpt-5-5 370, text-davinci-002-render-sha 123, gpt-4o 16, gpt-5-3-mini 3, gpt-5-2 1, and 6 without one
    # (their default_model_slug is "auto"); 5 multimodal nodes with audio parts (4 assistant, 1 user).
    nodes = assert_joins(need(COLLECTED / "Fenixhuman27__knowledge-forge__data-conversations-004.json"))
    assert len(nodes) == 1073 and nodes["conv_index"].max() == 99
    models = nodes[nodes["role"] == "assistant"]["model"].value_counts().to_dict()
    assert models == {
        "gpt-5-5": 370,
        "text-davinci-002-render-sha": 123,
        "gpt-4o": 16,
        "auto": 6,
        "gpt-5-3-mini": 3,
        "gpt-5-2": 1,
    }
    voice = nodes[nodes["kind"] == "audio"]
    assert voice["role"].astype(str).value_counts().to_dict() == {"assistant": 4, "user": 1}
    assert len(nodes[nodes["message_id"].notna()]) == 1045  # the envelope's messages (its README)


def test_the_2026_sharded_export_with_its_manifest() -> None:
    part = need(COLLECTED / "Fenixhuman27__knowledge-forge__data-conversations-004.json")
    manifest = need(COLLECTED / "Fenixhuman27__knowledge-forge__data-export_manifest.json")
    alone = mv.nodes_frame(part)
    together = mv.nodes_frame([manifest, part])  # the manifest, an object, adds no conversation
    cols = [c for c in alone.columns if c != "source"]
    pd.testing.assert_frame_equal(alone[cols], together[cols])
    assert int(together["message_id"].notna().sum()) == mv.load([manifest, part])["meta"]["message_count"]


def test_cosmax_canvas_reasoning_and_image_generation() -> None:
    # By hand: recipients canmore.update_textdoc 11, canmore.create_textdoc 5 (and a tool reply each),
    # 11 `thoughts` and 11 `reasoning_recap`, one image-generation call to t2uay3k.sj1i4kz and its reply.
    nodes = assert_joins(need(COLLECTED / "cosmax2018__utils__chatgpt-conversations.json"))
    kinds = nodes["kind"].value_counts()
    assert (kinds["canvas"], kinds["reasoning"], kinds["image"]) == (32, 22, 2)
    calls = nodes["tools"].explode().value_counts().to_dict()
    assert (
        calls["canmore.update_textdoc"] == 11 and calls["canmore.create_textdoc"] == 5 and calls["t2uay3k.sj1i4kz"] == 1
    )


def test_pkuppens_browsing_and_regenerations() -> None:
    # By hand: 1,752 mapping nodes of which 192 null roots; 4 user nodes with two assistant children.
    nodes = assert_joins(need(COLLECTED / "pkuppens__my_chat_gpt__history_download-conversations.json"))
    assert len(nodes) == 1560
    assert int(((nodes["sibling"] > 1) & (nodes["role"] == "assistant")).sum()) == 4
    assert nodes.loc[nodes["recipient"] == "browser", "kind"].eq("browsing").all()


@pytest.mark.parametrize(
    "path",
    [
        REAL / "chatlore" / "chatgpt" / "conversations.json",
        REAL / "chatlore" / "claude" / "conversations.json",
        REAL / "librechat" / "chatgpt-export.json",
        REAL / "librechat" / "chatgpt-citations.json",
        REAL / "librechat" / "chatgpt-modern-export.json",
        REAL / "chatgpt-export-parser" / "example-conversation.json",
        REAL / "synapse" / "conversations-000.json",
        COLLECTED / "context-carry__chatgpt__conversations.json",
        COLLECTED / "ucw__chatgpt_export.json",
        COLLECTED / "unichathistory__chatgpt__conversations.json",
        COLLECTED / "claude-history-2__conversations.json",
        COLLECTED / "byeGPT__sample_conversations.json",
    ],
    ids=lambda p: p.name if isinstance(p, Path) else str(p),
)
def test_real_exports_join_the_envelope(path: Path) -> None:
    assert_joins(need(path))


def test_context_carry_regeneration_without_current_node_is_all_on_the_path() -> None:
    # By hand: the first conversation has no current_node and a user node with two assistant children.
    nodes = mv.nodes_frame(need(COLLECTED / "context-carry__chatgpt__conversations.json"))
    assert nodes["on_active_path"].all()
    assert int((nodes["sibling"] == 2).sum()) == 1


# ---- worker processes -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_worker_processes_give_the_frame_of_one_process(tmp_path: Path) -> None:
    from generate import generate

    parts = generate(tmp_path / "export", "chatgpt", 3_000_000, seed=3, shards=2, memory=True)
    found = export_input([str(p) for p in parts], "test")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnicodeWarning)
        one, _ = nodes_table(found, with_text=True, workers=1)
        two, _ = nodes_table(found, with_text=True, workers=2)
    assert one.num_rows > 500 and one.equals(two)
    index = pd.Series(two.column("conv_index").to_pylist()).dropna()
    assert (
        index.is_monotonic_increasing and index.iloc[-1] == len(mv.load([str(p) for p in parts])["conversations"]) - 1
    )


def test_values_of_the_wrong_type_are_read_without_error(tmp_path: Path) -> None:
    odd = [
        ("list_type", {"author": {"role": "assistant"}, "content": {"content_type": [], "parts": ["x"]}}),
        ("dict_part", {"author": {"role": "user"}, "content": {"parts": [{"content_type": {}, "text": 3}]}}),
        ("author_text", {"author": "user", "metadata": [], "recipient": 7, "content": "hi"}),
        ("no_content", {"author": {"role": "assistant", "name": 5}}),
    ]
    conv = tree(*[(key, None, message) for key, message in odd])
    conv["mapping"]["list_type"]["children"] = [{}, "x"]
    claude = {"uuid": "k", "chat_messages": [{"sender": 3, "content": [{"type": ["x"]}, "y"], "files": "no"}, 5]}
    rows = by_node(mv.nodes_frame(write(tmp_path, conv)))
    assert {k: r["kind"] for k, r in rows.items()} == {
        "list_type": "other",
        "dict_part": "other",
        "author_text": "other",
        "no_content": "other",
    }
    assert pd.isna(rows["no_content"]["author"]) and pd.isna(rows["author_text"]["recipient"])
    entry = mv.nodes_frame(write(tmp_path, claude, name="claude.json"))
    assert entry["role"].astype(str).tolist() == ["other"] and entry["kind"].tolist() == ["other"]
