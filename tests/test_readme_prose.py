"""The README reads as one document: its claims agree with the project's files, its paragraphs do not run
together, a function is introduced before an example uses it, an example shows what every machine may
print, and the Performance section is the latest figures (the method and the record are in
docs/performance.md)."""

from __future__ import annotations

import itertools
import re
import tomllib
import warnings
from pathlib import Path

import pytest
from test_readme import BLOCKS, README_TEXT, commands, output_pattern

ROOT = Path(__file__).resolve().parent.parent


def _section(title: str) -> str:
    return README_TEXT.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _prose_lines() -> list[tuple[int, str]]:
    """The README's lines outside fenced blocks, with their numbers."""
    out, fenced = [], False
    for number, line in enumerate(README_TEXT.split("\n"), start=1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            out.append((number, line))
    return out


def test_the_python_versions_said_are_those_pyproject_admits_and_the_tests_run() -> None:
    floor = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    assert floor == ">=3.11"  # no upper bound: the README must not name a last version
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    tested = sorted({*re.findall(r'"(3\.\d+)"', noxfile)}, key=lambda v: int(v.split(".")[1]))
    assert tested == ["3.11", "3.12", "3.13"]
    said = " ".join(README_TEXT.split())
    assert "Python 3.11 or newer (tested on 3.11, 3.12 and 3.13)" in said
    assert "CPython 3.11 or newer; the tests run on 3.11, 3.12 and 3.13." in said
    assert not re.search(r"3\.11, 3\.12 or 3\.13|CPython 3\.11, 3\.12 and 3\.13\.", said)


def test_no_paragraph_runs_into_the_next() -> None:
    """A short line that ends a sentence and is followed by more text is a paragraph break that lost its
    blank line (the README's prose fills its lines to about 110 characters)."""
    lines = _prose_lines()
    merged = [
        f"README.md:{number}: {line!r} runs into {following!r}"
        for (number, line), (_, following) in itertools.pairwise(lines)
        if line
        and following
        and len(line) < 60
        and line.rstrip().endswith((".", ":"))
        and not line.startswith(("|", "#", "<!--", "-", " ", "!"))
        and not following.startswith(("|", "-", " "))
    ]
    assert merged == []


def test_distill_structured_is_introduced_before_an_example_uses_it() -> None:
    first_use = next(b.line for b in BLOCKS if b.kind == "python" and "distill_structured(" in b.body)
    said = [number for number, line in _prose_lines() if "distill_structured" in line]
    assert said and said[0] < first_use


def _font_note(monkeypatch: pytest.MonkeyPatch) -> str:
    """The note the report's charts give for the sample's Japanese where no Noto font is installed."""
    from memvelope_tools import _charts

    monkeypatch.setattr(_charts, "_font_file", lambda family: None)
    monkeypatch.setattr(_charts, "_warned_packages", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _charts.text_fonts(["食"])
    (note,) = [str(w.message) for w in caught if str(w.message).startswith(_charts.NO_FONT)]
    return note


def test_the_report_example_shows_what_it_prints_with_and_without_the_noto_fonts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    block = next(b for b in BLOCKS if b.kind == "console" and "memvelope report chatgpt-export.zip" in b.body)
    [(_, expected)] = commands(block)
    wrote = "memvelope: wrote report.html (286 KiB)\n"
    note = _font_note(monkeypatch)
    pattern = output_pattern(expected)
    assert pattern.fullmatch(wrote)
    assert pattern.fullmatch(f"memvelope: note: {note}\n{wrote}")
    after = " ".join(README_TEXT.split(block.body, 1)[1].split("\n\n", 2)[1].split())
    assert f"`memvelope: note: {note.replace('(食...)', '(...)')}`" in after


def test_the_performance_section_is_the_latest_figures_and_docs_keep_the_record() -> None:
    section = _section("Performance")
    assert len(section.splitlines()) <= 100
    flows = (
        "Conversion",
        "Frames",
        "Search and topics",
        "What the AI remembers",
        "Nodes and inventory",
        "History across exports",
        "Every analysis of an export",
        "Many donations",
    )
    for flow in flows:
        assert f"**{flow}**" in section, flow
    assert len(re.findall(r"^\|---", section, re.M)) == len(flows)  # one table per flow
    assert section.count("2 cores") == 1 and section.count("AMD EPYC") == 1  # the machine, said once
    assert "[docs/performance.md](docs/performance.md)" in section
    assert not re.search(r"previous release|\b6ee1377\b|Taken again|slower day|last session", section)
    record = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    for script in (
        "frames.py",
        "convert.py",
        "search_topics.py",
        "memory.py",
        "nodes.py",
        "history.py",
        "analysis.py",
        "many.py",
        "sqlite.py",
    ):
        assert f"benchmarks/{script}" in record, script
    for date in ("1 December 2026", "2 December 2026"):
        assert f"**{date}**" in record
    assert "6ee1377" in record  # the comparisons against the release before are kept, as a record
