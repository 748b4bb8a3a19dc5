"""Python strings as Arrow UTF-8 columns, with their character and word counts; and the same
columns read straight from the JSON text of an envelope's conversations.

``chars`` counts code points and ``words`` is ``len(s.split())``. Text with unpaired surrogates
(legal in JSON, not in UTF-8) gets U+FFFD in their place, with a :class:`UnicodeWarning` saying how
many values were changed; a surrogate pair held as two code units is the one character it encodes.

Two engines give the same columns (chosen in :mod:`memvelope_tools._engine`). The compiled
``_textscan`` module (engine ``"c"``, built at install when a C compiler is there) reads each
``str``'s storage with the GIL released, on several threads; with engine ``"python"``, or without
the module, CPython encodes each text under the GIL and NumPy counts words over the bytes. Only the
compiled module reads JSON text (:func:`conversation_columns`); otherwise conversations are parsed.
"""

from __future__ import annotations

import contextlib
import itertools
import mmap
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._engine import record, use_c
from .._plural import count
from .._workers.threads import text_pool, text_threads
from .words import word_counts

try:
    from . import _textscan  # type: ignore[attr-defined,unused-ignore]
except ImportError:  # pragma: no cover - exercised by the tests that monkeypatch it away
    from .._native import missing

    missing("_frames._textscan")
    _textscan = None

_MAX_CHUNK_BYTES = 2**31 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")
_PARALLEL_MIN_TEXTS = 2048  # below this, starting threads costs more than it saves

Columns = tuple[list[pa.Array] | None, np.ndarray, np.ndarray | None]


@dataclass(frozen=True)
class Conversations:
    """Columns of conversations read straight from their JSON text (see :func:`conversation_columns`).

    ``fields`` holds the conversations' ``id``, ``title``, ``created_at`` and ``updated_at``
    (strings, null where JSON has null), ``counts`` their numbers of messages; the message
    columns follow in message order.
    """

    fields: dict[str, pa.Array]
    counts: np.ndarray
    message_ids: pa.Array
    is_assistant: np.ndarray
    ts: pa.Array
    text: pa.Array
    chars: np.ndarray
    words: np.ndarray


def strings(values: list[Any], what: str) -> pa.Array:
    """``values`` (``str`` or None) as an Arrow string array; ``what`` names them in the warning."""
    try:
        return pa.array(values, pa.string())
    except UnicodeEncodeError:
        return pa.array(_fixed(values, what), pa.string())


def text_columns(values: Sequence[Any], what: str) -> Columns:
    """Text chunks (each under 2 GiB), ``chars`` and ``words`` of ``values``; a TypeError if one is no ``str``."""
    if use_c(_textscan):
        record("text", "c")
        return _native_columns(values, what)
    record("text", "python")
    try:
        encoded = list(map(str.encode, values))
    except UnicodeEncodeError:
        encoded = list(map(str.encode, _fixed(values, what)))
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    chunks = _arrow_chunks(_offsets(lengths), b"".join(encoded))
    chars = np.concatenate(
        [np.zeros(0, dtype=np.int64), *(pc.utf8_length(c).cast(pa.int64()).to_numpy() for c in chunks)]
    )
    return chunks, chars, word_counts(pa.chunked_array(chunks, type=pa.string()))


def text_columns_later(values: Sequence[Any], what: str, *, with_text: bool = True) -> Callable[[], Columns]:
    """Start :func:`text_columns` (or only :func:`char_counts`, without ``with_text``); call the result to get it.

    With the compiled helper the work runs on a worker thread without the GIL, so the caller can
    go on (reading the next batch of messages, say) meanwhile. Errors and the warning come from
    the call. Without ``with_text`` the chunks and words are None.
    """
    if not use_c(_textscan) or len(values) < _PARALLEL_MIN_TEXTS:
        try:
            result = text_columns(values, what) if with_text else (None, char_counts(values), None)
        except TypeError as error:
            failure = error

            def fail() -> Columns:
                raise failure

            return fail
        return lambda: result
    record("text", "c")
    future = text_pool().submit(_native_work, _as_tuple(values), with_text)

    def resolve() -> Columns:
        chunks, chars, words, changed = future.result()
        if changed and with_text:
            _warn(changed, what)
        return chunks, chars, words

    return resolve


