"""The reference the conversion is tested against: each part decoded and parsed whole by the stdlib parser.

``decode`` reads UTF-8 as a browser's ``File.text()`` does (one BOM stripped, invalid sequences
replaced by U+FFFD); ``loads_js`` parses the text as JavaScript's ``JSON.parse`` would;
``convert_values`` converts the parsed parts, in order, as the package converts an export.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from memvelope_tools._convert.assemble import Assembler, Conversation
from memvelope_tools._convert.envelope import Envelope, build_envelope
from memvelope_tools._json.parse import reference_loads
from memvelope_tools._json.wording import json_error_message
from memvelope_tools.errors import InputError

_BOM: Final = b"\xef\xbb\xbf"
_REPLACEMENT_UTF8: Final = b"\xef\xbf\xbd"


@dataclass(frozen=True)
class Decoded:
    """Decoded text of a part and how many invalid UTF-8 sequences were replaced (conformance B3)."""

    text: str
    replaced: int


def decode(data: bytes) -> Decoded:
    """UTF-8 as the WHATWG decoder does it: strip one BOM, replace invalid sequences with U+FFFD."""
    if data.startswith(_BOM):
        data = data[3:]
    try:
        return Decoded(data.decode("utf-8"), 0)
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        return Decoded(text, text.count("\ufffd") - data.count(_REPLACEMENT_UTF8))


def loads_js(text: str, source: str) -> Any:
    """``JSON.parse(text)``, raising InputError naming ``source`` and the position."""
    try:
        return reference_loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(json_error_message(text, exc), reason="invalid-json", source=source) from None
    except ValueError as exc:
        raise InputError(f"not valid JSON: {exc}", reason="invalid-json", source=source) from None
    except RecursionError:
        raise InputError("JSON nested too deeply to parse", reason="too-deep", source=source) from None


def convert_values(values: Iterable[object], source: str | None = None) -> Envelope:
    """Convert already-parsed part values (each a part's top-level JSON value), in order."""
    conversations: list[Conversation] = []
    assembler = Assembler(conversations.append, source)
    for value in values:
        if type(value) is list:
            for element in value:
                assembler.element(element)
        else:  # a part whose top level is not an array contributes nothing
            assembler.non_array()
    return build_envelope(assembler.finish(), conversations, source)
