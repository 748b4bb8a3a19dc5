"""Prose helpers shared by the provider normalisers: ECMAScript TrimString, block joining, roles."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

# ECMAScript WhiteSpace (TAB, VT, FF, ZWNBSP, every Unicode Zs) and LineTerminator (LF, CR, LS, PS).
# Unlike str.strip(), U+001C..U+001F and U+0085 are *not* in this set, and U+FEFF is.
JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_ROLES: Final = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
}


def js_trim(text: str) -> str:
    """ECMAScript ``String.prototype.trim``."""
    return text.strip(JS_WHITESPACE)


def join_blocks(blocks: Iterable[str]) -> str:
    """Trim each block, drop the empty ones, join the rest with one blank line."""
    kept = [t for t in (b.strip(JS_WHITESPACE) for b in blocks) if t]
    if len(kept) == 1:
        return kept[0]
    return "\n\n".join(kept)


def map_role(token: object) -> str | None:
    """Normalise a participant token to ``user``/``assistant``, or None when the message is dropped."""
    if type(token) is not str:
        return None
    role = _ROLES.get(token)
    if role is None:
        # Lowercasing only matters for tokens that are not already lowercase (NOTES A24).
        role = _ROLES.get(token.lower())
    return role


def role_drop_reason(token: object) -> str:
    """Why :func:`map_role` drops ``token``, for ``memvelope doctor``: role system, tool, other or missing."""
    if type(token) is not str:
        return "role missing"
    lowered = token.lower()
    return f"role {lowered}" if lowered in ("system", "tool") else "role other"


def trimmed_string(value: object) -> str:
    """The trimmed value when it is a string, else the empty string."""
    return value.strip(JS_WHITESPACE) if type(value) is str else ""
