"""Python strings as Arrow UTF-8 columns, with their character and word counts.

Text with unpaired surrogates (legal in JSON, not in UTF-8) gets U+FFFD in their place, with a
:class:`UnicodeWarning` saying how many values were changed.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._words import word_counts


def strings(values: list[Any], what: str) -> pa.Array:
    """``values`` (``str`` or None) as an Arrow string array; ``what`` names them in the warning."""
    try:
        return pa.array(values, pa.string())
    except UnicodeEncodeError:
        fixed = [v if v is None or v.isascii() or utf8_ok(v) else _replace_surrogates(v) for v in values]
        n = sum(1 for a, b in zip(values, fixed, strict=True) if a is not b)
        warnings.warn(f"{n} {what} value(s) contain unpaired surrogates; replaced by U+FFFD",
                      UnicodeWarning, stacklevel=4)
        return pa.array(fixed, pa.string())


def utf8(values: list[Any], what: str) -> list[bytes] | list[pa.Array]:
    """Each ``str`` of ``values`` as UTF-8 (a TypeError for anything else), for :func:`text_columns`.

    ``str.encode``, not ``pa.array(values)``: Arrow's conversion asks CPython for each string's
    UTF-8, which CPython then keeps inside every non-ASCII ``str`` (slow, and it doubles the memory
    of the caller's document). Unpaired surrogates take :func:`strings`' way (U+FFFD, a warning).
    """
    try:
        return list(map(str.encode, values))
    except UnicodeEncodeError:
        array = strings(values, what)
        return array.chunks if isinstance(array, pa.ChunkedArray) else [array]


def text_columns(encoded: list[bytes] | list[pa.Array]) -> tuple[list[pa.Array], list[pa.Array], pa.Array]:
    """Text chunks (each under 2 GiB), their ``chars`` (code points) and ``words`` (``len(s.split())``)."""
    if encoded and not isinstance(encoded[0], bytes):
        text = encoded
    else:
        text = []
        ends = np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)))
        lo = 0
        while lo < len(encoded) or not text:  # one join per chunk
            base = int(ends[lo - 1]) if lo else 0
            hi = min(len(encoded), max(lo + 1, int(np.searchsorted(ends, base + _MAX_CHUNK_BYTES, "right"))))
            offsets = np.zeros(hi - lo + 1, dtype=np.int64)
            offsets[1:] = ends[lo:hi] - base
            if offsets[-1] > _MAX_CHUNK_BYTES:
                raise pa.ArrowCapacityError(f"a text of {offsets[-1]} bytes is more than a string column holds")
            text.append(pa.StringArray.from_buffers(hi - lo, pa.py_buffer(offsets.astype(np.int32)),
                                                    pa.py_buffer(b"".join(encoded[lo:hi]))))
            lo = hi
    chars = [pc.utf8_length(chunk).cast(pa.int64()) for chunk in text]
    return text, chars, pa.array(word_counts(pa.chunked_array(text, type=pa.string())))


_MAX_CHUNK_BYTES = 2**31 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")


def char_counts(values: list[str]) -> np.ndarray:
    """Code points per text as the ``text`` column holds it (a surrogate pair held as two is one)."""
    return np.fromiter((len(v) if v.isascii() or _SURROGATE.search(v) is None else len(_replace_surrogates(v))
                        for v in values), dtype=np.int64, count=len(values))


def utf8_ok(s: str) -> bool:
    """Whether ``s`` can be UTF-8 (it has no unpaired surrogate)."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _replace_surrogates(s: str) -> str:
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
