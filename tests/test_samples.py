"""The bundled sample exports: reproducible from their script, shaped as planned, reachable by name.

Everything here reads the zips' JSON directly and never imports the converter, so a converter bug
cannot make these pass. The expected counts are the plan written into
fixtures/samples/topics_chatgpt.py and topics_claude.py (which turns carry a regeneration, an edit,
a tool call, ...), counted by hand from those files.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import io
import json
import re
import struct
import subprocess
import sys
import zipfile
import zlib
from collections import Counter
from pathlib import Path

import pytest

from memvelope_tools.samples import SAMPLES, sample_path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "fixtures" / "samples" / "build_samples.py"

CHATGPT_MEMBERS = [
    "chat.html",
    "conversations-000.json",
    "conversations-001.json",
    "dalle-generations/file-*.webp",  # the generated image, named by its file id and a uuid
    "file-*-IMG_2291.png",  # the upload still held, named by its file id and its name
    "message_feedback.json",
    "shared_conversations.json",
    "user.json",
]
CLAUDE_MEMBERS = ["conversations.json", "memories.json", "projects.json", "users.json"]
ZIP_DATE_TIME = (2026, 10, 31, 12, 0, 0)
CLAUDE_ROOT = "00000000-0000-4000-8000-000000000000"
PLACEHOLDER = "This block is not supported on your current device yet."
CLAUDE_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
EMOJI = re.compile(r"[\U0001F300-\U0001FAFF\u2600-\u27BF]")
DAY = 86400

# Raw deflate (level 9) of a fixed probe, as made by the zlib (1.2.13) that built the committed zips.
_PROBE = (
    '{"title": "Pão de ló in grams", "create_time": 1731940000.5, "parts": ["6 eggs, 200 g sugar, 125 g flour"]}, ' * 6
).encode()
_PROBE_DEFLATED = bytes.fromhex(
    "ab562ac92cc94955b252500a38bc385f21255521e7f06685cc3c85f4a2c4dc62251d05a5e4a2d4c492d4f892cc5c9032"
    "437363434b130320d033054a16241695140385a395cc1452d3d38b75148c0c0c14d2158a4bd3138b74140c8d4c819cb4"
    "9cfcd222a5d85a1d85ea51eb46ad23ce3a00"
)


def _run_script(out: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("samples")
    _run_script(out)
    return out


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


@pytest.fixture(scope="module")
def chatgpt() -> list[dict]:
    members = _members(sample_path("chatgpt"))
    return json.loads(members["conversations-000.json"]) + json.loads(members["conversations-001.json"])


@pytest.fixture(scope="module")
def claude() -> list[dict]:
    return json.loads(_members(sample_path("claude"))["conversations.json"])


# ------------------------------------------------------------------ reproducibility


def test_two_runs_of_the_script_give_identical_bytes(built: Path, tmp_path: Path) -> None:
    _run_script(tmp_path)
    for name in SAMPLES:
        first = (built / f"{name}-export.zip").read_bytes()
        assert first == (tmp_path / f"{name}-export.zip").read_bytes(), name


@pytest.mark.parametrize("name", SAMPLES)
def test_committed_zip_has_exactly_the_scripts_content(built: Path, name: str) -> None:
    fresh, committed = built / f"{name}-export.zip", sample_path(name)
    with zipfile.ZipFile(fresh) as a, zipfile.ZipFile(committed) as b:
        assert a.namelist() == b.namelist(), "member list drifted: rerun build_samples.py"
        for x, y in zip(a.infolist(), b.infolist(), strict=True):
            fields = ("filename", "date_time", "compress_type", "external_attr", "create_system", "CRC", "file_size")
            assert [getattr(x, f) for f in fields] == [getattr(y, f) for f in fields], x.filename
            assert a.read(x) == b.read(y), f"{x.filename} drifted: rerun fixtures/samples/build_samples.py"


@pytest.mark.parametrize("name", SAMPLES)
def test_committed_zip_is_byte_identical_to_the_script_output(built: Path, name: str) -> None:
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    if deflater.compress(_PROBE) + deflater.flush() != _PROBE_DEFLATED:
        pytest.skip(
            f"this zlib ({zlib.ZLIB_RUNTIME_VERSION}) deflates differently from the one that built "
            "the zips; content equality is checked by test_committed_zip_has_exactly_the_scripts_content"
        )
    assert (built / f"{name}-export.zip").read_bytes() == sample_path(name).read_bytes()


# ------------------------------------------------------------------ zip layout


@pytest.mark.parametrize(("name", "expected"), [("chatgpt", CHATGPT_MEMBERS), ("claude", CLAUDE_MEMBERS)])
def test_zip_members_metadata_and_size(name: str, expected: list[str]) -> None:
    path = sample_path(name)
    assert path.stat().st_size < 400_000
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        names = [i.filename for i in infos]
        assert len(names) == len(expected) and names == sorted(names)  # sorted, no folders
        assert all(fnmatch.fnmatchcase(n, e) for n, e in zip(names, expected, strict=True)), names
        for info in infos:
            assert info.date_time == ZIP_DATE_TIME
            assert info.compress_type == zipfile.ZIP_DEFLATED
            assert info.external_attr == 0o100644 << 16
        assert archive.testzip() is None


def test_chatgpt_members_are_written_like_the_provider() -> None:
    members = _members(sample_path("chatgpt"))
    for part in ("conversations-000.json", "conversations-001.json"):
        data = members[part]
        assert b"\n" not in data  # one compact line; newlines in text are escaped
        assert "Inês".encode() in data or "ê".encode() in data  # raw UTF-8, not \u escapes
        assert isinstance(json.loads(data), list)
    assert len(json.loads(members["conversations-000.json"])) == 20
    assert len(json.loads(members["conversations-001.json"])) == 20
    user = json.loads(members["user.json"])
    assert user["email"].endswith("@example.com")
    html = members["chat.html"].decode("utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.count("<li>") == 40


def test_claude_members_are_written_like_the_provider() -> None:
    members = _members(sample_path("claude"))
    assert members["conversations.json"].startswith(b'[\n  {\n    "uuid": ')
    assert "Inês Carvalho".encode() in members["users.json"]
    for name in CLAUDE_MEMBERS:
        assert isinstance(json.loads(members[name]), list), name


# ------------------------------------------------------------------ ChatGPT corpus


def _text(message: dict) -> str:
    content = message["content"]
    return "\n".join(p for p in content.get("parts", []) if isinstance(p, str))


def _path(conv: dict) -> list[str]:
    path, node = [], conv["current_node"]
    while node is not None:
        path.append(node)
        node = conv["mapping"][node]["parent"]
    return path[::-1]


def _children_roles(conv: dict, node: dict) -> list[str]:
    return [conv["mapping"][c]["message"]["author"]["role"] for c in node["children"]]


def test_chatgpt_trees_are_well_formed(chatgpt: list[dict]) -> None:
    assert len(chatgpt) == 40
    assert len({c["conversation_id"] for c in chatgpt}) == 40
    for conv in chatgpt:
        mapping = conv["mapping"]
        assert conv["id"] == conv["conversation_id"]
        roots = [k for k, v in mapping.items() if v["parent"] is None]
        assert roots == ["client-created-root"] and mapping["client-created-root"]["message"] is None
        for key, node in mapping.items():
            assert node["id"] == key
            for child in node["children"]:
                assert mapping[child]["parent"] == key
            if node["parent"] is not None:
                assert key in mapping[node["parent"]]["children"]
        assert mapping[conv["current_node"]]["children"] == []
        path = _path(conv)
        assert path[0] == "client-created-root"
        system = mapping[path[1]]["message"]
        assert system["author"]["role"] == "system"
        assert system["metadata"]["is_visually_hidden_from_conversation"] is True
        assert mapping[path[-1]]["message"]["author"]["role"] == "assistant"
        # every branch point has exactly one child on the active path
        on_path = set(path)
        for node in mapping.values():
            if len(node["children"]) > 1:
                assert sum(c in on_path for c in node["children"]) in (0, 1)
                if node["id"] in on_path:
                    assert sum(c in on_path for c in node["children"]) == 1


def test_chatgpt_branches(chatgpt: list[dict]) -> None:
    regenerated, edited, three_way, active_first = 0, 0, 0, 0
    for conv in chatgpt:
        path = set(_path(conv))
        regen_here = edit_here = False
        for node in conv["mapping"].values():
            roles = _children_roles(conv, node)
            if node["message"] and node["message"]["author"]["role"] == "user" and roles.count("assistant") >= 2:
                regen_here = True
                three_way += len(roles) == 3
                first = node["children"][0]
                active_first += first in path and len(conv["mapping"][first]["children"]) > 0
            if roles.count("user") >= 2:
                edit_here = True
                assert node["children"][-1] in path  # the edited prompt is the active one
        regenerated += regen_here
        edited += edit_here
    assert (regenerated, edited, three_way, active_first) == (5, 4, 2, 1)


def test_chatgpt_tool_and_reasoning_nodes(chatgpt: list[dict]) -> None:
    kinds: Counter[tuple[str, str, str]] = Counter()
    for conv in chatgpt:
        mapping = conv["mapping"]
        for node in mapping.values():
            msg = node["message"]
            if msg is None:
                continue
            kinds[(msg["author"]["role"], msg["content"]["content_type"], msg["recipient"])] += 1
            if msg["content"]["content_type"] == "code" and msg["recipient"] == "python":
                (child,) = node["children"]
                result = mapping[child]["message"]
                assert msg["end_turn"] is False
                assert result["author"] == {"role": "tool", "name": "python", "metadata": {}}
                assert result["content"]["content_type"] == "execution_output" and result["content"]["text"]
            if msg["content"]["content_type"] == "thoughts":
                (child,) = node["children"]
                assert mapping[child]["message"]["content"]["content_type"] == "reasoning_recap"
                assert msg["content"]["thoughts"][0]["content"]
    assert sum(kinds.values()) == 206  # and 40 roots without a message: 246 nodes
    assert kinds[("assistant", "code", "python")] == 4
    assert kinds[("tool", "execution_output", "all")] == 4
    assert kinds[("assistant", "code", "web.run")] == 1 and kinds[("assistant", "code", "canmore.create_textdoc")] == 1
    assert (
        kinds[("tool", "text", "all")] == 4
    )  # the DALL-E notice, the web search's queries and results, the canvas notice
    assert kinds[("assistant", "thoughts", "all")] == 4
    assert kinds[("assistant", "reasoning_recap", "all")] == 4
    assert kinds[("assistant", "text", "dalle.text2im")] == 1
    assert kinds[("tool", "multimodal_text", "all")] == 1  # the generated image
    assert kinds[("user", "multimodal_text", "all")] == 2
    assert kinds[("system", "text", "all")] == 40
    # what ChatGPT remembered: 5 memory writes to the bio tool, each answered by the tool, and 4 snapshots
    assert kinds[("assistant", "text", "bio")] == 5
    assert kinds[("tool", "text", "assistant")] == 5
    assert kinds[("assistant", "model_editable_context", "all")] == 4


def test_chatgpt_image_uploads_have_a_pointer_and_text(chatgpt: list[dict]) -> None:
    uploads = [
        n["message"]
        for c in chatgpt
        for n in c["mapping"].values()
        if n["message"]
        and n["message"]["content"]["content_type"] == "multimodal_text"
        and n["message"]["author"]["role"] == "user"
    ]
    assert len(uploads) == 2
    for msg in uploads:
        pointer, text = msg["content"]["parts"]
        assert pointer["content_type"] == "image_asset_pointer"
        assert pointer["asset_pointer"].startswith("file-service://")
        assert isinstance(text, str) and text.strip()


def _nodes(chatgpt: list[dict]) -> list[tuple[dict, dict]]:
    """Every (conversation, node holding a message) of the sample."""
    return [(c, n) for c in chatgpt for n in c["mapping"].values() if n["message"]]


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_chatgpt_upload_files_one_missing(chatgpt: list[dict]) -> None:
    members = _members(sample_path("chatgpt"))
    held = []
    for _, node in _nodes(chatgpt):
        msg = node["message"]
        if msg["author"]["role"] != "user" or msg["content"]["content_type"] != "multimodal_text":
            continue
        pointer = msg["content"]["parts"][0]
        file_id = pointer["asset_pointer"].removeprefix("file-service://")
        (attached,) = msg["metadata"]["attachments"]
        assert attached["id"] == file_id and attached["mime_type"] == "image/png"
        assert attached["size"] == pointer["size_bytes"] and attached["name"].endswith(".png")
        named = [n for n in members if file_id in n]
        if named:
            assert named == [f"{file_id}-{attached['name']}"]  # as ChatGPT names an upload
            data = members[named[0]]
            assert len(data) == attached["size"]
            assert _png_size(data) == (pointer["width"], pointer["height"]) == (attached["width"], attached["height"])
            held.append(attached["name"])
    assert held == ["IMG_2291.png"]  # the lab results' scan is missing from the download


def test_chatgpt_generated_image_file(chatgpt: list[dict]) -> None:
    members = _members(sample_path("chatgpt"))
    (image,) = [
        n["message"]
        for _, n in _nodes(chatgpt)
        if n["message"]["author"]["role"] == "tool" and n["message"]["content"]["content_type"] == "multimodal_text"
    ]
    (pointer,) = image["content"]["parts"]
    file_id = pointer["asset_pointer"].removeprefix("file-service://")
    (name,) = [n for n in members if n.startswith("dalle-generations/")]
    assert re.fullmatch(rf"dalle-generations/{file_id}-[0-9a-f-]{{36}}\.webp", name)
    data = members[name]
    assert len(data) == pointer["size_bytes"]
    assert data[:4] == b"RIFF" and data[8:16] == b"WEBPVP8L" and struct.unpack("<I", data[4:8])[0] == len(data) - 8
    size = int.from_bytes(data[21:25], "little")
    assert data[20] == 0x2F and ((size & 0x3FFF) + 1, (size >> 14 & 0x3FFF) + 1) == (1024, 1024)


def test_chatgpt_pictures_decode_at_their_declared_size() -> None:
    image = pytest.importorskip("PIL.Image")
    members = _members(sample_path("chatgpt"))
    pictures = {n: d for n, d in members.items() if n.endswith((".png", ".webp"))}
    assert len(pictures) == 2
    for name, data in pictures.items():
        with image.open(io.BytesIO(data)) as picture:
            picture.load()
            expected = (1024, 1024) if name.endswith(".webp") else (1536, 2048)
            assert picture.size == expected, name
            assert len(picture.convert("RGB").getcolors()) == 1, name  # one colour: a stand-in


def test_chatgpt_web_search_and_canvas(chatgpt: list[dict]) -> None:
    calls = {
        n["message"]["recipient"]: (c, n)
        for c, n in _nodes(chatgpt)
        if n["message"]["recipient"] in ("web.run", "canmore.create_textdoc")
    }
    assert len(calls) == 2 and len([1 for _, n in _nodes(chatgpt) if n["message"]["recipient"] == "web.run"]) == 1
    conv, call = calls["web.run"]
    mapping = conv["mapping"]
    assert conv["title"] == "Weekend in Porto for Ana's wedding"
    assert call["message"]["author"]["role"] == "assistant" and call["message"]["content"]["content_type"] == "code"
    queries = [q["q"] for q in json.loads(call["message"]["content"]["text"])["search_query"]]
    assert [q["q"] for q in call["message"]["metadata"]["search_queries"]] == queries and len(queries) == 2
    (asked,) = call["children"]
    (found,) = mapping[asked]["children"]
    for key in (asked, found):
        reply = mapping[key]["message"]
        assert reply["author"]["role"] == "tool" and reply["author"]["name"] == "web.run"
        assert reply["content"] == {"content_type": "text", "parts": [""]}  # the results are in the metadata
    assert mapping[asked]["message"]["metadata"]["search_model_queries"]["queries"] == queries
    groups = mapping[found]["message"]["metadata"]["search_result_groups"]
    assert [g["domain"] for g in groups] == ["www.cp.pt", "www.seat61.com"]
    assert sum(len(g["entries"]) for g in groups) == 3
    (answer,) = mapping[found]["children"]
    assert answer == conv["current_node"] and mapping[answer]["message"]["end_turn"] is True

    conv, call = calls["canmore.create_textdoc"]
    mapping = conv["mapping"]
    assert conv["title"] == "Resignation letter"
    doc = json.loads(call["message"]["content"]["text"])
    assert call["message"]["content"]["content_type"] == "code" and doc["type"] == "document"
    (notice,) = call["children"]
    told = mapping[notice]["message"]
    assert told["author"] == {"role": "tool", "name": "canmore.create_textdoc", "metadata": {}}
    assert told["metadata"]["canvas"]["title"] == doc["name"] == "Resignation letter to Rui"
    assert f"textdoc_id: '{told['metadata']['canvas']['textdoc_id']}'" in told["content"]["parts"][0]
    (answer,) = mapping[notice]["children"]
    assert answer == conv["current_node"] and _text(mapping[answer]["message"]) == doc["content"]


def test_chatgpt_custom_gpt(chatgpt: list[dict]) -> None:
    held = [c for c in chatgpt if c["gizmo_id"] is not None]
    assert [c["title"] for c in held] == ["Ordering food in Japanese", "Phrases for a Tokyo work trip"]
    assert len({c["gizmo_id"] for c in held}) == 1 and held[0]["gizmo_id"].startswith("g-")
    for conv in chatgpt:
        gizmo = conv["gizmo_id"]
        assert conv["conversation_template_id"] == gizmo
        assert conv["gizmo_type"] == ("gpt" if gizmo else None)
        replies = [
            n["message"]
            for n in conv["mapping"].values()
            if n["message"] and n["message"]["author"]["role"] == "assistant"
        ]
        assert [m["metadata"].get("gizmo_id") for m in replies] == [gizmo] * len(replies)
    assert (
        sum(
            len([1 for n in c["mapping"].values() if n["message"] and n["message"]["author"]["role"] == "assistant"])
            for c in held
        )
        == 4
    )


def test_chatgpt_memory_citations(chatgpt: list[dict]) -> None:
    saved = {
        n["message"]["content"]["parts"][0]: n["message"]["create_time"]
        for _, n in _nodes(chatgpt)
        if n["message"]["recipient"] == "bio"
    }
    citing = [
        (c, n) for c, n in _nodes(chatgpt) if "conversation_context_citation_metadata" in n["message"]["metadata"]
    ]
    assert [c["title"] for c, _ in citing] == ["Bacalhau à Brás without dairy", "30-60-90 day plan at Kestrel"]
    memories = set()
    for conv, node in citing:
        msg = node["message"]
        assert msg["author"]["role"] == "assistant" and node["id"] in _path(conv)
        for entry in msg["metadata"]["conversation_context_citation_metadata"]:
            cited = entry["citation"]
            assert (
                cited["conversation_context_type"] == "user_memory" and entry["citation_uuid"] == cited["citation_uuid"]
            )
            assert saved[cited["snippet"]] < msg["create_time"]  # it cites what was saved before
            memories.add((cited["memory_id"], cited["snippet"]))
    assert len(memories) == 2 and len({m for m, _ in memories}) == 2


def test_chatgpt_custom_instructions(chatgpt: list[dict]) -> None:
    contexts = [
        n["message"]
        for c in chatgpt
        for n in c["mapping"].values()
        if n["message"] and n["message"]["content"]["content_type"] == "user_editable_context"
    ]
    hidden = [m for m in contexts if m["metadata"].get("is_visually_hidden_from_conversation") is True]
    assert (len(contexts), len(hidden)) == (5, 4)
    for msg in contexts:
        assert msg["author"]["role"] == "user"
        assert "metric units" in msg["content"]["user_instructions"]
    profiles = Counter(
        "first" if "Data engineer in Lisbon" in m["content"]["user_profile"] else m["content"]["user_profile"]
        for m in contexts
    )
    # the profile changed once, after the new job: a second version in the last conversation that carries one
    assert profiles["first"] == 4 and len(profiles) == 2
    assert any("Senior data engineer at Kestrel Data" in p for p in profiles)


def test_chatgpt_quirks_inversion_key_order_empty_title(chatgpt: list[dict]) -> None:
    inversions = 0
    for conv in chatgpt:
        mapping = conv["mapping"]
        for node in mapping.values():
            parent = node["parent"] and mapping[node["parent"]]["message"]
            mine = node["message"] and node["message"]["create_time"]
            if isinstance(mine, float) and parent and isinstance(parent["create_time"], float):
                inversions += mine < parent["create_time"]
    assert inversions == 1
    assert sum(next(iter(c["mapping"])) != "client-created-root" for c in chatgpt) == 1
    assert [c["title"] for c in chatgpt].count("") == 1


def test_chatgpt_dates_and_timestamps(chatgpt: list[dict]) -> None:
    starts = [c["create_time"] for c in chatgpt]
    assert starts == sorted(starts)
    first = dt.datetime.fromtimestamp(min(starts), dt.UTC)
    last = dt.datetime.fromtimestamp(max(starts), dt.UTC)
    assert (first.year, first.month, last.year, last.month) == (2024, 11, 2026, 10)
    assert max(starts) - min(starts) >= 700 * DAY
    for conv in chatgpt:
        assert conv["update_time"] >= conv["create_time"]
        for node in conv["mapping"].values():
            msg = node["message"]
            if (
                msg
                and msg["author"]["role"] in ("user", "assistant", "tool")
                and msg["content"]["content_type"] != "user_editable_context"
            ):
                assert isinstance(msg["create_time"], float)
                assert conv["create_time"] <= msg["create_time"] <= conv["update_time"]
        slugs = {n["message"]["metadata"].get("model_slug") for n in conv["mapping"].values() if n["message"]}
        assert conv["default_model_slug"] in slugs


def test_chatgpt_feedback_and_shares_point_at_real_conversations(chatgpt: list[dict]) -> None:
    members = _members(sample_path("chatgpt"))
    ids = {c["id"] for c in chatgpt}
    feedback = json.loads(members["message_feedback.json"])
    shared = json.loads(members["shared_conversations.json"])
    assert feedback and shared
    assert {f["conversation_id"] for f in feedback} <= ids
    assert {s["conversation_id"] for s in shared} <= ids


def test_chatgpt_text_variety_and_persona(chatgpt: list[dict]) -> None:
    users = [
        _text(n["message"])
        for c in chatgpt
        for n in c["mapping"].values()
        if n["message"] and n["message"]["author"]["role"] == "user"
    ]
    replies = [
        _text(n["message"])
        for c in chatgpt
        for n in c["mapping"].values()
        if n["message"] and n["message"]["author"]["role"] == "assistant"
    ]
    corpus = "\n".join(users + replies)
    assert CJK.search(corpus) and EMOJI.search("\n".join(users)) and "ã" in corpus
    assert sum("```" in r for r in replies) >= 10
    assert sum("\n\n" in r for r in replies) >= 30
    said = "\n".join(users)
    for statement in (
        "I'm a data engineer in Lisbon",
        "at Acme Logistics since 2021",
        "I always prefer metric units",
        "my sister Ana",
        "I accepted the offer from Kestrel Data",
        "I started at Kestrel",
        "I'm pescatarian and lactose intolerant",
        "My cat Pimenta",
    ):
        assert statement.lower() in said.lower(), statement


# ------------------------------------------------------------------ Claude corpus


def _blocks(msg: dict) -> list[dict]:
    return msg.get("content") or []


def test_claude_conversations_are_well_formed(claude: list[dict]) -> None:
    assert len(claude) == 40
    assert len({c["uuid"] for c in claude}) == 40
    account = json.loads(_members(sample_path("claude"))["users.json"])[0]["uuid"]
    for conv in claude:
        assert list(conv) == ["uuid", "name", "summary", "created_at", "updated_at", "account", "chat_messages"]
        assert conv["account"] == {"uuid": account}
        stamps = [conv["created_at"], conv["updated_at"]]
        seen: set[str] = set()
        for i, msg in enumerate(conv["chat_messages"]):
            assert msg["sender"] in ("human", "assistant")
            assert isinstance(msg["text"], str)
            stamps += [msg["created_at"], msg["updated_at"]]
            for block in _blocks(msg):
                stamps += [block["start_timestamp"], block["stop_timestamp"]]
                if block["type"] == "text":
                    assert block["text"] and "citations" in block
            if "parent_message_uuid" in msg:
                expected = CLAUDE_ROOT if i == 0 else None
                assert msg["parent_message_uuid"] == expected or msg["parent_message_uuid"] in seen
            seen.add(msg["uuid"])
        assert all(CLAUDE_TS.match(s) for s in stamps), conv["name"]
        assert conv["created_at"] <= min(stamps) and conv["updated_at"] == max(stamps)


def test_claude_block_types_and_placeholder(claude: list[dict]) -> None:
    types = Counter(b["type"] for c in claude for m in c["chat_messages"] for b in _blocks(m))
    assert (types["thinking"], types["tool_use"], types["tool_result"]) == (5, 7, 7)
    searches = [
        b
        for c in claude
        for m in c["chat_messages"]
        for b in _blocks(m)
        if b["type"] == "tool_use" and b["name"] == "web_search"
    ]
    assert len(searches) == 6 and all(b["input"]["query"] for b in searches)
    tool_only = [
        m
        for c in claude
        for m in c["chat_messages"]
        if m.get("content") and not any(b["type"] == "text" for b in m["content"])
    ]
    assert len(tool_only) == 2
    for msg in tool_only:
        assert PLACEHOLDER in msg["text"] and msg["sender"] == "assistant"
    for conv in claude:
        for msg in conv["chat_messages"]:
            if any(b["type"] == "thinking" for b in _blocks(msg)):
                thought = next(b["thinking"] for b in msg["content"] if b["type"] == "thinking")
                assert thought not in msg["text"]  # the flat text never carries the reasoning


def test_claude_legacy_retry_and_titles(claude: list[dict]) -> None:
    legacy = [m for c in claude for m in c["chat_messages"] if "content" not in m]
    assert len(legacy) == 6 and all(m["text"].strip() for m in legacy)
    assert all("parent_message_uuid" not in m for m in legacy)
    retried = 0
    for conv in claude:
        parents = Counter(
            m["parent_message_uuid"]
            for m in conv["chat_messages"]
            if m["sender"] == "assistant" and "parent_message_uuid" in m
        )
        if any(n == 2 for n in parents.values()):
            retried += 1
            branch = next(p for p, n in parents.items() if n == 2)
            kept = [m["uuid"] for m in conv["chat_messages"] if m.get("parent_message_uuid") == branch][-1]
            later = [m for m in conv["chat_messages"] if m.get("parent_message_uuid") == kept]
            assert later or kept == conv["chat_messages"][-1]["uuid"]
    assert retried == 3
    nameless = [c for c in claude if not c["name"].strip()]
    assert sorted(bool(c["summary"].strip()) for c in nameless) == [False, True]


def test_claude_attachments_and_projects(claude: list[dict]) -> None:
    attachments = [a for c in claude for m in c["chat_messages"] for a in m["attachments"]]
    assert len(attachments) == 3 and all(a["extracted_content"] for a in attachments)
    assert all(a["file_size"] == len(a["extracted_content"].encode()) for a in attachments)
    assert sum(len(m["files"]) for c in claude for m in c["chat_messages"]) == 1
    projects = json.loads(_members(sample_path("claude"))["projects.json"])
    assert len(projects) == 3 and sum(p["is_starter_project"] for p in projects) == 1


def test_claude_dates_and_persona(claude: list[dict]) -> None:
    starts = [dt.datetime.fromisoformat(c["created_at"]) for c in claude]
    assert starts == sorted(starts)
    assert (starts[0].year, starts[0].month, starts[-1].year, starts[-1].month) == (2024, 11, 2026, 10)
    assert (starts[-1] - starts[0]).days >= 700
    said = "\n".join(m["text"] for c in claude for m in c["chat_messages"] if m["sender"] == "human")
    assert CJK.search(said) and EMOJI.search(said)
    for statement in (
        "My name is Inês Carvalho",
        "never use emojis",
        "My partner Tomás",
        "at Acme Logistics since 2021",
        "My sister Ana is getting married on 16 May 2026",
        "I started at Kestrel Data on Monday",
        "I'm pescatarian and lactose intolerant",
    ):
        assert statement.lower() in said.lower(), statement


# ------------------------------------------------------------------ sample_path


def test_sample_path_names() -> None:
    assert SAMPLES == ("chatgpt", "claude")
    for name in SAMPLES:
        path = sample_path(name)
        assert path.is_file() and path.name == f"{name}-export.zip"
        assert zipfile.is_zipfile(path)


@pytest.mark.parametrize("bad", ["gemini", "ChatGPT", "", "chatgpt-export.zip"])
def test_sample_path_rejects_unknown_names(bad: str) -> None:
    with pytest.raises(ValueError, match=r"valid names: chatgpt, claude"):
        sample_path(bad)