def char_counts(values: Sequence[Any]) -> np.ndarray:
    """Code points per text as the ``text`` column holds it; a TypeError if one is no ``str``."""
    if use_c(_textscan):
        record("text", "c")
        texts = _as_tuple(values)
        chars = np.empty(len(texts), dtype=np.int64)
        _run(_textscan.scan, texts, _count_spans(len(texts)), np.empty_like(chars), chars, np.empty_like(chars))
        return chars
    if not set(map(type, values)) <= {str}:
        raise TypeError("a text is not a string")
    record("text", "python")
    return np.fromiter(
        (len(v) if v.isascii() or _SURROGATE.search(v) is None else len(_replace_surrogates(v)) for v in values),
        dtype=np.int64,
        count=len(values),
    )


def native() -> bool:
    """Whether the compiled helper does the work: built, and the engine is ``"c"`` (else NumPy, same columns)."""
    return use_c(_textscan)


def compiled_words(
    offsets: np.ndarray,
    data: Any,
    owners: np.ndarray,
    table: tuple[np.ndarray, np.ndarray],
    max_word: int,
    counted: bool,
) -> tuple[Any, ...] | None:
    """The words topics counts in the UTF-8 texts ``data[offsets[i]:offsets[i + 1]]``, found by the compiled
    helper (only where :func:`native`): see ``words`` in ``_textscan.c`` for what it takes and gives; None
    when a text is not UTF-8. The rule is :func:`memvelope_tools._topic_units.split_words`."""
    index, blocks = table
    found: tuple[Any, ...] | None = _textscan.words(offsets, data, owners, index, blocks, max_word, counted)
    return found


def conversation_columns(buf: Any, spans: np.ndarray) -> Conversations | None:
    """The columns of the conversations whose JSON text is at ``buf[start:end]`` for each row of ``spans``.

    Each span is to hold one value the JSON scanner accepted, with no surrogate escape that is not
    half of a pair and no integer of 19 digits or more; nothing outside the spans is read, and a span
    holding anything else is not the plain case. None when the compiled helper is missing or the
    conversations are not the plain case (see ``_textscan.c``): the caller then parses them. Runs
    without the GIL.
    """
    if not use_c(_textscan):
        return None
    record("columns", "c")
    out = _textscan.extract(buf, np.ascontiguousarray(spans, dtype=np.int64))
    if out is None:
        return None
    ids, title, created, updated, counts, message_ids, roles, ts, text, chars, words = out
    return Conversations(
        fields={
            "id": _string_array(ids),
            "title": _string_array(title),
            "created_at": _string_array(created),
            "updated_at": _string_array(updated),
        },
        counts=np.frombuffer(counts, dtype=np.int64),
        message_ids=_string_array(message_ids),
        is_assistant=np.frombuffer(roles, dtype=np.int64).astype(bool),
        ts=_string_array(ts),
        text=_string_array(text),
        chars=np.frombuffer(chars, dtype=np.int64),
        words=np.frombuffer(words, dtype=np.int64),
    )


def _string_array(column: tuple[bytes, bytes, bytes]) -> pa.Array:
    data, offsets, valid = column
    present = np.frombuffer(valid, dtype=np.bool_)
    nulls = len(present) - int(np.count_nonzero(present))
    bitmap = pa.py_buffer(np.packbits(present, bitorder="little")) if nulls else None
    return pa.StringArray.from_buffers(len(present), pa.py_buffer(offsets), pa.py_buffer(data), bitmap, nulls)


