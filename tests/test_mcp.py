"""`memvelope mcp`: a read-only MCP server over stdio, driven here by the official SDK's own client
(``ClientSession`` over ``stdio_client``, spawning ``python -m memvelope_tools mcp INPUT``) as an
assistant's client drives it. The expected values are read from the inputs with the frame functions,
the diff of the two exports and the envelope itself, never from the server's code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, fresh

import memvelope_tools as mv

pytest.importorskip("mcp", reason="the mcp extra (the MCP SDK) is not installed")

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = {"search", "get_conversation", "list_conversations", "memory"}


def served(path: Path, work: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    """``work`` done in a client session with ``memvelope mcp PATH``, spawned as an MCP client spawns it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "memvelope_tools", "mcp", str(path), "-q"], env=env, cwd=str(ROOT)
    )

    async def session() -> Any:
        with open(os.devnull, "w") as quiet:
            async with stdio_client(server, errlog=quiet) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                return await work(client)

    return anyio.run(session)


def answer(result: Any) -> dict[str, Any]:
    """The JSON a tool answered (its text block), after checking it is not an error."""
    assert not result.is_error, result.content[0].text
    data = json.loads(result.content[0].text)
    assert result.structured_content == data
    return data


def error_line(result: Any) -> str:
    assert result.is_error
    [block] = result.content
    assert "\n" not in block.text and block.text
    return str(block.text)


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``folder``: its size and modification time."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def history_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("history") / "my-history"
    for export in mv.history_samples():
        mv.add_to_history(export, folder)
    return folder


def test_a_session_over_a_history_folder_lists_four_tools_and_answers_each(history_folder: Path) -> None:
    import shutil

    shutil.rmtree(history_folder / "search-index")  # the index mv.search would write back: the server must not
    before = snapshot(history_folder)
    older, newer = mv.history_samples()
    changes = mv.diff(older, newer)
    deleted = set(changes.loc[changes["status"] == "missing", "id"])
    frames = mv.read_history(history_folder)
    messages = frames["messages"]
    old_messages = mv.messages_frame(older)

    async def work(client: ClientSession) -> dict[str, Any]:
        tools = await client.list_tools()
        out: dict[str, Any] = {"tools": {tool.name: tool for tool in tools.tools}}
        out["coriander"] = answer(await client.call_tool("search", {"query": "coriander", "limit": 20}))
        out["bad"] = await client.call_tool("search", {"query": "coriander", "limit": "many"})
        out["after bad"] = answer(await client.call_tool("search", {"query": "Snowflake", "role": "user"}))
        out["bad query"] = await client.call_tool("search", {"query": '"unclosed'})
        out["bad role"] = await client.call_tool("search", {"query": "x", "role": "robot"})
        out["bad date"] = await client.call_tool("list_conversations", {"since": "last tuesday"})
        out["unknown id"] = await client.call_tool("get_conversation", {"id": "no-such-id"})
        out["extra"] = await client.call_tool("memory", {"kind": "saved"})
        out["no tool"] = await client.call_tool("delete_everything", {})
        [gone] = sorted(deleted)[:1]
        out["gone"] = answer(await client.call_tool("get_conversation", {"id": gone}))
        out["recent"] = answer(await client.call_tool("list_conversations", {"since": "2026-09-01"}))
        out["all"] = answer(await client.call_tool("list_conversations", {"limit": 500}))
        out["memory"] = answer(await client.call_tool("memory", {}))
        return out

    out = served(history_folder, work)

    assert set(out["tools"]) == TOOLS
    assert all(tool.annotations.read_only_hint for tool in out["tools"].values())
    assert out["tools"]["search"].input_schema["required"] == ["query"]

    hits = out["coriander"]["hits"]
    assert hits and out["coriander"]["matches"] == len(hits)
    for hit in hits:
        assert set(hit) >= {"conversation_id", "title", "time", "snippet", "status"}
        assert "⟦" in hit["snippet"] and hit["time"].endswith("Z")
        if hit["conversation_id"] in deleted:
            assert hit["status"] == "deleted-upstream"
    assert any(hit["conversation_id"] in deleted for hit in hits)
    assert all(hit["role"] == "user" for hit in out["after bad"]["hits"]) and out["after bad"]["hits"]

    assert "limit" in error_line(out["bad"])
    assert "a quote is not closed" in error_line(out["bad query"])
    assert "role" in error_line(out["bad role"])
    assert "since" in error_line(out["bad date"])
    assert "no-such-id" in error_line(out["unknown id"])
    assert "kind" in error_line(out["extra"])
    assert "delete_everything" in error_line(out["no tool"])

    gone = out["gone"]
    assert gone["status"] == "deleted-upstream"
    said = old_messages.loc[old_messages["conversation_id"] == gone["id"]].sort_values("position")
    assert [m["text"] for m in gone["messages"]] == said["text"].tolist()
    assert {m["status"] for m in gone["messages"]} == {"deleted-upstream"}
    assert all(m["first_seen"] == "2026-05-01T08:30:00.000Z" for m in gone["messages"])

    since = messages["ts"] >= "2026-09-01"
    assert {c["id"] for c in out["recent"]["conversations"]} == set(messages.loc[since, "conversation_id"])
    assert out["recent"]["total"] == len(out["recent"]["conversations"])
    everything = out["all"]["conversations"]
    assert len(everything) == len(frames["conversations"])
    statuses = {c["id"]: c["status"] for c in everything}
    assert {i for i, s in statuses.items() if s == "deleted-upstream"} == deleted
    updated = [c["updated"] for c in everything if c["updated"] is not None]
    assert len(updated) >= 2

    assert out["memory"]["items"] == [] and out["memory"]["notes"]
    assert snapshot(history_folder) == before  # nothing written: no index, no cache


