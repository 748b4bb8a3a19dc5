"""The words topics counts: the compiled helper finds exactly the words the Arrow kernels of
``split_words`` find (the rule), in the same order, with the same counts, on any text."""

from __future__ import annotations

import os
import sys
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest
from conftest import engine_running
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import memvelope_tools as mv
from memvelope_tools._frames import text
from memvelope_tools._topic_units import MAX_WORD, _characters, _split_compiled, counted_words, split_words

_textscan = text._textscan
needs_textscan = pytest.mark.skipif(
    _textscan is None and os.environ.get("MEMVELOPE_REQUIRE_NATIVE") != "1", reason="C text helper not built"
)
EXAMPLES = max(100, int(os.environ.get("MEMVELOPE_FUZZ_EXAMPLES", "0")) // 10)

# Pieces the rule treats in its own ways: case (also where lower-casing changes a character's size, or
# maps a title-case or a sign to a letter), marks written apart, apostrophes, digits, code, URLs, every
# kind of whitespace, hiragana, katakana (with its middle dot and long-vowel mark), ideographs (stop
# characters among them, and code points of their ranges no character has), letters outside the BMP,
# scripts with marks, and punctuation of every sort.
PIECES = [
    "Hello",
    "WORLD",
    "naïve",
    "nai\u0308ve",
    "e\u0301cole",
    "ÉCOLE",
    "İstanbul",
    "ΣΊΣΥΦΟΣ",
    "straße",
    "ẞ",
    "\u212a",  # Kelvin sign: lower-cases to k
    "Ⱥⱥ",
    "ǅemal",
    "don't",
    "l'été",
    "it’s",
    "a1b2",
    "12345",
    "x" * (MAX_WORD - 1),
    "y" * MAX_WORD,
    "z" * (MAX_WORD + 1),
    "`",
    "``",
    "```",
    "`code`",
    "```py\nx = 1\n```",
    "`a\nb`",
    "http://",
    "https://",
    "http://x.y/z?q=1",
    "HTTPS://UPPER.CASE",
    "www.",
    "www.example.org",
    "wwww.x",
    "h",
    "w",
    " ",
    "\t",
    "\n",
    "\x0b",
    "\x0c",
    "\r",
    "\x1c",
    "\x1f",
    "\x85",
    "\xa0",
    "\u1680",
    "\u2003",
    "\u200b",
    "\u180e",
    "\u2028",
    "\u202f",
    "\u3000",
    "ひらがな",
    "テスト",
    "データ・ベース",
    "ラーメン",
    "\u30a0",
    "冒泡排序",
    "我的电脑是新的",
    "中",
    "中文" * 21,
    "\u9fff\u4e00",
    "\ufada\u4e2d\u6587",
    "\u3400\u4dbf",
    "\uf900",
    "ＡＢＣｄｅｆ",
    "𝐀𝐁𝐂",
    "𐐀𐐨",
    "😀",
    "مرحبا",
    "שָׁלוֹם",
    "नमस्ते",
    "ภาษาไทย",
    "한국어",
    "Привет",
    "_",
    "-",
    ".,;:!?",
    "©®™",
    "\x00",
    "\U000e0041",
    "\U0010ffff",
]
_TEXT = st.lists(st.sampled_from(PIECES) | st.text(max_size=6), max_size=12).map("".join)


def _reference(texts: list[str], owners: np.ndarray) -> tuple[list[str], list[int]]:
    words, found = split_words(pa.array(texts, pa.large_string()), owners)
    return words.to_pylist(), found.tolist()


def _compiled(texts: list[str], owners: np.ndarray) -> tuple[list[str], list[int], list[str]]:
    found = _split_compiled(pa.array(texts, pa.large_string()), owners, counted=False)
    assert found is not None
    dictionary, indices, word_owners, counts = found
    assert (counts == 1).all()
    return dictionary.take(pa.array(indices)).to_pylist(), word_owners.tolist(), dictionary.to_pylist()


@needs_textscan
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(_TEXT, min_size=1, max_size=8), data=st.data())
@example(texts=["Hello WORLD, naïve café `code` l'été http://x.y ok", "冒泡排序 abc テスト", "x 中文字"], data=None)
def test_the_helper_finds_the_words_the_arrow_kernels_find(texts: list[str], data: st.DataObject | None) -> None:
    steps = [0] * len(texts) if data is None else data.draw(st.lists(st.integers(0, 2), min_size=len(texts)))
    owners = np.cumsum(np.asarray(steps[: len(texts)], dtype=np.int64)) + 5
    expected, expected_owners = _reference(texts, owners)
    words, word_owners, dictionary = _compiled(texts, owners)
    assert words == expected
    assert word_owners == expected_owners
    assert dictionary == list(dict.fromkeys(expected))  # the distinct words, in the order first met


