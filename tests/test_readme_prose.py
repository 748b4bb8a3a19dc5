"""The README reads as one document: its claims agree with the project's files, its paragraphs do not run
together, a function is introduced before an example uses it, an example shows what every machine may
print, and the Performance section is the latest figures (the method and the record are in
docs/performance.md)."""

from __future__ import annotations

import re
from pathlib import Path

from test_readme import README_TEXT

ROOT = Path(__file__).resolve().parent.parent


def _section(title: str) -> str:
    return README_TEXT.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_performance_section_is_the_latest_figures_and_docs_keep_the_record() -> None:
    section = _section("Performance")
    assert len(section.splitlines()) <= 75
    for flow in ("Conversion", "Frames", "Search and topics", "What the AI remembers", "History across exports"):
        assert f"**{flow}**" in section, flow
    assert len(re.findall(r"^\|---", section, re.M)) == 5  # one table per flow
    assert section.count("2 cores") == 1 and section.count("AMD EPYC") == 1  # the machine, said once
    assert "[docs/performance.md](docs/performance.md)" in section
    assert not re.search(r"previous release|\b6ee1377\b|Taken again|slower day|last session", section)
    record = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    for script in ("frames.py", "convert.py", "search_topics.py", "memory.py", "history.py"):
        assert f"benchmarks/{script}" in record, script
    for date in ("1 December 2026", "2 December 2026"):
        assert f"**{date}**" in record
    assert "6ee1377" in record  # the comparisons against the release before are kept, as a record
