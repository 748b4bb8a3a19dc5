"""How text taken from a document or an export is written to a terminal or a plain-text output: on one
line, with nothing in it that a terminal would obey.

A conversation title, a message, an id or a file name inside an archive is whatever the export holds. Printed
as it is, a carriage return or a newline in it forges a line, an escape sequence retitles the terminal or
clears the screen, and a bidirectional override shows its text reversed. Every command prints such a value
through :func:`printable`; JSON output needs nothing of it, since JSON escapes control characters itself.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["printable"]

# C0 controls (tab and newline too: a value prints on one line), DEL and the C1 controls; the line and
# paragraph separators; the bidirectional marks, embeddings, overrides and isolates; unpaired surrogates.
_UNSAFE: Final = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if "\ud800" <= char <= "\udfff":
        return "\ufffd"  # legal in JSON, not in UTF-8: shown as the frames hold it
    return char.encode("unicode_escape").decode("ascii")


def printable(text: str) -> str:
    """``text`` with every character a terminal would obey written as a visible escape.

    Control characters (C0, tab and newline included, DEL, C1), the line and paragraph separators and the
    bidirectional formatting characters become Python escapes (``\\x1b``, ``\\r``, ``\\n``, ``\\u202e``);
    an unpaired surrogate becomes U+FFFD. Every other character, accents, scripts and emoji included, is
    kept as it is.

    Parameters
    ----------
    text
        A value taken from a document or an export: a title, a message, an id, a name.

    Returns
    -------
    str
        ``text`` on one line, safe to print to a terminal.

    Raises
    ------
    None

    Examples
    --------
    >>> printable("café 東京")
    'café 東京'
    >>> print(printable("a\\x1b]0;pwned\\x07b\\rc\\u202ed"))
    a\\x1b]0;pwned\\x07b\\rc\\u202ed
    """
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_escape, text)
