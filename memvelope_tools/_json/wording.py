"""The wording of JSON text that cannot be read, shared by every reader so each problem reads one way."""

from __future__ import annotations

import json
from typing import Final

#: What every reader and command expects, for the lines about a file that is none of it.
EXPECTED: Final = (
    "expected an export (its zip as downloaded, its folder or a conversations*.json file), "
    "an envelope or a Facts IR document"
)
EMPTY_FILE: Final = f"the file is empty: {EXPECTED}"
UTF16_FILE: Final = "UTF-16 text, not UTF-8: save the file as UTF-8 and try again"


def is_utf16(head: bytes) -> bool:
    """UTF-16 (or UTF-32) text: a byte order mark, or a NUL beside every ASCII character."""
    sample = head[:512]
    if sample[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    if len(sample) < 4 or b"\x00" not in sample:
        return False
    even, odd = sample[0::2], sample[1::2]
    return even.count(0) == len(even) or odd.count(0) == len(odd)


def invalid_json(detail: str, line: int, column: int, head: bytes) -> str:
    """The line for text that does not parse: the parser's complaint and where, or, for text that is
    UTF-16 (judged from ``head``, its first bytes), :data:`UTF16_FILE`."""
    if is_utf16(head):
        return UTF16_FILE
    return f"not valid JSON: {detail} at line {line} column {column}"


def json_error_message(text: str, exc: json.JSONDecodeError) -> str:
    """The one wording, for every reader and command, of JSON text that does not parse.

    ``text`` is the decoded text (a leading BOM removed): an empty file and UTF-16 text (a NUL
    beside every ASCII character) get a hint instead of the parser's bare complaint.
    """
    if not text.strip(" \t\n\r"):
        return EMPTY_FILE
    return invalid_json(exc.msg, exc.lineno, exc.colno, text[:512].encode("utf-8", "surrogatepass"))
