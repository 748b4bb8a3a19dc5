"""What the provider classifiers share: ECMAScript TrimString, block joining, roles, and the verdict types.

Each provider module has one ``classify`` that returns a :class:`Message` or a :class:`Drop`; the
normaliser keeps the messages and ``memvelope doctor`` reports the drops, so a keep/drop rule is written once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

# ECMAScript WhiteSpace (TAB, VT, FF, ZWNBSP, every Unicode Zs) and LineTerminator (LF, CR, LS, PS).
# Unlike str.strip(), U+001C..U+001F and U+0085 are *not* in this set, and U+FEFF is.
JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

Role = Literal["user", "assistant"]
DropRule = Literal[
    "no message",  # a ChatGPT mapping node without a message object (a structural root)
    "malformed element",
    "hidden",
    "role system",
    "role tool",
    "role other",
    "role missing",
    "content type",  # detail: the ChatGPT content_type, or its JSON type when it is no string
    "no text parts",
    "empty after trimming",
    "tool_use/tool_result",
    "thinking",
    "block type",  # detail: the first Claude block type that is not text, or "missing"
    "placeholder text",
]

_ROLES: Final[dict[str, Role]] = {
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


@dataclass(frozen=True, slots=True)
class Message:
    """A message the envelope keeps: its role, its text (trimmed, never empty) and its raw source timestamp."""

    role: Role
    text: str
    stamp: object


@dataclass(frozen=True, slots=True)
class Drop:
    """Why a source message is not in the envelope: the rule that dropped it, and for some rules a detail."""

    rule: DropRule
    detail: str | None = None

    @property
    def reason(self) -> str:
        """The rule with its detail, as ``memvelope doctor`` prints it (``"content type code"``)."""
        return self.rule if self.detail is None else f"{self.rule} {self.detail}"


MALFORMED: Final = Drop("malformed element")
EMPTY: Final = Drop("empty after trimming")


def map_role(token: object) -> Role | None:
    """Normalise a participant token to ``user``/``assistant``, or None when the message is dropped."""
    if type(token) is not str:
        return None
    role = _ROLES.get(token)
    if role is None:
        # Lowercasing only matters for tokens that are not already lowercase (conformance A24).
        role = _ROLES.get(token.lower())
    return role


_NAMED_ROLE_DROPS: Final = {"system": Drop("role system"), "tool": Drop("role tool")}
_ROLE_OTHER: Final = Drop("role other")
_ROLE_MISSING: Final = Drop("role missing")


def role_drop(token: object) -> Drop:
    """The drop for a participant token :func:`map_role` refuses: role system, tool, other or missing."""
    if type(token) is not str:
        return _ROLE_MISSING
    return _NAMED_ROLE_DROPS.get(token.lower(), _ROLE_OTHER)


def message_id(position: int) -> str:
    """The envelope id of the message at ``position`` (1 for the first) of its conversation: ``m1``, ``m2``, ..."""
    return f"m{position}"


def trimmed_string(value: object) -> str:
    """The trimmed value when it is a string, else the empty string."""
    return value.strip(JS_WHITESPACE) if type(value) is str else ""