def test_a_message_edited_in_place_has_a_status_for_each_of_its_texts(edited_in_place: Path) -> None:
    """The fixture's one message kept its id, role, time and place while its text changed from
    "tell me about ferrets" to "tell me about otters": search and get_conversation show both texts,
    the old one edited-away, the new one current; a match of its conversation's title "Pets" shows the
    text seen last, as search over the folder does."""

    async def work(client: ClientSession) -> tuple[dict[str, Any], ...]:
        hits = answer(await client.call_tool("search", {"query": "ferrets OR otters"}))
        by_title = answer(await client.call_tool("search", {"query": "pets"}))
        conversation = answer(await client.call_tool("get_conversation", {"id": "c"}))
        return hits, by_title, conversation

    hits, by_title, conversation = served(edited_in_place, work)
    assert hits["matches"] == 2
    assert {hit["snippet"]: hit["status"] for hit in hits["hits"]} == {
        "tell me about ⟦ferrets⟧": "edited-away",
        "tell me about ⟦otters⟧": "current",
    }
    assert all(hit["position"] == hits["hits"][0]["position"] for hit in hits["hits"])
    assert [(m["text"], m["status"]) for m in conversation["messages"]] == [
        ("tell me about ferrets", "edited-away"),
        ("tell me about otters", "current"),
    ]
    assert conversation["status"] == "current"
    assert [(hit["snippet"], hit["status"]) for hit in by_title["hits"]] == [("tell me about otters", "current")]


def test_a_session_over_an_export_reads_its_memory_and_conversations() -> None:
    export = mv.sample_path("chatgpt")
    remembered = mv.memory_frame(export)
    envelope = mv.convert(export)
    first = envelope["conversations"][0]

    async def work(client: ClientSession) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        memory = answer(await client.call_tool("memory", {}))
        conversation = answer(await client.call_tool("get_conversation", {"id": first["id"]}))
        listing = answer(await client.call_tool("list_conversations", {"limit": 500}))
        return memory, conversation, listing

    memory, conversation, listing = served(export, work)
    assert memory["provider"] == "chatgpt"
    assert [item["text"] for item in memory["items"]] == remembered["text"].tolist()
    assert [item["kind"] for item in memory["items"]] == remembered["kind"].astype(str).tolist()
    assert all(item["time"] is None or item["time"][:4].isdigit() for item in memory["items"])
    assert conversation["title"] == first["title"]
    assert [(m["role"], m["text"]) for m in conversation["messages"]] == [
        (m["role"], m["text"]) for m in first["messages"]
    ]
    assert conversation["messages"][0]["time"][:19] == first["messages"][0]["ts"][:19]
    assert "status" not in conversation
    assert len(listing["conversations"]) == envelope["meta"]["conversation_count"]


@pytest.mark.slow
def test_an_envelope_and_a_parquet_folder_are_served_and_the_folder_is_left_as_it_was(tmp_path: Path) -> None:
    envelope = tmp_path / "claude.mve.json"
    mv.write_envelope(mv.convert(mv.sample_path("claude")), envelope)
    folder = tmp_path / "parquet"
    mv.to_parquet(envelope, folder)
    before = snapshot(folder)
    expected = mv.search(mv.read_parquet(folder), "the", limit=5)["conversation_id"].tolist()

    async def work(client: ClientSession) -> tuple[dict[str, Any], dict[str, Any]]:
        hits = answer(await client.call_tool("search", {"query": "the", "limit": 5}))
        memory = answer(await client.call_tool("memory", {}))
        return hits, memory

    for path in (envelope, folder):
        hits, memory = served(path, work)
        assert [hit["conversation_id"] for hit in hits["hits"]] == expected
        assert all(hit["status"] is None for hit in hits["hits"])
        assert memory["items"] == [] and "export" in memory["notes"][0]
    assert snapshot(folder) == before


def test_a_bad_input_exits_1_with_one_line_before_serving(tmp_path: Path) -> None:
    facts = tmp_path / "facts.mv.json"
    facts.write_bytes(mv.sample_path("facts-chatgpt").read_bytes())
    for path, said in ((tmp_path / "missing.zip", "no such file"), (facts, "Facts IR")):
        done = fresh("mcp", str(path))
        assert done.returncode == 1
        assert done.stdout == ""
        [line] = done.stderr.splitlines()
        assert line.startswith("memvelope: error: ") and said in line


def test_without_the_mcp_extra_the_command_says_which_extra_installs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memvelope_tools.cli import main

    envelope = tmp_path / "claude.mve.json"
    mv.write_envelope(mv.convert(mv.sample_path("claude")), envelope)
    monkeypatch.setitem(sys.modules, "mcp", None)
    assert main(["mcp", str(envelope)]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert "pip install 'memvelope_tools[mcp]'" in line


def test_the_command_line_loads_the_mcp_sdk_only_in_the_mcp_command() -> None:
    probe = (
        "import sys; from memvelope_tools.cli import build_parser; build_parser(); "
        "print(sorted({'mcp', 'anyio'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"


def test_print_config_gives_the_entry_that_starts_this_server_with_absolute_paths(tmp_path: Path) -> None:
    envelope = tmp_path / "claude.mve.json"
    mv.write_envelope(mv.convert(mv.sample_path("claude")), envelope)
    done = subprocess.run(
        [sys.executable, "-m", "memvelope_tools", "mcp", envelope.name, "--print-config"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])},
    )
    assert done.returncode == 0 and done.stderr == ""
    entry = json.loads(done.stdout)["mcpServers"]["memvelope"]
    assert entry == {"command": sys.executable, "args": ["-m", "memvelope_tools", "mcp", str(envelope)]}
    assert fresh("mcp", str(tmp_path / "missing"), "--print-config").returncode == 1
