"""The C helpers called directly with random buffers, spans, offsets and states: every call is refused
(ValueError, IndexError, TypeError) or answered, and none reads outside what it was given.

The bytes that extract, encode and the JSON scanner are given end where an inaccessible page begins, so a
read or write past their end stops the process whether or not the helpers were built with AddressSanitizer;
``make sanitize`` runs this file under AddressSanitizer and UndefinedBehaviorSanitizer too. Example counts
scale with ``MEMVELOPE_FUZZ_EXAMPLES`` (``make fuzz``).
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvelope_tools._frames import text
from memvelope_tools._json import elements
from memvelope_tools._topic_units import MAX_WORD, _characters

_textscan = text._textscan
_scan = elements._native
_NATIVE_REQUIRED = os.environ.get("MEMVELOPE_REQUIRE_NATIVE") == "1"
needs_textscan = pytest.mark.skipif(_textscan is None and not _NATIVE_REQUIRED, reason="C text helper not built")
needs_scan = pytest.mark.skipif(_scan is None and not _NATIVE_REQUIRED, reason="C scanner not built")
needs_guard = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="guard pages are set with mprotect")

EXAMPLES = max(100, int(os.environ.get("MEMVELOPE_FUZZ_EXAMPLES", "0")) // 10)
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
_PAGE = mmap.PAGESIZE
_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


class Guarded:
    """``data`` in memory that ends where an inaccessible page begins: ``view`` is exactly ``data``."""

    def __init__(self, data: bytes) -> None:
        pages = (len(data) + _PAGE - 1) // _PAGE
        self.map = mmap.mmap(-1, (pages + 1) * _PAGE)
        self.base = ctypes.addressof(ctypes.c_char.from_buffer(self.map))
        assert _libc is not None
        if _libc.mprotect(ctypes.c_void_p(self.base + pages * _PAGE), _PAGE, 0) != 0:  # PROT_NONE
            raise OSError(ctypes.get_errno(), "mprotect")
        start = pages * _PAGE - len(data)
        self.map[start : pages * _PAGE] = data
        self.view = memoryview(self.map)[start : pages * _PAGE]


# ---- extract -------------------------------------------------------------------------------------

_PIECES = ["a", " ", "é", "中", "😀", '"', "\\", "/", "\n", "\x01", "\u2028", "null", "{", "]"]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=10).map("".join)
_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=2),
    max_leaves=5,
)


@st.composite
def _conversation_text(draw: st.DrawFn) -> bytes:
    """One conversation of the envelope's shape, as JSON text (escaped or not, spaced or not)."""
    messages = [
        {
            "id": draw(_TEXT),
            "role": draw(st.sampled_from(["user", "assistant"])),
            "ts": draw(st.none() | st.just("2025-01-01T00:00:00.000Z")),
            "text": draw(_TEXT),
            **draw(st.dictionaries(st.sampled_from(["meta", "x"]), _VALUE, max_size=1)),
        }
        for _ in range(draw(st.integers(0, 3)))
    ]
    conv = {
        "id": draw(st.none() | _TEXT),
        "title": draw(_TEXT),
        "created_at": None,
        "updated_at": draw(st.none() | _TEXT),
        "messages": messages,
        **draw(st.dictionaries(st.sampled_from(["project", "y"]), _VALUE, max_size=1)),
    }
    separators = draw(st.sampled_from([(",", ":"), (", ", ": ")]))
    return json.dumps(conv, ensure_ascii=draw(st.booleans()), separators=separators).encode("utf-8", "surrogatepass")


@st.composite
def _mutated(draw: st.DrawFn) -> bytes:
    """Conversations' text, then cut short, a byte changed, a byte added, or as it is."""
    data = b",".join(draw(st.lists(_conversation_text(), min_size=1, max_size=3)))
    for _ in range(draw(st.integers(0, 3))):
        how = draw(st.sampled_from(["cut", "change", "insert"]))
        at = draw(st.integers(0, len(data)))
        byte = bytes([draw(st.sampled_from([0x22, 0x5C, 0x75, 0x7B, 0x7D, 0x5B, 0x5D, 0xC3, 0xE2, 0xF0, 0x80, 0x20]))])
        if how == "cut":
            data = data[:at]
        elif how == "change":
            data = data[:at] + byte + data[at + 1 :]
        else:
            data = data[:at] + byte + data[at:]
    return data


