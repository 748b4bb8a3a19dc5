"""What the provider remembered, added to the distilled facts: by default, once each, with its own provenance.

Expected facts are read off fixtures/memory/README.md and the fixtures themselves.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memvelope_tools as mv
from memvelope_tools._ir import DistillStats
from memvelope_tools._memory.read import read_memory
from memvelope_tools._memory_ir import build_memory_ir
from memvelope_tools._validate import check_ir_against_envelope, validate
from memvelope_tools.cli import main
from memvelope_tools.errors import FormatError

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "memory"
REAL_MEMORY = ROOT.parent / "shared" / "real-exports-collected" / "memory"
CHATGPT = FIX / "chatgpt-memory.json"


def test_export_facts_include_the_memory_once() -> None:
    stats = DistillStats()
    doc = mv.distill_structured(CHATGPT, stats=stats)
    # c-a: "I'm vegetarian, any dinner ideas for tonight?" is the user's own fact; the memory write "User is
    # vegetarian." (and its snapshot entry) says the same and is not added again. The rest of the memory is:
    # two versions of the profile, the instruction, the write on an abandoned branch, the entry written nowhere.
    assert [(f["content"], f.get("memory_kind")) for f in doc["facts"]] == [
        ("I'm vegetarian", None),
        ("I am a nurse living in Porto.", "about_user"),
        ("Answer briefly.", "about_model"),
        ("User lives in Lisbon.", "saved"),
        ("I am a nurse living in Lisbon.", "about_user"),
        ("User prefers aisle seats on flights.", "snapshot"),
    ]
    assert doc["meta"]["mode"] == "structured (zero-LLM) + imported (provider memory)"
    assert doc["meta"]["facts"] == doc["archetype"]["facts"] == 6
    assert (stats.memory_facts, stats.memory_known, stats.facts) == (5, 1, 6)
    env = mv.convert(CHATGPT)
    assert validate(doc) == [] and check_ir_against_envelope(doc, env) == []


def test_remembered_facts_keep_the_memory_provenance() -> None:
    doc = mv.distill_structured(CHATGPT)
    memory = build_memory_ir(read_memory(CHATGPT), mv.convert(CHATGPT))
    by_content = {f["content"]: f for f in memory["facts"]}
    added = [f for f in doc["facts"] if "memory_kind" in f]
    assert added and all(f == by_content[f["content"]] for f in added)
    lisbon = next(f for f in added if f["content"] == "User lives in Lisbon.")
    assert (lisbon["convo_id"], lisbon["effective_date"], lisbon["provenance"]) == (
        "c-b",
        "2024-04-10",
        "imported:chatgpt-export:2024-04",
    )


def test_memory_false_leaves_it_out() -> None:
    without = mv.distill_structured(CHATGPT, memory=False)
    assert [f["content"] for f in without["facts"]] == ["I'm vegetarian"]
    assert without["meta"]["mode"] == "structured (zero-LLM)"
    assert without["facts"] == mv.distill_structured(mv.convert(CHATGPT))["facts"]  # an envelope holds no memory


def test_claude_memories_are_added() -> None:
    doc = mv.distill_structured(FIX / "claude-export")
    kinds = [f.get("memory_kind") for f in doc["facts"]]
    assert kinds.count("claude_account") == 5  # five sentences of the account memory (fixture README)
    assert "claude_project" in kinds
    assert check_ir_against_envelope(doc, mv.convert(FIX / "claude-export")) == []


def test_an_export_without_memory_is_distilled_as_before() -> None:
    doc = mv.distill_structured(FIX / "chatgpt-none.json")
    assert doc["meta"]["mode"] == "structured (zero-LLM)"
    assert doc == {**mv.distill_structured(FIX / "chatgpt-none.json", memory=False), "meta": doc["meta"]}


def test_a_facts_ir_is_refused() -> None:
    with pytest.raises(FormatError) as err:
        mv.distill_structured(mv.sample_path("facts-chatgpt"))
    assert err.value.reason == "not-envelope"


def test_the_trace_ignores_facts_taken_from_memory() -> None:
    # the entry about aisle seats is in the IR (from the memory), yet nothing the user said traces it
    frame = mv.memory_frame(CHATGPT, facts=mv.distill_structured(CHATGPT))
    aisle = frame[frame["text"] == "User prefers aisle seats on flights."].iloc[0]
    assert aisle["supporting_facts"] == [] and not aisle["traced"]
    veg = frame[(frame["kind"] == "saved") & (frame["text"] == "User is vegetarian.")].iloc[0]
    assert veg["supporting_facts"] == [0] and veg["traced"]  # fact 0 is the user's "I'm vegetarian"


def test_cli_distill_adds_memory_and_no_memory_leaves_it_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "facts.mv.json"
    assert main(["distill", str(CHATGPT), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "6 facts from 3 conversations" in err
    assert "5 from the provider's memory, 1 of its facts already found in the conversations" in err
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert sum("memory_kind" in f for f in doc["facts"]) == 5
    assert main(["validate", str(out), "--envelope", str(CHATGPT)]) == 0
    capsys.readouterr()
    assert main(["distill", str(CHATGPT), "-o", str(out), "--no-memory"]) == 0
    assert "1 fact from 3 conversations" in capsys.readouterr().err
    assert [f["content"] for f in json.loads(out.read_text(encoding="utf-8"))["facts"]] == ["I'm vegetarian"]


def test_cli_distill_of_an_envelope_says_where_memory_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = tmp_path / "history.mve.json"
    mv.write_envelope(mv.convert(CHATGPT), env)
    assert main(["distill", str(env)]) == 0
    err = capsys.readouterr().err
    assert "memvelope: note: an envelope does not hold what the provider remembered" in err
    assert main(["distill", str(env), "--no-memory", "-o", str(tmp_path / "x.mv.json")]) == 0
    assert "note" not in capsys.readouterr().err


def test_cli_distill_says_when_the_export_keeps_no_memory_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["distill", str(FIX / "chatgpt-2026"), "-o", str(tmp_path / "f.mv.json")]) == 0
    assert "memvelope: note: this export format keeps no memory records" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["hello-tsx", "tree-tsx"])
def test_real_memory_becomes_facts(name: str, tmp_path: Path) -> None:
    path = REAL_MEMORY / f"xiaodaimeng2333__ChatGPT-Tree-Saver__{name}-conversation.json"
    if not path.exists():
        pytest.skip("the collected real exports are not beside the repository")
    wrapped = tmp_path / "conversations.json"  # a single conversation object, as the web app returned it
    wrapped.write_text("[" + path.read_text(encoding="utf-8") + "]", encoding="utf-8")
    stats = DistillStats()
    doc = mv.distill_structured(wrapped, stats=stats)
    remembered = build_memory_ir(read_memory(wrapped), mv.convert(wrapped))["facts"]
    added = [f for f in doc["facts"] if "memory_kind" in f]
    # the README counts 15 (hello) and 21 (tree) snapshot items beside the writes
    assert len(remembered) >= 15 and len(added) == len(remembered) - stats.memory_known == stats.memory_facts
    assert added and all(f in remembered for f in added)  # as the memory gives them, provenance and all
    assert len({f["content"] for f in doc["facts"]}) == len(doc["facts"])  # each fact once
    assert validate(doc) == [] and check_ir_against_envelope(doc, mv.convert(wrapped)) == []