def utf8_ok(s: str) -> bool:
    """Whether ``s`` can be UTF-8 (it has no unpaired surrogate)."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# ---- the compiled path ---------------------------------------------------------------------------


def _native_columns(values: Sequence[Any], what: str) -> Columns:
    chunks, chars, words, changed = _native_work(_as_tuple(values), True, parallel=True)
    if changed:
        _warn(changed, what)
    return chunks, chars, words


def _native_work(
    texts: tuple[Any, ...], with_text: bool, *, parallel: bool = False
) -> tuple[list[pa.Array] | None, np.ndarray, np.ndarray | None, int]:
    """Chunks, chars, words, and how many texts had surrogates; on several threads if ``parallel``."""
    n = len(texts)
    sizes, chars, words = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    run = _run if parallel else _run_here
    changed = sum(run(_textscan.scan, texts, _count_spans(n) if parallel else [(0, n)], sizes, chars, words))
    if not with_text:
        return None, chars, None, changed
    offsets = _offsets(sizes)
    data = _buffer(int(offsets[-1]))
    run(_textscan.encode, texts, _byte_spans(offsets) if parallel else [(0, n)], offsets, data)
    return _arrow_chunks(offsets, data), chars, words, changed


def _as_tuple(values: Sequence[Any]) -> tuple[Any, ...]:
    # A tuple cannot change while _textscan works on it without the GIL.
    return values if type(values) is tuple else tuple(values)


def _count_spans(n: int) -> list[tuple[int, int]]:
    parts = text_threads() if n >= _PARALLEL_MIN_TEXTS else 1
    bounds = [n * k // parts for k in range(parts + 1)]
    return [(lo, hi) for lo, hi in itertools.pairwise(bounds) if lo < hi] or [(0, 0)]


def _byte_spans(offsets: np.ndarray) -> list[tuple[int, int]]:
    n = len(offsets) - 1
    parts = text_threads() if n >= _PARALLEL_MIN_TEXTS else 1
    cuts = np.searchsorted(offsets, [offsets[-1] * k // parts for k in range(1, parts)])
    bounds = sorted({0, n, *(min(int(c), n) for c in cuts)})
    return [(lo, hi) for lo, hi in itertools.pairwise(bounds)] or [(0, 0)]


def _run(fn: Any, texts: tuple[Any, ...], spans: list[tuple[int, int]], *buffers: Any) -> list[Any]:
    """``fn(texts, lo, hi, *buffers)`` for every span, on worker threads when there are several."""
    if len(spans) == 1:
        return _run_here(fn, texts, spans, *buffers)
    futures = [text_pool().submit(fn, texts, lo, hi, *buffers) for lo, hi in spans]
    return [f.result() for f in futures]


def _run_here(fn: Any, texts: tuple[Any, ...], spans: list[tuple[int, int]], *buffers: Any) -> list[Any]:
    return [fn(texts, lo, hi, *buffers) for lo, hi in spans]


# ---- shared --------------------------------------------------------------------------------------


def _buffer(size: int) -> np.ndarray:
    """Writable memory for a batch's UTF-8: its own anonymous map, in ordinary pages.

    Measured here, the first frame of a process took 1.5 s this way against 2.0–2.9 s from NumPy
    or Arrow's pool, whose huge pages the kernel must first compact.
    """
    if size == 0:
        return np.empty(0, dtype=np.uint8)
    return np.frombuffer(mmap.mmap(-1, size), dtype=np.uint8)


def _offsets(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _arrow_chunks(offsets: np.ndarray, data: Any) -> list[pa.Array]:
    """Arrow string arrays over ``data`` (UTF-8, zero-copy), cut so that each holds under 2 GiB."""
    view = memoryview(data).cast("B")
    n = len(offsets) - 1
    chunks: list[pa.Array] = []
    lo = 0
    while lo < n or not chunks:
        base = int(offsets[lo])
        hi = min(n, max(lo + 1, int(np.searchsorted(offsets, base + _MAX_CHUNK_BYTES, "right")) - 1))
        local = offsets[lo : hi + 1] - base
        if local[-1] > _MAX_CHUNK_BYTES:
            raise pa.ArrowCapacityError(f"a text of {local[-1]} bytes is more than a string column holds")
        chunks.append(
            pa.StringArray.from_buffers(
                hi - lo, pa.py_buffer(local.astype(np.int32)), pa.py_buffer(view[base : int(offsets[hi])])
            )
        )
        lo = hi
    return chunks


def _fixed(values: Sequence[Any], what: str) -> list[Any]:
    """``values`` with unpaired surrogates replaced, and a warning saying how many changed."""
    if not set(map(type, values)) <= {str, type(None)}:
        raise TypeError(f"a {what} value is not a string")
    fixed = [v if v is None or v.isascii() or utf8_ok(v) else _replace_surrogates(v) for v in values]
    _warn(sum(1 for a, b in zip(values, fixed, strict=True) if a is not b), what)
    return fixed


_gathered: list[Counter[str]] = []  # the counts of the innermost :func:`surrogates_summed` block, if any


@contextlib.contextmanager
def surrogates_summed() -> Iterator[None]:
    """Inside the block (whatever thread reads), texts with unpaired surrogates are counted, not warned
    about one batch at a time; one warning with the total follows the block."""
    counts: Counter[str] = Counter()
    _gathered.append(counts)
    try:
        yield
    finally:
        _gathered.remove(counts)
    for what, n in counts.items():
        _warn(n, what, stacklevel=3)


def _warn(n: int, what: str, stacklevel: int = 5) -> None:
    if _gathered:
        _gathered[-1][what] += n
        return
    warnings.warn(
        f"{count(n, f'{what} value')} {'contains' if n == 1 else 'contain'} unpaired surrogates; replaced by U+FFFD",
        UnicodeWarning,
        stacklevel=stacklevel,
    )


def _replace_surrogates(s: str) -> str:
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