@st.composite
def _spans(draw: st.DrawFn, size: int) -> list[tuple[int, int]]:
    """Spans within ``size`` bytes, most of them ending at its end (where the guard page is)."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        end = draw(st.sampled_from([size, size, draw(st.integers(0, size))]))
        out.append((draw(st.integers(0, end)), end))
    return out


def _pairs(spans: list[tuple[int, int]]) -> np.ndarray:
    return np.array(spans, dtype=np.int64).reshape(-1)


def _check_columns(out: Any, n_spans: int) -> None:
    assert isinstance(out, tuple) and len(out) == 11
    counts = np.frombuffer(out[4], dtype=np.int64)
    assert len(counts) == n_spans
    for k in (0, 1, 2, 3, 5, 7, 8):
        data, offsets, valid = out[k]
        ends = np.frombuffer(offsets, dtype=np.int32)
        assert len(ends) == len(valid) + 1 and ends[0] == 0 and ends[-1] == len(data)
        bytes(data).decode("utf-8")  # what is taken is UTF-8


@needs_textscan
@needs_guard
@FUZZ
@given(data=_mutated(), seed=st.data())
def test_extract_reads_only_within_its_spans(data: bytes, seed: st.DataObject) -> None:
    spans = seed.draw(_spans(len(data)))
    guarded = Guarded(data)
    out = _textscan.extract(guarded.view, _pairs(spans))
    if out is not None:
        _check_columns(out, len(spans))
    # What lies outside the spans changes nothing: the same spans in other surroundings give the same.
    inside = np.zeros(len(data), dtype=bool)
    for start, end in spans:
        inside[start:end] = True
    other = bytes(b if inside[i] else 0x22 for i, b in enumerate(data))
    assert _textscan.extract(Guarded(other).view, _pairs(spans)) == out


@needs_textscan
@needs_guard
@FUZZ
@given(conversation=_conversation_text())
def test_extract_takes_every_whole_conversation_and_gives_up_on_any_cut(conversation: bytes) -> None:
    whole = _textscan.extract(Guarded(conversation).view, _pairs([(0, len(conversation))]))
    assert whole is not None
    _check_columns(whole, 1)
    data, _, _ = whole[1]
    assert bytes(data).decode("utf-8") == json.loads(conversation)["title"]
    for cut in range(1, len(conversation)):
        assert _textscan.extract(Guarded(conversation[:cut]).view, _pairs([(0, cut)])) is None


@needs_textscan
@FUZZ
@given(
    size=st.integers(0, 40),
    values=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=7),
    misalign=st.booleans(),
)
def test_extract_refuses_spans_that_are_not_pairs_within_the_buffer(
    size: int, values: list[int], misalign: bool
) -> None:
    buf = b"{" * size
    raw = np.array(values, dtype=np.int64).tobytes()
    spans = memoryview(b"\0" + raw)[1:] if misalign else raw  # int64s at an odd address too
    pairs = list(zip(values[0::2], values[1::2], strict=False))
    fits = len(values) % 2 == 0 and all(0 <= a <= b <= size for a, b in pairs)
    if fits:
        out = _textscan.extract(buf, spans)
        assert (out is None) == bool(pairs)  # no conversation is "{{{", and no span gives empty columns
    else:
        with pytest.raises(ValueError, match="spans must"):
            _textscan.extract(buf, spans)


# ---- scan and encode -----------------------------------------------------------------------------

_STRS = st.lists(st.text(alphabet=st.sampled_from(["a", " ", "é", "\u3000", "😀", "\ud800", "\udfff"]), max_size=9))


def _shown(s: str) -> str:
    """``s`` as the text columns hold it: a surrogate pair as its character, any other surrogate as U+FFFD."""
    return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _int64s(n: int, misalign: bool) -> np.ndarray:
    """``n`` int64s, at an address that is not a multiple of 8 when ``misalign``."""
    raw = np.zeros(8 * n + 8, dtype=np.uint8)
    return raw[1 : 1 + 8 * n].view(np.int64) if misalign else raw[: 8 * n].view(np.int64)


@needs_textscan
@FUZZ
@given(
    texts=_STRS,
    start=st.integers(-2, 12),
    stop=st.integers(-2, 12),
    room=st.integers(0, 12),
    misalign=st.booleans(),
    not_str=st.booleans(),
)
def test_scan_is_refused_or_counts_each_text(
    texts: list[str], start: int, stop: int, room: int, misalign: bool, not_str: bool
) -> None:
    items: tuple[Any, ...] = (*texts, 7) if not_str else tuple(texts)
    sizes, chars, words = (_int64s(room, misalign) for _ in range(3))
    fits = 0 <= start <= stop <= len(items) and stop <= room and sizes.ctypes.data % 8 == 0
    if not fits:
        with pytest.raises((ValueError, IndexError)):
            _textscan.scan(items, start, stop, sizes, chars, words)
        return
    if not_str and start <= len(texts) < stop:
        with pytest.raises(TypeError, match=f"item {len(texts)}"):
            _textscan.scan(items, start, stop, sizes, chars, words)
        return
    _textscan.scan(items, start, stop, sizes, chars, words)
    for i in range(start, stop):
        shown = _shown(texts[i])
        assert (sizes[i], chars[i], words[i]) == (len(shown.encode()), len(shown), len(shown.split()))


@needs_textscan
@needs_guard
@FUZZ
@given(
    texts=_STRS,
    start=st.integers(-2, 12),
    stop=st.integers(-2, 12),
    offsets=st.lists(st.integers(-3, 60), max_size=12),
    exact=st.booleans(),
    out_size=st.integers(0, 60),
    misalign=st.booleans(),
)
def test_encode_is_refused_or_writes_within_its_output(
    texts: list[str], start: int, stop: int, offsets: list[int], exact: bool, out_size: int, misalign: bool
) -> None:
    items = tuple(texts)
    if exact:  # the offsets the texts' UTF-8 sizes give, so that most calls are answered
        offsets = np.cumsum([0, *(len(_shown(t).encode()) for t in texts)]).tolist()
        out_size = max(out_size, offsets[-1])
    bounds = _int64s(len(offsets), misalign)
    bounds[:] = offsets
    out = Guarded(b"\0" * out_size)
    try:
        _textscan.encode(items, start, stop, bounds, out.view)
    except (ValueError, IndexError):
        return
    assert 0 <= start <= stop <= len(items) and bounds.ctypes.data % 8 == 0
    for i in range(start, stop):
        written = bytes(out.view[offsets[i] : offsets[i + 1]])
        assert written == _shown(texts[i]).encode()


# ---- words ---------------------------------------------------------------------------------------

_WORD_PIECES = [
    *(
        p.encode()
        for p in ["ab", "Ab", " ", "`", "```", "http://", "www.", "中文", "テ", "ひ", "é", "\u0301", "😀", "\n"]
    ),
    b"\xc3",  # pieces of characters: the texts are not UTF-8
    b"\xe4\xb8",
    b"\xf0",
    b"\xed\xa0\x80",
]


@needs_textscan
@needs_guard
@FUZZ
@given(pieces=st.lists(st.sampled_from(_WORD_PIECES), max_size=30), seed=st.data())
def test_words_is_answered_within_its_texts(pieces: list[bytes], seed: st.DataObject) -> None:
    # Texts, some of them cut inside a character (not UTF-8), the last one ending at a guard page.
    data = b"".join(pieces)
    cuts = sorted(seed.draw(st.lists(st.integers(0, len(data)), max_size=4)))
    offsets = np.array([0, *cuts, len(data)], dtype=np.int64)
    owners = np.arange(len(offsets) - 1, dtype=np.int64)
    index, blocks = _characters()
    out = _textscan.words(offsets, Guarded(data).view, owners, index, blocks, MAX_WORD, seed.draw(st.booleans()))
    if out is None:
        return
    starts, chars, indices, word_owners, counts = out
    ends = np.frombuffer(starts, dtype=np.int64)
    assert counts is None or (np.frombuffer(counts, dtype=np.float32) >= 1).all()
    assert ends[0] == 0 and ends[-1] == len(chars) and (np.diff(ends) > 0).all()
    bytes(chars).decode("utf-8")  # every word is UTF-8
    found = np.frombuffer(indices, dtype=np.int32)
    assert ((found >= 0) & (found < len(ends) - 1)).all()
    assert set(np.frombuffer(word_owners, dtype=np.int64)) <= set(owners.tolist())


# ---- the JSON scanner ----------------------------------------------------------------------------


@needs_scan
@needs_guard
@FUZZ
@given(
    data=_mutated(),
    pos=st.integers(-2, 400),
    state=st.integers(elements.BEGIN - 1, elements.END + 1),
    final=st.booleans(),
    stop=st.integers(-2, 400),
    base=st.integers(-1, elements.LIMIT + 1),
)
def test_the_json_scanner_is_refused_or_answers_within_its_buffer(
    data: bytes, pos: int, state: int, final: bool, stop: int, base: int
) -> None:
    guarded = Guarded(data)
    try:
        end, state_after, children, error = _scan.scan(guarded.view, pos, state, final, stop, base)
    except ValueError:
        assert not (0 <= pos <= len(data) and elements.BEGIN <= state <= elements.END and 0 <= base <= elements.LIMIT)
        return
    assert 0 <= end <= len(data) and elements.BEGIN <= state_after <= elements.END
    assert len(children) % 6 == 0 and all(-1 <= c <= len(data) for c in children[0::6])
    assert error is None or 0 <= error[1] <= len(data)
