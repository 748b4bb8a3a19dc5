"""A history with few or no facts: the fact charts and the report say how many were found and how to find
more, instead of drawing empty axes."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from matplotlib.figure import Figure

import memvelope_tools as mv
from memvelope_tools._charts import FEW_FACTS, few_facts_note
from memvelope_tools._frames.columns import FACT_COLUMNS
from memvelope_tools._report import build_report

SAMPLES = Path(mv.__file__).parent / "samples"


def _ir(n: int) -> dict:
    doc = json.loads((SAMPLES / "facts-chatgpt.mv.json").read_text(encoding="utf-8"))
    doc = copy.deepcopy(doc)
    doc["facts"] = doc["facts"][:n]
    doc["meta"]["facts"] = doc["archetype"]["facts"] = n
    return doc


def _texts(ax) -> str:
    """Every text the figure shows: title, axis labels, texts in the axes."""
    return "\n".join([ax.get_title(), ax.get_xlabel(), ax.get_ylabel(), *(t.get_text() for t in ax.texts)])


def _flat(text: str) -> str:
    return " ".join(text.split())


EMPTY = mv.facts_frame(_ir(0))


@pytest.mark.parametrize(
    "draw",
    [
        lambda ax: mv.plot.fact_categories(EMPTY, ax=ax),
        lambda ax: mv.plot.fact_categories(EMPTY, ax=ax, hue="subject_type"),
        lambda ax: mv.plot.facts_over_time(EMPTY, ax=ax),
        lambda ax: mv.plot.archetype_chart(_ir(0), ax=ax),
    ],
    ids=["categories", "categories-by-subject", "over-time", "archetype"],
)
def test_chart_of_no_facts_says_so_and_how_to_find_more(draw) -> None:
    ax = draw(Figure().add_subplot())
    shown = _flat(_texts(ax))
    assert "No facts were found." in shown
    assert "with memory turned on in ChatGPT" in shown and "memvelope distill EXPORT --mode llm" in shown
    assert not ax.patches and not ax.get_xticks().size  # no empty bars, no empty axis


def test_an_empty_frame_built_by_hand_is_no_facts_too() -> None:
    import pandas as pd

    ax = mv.plot.fact_categories(pd.DataFrame({c: [] for c in FACT_COLUMNS}), ax=Figure().add_subplot())
    assert "No facts were found." in _flat(_texts(ax))


def test_few_facts_are_drawn_with_the_note() -> None:
    few = mv.facts_frame(_ir(3))
    ax = mv.plot.fact_categories(few, ax=Figure().add_subplot())
    assert ax.patches  # the bars are drawn
    assert "Only 3 facts found." in _flat(ax.get_xlabel())
    ax = mv.plot.facts_over_time(few, ax=Figure().add_subplot())
    assert ax.patches and "Only 3 facts found." in _flat(ax.get_xlabel())
    ax = mv.plot.archetype_chart(_ir(3), ax=Figure().add_subplot())
    assert "Only 3 facts found." in _flat(ax.get_xlabel())


def test_enough_facts_have_no_note() -> None:
    assert few_facts_note(FEW_FACTS) is None and few_facts_note(FEW_FACTS - 1) is not None
    ax = mv.plot.fact_categories(mv.facts_frame(_ir(FEW_FACTS)), ax=Figure().add_subplot())
    assert ax.get_xlabel() == "facts"


def test_undated_facts_say_why_nothing_is_drawn() -> None:
    doc = _ir(2)
    for fact in doc["facts"]:
        fact["effective_date"] = None
    ax = mv.plot.facts_over_time(doc, ax=Figure().add_subplot())
    shown = _flat(_texts(ax))
    assert "no facts dated to a year: 2 without a date" in shown and "Only 2 facts found." in shown


def test_report_says_how_few_facts_and_how_to_find_more() -> None:
    page = build_report([_ir(0)], labels=["facts"])
    assert '<h2>Facts</h2><p class="lead">No facts were found. To find more, distil the export itself' in page
    assert "memvelope distill EXPORT --mode llm" in page
    few = build_report([_ir(4)], labels=["facts"])
    assert "Only 4 facts found." in few
    many = build_report([_ir(12)], labels=["facts"])
    assert "facts found." not in many and "To find more" not in many
