"""The fast path: orjson parsing and serialisation, giving the same values and bytes as the stdlib path.

orjson is optional (the ``fast`` extra). Where it differs from the reference path (``parse.loads_js`` and
``canonical.dumps_canonical``), this module either works around the difference or falls back:

* Lone surrogate escapes (``"\\ud83d"`` alone), which real exports can hold and orjson refuses, are
  swapped before parsing for private code points U+10F800..U+10FFFF (one per surrogate value, so the
  normalisers see equal strings where the source had equal strings) and swapped back afterwards, in the
  envelope's strings or directly in its serialised bytes. If the part already holds such code points,
  the part goes to the stdlib parser instead.
* Invalid UTF-8 is replaced with U+FFFD exactly as :func:`parse.decode` does, then parsed again.
* Anything else orjson refuses (numbers beyond the double range, nesting past 1024 levels, bad JSON)
  is parsed by the stdlib parser, which gives the reference value or the reference error.
  Integers beyond 64 bits come back from orjson as the nearest double, which is the value every
  consumer uses (``timestamps.to_double``); no envelope byte depends on the difference.
* orjson's ``OPT_INDENT_2`` output equals ``JSON.stringify(v, null, 2)`` for dicts, lists, strings,
  64-bit ints, booleans and None (same escapes, lowercase hex, raw UTF-8, ``[]``/``{}`` when empty);
  values holding anything else (floats, big ints, tuples, subclasses, other objects) or lone surrogates
  are serialised by the reference serialiser.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

from .canonical import canonical_fragment, dumps_canonical
from .parse import decode, loads_js

try:
    import orjson
except ImportError:  # pragma: no cover - exercised when the fast extra is absent
    orjson = None  # type: ignore[assignment]

_BOM: Final = b"\xef\xbb\xbf"
_PLACEHOLDER_BASE: Final = 0x10F800  # + (surrogate - 0xD800): U+10F800..U+10FFFF
# A lone surrogate escape: a high one not followed by a low escape, or a low one not preceded by a high.
# Also matched (group "pair"): the high half of an escaped pair for a placeholder character (U+10F800+).
_LONE_ESCAPE: Final = re.compile(
    rb"\\u(?:[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    rb"|[dD][c-fC-F][0-9a-fA-F]{2}(?<![\\]u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?P<pair>[dD][bB][fF][eEfF]))"
)
# The placeholders as raw UTF-8 (F4 8F A0 80 .. F4 8F BF BF).
_PLACEHOLDER_IN_SOURCE: Final = re.compile(rb"\xf4\x8f[\xa0-\xbf]")
_PLACEHOLDER_BYTES: Final = re.compile(rb"(?:\xf4\x8f[\xa0-\xbf][\x80-\xbf])+")
_PLACEHOLDER_CHAR: Final = re.compile("[\U0010f800-\U0010ffff]")
_SURROGATE_CHAR: Final = re.compile("[\ud800-\udfff]")
_INDENT_2: Final = orjson.OPT_INDENT_2 if orjson is not None else 0


def available() -> bool:
    """True when orjson is installed, so the fast path can be used."""
    return orjson is not None


@dataclass(frozen=True)
class Parsed:
    """A part's top-level value, how many invalid UTF-8 sequences were replaced, and whether its strings
    hold placeholders for lone surrogates: the set of placeholder characters used (see
    :func:`restore_strings`)."""

    value: Any
    replaced: int = 0
    placeholders: frozenset[str] = frozenset()


class Swap:
    """What :func:`swap_lone_escapes` did: the placeholder characters it put in, and whether the text
    holds escaped placeholder characters of its own (then the swap is not reversible)."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.collides = False


def swap_lone_escapes(data: bytes, swap: Swap) -> bytes:
    """``data`` with each lone surrogate escape replaced by its placeholder character (raw UTF-8),
    noting what was done in ``swap``. The byte before ``data`` must not be a backslash."""

    def replace(match: re.Match[bytes]) -> bytes:
        start = match.start()
        run = 0
        while start - run > 0 and data[start - run - 1] == 0x5C:  # backslashes before this one
            run += 1
        if run % 2:  # the backslash is itself escaped: "\\ud83d" is literal text, not an escape
            return match.group()
        if match.group("pair") is not None:
            swap.collides = True
            return match.group()
        char = chr(_PLACEHOLDER_BASE + int(match.group()[2:], 16) - 0xD800)
        swap.used.add(char)
        return char.encode("utf-8")

    return _LONE_ESCAPE.sub(replace, data)


