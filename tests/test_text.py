"""Texts as Arrow columns (memvelope_tools._frames.text): text, chars and words against plain Python.

Every test runs with each engine (see memvelope_tools._engine): ``"c"``, the compiled helper
(``_textscan``), and ``"python"``, the NumPy path that stands in for it when no C compiler was
there at install; each asserts that the engine it asked for is the one that ran.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import ENGINES, engine_running
from hypothesis import given, settings
from hypothesis import strategies as st

from memvelope_tools import _engine
from memvelope_tools._frames import flatten as flatten_module
from memvelope_tools._frames import text as _text
from memvelope_tools._frames.envelopes import conversations_frame, messages_frame
from memvelope_tools._json.elements import FIELDS
from memvelope_tools.errors import FormatError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
NATIVE = _text._textscan

# CJK, emoji (astral), NBSP, tabs, newlines, NEL, the ASCII separators str.split() knows, NUL,
# ideographic and zero-width spaces (only the first is whitespace), accents, lone surrogates.
TRICKY = [
    "a",
    "Z",
    "é",
    "ÿ",
    "中",
    "文",
    "😀",
    "👩\u200d💻",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1f",
    "\x00",
    "\x85",
    "\xa0",
    "\u1680",
    "\u2000",
    "\u200a",
    "\u200b",
    "\u2028",
    "\u2029",
    "\u202f",
    "\u205f",
    "\u3000",
    "\ufeff",
    "’",
    "—",
    "\ud800",
    "\udfff",
    "\ud83d",
    "\ude00",
    "\udbff",
    "\udc00",
    "abcdefghij",
    "0123456789abcdef",
]


def _fffd(s: str) -> str:
    """The module's rule: each unpaired surrogate becomes U+FFFD (a valid pair stays one character)."""
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _has_surrogate(s: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in s)


@pytest.fixture(params=ENGINES)
def impl(request: pytest.FixtureRequest) -> Iterator[str]:
    with engine_running(request.param, "text"):
        yield request.param


def _columns(texts: list[str]) -> tuple[list[str], list[int], list[int]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnicodeWarning)
        chunks, chars, words = _text.text_columns(texts, "text")
    assert all(c.type == pa.string() for c in chunks)
    return pa.chunked_array(chunks, type=pa.string()).to_pylist(), chars.tolist(), words.tolist()


def _check(texts: list[str]) -> None:
    expected = [_fffd(t) for t in texts]
    assert _columns(texts) == (expected, [len(t) for t in expected], [len(t.split()) for t in expected])
    assert _text.char_counts(texts).tolist() == [len(t) for t in expected]


def test_the_compiled_helper_is_built_where_make_test_runs() -> None:
    if not os.environ.get("MEMVELOPE_REQUIRE_NATIVE"):
        pytest.skip("only `make test` requires the C helper (MEMVELOPE_REQUIRE_NATIVE=1)")
    assert NATIVE is not None, "memvelope_tools._frames._textscan was not built (pip install printed why)"


