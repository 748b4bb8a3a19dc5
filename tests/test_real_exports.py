"""Every public third-party sample in ../shared/real-exports converts, or fails as the spec requires."""

from __future__ import annotations

from pathlib import Path

import pytest

import memvelope_tools as mv
from memvelope_tools._validate import validate

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "real-exports"
FILES = sorted(REAL.rglob("*.json")) if REAL.is_dir() else []

# Files whose top level is not an array (single objects, manifests): the spec (A16) says they
# contribute no conversation, so conversion must fail with no-provider.
NOT_ARRAYS = {
    "polylogue/chatgpt/native-conversation-v1.json",
    "polylogue/chatgpt/sample-00.json",
    "polylogue/chatgpt/sample-01.json",
    "polylogue/chatgpt/corpus-manifest.json",
    "polylogue/claude-ai/sample-00.json",
    "polylogue/claude-ai/sample-01.json",
    "polylogue/claude-ai/corpus-manifest.json",
    "synapse/export_manifest.json",
}
# Hand-checked against each file (see its row in the folder's README): provider, conversations, messages.
EXPECTED = {
    "librechat/chatgpt-tree.json": ("chatgpt", 1, 6),  # 8-node active path less the null root and system
    "librechat/chatgpt-modern-export.json": ("chatgpt", 2, 6),  # the corrupted entry has no mapping
    "chatlore/chatgpt/conversations.json": ("chatgpt", 2, 6),  # broken record and id-less root omitted
    "chatlore/claude/conversations.json": ("claude", 2, 6),  # no chat_messages: omitted
    "claude-to-sqlite/artifacts.json": ("claude", 1, 20),
    "chatgpt-export-parser/example-conversation.json": ("chatgpt", 1, 4),  # system root dropped
}

pytestmark = pytest.mark.skipif(not FILES, reason=f"real-exports folder not present at {REAL}")


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REAL)))
def test_real_export(path: Path) -> None:
    rel = str(path.relative_to(REAL))
    if rel in NOT_ARRAYS:
        with pytest.raises(mv.ConversionError) as info:
            mv.convert(path)
        assert info.value.reason == "no-provider"
        return
    env = mv.convert(path)
    assert validate(env) == []
    assert mv.dumps_canonical(mv.convert(path)) == mv.dumps_canonical(env)
    if rel in EXPECTED:
        meta = env["meta"]
        assert (meta["source_provider"], meta["conversation_count"], meta["message_count"]) == EXPECTED[rel]


def test_chatgpt_tree_follows_the_active_path() -> None:
    if not (REAL / "librechat/chatgpt-tree.json").exists():
        pytest.skip("sample absent")
    env = mv.convert(REAL / "librechat/chatgpt-tree.json")
    msgs = env["conversations"][0]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant"] * 3
    timestamps = [m["ts"] for m in msgs]
    assert timestamps == sorted(timestamps)


def test_edited_prompt_sample_keeps_current_branch_not_newest() -> None:
    path = REAL / "chatgpt-export-parser/example-conversation.json"
    if not path.exists():
        pytest.skip("sample absent")
    conv = mv.convert(path)["conversations"][0]
    import json

    raw = json.loads(path.read_text())[0]
    walk, key = [], raw["current_node"]
    while key:
        walk.append(key)
        key = raw["mapping"][key]["parent"]
    texts = [m["text"] for m in conv["messages"]]
    abandoned = [k for k in raw["mapping"] if k not in walk]
    for k in abandoned:
        message = raw["mapping"][k]["message"]
        if message:
            for part in message["content"].get("parts", []):
                assert part.strip() not in texts