def holds_placeholders(data: bytes) -> bool:
    """True when the text holds placeholder characters as raw UTF-8."""
    return b"\xf4\x8f" in data and _PLACEHOLDER_IN_SOURCE.search(data) is not None


_LIKELY_LONE_SURROGATE: Final = 4 * 1024 * 1024


def _escape_dense(data: bytes) -> bool:
    """True when ``\\u`` escapes are frequent (non-ASCII written as escapes, as in ChatGPT exports)."""
    sample = data[: 1 << 20]
    return sample.count(b"\\u") * 64 > len(sample)


def parse_part(data: bytes, source: str) -> Parsed:
    """``JSON.parse`` of a part's bytes (after conformance A17 decoding), as :func:`parse.loads_js` gives it.

    Requires orjson. Raises ConversionError exactly where the reference path does.
    """
    if data.startswith(_BOM):
        data = data[3:]
    # Which comes first is only a matter of speed. A refusal by orjson is costly (it builds and drops
    # the tree up to the refusal), and large parts usually hold a lone surrogate; but where escapes are
    # dense, looking for lone surrogates costs half a parse, so small parts try orjson first.
    if len(data) > _LIKELY_LONE_SURROGATE or not _escape_dense(data):
        swap = Swap()
        swapped = swap_lone_escapes(data, swap)
        if swap.used and not swap.collides and not holds_placeholders(data):
            try:
                return Parsed(orjson.loads(swapped), 0, frozenset(swap.used))
            except orjson.JSONDecodeError:
                pass
        del swapped
    try:
        return Parsed(orjson.loads(data))
    except orjson.JSONDecodeError as exc:
        message = str(exc)
    return _parse_refused(data, source, message)


def _parse_refused(data: bytes, source: str, message: str) -> Parsed:
    replaced = 0
    if "UTF-8" in message:  # only a speed hint: a wrong guess ends in the stdlib parser below
        decoded = decode(data)
        if decoded.replaced or decoded.text.count("\ufffd"):
            data, replaced = decoded.text.encode("utf-8"), decoded.replaced
            try:
                return Parsed(orjson.loads(data), replaced)
            except orjson.JSONDecodeError:
                pass
    swap = Swap()
    swapped = swap_lone_escapes(data, swap)
    if swap.used and not swap.collides and not holds_placeholders(data):
        try:
            return Parsed(orjson.loads(swapped), replaced, frozenset(swap.used))
        except orjson.JSONDecodeError:
            pass
    del swapped
    decoded = decode(data)
    return Parsed(loads_js(decoded.text, source), replaced or decoded.replaced)


def _restore(text: str) -> str:
    return _PLACEHOLDER_CHAR.sub(lambda m: chr(ord(m.group()) - _PLACEHOLDER_BASE + 0xD800), text)


def _holds(text: str, chars: Collection[str]) -> bool:
    if text.isascii():
        return False
    if len(chars) <= 8:  # a few single-character searches beat a character-class scan by far
        return any(c in text for c in chars)
    return _PLACEHOLDER_CHAR.search(text) is not None


def restore_strings(conversation: dict[str, Any], chars: Collection[str]) -> None:
    """Put lone surrogates back, in place, into the strings an envelope conversation takes from a part
    parsed with the placeholder characters ``chars`` (``Parsed.placeholders``)."""
    for key in ("id", "title"):
        value = conversation[key]
        if type(value) is str and _holds(value, chars):
            conversation[key] = _restore(value)
    for message in conversation["messages"]:
        text = message["text"]
        if _holds(text, chars):
            message["text"] = _restore(text)


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


# ---- serialisation ----------------------------------------------------------------------------------

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
    skeleton = {"memvelope": "envelope-v0", "meta": meta, "conversations": [_SENTINEL]}
    head, tail = dumps_canonical(skeleton).split(b"    " + dumps_canonical(_SENTINEL))
    return head, tail


def _dumps_by_conversation(envelope: dict[str, Any]) -> bytes:
    if (
        list(envelope) != ["memvelope", "meta", "conversations"]
        or not envelope["conversations"]
        or envelope["memvelope"] != "envelope-v0"
    ):
        return dumps_canonical(envelope)
    head, tail = envelope_frame(envelope["meta"])
    body = b",\n".join(b"    " + fragment(c) for c in envelope["conversations"])
    return head + body + tail
