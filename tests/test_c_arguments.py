"""The C helpers check their arguments: a call no caller makes is refused or answered "not the plain
case", never a write outside the buffers."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from memvelope_tools._frames import text
from memvelope_tools._json import elements

_scan = elements._native
_textscan = text._textscan
_NATIVE_REQUIRED = os.environ.get("MEMVELOPE_REQUIRE_NATIVE") == "1"
needs_scan = pytest.mark.skipif(_scan is None and not _NATIVE_REQUIRED, reason="C scanner not built")
needs_textscan = pytest.mark.skipif(_textscan is None and not _NATIVE_REQUIRED, reason="C text helper not built")


@needs_scan
@pytest.mark.parametrize("base", [-1, -5000, elements.LIMIT + 1, 2**31 - 1])
def test_scan_refuses_a_base_out_of_range(base: int):
    with pytest.raises(ValueError, match="out of range"):
        _scan.scan(b"[[[[1]]]]", 0, elements.BEGIN, True, 1 << 62, base)


@needs_scan
def test_scan_takes_every_base_in_range():
    doc = b"[" * 3 + b"1" + b"]" * 3
    assert _scan.scan(doc, 0, elements.BEGIN, True, 1 << 62, 0)[3] is None
    too_deep = _scan.scan(doc, 0, elements.BEGIN, True, 1 << 62, elements.LIMIT - 2)[3]
    assert too_deep is not None and too_deep[0] == elements.E_DEEP


CONV = {
    "id": "c1",
    "title": "a title",
    "created_at": None,
    "updated_at": None,
    "messages": [{"id": "m1", "role": "user", "ts": None, "text": "word " * 400}],
}


def _spans(*pairs: tuple[int, int]) -> np.ndarray:
    return np.array(pairs, dtype=np.int64).reshape(-1)


@needs_textscan
def test_extract_reads_a_whole_span():
    buf = json.dumps(CONV, separators=(",", ":")).encode()
    out = _textscan.extract(buf, _spans((0, len(buf))))
    assert out is not None
    data, _, _ = out[8]  # the messages' texts: (data, offsets, valid)
    assert bytes(data) == ("word " * 400).encode()


@needs_textscan
@pytest.mark.parametrize("end", [1, 20, 60, -2])
def test_extract_gives_up_on_a_span_shorter_than_its_conversation(end: int):
    buf = json.dumps(CONV, separators=(",", ":")).encode()
    stop = end if end > 0 else len(buf) + end
    assert _textscan.extract(buf, _spans((0, stop))) is None


@needs_textscan
def test_extract_gives_up_on_a_span_longer_than_its_conversation():
    one = json.dumps(CONV, separators=(",", ":"))
    buf = ("[" + one + "," + one + "]").encode()
    assert _textscan.extract(buf, _spans((1, len(buf) - 1))) is None  # two conversations as one span
    assert _textscan.extract(buf, _spans((1, 1 + len(one)), (2 + len(one), len(buf) - 1))) is not None


@needs_textscan
@pytest.mark.parametrize("span", [(-1, 10), (5, 4), (0, 10**9)])
def test_extract_refuses_spans_outside_the_buffer(span: tuple[int, int]):
    buf = json.dumps(CONV).encode()
    with pytest.raises(ValueError, match="within buf"):
        _textscan.extract(buf, _spans(span))
