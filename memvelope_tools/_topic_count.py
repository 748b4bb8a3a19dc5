"""How many topics to look for when none are asked for: one rule for ``topics()``, the command and the report."""

from __future__ import annotations

__all__ = ["N_TOPICS", "topic_count"]

#: The most topics found when none are asked for.
N_TOPICS = 12


def topic_count(n_units: int) -> int:
    """How many topics to find in ``n_units`` units when none are asked for: one per five, 2 to 12.

    Parameters
    ----------
    n_units
        How many units (conversations or messages) the history has.

    Returns
    -------
    int
        The number of topics ``memvelope_tools.topics``, ``memvelope topics`` and the report look for.

    Examples
    --------
    >>> topic_count(8), topic_count(40), topic_count(5000)
    (2, 8, 12)
    """
    return min(N_TOPICS, max(2, n_units // 5))
