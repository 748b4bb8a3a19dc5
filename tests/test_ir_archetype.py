"""compute_archetype on hand-computed cases."""

from __future__ import annotations

import pytest

from memvelope_tools._ir import compute_archetype


def f(subject: str | None, category: str | None, subject_type: str | None = None) -> dict:
    return {"subject": subject, "subject_type": subject_type, "category": category, "content": "x"}


def test_spec_example_figures() -> None:
    facts = [
        f("self", "career"),
        f("self", "preferences"),
        f("self", "identity"),
        f("Ryan Foutty", "career", "person"),
        f("Marta", "relationship", "person"),
    ]
    assert compute_archetype(facts) == {
        "style": "reflective (deep self-knowledge)",  # 3/5 = 0.6 >= 0.6 and 2/5 = 0.4 >= 0.4
        "facts": 5,
        "self_ratio": 0.6,
        "distinct_entities": 2,
        "categories": {"identity": 1, "career": 2, "preferences": 1, "relationship": 1},
        "belief_ratio": 0.4,
    }
    assert list(compute_archetype(facts)) == [
        "style",
        "facts",
        "self_ratio",
        "distinct_entities",
        "categories",
        "belief_ratio",
    ]


def test_entities_compared_case_and_space_insensitively() -> None:
    facts = [
        f("Acme Corp", "career", "company"),
        f("acme  corp", "projects", "company"),
        f("Ana", "relationship"),
        f("self", "instructions"),
    ]
    arch = compute_archetype(facts)
    assert arch["distinct_entities"] == 2
    assert arch["self_ratio"] == 0.25
    assert arch["belief_ratio"] == 0.0
    assert arch["style"] == "task/entity-heavy"  # self_ratio 0.25 < 0.5


def test_subject_type_self_counts_as_self() -> None:
    arch = compute_archetype([f("Inês", "identity", "self"), f("self", "identity")])
    assert arch["self_ratio"] == 1.0 and arch["distinct_entities"] == 0


@pytest.mark.parametrize(
    ("n_self", "n_belief", "n", "style"),
    [
        (6, 4, 10, "reflective (deep self-knowledge)"),  # 0.6 / 0.4: both thresholds inclusive
        (6, 3, 10, "mixed/casual"),  # belief 0.3: not reflective, not < 0.2
        (5, 2, 10, "mixed/casual"),  # self 0.5 is not < 0.5; belief 0.2 is not < 0.2
        (4, 9, 10, "task/entity-heavy"),  # self 0.4 < 0.5
        (10, 1, 10, "task/entity-heavy"),  # belief 0.1 < 0.2
    ],
)
def test_style_thresholds(n_self: int, n_belief: int, n: int, style: str) -> None:
    facts = [f("self" if i < n_self else f"P{i}", "identity" if i < n_belief else "career") for i in range(n)]
    assert compute_archetype(facts)["style"] == style


def test_null_subject_nulls_subject_figures_only() -> None:
    arch = compute_archetype([f("self", "identity"), f(None, "career")])
    assert arch["self_ratio"] is None and arch["distinct_entities"] is None and arch["style"] is None
    assert arch["categories"] == {"identity": 1, "career": 1} and arch["belief_ratio"] == 0.5
    assert arch["facts"] == 2


def test_null_category_nulls_category_figures_only() -> None:
    arch = compute_archetype([f("self", "identity"), f("Bo", None)])
    assert arch["categories"] is None and arch["belief_ratio"] is None and arch["style"] is None
    assert arch["self_ratio"] == 0.5 and arch["distinct_entities"] == 1


def test_no_facts() -> None:
    assert compute_archetype([]) == {
        "style": None,
        "facts": 0,
        "self_ratio": None,
        "distinct_entities": 0,
        "categories": {},
        "belief_ratio": None,
    }