# 150 examples per path by default; `make fuzz` (MEMVELOPE_FUZZ_EXAMPLES=20000) runs 1,000.
EXAMPLES = max(150, int(os.environ.get("MEMVELOPE_FUZZ_EXAMPLES", "0")) // 20)
texts_strategy = st.lists(st.lists(st.sampled_from(TRICKY), max_size=15).map("".join), max_size=30)


@pytest.mark.slow
@pytest.mark.parametrize("which", ENGINES)
@settings(max_examples=EXAMPLES, deadline=None)
@given(texts=texts_strategy)
def test_text_chars_and_words_equal_python(which: str, texts: list[str]) -> None:
    with engine_running(which, "text"):
        _check(texts)


@pytest.mark.slow
def test_every_code_point_as_a_separator(impl: str) -> None:
    texts = [f"a{chr(c)}b" for c in range(0x110000)]
    _, chars, words = _quiet(texts)
    surrogate = np.zeros(0x110000, dtype=bool)
    surrogate[0xD800:0xE000] = True
    expected_words = np.array([len(t.split()) for t in texts])
    assert np.array_equal(words, expected_words)
    assert np.array_equal(chars, np.full(0x110000, 3))
    assert set(np.flatnonzero(expected_words == 2)) == {c for c in range(0x110000) if chr(c).isspace()}
    assert not surrogate[expected_words == 2].any()


def _quiet(texts: list[str]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnicodeWarning)
        return _text.text_columns(texts, "text")


def test_long_texts_of_every_storage_width_on_several_threads(impl: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Lengths around the C scanner's 4096-character blocks and its 8-character ASCII runs; one
    # storage width per text (ASCII, Latin-1, UCS-2, UCS-4), a word often straddling a block edge.
    rng = random.Random(5)
    alphabets = [
        ["a", "bc", " ", "\n", "defgh"],
        ["é", "a", " ", "\xa0", "\x85", "ÿÿ"],
        ["a", "’", " ", "\u3000", "中文", "\u2028", "\ud800", "\ud83d\ude00"],
        ["a", "😀", " ", "\u2000", "é", "\udfff", "\ud83d"],
    ]
    texts = []
    for n in [0, 1, 7, 8, 9, 15, 16, 17, 4095, 4096, 4097, 8191, 8192, 8193, 20000]:
        for alphabet in alphabets:
            text = ""
            while len(text) < n:
                text += rng.choice(alphabet)
            texts.append(text[:n])
    texts.append("x" * 4096 + "y" * 4096)  # one word across a block edge
    texts.append(" " * 4096 + "z")
    monkeypatch.setattr(_text, "_PARALLEL_MIN_TEXTS", 1)
    monkeypatch.setattr(_text, "text_threads", lambda: 3)
    _check(texts)


def test_unpaired_surrogates_are_counted_once_per_value_in_the_warning(impl: str) -> None:
    texts = ["ok", "a\ud800b", "\udfff", "fine 😀", "pair as two \ud83d\ude00"]
    with pytest.warns(UnicodeWarning, match="3 text value"):
        chunks, chars, words = _text.text_columns(texts, "text")
    assert pa.chunked_array(chunks).to_pylist() == ["ok", "a\ufffdb", "\ufffd", "fine 😀", "pair as two 😀"]
    assert chars.tolist() == [2, 3, 1, 6, 13] and words.tolist() == [1, 1, 1, 2, 4]


def test_text_columns_split_at_the_byte_limit_and_refuse_a_longer_text(
    impl: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = ["ab", "中文", "", "😀x", "c"]  # 2, 6, 0, 5, 1 bytes
    monkeypatch.setattr(_text, "_MAX_CHUNK_BYTES", 6)
    chunks, chars, words = _text.text_columns(texts, "text")
    assert [len(c) for c in chunks] == [1, 2, 2]  # "ab" | "中文", "" | "😀x", "c"
    assert all(c.type == pa.string() and c.nbytes for c in chunks)
    assert pa.chunked_array(chunks).to_pylist() == texts
    assert chars.tolist() == [2, 2, 0, 2, 1] and words.tolist() == [1, 1, 0, 1, 1]
    monkeypatch.setattr(_text, "_MAX_CHUNK_BYTES", 4)
    with pytest.raises(pa.ArrowCapacityError):
        _text.text_columns(texts, "text")


def test_no_texts_give_one_empty_chunk(impl: str) -> None:
    chunks, chars, words = _text.text_columns([], "text")
    assert [len(c) for c in chunks] == [0] and len(chars) == 0 and len(words) == 0
    assert len(_text.char_counts([])) == 0


@pytest.mark.parametrize("bad", [3, None, b"bytes", ["list"]])
def test_a_text_that_is_not_a_string_is_a_type_error_for_the_frames_to_report(impl: str, bad: Any) -> None:
    with pytest.raises(TypeError):
        _text.text_columns(["a"] * 3000 + [bad] + ["b"], "text")
    with pytest.raises(TypeError), warnings.catch_warnings():
        warnings.simplefilter("ignore", UnicodeWarning)
        _text.text_columns(["a\ud800", bad], "text")  # after a text that needs U+FFFD
    with pytest.raises(TypeError):
        _text.char_counts(["a", bad])


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UnicodeWarning")
def test_both_paths_give_equal_frames_on_the_fixtures() -> None:
    if NATIVE is None:
        pytest.skip("memvelope_tools._frames._textscan is not built here")
    envelopes = sorted((FIXTURES / "envelope").glob("*/expected.mve.json"))
    with engine_running("c", "columns"):
        native_msgs, native_convs = messages_frame(envelopes), conversations_frame(envelopes)
    with engine_running("python", "text"):
        pd.testing.assert_frame_equal(messages_frame(envelopes), native_msgs)
        pd.testing.assert_frame_equal(conversations_frame(envelopes), native_convs)


def test_frames_in_small_batches_equal_python(impl: str) -> None:
    texts = ["héllo wörld", "", "😀 x\u3000y", "a\ud800", "\t\n", "中文 文"] * 5
    messages = [
        {"id": f"m{i + 1}", "role": "user" if i % 2 == 0 else "assistant", "ts": None, "text": t}
        for i, t in enumerate(texts)
    ]
    env = {
        "memvelope": "envelope-v0",
        "meta": {"source_provider": "chatgpt"},
        "conversations": [
            {
                "id": str(k),
                "title": "t",
                "created_at": None,
                "updated_at": None,
                "messages": messages[k * 6 : (k + 1) * 6],
            }
            for k in range(5)
        ],
    }
    expected = [_fffd(t) for t in texts]
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore", UnicodeWarning)
        mp.setattr(flatten_module, "_BATCH", 7)
        msgs = messages_frame(env)
        convs = conversations_frame(env)
    assert msgs["text"].tolist() == expected
    assert msgs["chars"].tolist() == [len(t) for t in expected]
    assert msgs["words"].tolist() == [len(t.split()) for t in expected]
    assert convs["chars"].tolist() == [sum(len(t) for t in expected[k * 6 : (k + 1) * 6]) for k in range(5)]


@pytest.mark.skipif(NATIVE is None, reason="memvelope_tools._frames._textscan is not built here")
def test_the_helper_refuses_bad_arguments_instead_of_writing_out_of_bounds() -> None:
    texts = ("ab", "中文", "😀")
    n = len(texts)
    sizes, chars, words = (np.zeros(n, dtype=np.int64) for _ in range(3))
    assert NATIVE.scan(texts, 0, n, sizes, chars, words) == 0
    assert sizes.tolist() == [2, 6, 4] and chars.tolist() == [2, 2, 1] and words.tolist() == [1, 1, 1]
    offsets = np.array([0, 2, 8, 12], dtype=np.int64)
    out = np.zeros(12, dtype=np.uint8)
    NATIVE.encode(texts, 0, n, offsets, out)
    assert out.tobytes() == "ab中文😀".encode()
    with pytest.raises(TypeError):
        NATIVE.scan(list(texts), 0, n, sizes, chars, words)  # a list could change without the GIL
    with pytest.raises(IndexError):
        NATIVE.scan(texts, 0, n + 1, sizes, chars, words)
    with pytest.raises(IndexError):
        NATIVE.scan(texts, 2, 1, sizes, chars, words)
    with pytest.raises(ValueError, match="int64"):
        NATIVE.scan(texts, 0, n, sizes[:2], chars, words)
    with pytest.raises(ValueError, match="int64"):
        NATIVE.scan(texts, 0, n, sizes.astype(np.int32), chars, words)
    with pytest.raises(ValueError, match="within"):
        NATIVE.encode(texts, 0, n, np.array([0, 2, 8, 13], dtype=np.int64), out)
    with pytest.raises(ValueError, match="do not match"):
        NATIVE.encode(texts, 0, n, np.array([0, 1, 8, 12], dtype=np.int64), out)
    with pytest.raises(ValueError, match="do not match"):
        NATIVE.encode(texts, 0, n, np.array([0, 3, 8, 12], dtype=np.int64), out)
    with pytest.raises(TypeError):
        NATIVE.encode(texts, 0, n, offsets, b"read-only buffer....")


@pytest.fixture
def pipelined(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every batch's texts go to the worker threads (normally only batches of 2,048 texts or more)."""
    monkeypatch.setattr(_text, "_PARALLEL_MIN_TEXTS", 1)
    monkeypatch.setattr(flatten_module, "_BATCH", 3)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UnicodeWarning")
def test_pipelined_batches_give_the_same_frames(pipelined: None) -> None:
    envelopes = sorted((FIXTURES / "envelope").glob("*/expected.mve.json"))
    msgs, convs = messages_frame(envelopes), conversations_frame(envelopes)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_text, "_PARALLEL_MIN_TEXTS", 1 << 30)
        mp.setattr(flatten_module, "_BATCH", 1 << 16)
        pd.testing.assert_frame_equal(msgs, messages_frame(envelopes))
        pd.testing.assert_frame_equal(convs, conversations_frame(envelopes))


def _many(texts: list[Any]) -> dict[str, Any]:
    messages = [{"id": f"m{i + 1}", "role": "user", "ts": None, "text": t} for i, t in enumerate(texts)]
    return {
        "memvelope": "envelope-v0",
        "meta": {"source_provider": "claude"},
        "conversations": [
            {
                "id": str(k),
                "title": "t",
                "created_at": None,
                "updated_at": None,
                "messages": messages[k * 2 : (k + 1) * 2],
            }
            for k in range((len(texts) + 1) // 2)
        ],
    }


@pytest.mark.parametrize("where", ["dict", "file"])
def test_a_text_that_is_no_string_in_a_later_batch_is_reported_with_its_path(
    pipelined: None, where: str, tmp_path: Path
) -> None:
    texts: list[Any] = [f"text {i}" for i in range(40)]
    texts[32] = "lone \udc00 surrogate"
    texts[33] = 7  # conversation 16, message 1: batches of 3 messages, so the sixth batch
    doc: Any = _many(texts)
    if where == "file":
        doc = tmp_path / "bad.mve.json"
        doc.write_text(__import__("json").dumps(_many(texts)), encoding="utf-8")
    for frame in (messages_frame, conversations_frame):
        with pytest.raises(FormatError) as info:
            frame(doc)
        assert info.value.path == "$.conversations[16].messages[1].text"


def test_the_first_problem_is_reported_even_when_a_later_batch_is_read_first(pipelined: None) -> None:
    texts: list[Any] = [f"text {i}" for i in range(40)]
    texts[4] = None  # conversation 2, message 0: its texts are still being worked on ...
    doc = _many(texts)
    del doc["conversations"][5]["messages"][1]["role"]  # ... when this batch is read
    with pytest.raises(FormatError) as info:
        messages_frame(doc)
    assert info.value.path == "$.conversations[2].messages[0].text"


def test_pipelined_surrogates_warn_once_per_batch_with_their_count(pipelined: None) -> None:
    texts = ["a\ud800", "fine", "\udfff\udfff", "ok", "x", "y\ud83d"]
    with pytest.warns(UnicodeWarning) as record:
        msgs = messages_frame(_many(texts))
    assert sorted(str(w.message).split(" unpaired")[0] for w in record) == [
        "1 text value contains",
        "2 text values contain",
    ]
    assert msgs["text"].tolist() == [_fffd(t) for t in texts]


def test_a_forked_child_starts_its_own_threads(impl: str) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no fork() on this platform")
    texts = [f"word {i} and more" for i in range(5000)]
    _text.text_columns(texts, "text")  # the parent's pool now exists (with the compiled helper)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        signal.alarm(30)  # a child waiting on threads it does not have is killed, not left hanging
        try:
            _, _, words = _text.text_columns(texts, "text")
            os._exit(0 if words.tolist() == [4] * 5000 else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


# ---- envelope files read straight into columns -----------------------------------------------------

WHITESPACE = [chr(c) for c in range(0x110000) if chr(c).isspace()]
LOOKALIKES = ["\u200b", "\u180e", "\ufeff", "\u2060", "’", "—", "“", "é", "中", "😀", "\x7f", "\x80", "\x9f"]


def _envelope(texts: list[str], **extra: Any) -> dict[str, Any]:
    conversations = []
    for k in range(0, len(texts), 5):
        messages = [
            {"id": f"m{i}", "role": ("user", "assistant")[i % 2], "ts": None if i % 3 else "2024-02-29T23:59:59.999Z"}
            | {"text": t}
            for i, t in enumerate(texts[k : k + 5])
        ]
        conversations.append(
            {
                "id": None if k % 10 else f"c{k}\u00e9",
                "title": f't"\\/{k}',
                "created_at": "2024-01-01T00:00:00.000Z",
                "updated_at": None,
                "messages": messages,
                **extra,
            }
        )
    conversations.append({"id": "empty", "title": "", "created_at": None, "updated_at": None, "messages": []})
    return {"memvelope": "envelope-v0", "meta": {"source_provider": "claude"}, "conversations": conversations}


def _frames_from(path: Path, general: bool) -> tuple[Any, Any]:
    """Both frames of ``path``: read straight into columns (engine ``"c"``), or (``general``, engine
    ``"python"``) parsed and flattened."""
    with _engine.engine("python" if general else "c"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UnicodeWarning)
        try:
            return messages_frame(path), conversations_frame(path)
        except FormatError as exc:
            return (exc.reason, exc.path, str(exc)), None


def _parsed_count(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time conversations are parsed rather than read into columns
    (by the number of conversations parsed)."""
    calls: list[int] = []
    parse = flatten_module.parse_spans

    def counting(data: Any, found: list[int]) -> list[Any]:
        calls.append(len(found) // FIELDS)
        return parse(data, found)

    monkeypatch.setattr(flatten_module, "parse_spans", counting)
    return calls


_ESCAPE = re.compile(rb"\\(u[0-9a-fA-F]{4}|.)")


def _escaped(data: bytes) -> bytes:
    """The same JSON value, with every ``/`` written ``\\/`` and every ``\\uXXXX`` escape in upper case."""
    data = data.replace(b"/", b"\\/")  # outside strings JSON text has no "/"
    return _ESCAPE.sub(lambda m: b"\\" + (m[1].upper().replace(b"U", b"u") if m[1][:1] == b"u" else m[1]), data)


@pytest.mark.skipif(NATIVE is None, reason="memvelope_tools._frames._textscan is not built here")
@pytest.mark.parametrize("dump", [{"ensure_ascii": False}, {"ensure_ascii": True}, {"indent": 2}])
@pytest.mark.parametrize("span_bytes", [64, 16 << 20])
@pytest.mark.parametrize("escapes", [False, True])
def test_files_read_straight_into_columns_equal_the_parsed_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dump: dict[str, Any], span_bytes: int, escapes: bool
) -> None:
    texts = [
        *WHITESPACE,
        *LOOKALIKES,
        "".join(WHITESPACE),
        "a" + "b".join(WHITESPACE) + "c",
        " lead and trail ",
        'escapes " \\ / \b \f \n \r \t \x00 \x1f',
        "pair 😀👩\u200d💻 and 𝄞",
        "",
        "x" * 5000,
        *(t for t in TRICKY if not _has_surrogate(t)),
    ]
    env = _envelope(texts, **{"x-unknown": {"nested": ["]", "}", '"', "\\", 1e300, -0.5, True, None, {}]}})
    path = tmp_path / "e.json"
    data = json.dumps(env, **dump).encode("utf-8")
    path.write_bytes(_escaped(data) if escapes else data)
    assert json.loads(path.read_bytes()) == env
    monkeypatch.setattr("memvelope_tools._stable.WINDOW", span_bytes)
    parsed = _parsed_count(monkeypatch)
    msgs, convs = _frames_from(path, general=False)
    assert parsed == []  # every conversation went straight into columns
    pd.testing.assert_frame_equal(msgs, messages_frame(env, sources=["e.json"]))
    pd.testing.assert_frame_equal(convs, conversations_frame(env, sources=["e.json"]))
    assert msgs["words"].tolist() == [len(t.split()) for t in texts]
    assert msgs["chars"].tolist() == [len(t) for t in texts]


def _unusual(env: dict[str, Any]) -> list[str]:
    """Envelope texts (``env`` serialised) that the columns reader leaves to the parser."""
    plain = json.dumps(env)
    c0 = json.dumps(env["conversations"][0])
    m0 = json.dumps(env["conversations"][0]["messages"][0])
    swap = lambda old, new: plain.replace(old, new, 1)  # noqa: E731
    return [
        swap(m0, m0[:-1] + ', "text": "again"}'),  # a repeated key: the last one counts
        swap(c0, c0[:-1] + ', "title": "again"}'),
        swap('"id": "m0"', '"\\u0069d": "m0", "id": "m1"'),  # a key written with an escape
        swap('"role": "user"', '"role": "\\u0075ser"'),
        swap('"text": "a"', '"text": "\\ud800 lone"'),  # a lone surrogate: U+FFFD and a warning
        swap('"text": "a"', '"text": 7'),  # errors, with their paths
        swap('"role": "user"', '"role": "system"'),
        swap('"title": "t', '"title": null, "x": "t'),
        swap('"messages": [', '"messages": [3, '),
        swap('"ts": "2024-02-29T23:59:59.999Z"', '"ts": "yesterday"'),
        swap('"conversations": [', '"conversations": ["not an object", '),
        swap('"id": "m0"', '"ids": "m0"'),
        swap(c0, c0[:-1] + ', "x-big": ' + "9" * 30 + "}"),
        swap(c0, c0[:-1] + ', "x-huge": ' + "9" * 5000 + "}"),
    ]


@pytest.mark.skipif(NATIVE is None, reason="memvelope_tools._frames._textscan is not built here")
def test_unusual_conversations_are_parsed_with_the_same_frames_or_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _envelope(["a", "b c", "d"] * 4)
    path = tmp_path / "e.json"
    parsed = _parsed_count(monkeypatch)
    for text in _unusual(env):
        path.write_text(text, encoding="utf-8")
        parsed.clear()
        got = _frames_from(path, general=False)
        assert parsed, text  # left to the parser
        expected = _frames_from(path, general=True)
        if got[1] is None:
            assert got == expected, text
        else:
            pd.testing.assert_frame_equal(got[0], expected[0])
            pd.testing.assert_frame_equal(got[1], expected[1])
    path.write_text(json.dumps(env).replace('"created_at": "2024-01-01T00:00:00.000Z"', '"created_at": "soon"'))
    assert _frames_from(path, general=False)[0][:2] == ("bad-timestamp", "$.conversations[0].created_at")
    assert _frames_from(path, general=False) == _frames_from(path, general=True)
    for bad in (b"\xff", b"\xed\xa0\x80", b"\xc0\xaf", b"\xe2\x80", b"\xf4\x90\x80\x80"):  # not UTF-8
        for where in (b'"text": "a', b'"title": "t', b'"x-u": "', b'"x-\xc3\xa9'):
            data = json.dumps(env).encode().replace(b'"text": "a', b'"x-u": "", "x-\xc3\xa9": 1, "text": "a', 1)
            path.write_bytes(data.replace(where, where + bad, 1))
            parsed.clear()
            got = _frames_from(path, general=False)
            assert got[0][0] == "not-utf8" and got == _frames_from(path, general=True)


_ANY_TEXT = st.lists(st.sampled_from([*TRICKY, *WHITESPACE, *LOOKALIKES, '"', "\\", "/", "\x01"]), max_size=8).map(
    "".join
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_ANY_TEXT, inner, max_size=3),
    max_leaves=6,
)


@pytest.mark.slow
@pytest.mark.skipif(NATIVE is None, reason="memvelope_tools._frames._textscan is not built here")
@settings(max_examples=int(os.environ.get("MEMVELOPE_FUZZ_EXAMPLES", "150")), deadline=None)
@given(
    texts=st.lists(_ANY_TEXT, min_size=1, max_size=12),
    extra=st.dictionaries(_ANY_TEXT, _JSON, max_size=2),
    ascii=st.booleans(),
    escapes=st.booleans(),
)
def test_any_envelope_file_gives_the_same_frames_either_way(
    texts: list[str], extra: dict[str, Any], ascii: bool, escapes: bool
) -> None:
    env = _envelope(texts, **extra)
    data = json.dumps(env, ensure_ascii=ascii).encode("utf-8", "surrogatepass")
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        path = Path(tmp) / "e.json"
        path.write_bytes(_escaped(data) if escapes else data)
        parsed = _parsed_count(mp)
        got = _frames_from(path, general=False)
        in_columns = 2 * len(env["conversations"]) - sum(parsed)  # by the two frames
        expected = _frames_from(path, general=True)
    if got[1] is None or expected[1] is None:
        assert got == expected
    else:
        # The last conversation is plain: the C reader took it (and any other plain one) into columns.
        assert in_columns >= 2
        assert got[1]["n_messages"].iloc[-1] == 0
        pd.testing.assert_frame_equal(got[0], expected[0])
        pd.testing.assert_frame_equal(got[1], expected[1])