@needs_textscan
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(_TEXT, min_size=1, max_size=8), data=st.data())
def test_both_engines_count_each_word_of_each_unit_alike(texts: list[str], data: st.DataObject) -> None:
    steps = data.draw(st.lists(st.integers(0, 2), min_size=len(texts), max_size=len(texts)))
    owners = np.cumsum(np.asarray(steps, dtype=np.int64))
    array = pa.array(texts, pa.large_string())
    counted = {}
    for name in ("c", "python"):
        with engine_running(name, "words"):
            dictionary, indices, units, counts = counted_words(array, owners)
        words = dictionary.to_pylist()
        pairs = [(int(u), words[i]) for u, i in zip(units, indices, strict=True)]
        assert len(set(pairs)) == len(pairs)  # each unit and word once
        counted[name] = (words, dict(zip(pairs, counts.tolist(), strict=True)))
    assert counted["c"] == counted["python"]
    reference, reference_owners = _reference(texts, owners)
    assert counted["c"][1] == dict(Counter(zip(reference_owners, reference, strict=True)))


@pytest.mark.slow
def test_every_code_point_is_split_as_the_arrow_kernels_split_it() -> None:
    if _textscan is None:
        pytest.skip("C text helper not built")
    # Each code point alone, doubled, between letters, between ideographs and ending the text: its case,
    # whether it is a space, a letter, a mark, kana or an ideograph all show in the words found.
    points = [c for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000]
    texts = [f"{chr(c)} {chr(c)}{chr(c)} a{chr(c)}b 中{chr(c)}文 zz{chr(c)}" for c in points]
    for start in range(0, len(texts), 1 << 16):
        part = texts[start : start + (1 << 16)]
        owners = np.arange(start, start + len(part), dtype=np.int64)
        assert _compiled(part, owners)[:2] == _reference(part, owners), f"code points from U+{points[start]:04X}"


def test_the_table_of_code_points_is_made_once_and_holds_few_distinct_blocks() -> None:
    if _textscan is None:
        pytest.skip("C text helper not built")
    index, blocks = _characters()
    assert _characters()[0] is index
    assert index.dtype == np.uint16 and len(index) == 0x110000 // 256
    assert blocks.dtype == np.uint32 and len(blocks) % 256 == 0 and int(index.max()) == len(blocks) // 256 - 1
    assert len(blocks) < 1 << 20  # far fewer distinct blocks than blocks


@needs_textscan
def test_a_text_that_is_not_utf8_is_left_to_the_arrow_route() -> None:
    index, blocks = _characters()
    for bad in (b"caf\xe9", b"\xed\xa0\x80", b"ab\xf0\x9f", b"\xc0\xaf"):
        data = b"fine words " + bad
        offsets = np.array([0, 11, len(data)], dtype=np.int64)
        assert _textscan.words(offsets, data, np.arange(2, dtype=np.int64), index, blocks, MAX_WORD, True) is None


@needs_textscan
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"offsets": np.array([0, 99], dtype=np.int64)}, "within data"),
        ({"offsets": np.array([5, 2], dtype=np.int64)}, "within data"),
        ({"offsets": np.zeros(0, dtype=np.int64)}, "offsets"),
        ({"owners": np.zeros(3, dtype=np.int64)}, "one int64 per text"),
        ({"index": np.zeros(10, dtype=np.uint16)}, "4352 uint16"),
        ({"index": np.full(0x1100, 60000, dtype=np.uint16)}, "block blocks lacks"),
        ({"blocks": np.zeros(100, dtype=np.uint32)}, "whole blocks"),
        ({"max_word": 0}, "max_word"),
    ],
)
def test_the_helper_refuses_arguments_no_caller_gives(change: dict, message: str) -> None:
    index, blocks = _characters()
    args = {
        "offsets": np.array([0, 4], dtype=np.int64),
        "data": b"word",
        "owners": np.zeros(1, dtype=np.int64),
        "index": index,
        "blocks": blocks,
        "max_word": MAX_WORD,
    }
    args.update(change)
    with pytest.raises(ValueError, match=message):
        _textscan.words(*args.values(), True)


@pytest.mark.parametrize("unit", ["conversation", "message"])
def test_the_bundled_samples_give_the_same_counts_and_topics_with_either_engine(unit: str) -> None:
    envs = [mv.convert(mv.sample_path(name)) for name in ("chatgpt", "claude")]
    found = {}
    for name in ("c", "python"):
        with engine_running(name, "words"):
            found[name] = mv.topics(envs, unit=unit)
    c, python = found["c"], found["python"]
    assert c.terms.equals(python.terms)
    assert c.assignments.equals(python.assignments)


def test_without_the_helper_the_arrow_route_counts_the_words(monkeypatch: pytest.MonkeyPatch) -> None:
    from memvelope_tools import _engine

    monkeypatch.setattr(text, "_textscan", None)
    before = _engine.ran().get(("words", "python"), 0)
    dictionary, indices, units, counts = counted_words(pa.array(["Tomato tomato SOUP", "soup"]), np.array([0, 1]))
    assert _engine.ran().get(("words", "python"), 0) == before + 1
    found = {(int(u), dictionary[int(i)].as_py()): float(c) for u, i, c in zip(units, indices, counts, strict=True)}
    assert found == {(0, "tomato"): 2.0, (0, "soup"): 1.0, (1, "soup"): 1.0}
