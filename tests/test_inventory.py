"""What an export holds beyond the prose (``mv.inventory`` and ``memvelope inventory``): the counting rules
on hand-built trees, real exports counted by hand, the command's listing and JSON, wrong inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_nodes import COLLECTED, REAL, msg, need, tree, write

import memvelope_tools as mv
from memvelope_tools.cli import main
from memvelope_tools.errors import InputError

BRANCHED = tree(
    ("root", None, None),
    ("u1", "root", msg("user", "first wording", 1_700_000_000)),
    ("a1", "u1", msg("assistant", "answer", 1_700_000_010, metadata={"model_slug": "gpt-4o"})),
    ("u2", "root", msg("user", "second wording", 1_700_000_020)),  # an edit of u1
    ("u3", "root", msg("user", "third wording", 1_700_000_030)),  # and another
    ("a2", "u3", msg("assistant", "first answer", 1_700_000_040, metadata={"model_slug": "gpt-4o"})),
    ("a3", "u3", msg("assistant", "regenerated", 1_700_000_050, metadata={"model_slug": "o3"})),
    ("call", "a3", msg("assistant", {"content_type": "code", "text": "1"}, 1_706_000_000, recipient="python")),
    ("out", "call", msg("tool", {"content_type": "execution_output", "text": "1"}, 1_706_000_001, name="python")),
    current="out",
    gizmo_id="g-abc",
    gizmo_type="gpt",
)


def test_counting_rules_on_a_hand_built_tree(tmp_path: Path) -> None:
    plain = tree(("x", None, msg("user", "hello", 1_600_000_000)), id="c2")
    found = mv.inventory(write(tmp_path, BRANCHED, plain))
    assert found["provider"] == "chatgpt"
    assert (found["conversations"], found["in_envelope"], found["nodes"]) == (2, 2, 9)
    assert found["kinds"] == {"prose": 7, "code": 1, "tool_output": 1}
    # assistant nodes naming a model: a1, a2 gpt-4o; a3 o3; the code call names none
    assert found["models"] == {"gpt-4o": 2, "o3": 1}
    assert found["models_by_month"] == {"2023-11": {"gpt-4o": 2, "o3": 1}}
    assert found["tools"] == {"python": 1}  # the call, not the tool's answer
    # u2 and u3 come after u1 among root's children: two edits; a3 after a2: one regeneration; off the
    # path u3 -> a3 -> call -> out: u1, a1, u2, a2
    assert found["branches"] == {
        "edited_prompts": 2,
        "regenerated_replies": 1,
        "abandoned_nodes": 4,
        "branched_conversations": 1,
    }
    assert found["custom_gpts"] == {"g-abc": 1}
    assert (found["first"], found["last"]) == ("2020-09-13T12:26:40.000Z", "2024-01-23T08:53:21.000Z")
    assert found["assets"] == {"total": 0, "present": 0, "missing": 0}  # no file named, none held
    assert [(p["kind"], p["project_id"], p["conversations"]) for p in found["projects"]] == [("custom-gpt", "g-abc", 1)]
    json.dumps(found)  # serialisable as it is


def test_claude_tools_count_each_tool_use(tmp_path: Path) -> None:
    uses = [{"type": "tool_use", "name": "web_search"}, {"type": "tool_use", "name": "web_search"}]
    chat = [
        {"uuid": "h", "sender": "human", "text": "q", "parent_message_uuid": "r"},
        {
            "uuid": "a",
            "sender": "assistant",
            "content": [*uses, {"type": "text", "text": "r"}],
            "parent_message_uuid": "h",
        },
        {"uuid": "b", "sender": "assistant", "text": "retry", "parent_message_uuid": "h"},
    ]
    found = mv.inventory(write(tmp_path, {"uuid": "k", "model": "claude-3-opus", "chat_messages": chat}))
    assert found["tools"] == {"web_search": 2}
    assert found["models"] == {"claude-3-opus": 2}
    assert found["branches"]["regenerated_replies"] == 1 and found["branches"]["abandoned_nodes"] == 0


def test_times_at_the_edges_count_as_the_envelope_renders_them(tmp_path: Path) -> None:
    # The envelope renders a number by truncating to the millisecond (never rounding), a number at or above
    # 1e12 as milliseconds, a text with an offset as its UTC instant; out of years 0001-9999 and non-numbers
    # (true) are undated. Each month below is the UTC month of that rendering.
    def reply(model: str, t: object) -> dict[str, Any]:
        return msg("assistant", "r", None, create_time=t, metadata={"model_slug": model})

    conv = tree(
        ("a", None, reply("gpt-4o", 1_706_745_599.9999)),  # 2024-01-31T23:59:59.999Z, not February
        ("b", "a", reply("gpt-4o", 1_709_251_200_000)),  # milliseconds: 2024-03-01T00:00:00.000Z
        ("c", "b", reply("o3", "2024-05-01T00:30:00+01:00")),  # 2024-04-30T23:30:00.000Z
        ("d", "c", reply("o3", 1e20)),  # past year 9999: undated
        ("e", "d", reply("o3", -1.5)),  # 1969-12-31T23:59:58.500Z
        ("f", "e", reply("o3", True)),  # no number: undated
        ("g", "f", msg("user", "q", None, create_time="2024-06-01")),  # 2024-06-01T00:00:00.000Z
        current="g",
    )
    chat = [
        {"uuid": "h", "sender": "human", "text": "q", "created_at": "2024-07-31T23:59:59.9999-00:30"},
        {"uuid": "i", "sender": "assistant", "text": "r", "created_at": "2024-07-31T23:59:59.9999-00:30"},
        {"uuid": "j", "sender": "assistant", "text": "r", "created_at": "1706745599.9999"},
    ]
    found = mv.inventory(write(tmp_path, conv))
    assert found["models_by_month"] == {
        "1969-12": {"o3": 1},
        "2024-01": {"gpt-4o": 1},
        "2024-03": {"gpt-4o": 1},
        "2024-04": {"o3": 1},
    }
    assert found["models"] == {"o3": 4, "gpt-4o": 2}  # the undated replies still name their model
    assert (found["first"], found["last"]) == ("1969-12-31T23:59:58.500Z", "2024-06-01T00:00:00.000Z")
    found = mv.inventory(write(tmp_path, {"uuid": "k", "model": "claude-3-opus", "chat_messages": chat}, name="c.json"))
    # 23:59:59.999 at -00:30 is 00:29:59.999 on August 1st; the bare number is read as seconds
    assert found["models_by_month"] == {"2024-01": {"claude-3-opus": 1}, "2024-08": {"claude-3-opus": 1}}
    assert (found["first"], found["last"]) == ("2024-01-31T23:59:59.999Z", "2024-08-01T00:29:59.999Z")


def test_the_inventory_makes_no_node_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memvelope_tools._whole import rows

    def refuse(*args: object) -> bool | None:
        raise AssertionError("a node row was made")

    monkeypatch.setitem(rows.ROWS, "chatgpt", refuse)
    monkeypatch.setitem(rows.ROWS, "claude", refuse)
    assert mv.inventory(write(tmp_path, BRANCHED))["nodes"] == 8
    assert mv.inventory(mv.sample_path("claude"))["provider"] == "claude"


def test_librechat_tree_counted_by_hand() -> None:
    # By hand: one edit (an assistant node with two user children), one regeneration (a user node with two
    # assistant children), 12 nodes with a message of which 7 on current_node's path.
    found = mv.inventory(need(REAL / "librechat" / "chatgpt-tree.json"))
    assert found["nodes"] == 12
    assert found["branches"] == {
        "edited_prompts": 1,
        "regenerated_replies": 1,
        "abandoned_nodes": 5,
        "branched_conversations": 1,
    }


def test_pkuppens_counted_by_hand() -> None:
    # By hand: 192 conversations; recipients other than all: browser 29, show_me.get_MermaidRoute 1; four
    # user nodes with two assistant children; 9 nodes off their conversation's current_node path.
    found = mv.inventory(need(COLLECTED / "pkuppens__my_chat_gpt__history_download-conversations.json"))
    assert found["conversations"] == 192 and found["nodes"] == 1560
    assert found["tools"] == {"browser": 29, "show_me.get_MermaidRoute": 1}
    assert found["branches"]["regenerated_replies"] == 4 and found["branches"]["abandoned_nodes"] == 9
    assert found["models"]["gpt-4-browsing"] == 47


def test_the_command_lists_and_prints_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, BRANCHED)
    assert main(["inventory", str(path), "-q"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ChatGPT export: 1 conversation (1 in the envelope), 8 nodes, 2023-11-14 to 2024-01-23")
    assert "  edited prompts: 2\n" in out and "  regenerated replies: 1\n" in out
    assert "python  1 call" in out and "g-abc  1 conversation" in out
    assert main(["inventory", str(path), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert {"provider", "conversations", "nodes", "models", "tools", "branches", "assets", "projects"} <= set(found)
    assert found == mv.inventory(path)


def test_the_command_escapes_names_from_the_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conv = tree(("a", None, msg("assistant", "x", 1, metadata={"model_slug": "gpt\x1b[31m-red"})))
    assert main(["inventory", str(write(tmp_path, conv)), "-q"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "gpt\\x1b[31m-red" in out


def test_an_envelope_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    envelope = tmp_path / "history.mve.json"
    mv.write_envelope(mv.convert(mv.sample_path("chatgpt")), envelope)
    assert main(["inventory", str(envelope)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "an envelope, not an export" in err and "Traceback" not in err


def test_a_missing_export_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inventory", str(tmp_path / "nowhere.zip")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file or folder" in err


def test_an_export_given_as_bytes_is_refused_before_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from memvelope_tools._whole import read

    data = Path(mv.sample_path("chatgpt")).read_bytes()
    monkeypatch.setattr(read, "read_parts", lambda *args, **kwargs: pytest.fail("the export was read"))
    with pytest.raises(InputError, match="reads an export's files on disk"):
        mv.inventory(data)
