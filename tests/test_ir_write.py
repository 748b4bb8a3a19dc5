"""The IR writer: key order, generated_at rendering (truncation, UTC, Z), atomic write."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memvelope_tools._ir import build_ir, dumps_ir, utc_now_iso, write_ir
from memvelope_tools._validate import validate
from memvelope_tools.errors import ValidationError

FACT = {
    "convo_id": "c1",
    "provenance": "imported:claude-export:2026-06",
    "in_text_date": "2019",
    "effective_date": "2019",
    "content": "Sold their company before moving into AI",
    "category": "career",
    "subject_type": "self",
    "subject": "self",
}
NS_2026 = 1_782_840_527 * 10**9  # 2026-06-30T17:28:47Z


def test_generated_at_truncates_never_rounds() -> None:
    assert utc_now_iso(lambda: NS_2026 + 559_999_900) == "2026-06-30T17:28:47.559999Z"
    assert utc_now_iso(lambda: NS_2026 + 999_999_999) == "2026-06-30T17:28:47.999999Z"
    assert utc_now_iso(lambda: NS_2026) == "2026-06-30T17:28:47.000000Z"


def test_generated_at_from_aware_datetimes_is_utc_z() -> None:
    ist = timezone(timedelta(hours=5, minutes=30))
    when = datetime(2026, 6, 30, 22, 58, 47, 559955, tzinfo=ist)
    assert utc_now_iso(lambda: when) == "2026-06-30T17:28:47.559955Z"
    with pytest.raises(ValueError, match="naive"):
        utc_now_iso(lambda: datetime(2026, 6, 30))


def test_default_clock_is_now_in_utc() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    stamp = utc_now_iso()
    assert stamp.endswith("Z") and len(stamp) == len("2026-06-30T17:28:47.559955Z")
    parsed = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert before <= parsed <= datetime.now(UTC)


def test_key_order_as_in_spec_example() -> None:
    doc = build_ir("claude", "structured (zero-LLM)", [FACT], clock=lambda: NS_2026 + 559_955_000)
    shuffled = {
        "facts": doc["facts"],
        "extra": 1,
        "archetype": dict(reversed(doc["archetype"].items())),
        "meta": dict(reversed(doc["meta"].items())),
    }
    text = dumps_ir(shuffled).decode()
    parsed = json.loads(text)
    assert list(parsed) == ["meta", "archetype", "facts", "extra"]
    assert list(parsed["meta"]) == ["provider", "mode", "facts", "generated_at", "format"]
    assert list(parsed["archetype"]) == [
        "style",
        "facts",
        "self_ratio",
        "distinct_entities",
        "categories",
        "belief_ratio",
    ]
    assert list(parsed["facts"][0]) == [
        "subject",
        "subject_type",
        "category",
        "content",
        "effective_date",
        "in_text_date",
        "provenance",
        "convo_id",
    ]
    assert parsed["meta"]["generated_at"] == "2026-06-30T17:28:47.559955Z"
    assert text.startswith('{\n  "meta": {\n    "provider": "claude",\n')
    assert not text.endswith("\n")


def test_lone_surrogate_and_non_ascii_serialise_as_utf8() -> None:
    doc = build_ir("claude", "m", [dict(FACT, content="Inês \ud800 x")], clock=lambda: 0)
    data = dumps_ir(doc)
    assert "Inês".encode() in data and b"\\ud800" in data
    assert json.loads(data)["facts"][0]["content"] == "Inês \ud800 x"


def test_write_ir_atomic_and_valid(tmp_path: Path) -> None:
    out = tmp_path / "facts.mv.json"
    doc = build_ir("claude", "m", [FACT], clock=lambda: 0)
    write_ir(doc, out)
    assert out.read_bytes() == dumps_ir(doc)
    assert validate(json.loads(out.read_bytes())) == []
    assert [p.name for p in tmp_path.iterdir()] == ["facts.mv.json"]  # no temp file left behind


def test_write_ir_refuses_invalid_and_keeps_old_file(tmp_path: Path) -> None:
    out = tmp_path / "facts.mv.json"
    out.write_bytes(b"previous")
    doc = build_ir("claude", "m", [dict(FACT, category="hobby")], clock=lambda: 0)
    with pytest.raises(ValidationError, match=r"\$\.facts\[0\]\.category: \[bad-category\]"):
        write_ir(doc, out)
    assert out.read_bytes() == b"previous"
    assert os.listdir(tmp_path) == ["facts.mv.json"]


def test_write_ir_failure_midway_leaves_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "facts.mv.json"
    out.write_bytes(b"previous")

    def boom(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="No space left"):
        write_ir(build_ir("claude", "m", [FACT], clock=lambda: 0), out)
    assert out.read_bytes() == b"previous"
    assert os.listdir(tmp_path) == ["facts.mv.json"]
