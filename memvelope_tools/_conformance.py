"""The envelope conformance runner: fixture cases (inputs + expected bytes or error) as data.

A case is a folder holding input parts (files named ``input*``, passed in sorted order) and exactly one
expectation: ``expected.mve.json`` (the exact canonical bytes) or ``expected.error`` (a reason code).
Each case is converted twice; both runs must give the expected result, the bytes identical.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ._convert.canonical import dumps_canonical
from ._convert.sources import utf16_key
from ._load import convert
from .errors import ConversionError


@dataclass(frozen=True)
class CaseResult:
    """The verdict on one case; ``detail`` says what differed when it failed."""

    name: str
    ok: bool
    detail: str = ""


def case_inputs(case: Path) -> list[Path]:
    """The case's input parts in the order they are passed to the converter."""
    return sorted((p for p in case.iterdir() if p.name.startswith("input")), key=lambda p: utf16_key(p.name))


def find_cases(folder: str | os.PathLike[str]) -> list[Path]:
    """Every case folder directly inside ``folder``, sorted by name."""
    root = Path(folder)
    return sorted((p for p in root.iterdir() if p.is_dir() and case_inputs(p)), key=lambda p: p.name)


def _first_difference(got: bytes, want: bytes) -> str:
    for i, (a, b) in enumerate(zip(got, want, strict=False)):
        if a != b:
            line = want.count(b"\n", 0, i) + 1
            return (
                f"bytes differ at offset {i} (expected line {line}): got {got[i : i + 40]!r}, "
                f"expected {want[i : i + 40]!r}"
            )
    return f"lengths differ: got {len(got)} bytes, expected {len(want)}"


def _attempt(inputs: list[Path]) -> tuple[bytes | None, str | None]:
    try:
        return dumps_canonical(convert(*inputs)), None
    except ConversionError as exc:
        return None, exc.reason


def run_case(case: Path) -> CaseResult:
    """Convert the case twice and compare each result with its expectation."""
    inputs = case_inputs(case)
    expected_env = case / "expected.mve.json"
    expected_err = case / "expected.error"
    if expected_env.exists() == expected_err.exists():
        return CaseResult(case.name, False, "needs exactly one of expected.mve.json / expected.error")
    first, second = _attempt(inputs), _attempt(inputs)
    if first != second:
        return CaseResult(case.name, False, "two conversions of the same input differ")
    got, reason = first
    if expected_env.exists():
        want = expected_env.read_bytes()
        if got is None:
            return CaseResult(case.name, False, f"conversion failed with {reason!r}, expected an envelope")
        if got != want:
            return CaseResult(case.name, False, _first_difference(got, want))
        return CaseResult(case.name, True)
    want_reason = expected_err.read_text(encoding="utf-8").strip()
    if reason != want_reason:
        what = "an envelope" if reason is None else repr(reason)
        return CaseResult(case.name, False, f"expected error {want_reason!r}, got {what}")
    return CaseResult(case.name, True)


def run_suite(folder: str | os.PathLike[str]) -> list[CaseResult]:
    """Run every case under ``folder``."""
    return [run_case(case) for case in find_cases(folder)]
