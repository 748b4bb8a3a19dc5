"""The Facts IR ``archetype`` block: a deterministic summary computed from the facts alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from .._spec import CATEGORIES

STYLE_REFLECTIVE: Final = "reflective (deep self-knowledge)"
STYLE_TASK: Final = "task/entity-heavy"
STYLE_MIXED: Final = "mixed/casual"

#: Categories counted as standing beliefs/identity by ``belief_ratio``.
BELIEF_CATEGORIES: Final = frozenset({"preferences", "identity"})

#: Style thresholds (see :func:`compute_archetype`).
REFLECTIVE_MIN_SELF: Final = 0.6
REFLECTIVE_MIN_BELIEF: Final = 0.4
TASK_MAX_SELF: Final = 0.5
TASK_MAX_BELIEF: Final = 0.2

#: The order categories are listed in; unknown categories follow, sorted.
CATEGORY_ORDER: Final = CATEGORIES


def is_self(fact: Mapping[str, Any]) -> bool:
    """Whether a fact is about the user themself: ``subject == "self"`` or ``subject_type == "self"``."""
    return fact.get("subject") == "self" or fact.get("subject_type") == "self"


def entity_key(subject: str) -> str:
    """How two subjects are judged the same entity: whitespace collapsed, then case-folded."""
    return " ".join(subject.split()).casefold()


def compute_archetype(facts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Return the ``archetype`` block for ``facts``, keys in the spec's order.

    Figures, with N = number of facts:

    - ``facts``: N.
    - ``self_ratio``: facts about the user (:func:`is_self`) / N.
    - ``distinct_entities``: distinct non-self subjects, compared by :func:`entity_key`.
    - ``categories``: category -> count, in the spec's category order, only categories that occur.
    - ``belief_ratio``: facts in ``preferences`` or ``identity`` / N.

    Nulls (the presence rule: a figure is ``null`` exactly when its inputs are not all known):

    - ``self_ratio`` and ``distinct_entities`` depend on ``subject``; they are ``null`` when any fact
      has a null ``subject`` (its ``subject_type`` alone being ``"self"`` does not count as known).
    - ``categories`` and ``belief_ratio`` depend on ``category``; ``null`` when any fact has a null
      ``category``.
    - ``style`` depends on all of them and is ``null`` when any of its inputs is.
    - With no facts at all the ratios are 0/0 and therefore ``null``; ``distinct_entities`` is 0,
      ``categories`` is ``{}`` and ``style`` is ``null``.

    Style, checked in this order:

    1. ``"reflective (deep self-knowledge)"`` when ``self_ratio >= 0.6`` and ``belief_ratio >= 0.4``
       (mostly about the user, and much of it standing identity or preference);
    2. ``"task/entity-heavy"`` when ``self_ratio < 0.5`` or ``belief_ratio < 0.2`` (mostly about
       other people, companies and projects, or mostly work and instructions);
    3. ``"mixed/casual"`` otherwise.

    Parameters
    ----------
    facts
        The facts of a Facts IR document.

    Returns
    -------
    dict
        The ``archetype`` block.

    Raises
    ------
    AttributeError
        A fact is not a mapping (a fact without ``subject`` or ``category`` is fine: it makes the
        figures that need it ``null``).

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> mv.compute_archetype([])["style"] is None
    True
    """
    n = len(facts)
    subjects_known = all(isinstance(f.get("subject"), str) for f in facts)
    categories_known = all(isinstance(f.get("category"), str) for f in facts)

    self_ratio: float | None = None
    distinct: int | None = None
    if subjects_known:
        entities = {entity_key(f["subject"]) for f in facts if not is_self(f)}
        distinct = len(entities)
        if n:
            self_ratio = sum(1 for f in facts if is_self(f)) / n

    categories: dict[str, int] | None = None
    belief_ratio: float | None = None
    if categories_known:
        counts: dict[str, int] = {}
        for f in facts:
            counts[f["category"]] = counts.get(f["category"], 0) + 1
        known = [c for c in CATEGORY_ORDER if c in counts]
        extra = sorted(c for c in counts if c not in CATEGORY_ORDER)
        categories = {c: counts[c] for c in known + extra}
        if n:
            belief_ratio = sum(counts.get(c, 0) for c in BELIEF_CATEGORIES) / n

    return {
        "style": classify_style(self_ratio, belief_ratio),
        "facts": n,
        "self_ratio": self_ratio,
        "distinct_entities": distinct,
        "categories": categories,
        "belief_ratio": belief_ratio,
    }


def classify_style(self_ratio: float | None, belief_ratio: float | None) -> str | None:
    """The style heuristic of :func:`compute_archetype`; ``None`` when an input is unknown."""
    if self_ratio is None or belief_ratio is None:
        return None
    if self_ratio >= REFLECTIVE_MIN_SELF and belief_ratio >= REFLECTIVE_MIN_BELIEF:
        return STYLE_REFLECTIVE
    if self_ratio < TASK_MAX_SELF or belief_ratio < TASK_MAX_BELIEF:
        return STYLE_TASK
    return STYLE_MIXED
