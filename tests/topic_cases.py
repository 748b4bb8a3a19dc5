"""The topics kept as fixtures (tests/data/topics-*.json): each topic's label and terms and each unit's
topic on the bundled samples, so a change to how topics counts its words is checked against what it
found before.

``python -m tests.topic_cases`` writes the fixtures again; read every one before committing it.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import memvelope_tools as mv

DATA = Path(__file__).parent / "data"

#: Each fixture's name and how its topics are found.
CASES: dict[str, Callable[[], Any]] = {
    "chatgpt": lambda: mv.topics(mv.sample_path("chatgpt"), 8),
    "claude": lambda: mv.topics(mv.sample_path("claude"), 6, seed=3),
    "chatgpt-messages": lambda: mv.topics(mv.sample_path("chatgpt"), 5, unit="message"),
    "three-exports": lambda: mv.topics([mv.sample_path("claude"), *mv.samples.history_samples()], 10),
}


def found(name: str) -> dict[str, Any]:
    """What case ``name`` finds: labels, terms and each unit's topic (null: none)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = CASES[name]()
    topic = result.assignments["topic"]
    return {
        "labels": [str(label) for label in result.labels],
        "terms": [
            [str(t) for t in result.terms.loc[result.terms["topic"] == k, "term"]] for k in range(result.n_topics)
        ],
        "topic_of_unit": [None if v is None else int(v) for v in topic.astype(object).where(topic.notna(), None)],
    }


def fixture(name: str) -> Path:
    """The file that keeps what case ``name`` found."""
    return DATA / f"topics-{name}.json"


if __name__ == "__main__":
    for case in sys.argv[1:] or list(CASES):
        fixture(case).write_text(json.dumps(found(case), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {fixture(case)}")
