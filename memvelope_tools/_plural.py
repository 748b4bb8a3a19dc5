"""Counts in words: "1 topic", "2 topics", "1,204 messages"."""

from __future__ import annotations

__all__ = ["count", "plural"]

_IRREGULAR = {"this": "these"}


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
    >>> plural(1, "value"), plural(0, "value"), plural(3, "open branch"), plural(2, "entry"), plural(2, "day")
    ('value', 'values', 'open branches', 'entries', 'days')
    """
    if n == 1:
        return noun
    head, _, last = noun.rpartition(" ")
    if last in _IRREGULAR:
        many = _IRREGULAR[last]
    elif last.endswith(("s", "x", "ch", "sh")):
        many = last + "es"
    elif last.endswith("y") and last[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        many = last[:-1] + "ies"
    else:
        many = last + "s"
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
