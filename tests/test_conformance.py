"""The envelope fixture corpus, one test id per case (each converted twice, see conformance.run_case)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvelope_tools._conformance import find_cases, run_case

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "envelope"
CASES = find_cases(FIXTURES)
assert CASES, "no envelope fixtures found"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_envelope_case(case: Path) -> None:
    result = run_case(case)
    assert result.ok, result.detail
