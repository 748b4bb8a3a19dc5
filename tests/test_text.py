"""Texts as Arrow columns (memvelope_tools._text): the frames' text, chars and words against plain Python."""

from __future__ import annotations

import warnings
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvelope_tools import _text
from memvelope_tools import frames as frames_module
from memvelope_tools.frames import conversations_frame, messages_frame

# CJK, emoji (astral), NBSP, tabs, newlines, NEL, the ASCII separators str.split() knows, NUL,
# ideographic and zero-width spaces (only the first is whitespace), accents, lone surrogates.
TRICKY = ["a", "Z", "é", "中", "文", "😀", "👩\u200d💻", " ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x1f",
          "\x00", "\x85", "\xa0", "\u1680", "\u2000", "\u200a", "\u200b", "\u2028", "\u2029", "\u202f",
          "\u205f", "\u3000", "\ufeff", "’", "—", "\ud800", "\udfff", "\ud83d"]


def _fffd(s: str) -> str:
    """The module's rule: each unpaired surrogate becomes U+FFFD (a valid pair stays one character)."""
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _envelope(texts: list[str]) -> dict[str, Any]:
    messages = [{"id": f"m{i + 1}", "role": "user" if i % 2 == 0 else "assistant", "ts": None, "text": t}
                for i, t in enumerate(texts)]
    half = len(messages) // 2
    return {"memvelope": "envelope-v0", "meta": {"source_provider": "chatgpt"},
            "conversations": [{"id": "a", "title": "t", "created_at": None, "updated_at": None,
                               "messages": messages[:half]},
                              {"id": "b", "title": "t", "created_at": None, "updated_at": None,
                               "messages": messages[half:]}]}


texts_strategy = st.lists(st.lists(st.sampled_from(TRICKY), max_size=15).map("".join), max_size=30)


@settings(max_examples=150, deadline=None)
@given(texts_strategy, st.sampled_from([(1 << 16, 2**31 - 1), (3, 5), (1, 1)]))
def test_text_chars_and_words_equal_python(texts: list[str], sizes: tuple[int, int]) -> None:
    piece, max_bytes = sizes
    expected = [_fffd(t) for t in texts]
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore", UnicodeWarning)
        mp.setattr(frames_module, "_BATCH", piece)
        mp.setattr(_text, "_MAX_CHUNK_BYTES", max(max_bytes, max((len(t.encode()) for t in expected), default=0)))
        msgs = messages_frame(_envelope(texts))
        convs = conversations_frame(_envelope(texts))
    assert msgs["text"].tolist() == expected
    assert msgs["chars"].tolist() == [len(t) for t in expected]
    assert msgs["words"].tolist() == [len(t.split()) for t in expected]
    assert convs["chars"].sum() == sum(len(t) for t in expected)


def test_unpaired_surrogates_are_counted_once_per_value_in_the_warning() -> None:
    texts = ["ok", "a\ud800b", "\udfff", "fine 😀"]
    with pytest.warns(UnicodeWarning, match="2 text value"):
        msgs = messages_frame(_envelope(texts))
    assert msgs["text"].tolist() == ["ok", "a\ufffdb", "\ufffd", "fine 😀"]
    assert msgs["chars"].tolist() == [2, 3, 1, 6] and msgs["words"].tolist() == [1, 1, 1, 2]


def test_text_columns_split_at_the_byte_limit_and_refuse_a_longer_text(monkeypatch: pytest.MonkeyPatch) -> None:
    encoded = [s.encode() for s in ["ab", "中文", "", "😀x", "c"]]  # 2, 6, 0, 5, 1 bytes
    monkeypatch.setattr(_text, "_MAX_CHUNK_BYTES", 6)
    chunks, chars, words = _text.text_columns(encoded)
    assert [len(c) for c in chunks] == [1, 2, 2]  # "ab" | "中文", "" | "😀x", "c"
    assert all(c.type == pa.string() and c.nbytes for c in chunks)
    assert pa.chunked_array(chunks).to_pylist() == ["ab", "中文", "", "😀x", "c"]
    assert pa.chunked_array(chars).to_pylist() == [2, 2, 0, 2, 1] and words.to_pylist() == [1, 1, 0, 1, 1]
    monkeypatch.setattr(_text, "_MAX_CHUNK_BYTES", 4)
    with pytest.raises(pa.ArrowCapacityError):
        _text.text_columns(encoded)


def test_no_texts_give_one_empty_chunk() -> None:
    chunks, chars, words = _text.text_columns([])
    assert [len(c) for c in chunks] == [0] and [len(c) for c in chars] == [0] and len(words) == 0


def test_a_text_that_is_not_a_string_is_a_type_error_for_the_frames_to_report() -> None:
    with pytest.raises(TypeError):
        _text.utf8(["a", 3], "text")
