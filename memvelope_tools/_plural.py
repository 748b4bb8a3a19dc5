"""Counts in words: "1 topic", "2 topics", "1,204 messages"."""

from __future__ import annotations

__all__ = ["count"]

_IRREGULAR = {"entity": "entities", "category": "categories", "reply": "replies", "this": "these"}


def count(n: int, noun: str) -> str:
    """``n`` with thousands separators and ``noun``, in the plural unless ``n`` is one.

    Parameters
    ----------
    n : int
        How many.
    noun : str
        The singular noun; its last word takes the plural (``"distinct entity"`` -> ``"distinct entities"``).

    Returns
    -------
    str
        For example ``"1 topic"`` or ``"1,204 messages"``.

    Examples
    --------
    >>> count(1, "topic"), count(2, "conversation"), count(1204, "distinct entity")
    ('1 topic', '2 conversations', '1,204 distinct entities')
    """
    if n == 1:
        return f"1 {noun}"
    head, _, last = noun.rpartition(" ")
    many = _IRREGULAR.get(last, last + "es" if last.endswith(("s", "x", "ch", "sh")) else last + "s")
    return f"{n:,} {head + ' ' if head else ''}{many}"
