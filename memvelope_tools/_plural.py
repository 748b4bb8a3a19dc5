"""Counts in words: "1 topic", "2 topics", "1,204 messages"."""

from __future__ import annotations

__all__ = ["count", "plural"]

_IRREGULAR = {"entity": "entities", "category": "categories", "this": "these"}


def plural(n: float, noun: str) -> str:
    """``noun`` as it follows the number ``n``: singular when ``n`` is one, else plural.

    Parameters
    ----------
    n : float
        How many (a median, say, may be a fraction: plural unless exactly one).
    noun : str
        The singular noun; its last word takes the plural (``"distinct entity"`` -> ``"distinct entities"``).

    Returns
    -------
    str
        The noun alone, for a number printed apart (in a column of its own, say).

    Examples
    --------
    >>> plural(1, "value"), plural(0, "value"), plural(3, "open branch")
    ('value', 'values', 'open branches')
    """
    if n == 1:
        return noun
    head, _, last = noun.rpartition(" ")
    many = _IRREGULAR.get(last, last + "es" if last.endswith(("s", "x", "ch", "sh")) else last + "s")
    return f"{head} {many}" if head else many


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
    return f"{n:,} {plural(n, noun)}"
