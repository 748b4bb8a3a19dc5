"""Every reason the package raises is in ``errors.Reason`` and in docs/errors.md's table, and nothing else is."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path
from typing import get_args

import memvelope_tools as mv
from memvelope_tools import errors
from memvelope_tools.errors import MemvelopeError, Reason

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "memvelope_tools"
TABLE_ROW = re.compile(r"^\| `(?P<reason>[a-z0-9-]+)` \| (?P<classes>[^|]+) \|")

ERROR_CLASSES = {
    name: cls for name, cls in vars(errors).items() if isinstance(cls, type) and issubclass(cls, MemvelopeError)
}


def _worded(tree: ast.AST) -> set[str]:
    """The reasons of the wrong-input table: what ``wrong_file`` returns beside each line."""
    found: set[str] = set()
    for func in ast.walk(tree):
        if isinstance(func, ast.FunctionDef) and func.name == "wrong_file":
            for node in ast.walk(func):
                if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
                    reason = node.value.elts[-1]
                    assert isinstance(reason, ast.Constant) and isinstance(reason.value, str)
                    found.add(reason.value)
    return found


def _raised() -> tuple[dict[str, set[str]], list[str]]:
    """reason -> names of the classes constructed with it, and every ``reason=`` that is no string literal
    (but for the one place that raises the reasons of the wrong-input table, :mod:`memvelope_tools._sources`)."""
    found: dict[str, set[str]] = defaultdict(set)
    not_literal: list[str] = []
    sources = PACKAGE / "_sources.py"
    worded = _worded(ast.parse(sources.read_text(encoding="utf-8")))
    for reason in worded:
        found[reason].add("InputError")
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name not in ERROR_CLASSES:
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            given = [k.value for k in node.keywords if k.arg == "reason"]
            if not given:
                found[ERROR_CLASSES[name].reason].add(name)
            elif isinstance(given[0], ast.Constant) and isinstance(given[0].value, str):
                found[given[0].value].add(name)
            elif path != sources or name != "InputError":
                not_literal.append(where)
    return found, not_literal


def _documented() -> dict[str, set[str]]:
    rows: dict[str, set[str]] = {}
    for line in (ROOT / "docs" / "errors.md").read_text(encoding="utf-8").splitlines():
        match = TABLE_ROW.match(line)
        if match:
            assert match["reason"] not in rows, f"{match['reason']} is documented twice"
            rows[match["reason"]] = set(re.findall(r"`(\w+)`", match["classes"]))
    return rows


def test_the_walk_finds_the_raise_sites() -> None:
    raised, _ = _raised()
    assert {"ConversionError", "FormatError", "OutputError", "LLMError"} <= set().union(*raised.values())
    assert len(raised) > 25


def test_every_reason_is_a_string_literal() -> None:
    assert _raised()[1] == []


def test_every_raised_reason_is_in_the_literal_type() -> None:
    raised, _ = _raised()
    assert sorted(set(raised) - set(get_args(Reason))) == []


def test_the_literal_type_holds_only_raised_reasons() -> None:
    raised, _ = _raised()
    assert sorted(set(get_args(Reason)) - set(raised)) == []


def test_the_table_documents_exactly_the_reasons() -> None:
    assert sorted(_documented()) == sorted(get_args(Reason))


def test_the_table_names_the_classes_that_raise_each_reason() -> None:
    raised, _ = _raised()
    documented = _documented()
    wrong = {r: (sorted(documented.get(r, ())), sorted(classes)) for r, classes in raised.items()}
    assert {r: pair for r, pair in wrong.items() if pair[0] != pair[1]} == {}


def test_table_parser_reads_a_row() -> None:
    match = TABLE_ROW.match("| `zip-limit` | `ConversionError`, `FormatError` | means | do |")
    assert match is not None and match["reason"] == "zip-limit"
    assert set(re.findall(r"`(\w+)`", match["classes"])) == {"ConversionError", "FormatError"}


def test_llm_error_is_exported_and_a_memvelope_error() -> None:
    assert mv.LLMError is errors.LLMError and issubclass(mv.LLMError, mv.MemvelopeError)
    assert "LLMError" in mv.__all__
