"""The envelope: normalised conversations wrapped with their counts, and its canonical bytes.

The bytes are those of :func:`canonical.dumps_canonical` (``JSON.stringify(envelope, null, 2)``),
written by orjson where it is installed: its ``OPT_INDENT_2`` output equals the reference for dicts,
lists, strings, 64-bit ints, booleans and None (same escapes, lowercase hex, raw UTF-8, ``[]``/``{}``
when empty). Values holding anything else (floats, big ints, tuples, subclasses, other objects) are
written by the reference serialiser; strings with lone surrogates, which orjson cannot write, are
written with placeholder characters (U+10F800..U+10FFFF, one per surrogate value) that are then
replaced by the surrogates' escapes in the bytes.
"""

from __future__ import annotations

import re
from typing import Any, Final

from .._tags import ENVELOPE_TAG
from ..errors import ConversionError
from .canonical import canonical_fragment, dumps_canonical

try:
    import orjson
except ImportError:  # pragma: no cover - exercised when the fast extra is absent
    orjson = None  # type: ignore[assignment]

Envelope = dict[str, Any]

_PLACEHOLDER_BASE: Final = 0x10F800  # + (surrogate - 0xD800): U+10F800..U+10FFFF
_PLACEHOLDER_BYTES: Final = re.compile(rb"(?:\xf4\x8f[\xa0-\xbf][\x80-\xbf])+")
_PLACEHOLDER_CHAR: Final = re.compile("[\U0010f800-\U0010ffff]")
_SURROGATE_CHAR: Final = re.compile("[\ud800-\udfff]")
_INDENT_2: Final = orjson.OPT_INDENT_2 if orjson is not None else 0


def build_envelope(provider: str, conversations: list[dict[str, Any]], source: str | None = None) -> Envelope:
    """Wrap normalised conversations in an envelope; zero conversations is an error, never an envelope."""
    if not conversations:
        raise ConversionError(
            f"no conversation survived conversion ({provider} export, every conversation was empty, "
            "non-prose or malformed)",
            reason="no-conversations",
            source=source,
        )
    return {
        "memvelope": ENVELOPE_TAG,
        "meta": {
            "source_provider": provider,
            "conversation_count": len(conversations),
            "message_count": sum(len(c["messages"]) for c in conversations),
        },
        "conversations": conversations,
    }


class _Collision(Exception):
    """A string already holds a placeholder character, so swapping surrogates in would not be reversible."""


def _swap_surrogates(value: Any) -> Any:
    """A copy of ``value`` with every surrogate in its strings swapped for its placeholder."""
    kind = type(value)
    if kind is str:
        if _PLACEHOLDER_CHAR.search(value):
            raise _Collision
        return _SURROGATE_CHAR.sub(lambda m: chr(ord(m.group()) - 0xD800 + _PLACEHOLDER_BASE), value)
    if kind is dict:
        return {k: _swap_surrogates(v) for k, v in value.items()}
    if kind is list:
        return [_swap_surrogates(v) for v in value]
    return value


def _placeholders_to_escapes(match: re.Match[bytes]) -> bytes:
    surrogates = "".join(chr(ord(c) - _PLACEHOLDER_BASE + 0xD800) for c in match.group().decode("utf-8"))
    # As canonical._encode: a high and a low side by side are one code point, lone ones are \udxxx.
    paired = surrogates.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return paired.encode("utf-8", "backslashreplace")


_PLAIN_TYPES: Final = frozenset({str, int, bool, type(None)})
_INT64: Final = (-(2**63), 2**64 - 1)


def orjson_safe(value: Any) -> bool:
    """True when orjson's ``OPT_INDENT_2`` bytes for ``value`` are the reference bytes, lone surrogates
    aside: only dicts with str keys, lists, str, bool, None and ints orjson can hold."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is dict:
            if not all(type(k) is str for k in item):
                return False
            push(item.values())
        elif kind is list:
            push(item)
        elif kind not in _PLAIN_TYPES or (kind is int and not _INT64[0] <= item <= _INT64[1]):
            return False
    return True


def fragment(conversation: dict[str, Any]) -> bytes:
    """A conversation's canonical bytes as they appear in an envelope (two levels deep), from an
    envelope this package built (see :func:`dumps_envelope`)."""
    if orjson is None:
        return canonical_fragment(conversation, 2)
    try:
        return orjson.dumps(conversation, option=_INDENT_2).replace(b"\n", b"\n    ")
    except orjson.JSONEncodeError:  # lone surrogates: orjson cannot write them, so write placeholders
        pass
    try:
        swapped = _swap_surrogates(conversation)
    except _Collision:
        return canonical_fragment(conversation, 2)
    data = orjson.dumps(swapped, option=_INDENT_2).replace(b"\n", b"\n    ")
    return _PLACEHOLDER_BYTES.sub(_placeholders_to_escapes, data)


SEPARATOR: Final = b",\n    "  # between two conversations in an envelope's bytes
_WRAP_KEY: Final = "c"
_WRAP_HEAD: Final = b'{\n  "c": [\n    '
_WRAP_TAIL: Final = b"\n  ]\n}"


def fragments(conversations: list[dict[str, Any]]) -> bytes:
    """The conversations' :func:`fragment` bytes joined by ``SEPARATOR``, in one orjson call where it
    can: wrapped in ``{"c": [...]}``, each conversation sits two levels deep, as in an envelope."""
    if orjson is not None and conversations:
        try:
            data = orjson.dumps({_WRAP_KEY: conversations}, option=_INDENT_2)
        except orjson.JSONEncodeError:  # a lone surrogate somewhere: one conversation at a time
            pass
        else:
            return data[len(_WRAP_HEAD) : -len(_WRAP_TAIL)]
    return SEPARATOR.join(map(fragment, conversations))


def dumps_envelope(envelope: dict[str, Any], *, trusted: bool = False) -> bytes:
    """:func:`canonical.dumps_canonical` bytes of ``envelope``, faster where orjson is installed.

    ``trusted`` skips the type check, for envelopes this package built (only dicts, lists, strings,
    small ints and None).
    """
    if orjson is None or not (trusted or orjson_safe(envelope)):
        return dumps_canonical(envelope)
    try:
        return orjson.dumps(envelope, option=_INDENT_2)
    except orjson.JSONEncodeError:  # lone surrogates: only their conversations take the slower way
        return _dumps_by_conversation(envelope)


_SENTINEL: Final = "\x00memvelope-conversations\x00"


def envelope_frame(meta: dict[str, Any]) -> tuple[bytes, bytes]:
    """The canonical bytes before the first conversation and after the last, for ``meta``."""
    skeleton = {"memvelope": ENVELOPE_TAG, "meta": meta, "conversations": [_SENTINEL]}
    head, tail = dumps_canonical(skeleton).split(b"    " + dumps_canonical(_SENTINEL))
    return head, tail


def _dumps_by_conversation(envelope: dict[str, Any]) -> bytes:
    if (
        list(envelope) != ["memvelope", "meta", "conversations"]
        or not envelope["conversations"]
        or envelope["memvelope"] != ENVELOPE_TAG
    ):
        return dumps_canonical(envelope)
    head, tail = envelope_frame(envelope["meta"])
    body = b",\n".join(b"    " + fragment(c) for c in envelope["conversations"])
    return head + body + tail
