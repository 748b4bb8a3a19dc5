"""The canonical serialisation profile: the bytes ``JSON.stringify(value, null, 2)`` would produce.

Every byte-level rule of the spec lives in this module and nowhere else:
two-space indentation, ``": "`` after keys, no trailing newline, raw UTF-8 for non-ASCII, the seven short
escapes, other C0 controls as lowercase ``\\u00xx``, lone surrogates as lowercase ``\\udxxx``.
"""

from __future__ import annotations

import json
from typing import IO, Any


def _pair_surrogates(text: str) -> str:
    # A str may hold a high and a low surrogate side by side; JavaScript sees one code point there.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _encode(text: str) -> bytes:
    # json.dumps(ensure_ascii=False) already escapes exactly as JSON.stringify does, with lowercase hex;
    # what remains are lone surrogates, which UTF-8 cannot hold: "backslashreplace" writes them as \udxxx.
    # Encoding fails exactly when a surrogate is present, and is faster than searching for one first.
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _pair_surrogates(text).encode("utf-8", "backslashreplace")


def dumps_canonical(value: Any) -> bytes:
    """Serialise exactly as ``JSON.stringify(value, null, 2)`` would; no trailing newline.

    ``value`` is built of dicts (in the key order wanted), lists, strings, ints, bools and None.

    Parameters
    ----------
    value
        A JSON value of dicts, lists, strings, ints, bools and None.

    Returns
    -------
    bytes
        The UTF-8 bytes.

    Raises
    ------
    TypeError
        ``value`` holds something JSON cannot represent.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> mv.dumps_canonical({"a": [1]}).splitlines()
    [b'{', b'  "a": [', b'    1', b'  ]', b'}']
    """
    return _encode(json.dumps(value, ensure_ascii=False, indent=2, separators=(",", ": ")))


def dump_canonical(value: Any, fp: IO[bytes]) -> None:
    """Write :func:`dumps_canonical` bytes to a binary file.

    Parameters
    ----------
    value
        A JSON value of dicts, lists, strings, ints, bools and None.
    fp
        A binary file open for writing.

    Returns
    -------
    None

    Raises
    ------
    TypeError
        ``value`` holds something JSON cannot represent.

    Examples
    --------
    >>> import io, memvelope_tools as mv
    >>> out = io.BytesIO()
    >>> mv.dump_canonical({"a": [1]}, out)
    >>> out.getvalue().splitlines()
    [b'{', b'  "a": [', b'    1', b'  ]', b'}']
    """
    fp.write(dumps_canonical(value))


def canonical_fragment(value: Any, level: int) -> bytes:
    """Serialise ``value`` as it appears nested ``level`` levels deep in a canonical document.

    Used by the streaming writer, which emits a document piece by piece.
    """
    text = json.dumps(value, ensure_ascii=False, indent=2, separators=(",", ": "))
    if level:
        text = text.replace("\n", "\n" + "  " * level)
    return _encode(text)
