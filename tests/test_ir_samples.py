"""The bundled Facts IR files are valid, sourced from the bundled sample exports, and up to date."""

from __future__ import annotations

import json

import pytest

import memvelope_tools as mv
from memvelope_tools._ir import distill_structured
from memvelope_tools._validate import check_ir_against_envelope, validate
from memvelope_tools.samples import SAMPLES, sample_path


@pytest.mark.parametrize("provider", SAMPLES)
def test_bundled_facts(provider: str) -> None:
    path = sample_path(provider).with_name(f"facts-{provider}.mv.json")
    doc = json.loads(path.read_bytes())
    envelope = mv.convert(sample_path(provider))
    assert validate(doc) == []
    assert check_ir_against_envelope(doc, envelope) == []
    assert doc["meta"]["provider"] == provider and doc["meta"]["mode"] == "structured (zero-LLM)"
    # regenerate: only generated_at may differ
    fresh = distill_structured(envelope)
    assert fresh["facts"] == doc["facts"] and fresh["archetype"] == doc["archetype"]
    assert len(doc["facts"]) >= 5
