"""Search finds and ranks what was planted, honours the query syntax and filters, and never uses a stale index."""

from __future__ import annotations

import builtins
import os
import random
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import memvelope_tools as mv
from memvelope_tools import _corpus as corpus
from memvelope_tools._frames.columns import pandas_dtypes
from memvelope_tools._search import cache as search_cache
from memvelope_tools._search import engine as search_engine
from memvelope_tools._search import index as search_index
from memvelope_tools._search.cache import clear_cache
from memvelope_tools._search.index import RESULT_COLUMNS, SearchIndex
from memvelope_tools._search.query import Words, parse_query

_FILLER = (
    "the a of to and in is it that for with on this be are as can or not your have we at roadmap plan data "
    "model export function value table result error test meeting budget draft review idea question answer"
)
FILLER = _FILLER.split()


def msg(i: int, role: str, ts: str | None, text: str) -> dict:
    return {"id": f"m{i}", "role": role, "ts": ts, "text": text}


def conv(cid: str, title: str | None, *messages: dict) -> dict:
    return {"id": cid, "title": title, "created_at": None, "updated_at": None, "messages": list(messages)}


def envelope(*convs: dict) -> dict:
    return {
        "memvelope": "envelope-v0",
        "meta": {
            "source_provider": "claude",
            "conversation_count": len(convs),
            "message_count": sum(len(c["messages"]) for c in convs),
        },
        "conversations": list(convs),
    }


def filler(rng: random.Random, n: int = 30) -> str:
    return " ".join(rng.choices(FILLER, k=n))


def haystack(seed: int = 1, n_conv: int = 40) -> tuple[dict, tuple[str, int]]:
    """Forty conversations of filler; one message holds the phrase 'quantum gardening workshop'."""
    rng = random.Random(seed)
    convs = []
    for c in range(n_conv):
        messages = [
            msg(j, ("user", "assistant")[j % 2], f"2024-{1 + c % 12:02d}-{1 + j:02d}T10:00:00.000Z", filler(rng))
            for j in range(6)
        ]
        convs.append(conv(f"c{c}", f"title {c}", *messages))
    # Decoys: the words of the phrase apart, or in another order.
    convs[3]["messages"][1]["text"] += " quantum physics is hard; gardening is easy; a workshop on Friday"
    convs[9]["messages"][2]["text"] += " workshop gardening quantum"
    convs[27]["messages"][4]["text"] += " we booked the quantum gardening workshop for May"
    return envelope(*convs), ("c27", 4)


@pytest.fixture(autouse=True)
def fresh_cache():
    clear_cache()
    yield
    clear_cache()


# ---- ranking -------------------------------------------------------------------------------------


def test_a_planted_phrase_ranks_first_and_decoys_do_not_match_the_phrase():
    env, (cid, position) = haystack()
    hits = mv.search(env, '"quantum gardening workshop"')
    assert len(hits) == 1
    assert (hits.loc[0, "conversation_id"], hits.loc[0, "position"]) == (cid, position)
    words = mv.search(env, "quantum gardening workshop")  # all three words, anywhere
    assert set(words["conversation_id"]) == {"c3", "c9", "c27"}
    assert words["score"].is_monotonic_decreasing


def test_results_are_in_score_order_and_more_occurrences_score_higher():
    env = envelope(
        conv("a", "A", msg(1, "user", "2024-01-01T00:00:00.000Z", "kettle " + "filler " * 20)),
        conv("b", "B", msg(1, "user", "2024-01-01T00:00:00.000Z", "kettle kettle kettle " + "filler " * 18)),
        conv("c", "C", msg(1, "user", "2024-01-01T00:00:00.000Z", "nothing to see " * 7)),
    )
    hits = mv.search(env, "kettle")
    assert list(hits["conversation_id"]) == ["b", "a"]
    assert hits.loc[0, "score"] > hits.loc[1, "score"] > 0


def test_equal_scores_put_the_most_recent_first_and_undated_last():
    same = "a note about the lighthouse"
    env = envelope(
        conv("old", "x", msg(1, "user", "2023-01-01T00:00:00.000Z", same)),
        conv("none", "x", msg(1, "user", None, same)),
        conv("new", "x", msg(1, "user", "2025-01-01T00:00:00.000Z", same)),
        conv("mid", "x", msg(1, "user", "2024-01-01T00:00:00.000Z", same)),
    )
    hits = mv.search(env, "lighthouse")
    assert hits["score"].nunique() == 1
    assert list(hits["conversation_id"]) == ["new", "mid", "old", "none"]


# ---- query syntax --------------------------------------------------------------------------------

SYNTAX = envelope(
    conv(
        "s",
        "syntax",
        msg(0, "user", "2024-01-01T00:00:00.000Z", "I write Python with pandas"),
        msg(1, "assistant", "2024-01-01T00:01:00.000Z", "Polars is also good for python people"),
        msg(2, "user", "2024-01-01T00:02:00.000Z", "spark clusters and pandas frames"),
        msg(3, "assistant", "2024-01-01T00:03:00.000Z", "C++ and e-mail and don't and 3.11"),
        msg(4, "user", "2024-01-01T00:04:00.000Z", "pythonic code is a Pythonista's dream"),
    ),
)


def positions(query: str, **kw) -> set[int]:
    return set(mv.search(SYNTAX, query, **kw)["position"])


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("python", {0, 1}),  # whole words only, any case
        ("pyth*", {0, 1, 4}),  # prefix
        ('"python with pandas"', {0}),  # phrase
        ('"pandas with python"', set()),  # a phrase keeps its order
        ("python pandas", {0}),  # implicit AND
        ("python AND pandas", {0}),
        ("python OR spark", {0, 1, 2}),
        ("pandas NOT python", {2}),
        ("(polars OR spark) NOT clusters", {1}),
        ("c++", {3}),  # punctuation inside a word needs no quoting
        ("e-mail", {3}),
        ("don't", {3}),
        ("3.11", {3}),
        ("and", {2, 3}),  # lower-case operators are ordinary words
    ],
)
def test_query_syntax(query: str, expected: set[int]):
    assert positions(query) == expected


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("", "no word"),
        ("   ", "no word"),
        ("AND pandas", "AND needs a term on each side"),
        ("pandas OR", "OR needs a term on each side"),
        ("pandas AND OR spark", "needs a term on each side"),
        ("NOT pandas", "NOT needs a term"),
        ("(pandas", "parentheses"),
        ("pandas)", "parentheses"),
        ("()", "no word"),
        ('"open phrase', "quote is not closed"),
        ("*", "'\\*' ends a word"),
        ("!!!", "no letter or digit"),
        ("(pandas) (", "parentheses"),
    ],
)
def test_a_bad_query_is_one_query_error_with_the_reason(query: str, reason: str):
    with pytest.raises(mv.QueryError, match=reason) as info:
        mv.search(SYNTAX, query)
    assert info.value.reason == "bad-query"
    assert isinstance(info.value, mv.MemvelopeError)
    assert query.strip() == "" or repr(query) in str(info.value)


def test_a_bad_query_fails_before_the_source_is_read(tmp_path):
    with pytest.raises(mv.QueryError):
        mv.search(tmp_path / "missing.mve.json", "AND")


def test_parse_query_reads_words_phrases_prefixes_and_operators():
    assert str(parse_query('pyth* "a b" OR c++')) == '(("pyth"* AND "a b") OR "c++")'
    assert str(parse_query('"a b"* OR (c NOT d)')) == '("a b"* OR ("c" NOT "d"))'
    assert parse_query("東京") == Words("東京")


@pytest.mark.parametrize(
    ("query", "tree"),
    [
        # Words side by side bind tightest, then NOT, then AND, then OR (as SQLite's FTS5 reads them).
        ("x OR y z", '("x" OR ("y" AND "z"))'),
        ("x NOT y OR z", '(("x" NOT "y") OR "z")'),
        ("x NOT y z", '("x" NOT ("y" AND "z"))'),
        ("x NOT y AND z", '(("x" NOT "y") AND "z")'),
        ("x NOT y NOT z", '("x" NOT "y" NOT "z")'),
        ("x OR y z NOT w", '("x" OR (("y" AND "z") NOT "w"))'),
        ("(x OR y) z", '(("x" OR "y") AND "z")'),
        ("((x))", '"x"'),
    ],
)
def test_operator_precedence(query: str, tree: str):
    assert str(parse_query(query)) == tree


@pytest.mark.parametrize(("query", "reason"), [(") x (", "do not pair up"), ("x () y", "hold no word")])
def test_parentheses_must_pair_up_and_hold_a_word(query: str, reason: str):
    with pytest.raises(mv.QueryError, match=reason):
        parse_query(query)


PRECEDENCE_DOCS = ["x", "y", "z", "w", "x y", "x z", "y z", "w x", "x y z", "w y z", "w x y z"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("x OR y z", {"x", "x y", "x z", "y z", "w x", "x y z", "w y z", "w x y z"}),
        ("x NOT y z", {"x", "x y", "x z", "w x"}),
        ("x OR y z NOT w", {"x", "x y", "x z", "y z", "w x", "x y z", "w x y z"}),
        ("x NOT y NOT z", {"x", "w x"}),
    ],
)
def test_operators_select_the_messages_they_say(query: str, expected: set[str]):
    env = envelope(conv("p", "t", *(msg(i, "user", None, text) for i, text in enumerate(PRECEDENCE_DOCS))))
    assert {PRECEDENCE_DOCS[p] for p in mv.search(env, query, limit=None)["position"]} == expected


# ---- filters -------------------------------------------------------------------------------------


def test_role_since_and_until_filter():
    assert positions("pandas", role="user") == {0, 2}
    assert positions("pandas", role="assistant") == set()
    assert positions("python OR pandas OR spark", since="2024-01-01T00:01:00Z") == {1, 2}
    assert positions("python OR pandas OR spark", until="2024-01-01T00:01:00Z") == {0}  # until is exclusive
    assert positions("python OR polars", since="2024-01-01", until="2024-01-02", role="assistant") == {1}
    with pytest.raises(ValueError, match="role"):
        mv.search(SYNTAX, "pandas", role="system")
    with pytest.raises(mv.QueryError, match="since="):
        mv.search(SYNTAX, "pandas", since="last tuesday-ish")


def test_the_codes_of_roles_are_their_places_among_the_spec_roles_plain_or_dictionary_encoded():
    # The envelope spec's roles are user then assistant; a role it does not know, or none, has no code.
    plain = pa.array(["assistant", None, "user", "system"])
    encoded = pa.array(["user", "user", None, "tool", "assistant"]).dictionary_encode()
    for given, expected in ((plain, [1, None, 0, None]), (encoded, [0, 0, None, None, 1])):
        codes = search_engine.role_codes(pa.chunked_array([given, given]))
        assert codes.type == pa.int8()
        assert codes.to_pylist() == expected * 2
    assert search_engine.role_codes(pa.chunked_array([], pa.string())).to_pylist() == []


def test_since_uses_utc_for_naive_times_and_converts_offsets():
    # 2024-01-01T00:02Z is 01:02 in Berlin: since 01:01 Berlin time keeps it and drops 00:01Z.
    assert positions("python OR pandas OR spark", since=pd.Timestamp("2024-01-01 01:01:30", tz="Europe/Berlin")) == {2}
    assert positions("python OR pandas OR spark", since="2024-01-01 00:01:30") == {2}


def test_undated_messages_drop_out_when_a_time_filter_is_given():
    dated = msg(2, "user", "2024-05-01T00:00:00.000Z", "harbour")
    env = envelope(conv("u", "t", msg(1, "user", None, "harbour"), dated))
    assert len(mv.search(env, "harbour")) == 2
    assert list(mv.search(env, "harbour", since="2000-01-01")["position"]) == [1]


def test_limit():
    env, _ = haystack()
    assert len(mv.search(env, "roadmap", limit=3)) == 3
    everything = mv.search(env, "roadmap", limit=None)
    assert len(everything) > 50
    assert len(mv.search(env, "roadmap")) == 50
    assert mv.search(env, "roadmap", limit=0).empty
    with pytest.raises(ValueError, match="limit"):
        mv.search(env, "roadmap", limit=-1)
    index = search_cache.index_for(env)
    assert index.count("roadmap") == len(everything)
    assert index.count("roadmap", role="user") == len(index.search("roadmap", role="user", limit=None)) > 0
    assert index.count("zeppelin") == 0


# ---- languages -----------------------------------------------------------------------------------

WORLD = envelope(
    conv(
        "w",
        "Reisen",
        msg(0, "user", "2024-01-01T00:00:00.000Z", "Ich möchte über die Brücke in Zürich gehen."),
        msg(1, "user", "2024-01-01T00:00:00.000Z", "L'élève a pris un café à la crème."),
        msg(2, "user", "2024-01-01T00:00:00.000Z", "El niño comió jalapeños en São Paulo."),
        msg(3, "user", "2024-01-01T00:00:00.000Z", "Встреча в Москве завтра."),
        msg(4, "user", "2024-01-01T00:00:00.000Z", "明日は東京に行きます。"),
        msg(5, "user", "2024-01-01T00:00:00.000Z", "我们在北京学习中文。"),
        msg(6, "user", "2024-01-01T00:00:00.000Z", "한국어 공부를 합니다"),
    ),
)


@pytest.mark.parametrize(
    ("query", "position"),
    [
        ("über", 0),
        ("uber", 0),  # diacritics do not matter
        ("BRÜCKE", 0),
        ("zurich", 0),
        ("eleve", 1),
        ("CAFÉ", 1),
        ("creme", 1),
        ("nino", 2),
        ("jalapenos", 2),
        ("sao", 2),
        ("москве", 3),
        ("МОСКВЕ", 3),
        ("東京", 4),  # no spaces between Japanese words: found inside the sentence
        ("京に行", 4),
        ("北京", 5),
        ("中文", 5),
        ("한국어", 6),
        ("공부*", 6),
    ],
)
def test_non_english_text(query: str, position: int):
    assert list(mv.search(WORLD, query)["position"]) == [position]


def test_cjk_does_not_match_characters_that_are_not_adjacent():
    assert mv.search(WORLD, "東行").empty
    assert mv.search(WORLD, "大阪").empty


@pytest.mark.parametrize("others", [0, 5], ids=["most texts hold ideographs", "few texts do"])
def test_texts_as_indexed_have_a_zero_width_space_after_each_ideograph_and_kana(others):
    z = "\u200b"
    given = ["東京に行く", "café ｶﾀｶﾅ", "naïve", None] + ["plain"] * others
    expected = [f"東{z}京{z}に{z}行{z}く{z}", f"café ｶ{z}ﾀ{z}ｶ{z}ﾅ{z}", "naïve", ""] + ["plain"] * others
    assert search_engine.as_indexed(pa.array(given)).to_pylist() == expected


def test_snippets_mark_the_matches_and_keep_the_text_as_written():
    hits = mv.search(WORLD, "zurich OR creme OR 東京")
    snippets = dict(zip(hits["position"], hits["snippet"], strict=True))
    assert snippets[0] == "Ich möchte über die Brücke in ⟦Zürich⟧ gehen."
    assert snippets[1] == "L'élève a pris un café à la ⟦crème⟧."
    assert snippets[4] == "明日は⟦東京⟧に行きます。"  # no zero-width space left from indexing


def test_long_messages_get_a_shortened_snippet_with_whitespace_collapsed():
    text = "\n\n".join(["word " * 40, "the  needle\tis here", "word " * 40])
    hits = mv.search(envelope(conv("l", "t", msg(1, "user", None, text))), "needle")
    snippet = hits.loc[0, "snippet"]
    assert "⟦needle⟧ is here" in snippet
    assert snippet.startswith("…") and snippet.endswith("…")
    assert len(snippet.split()) <= 26 and "\n" not in snippet and "  " not in snippet


# ---- results and inputs --------------------------------------------------------------------------


def test_result_columns_dtypes_and_values():
    hits = mv.search(SYNTAX, '"python with pandas"')
    assert dict(hits.dtypes) == pandas_dtypes(RESULT_COLUMNS)
    row = hits.iloc[0]
    assert row["source"] == "doc0" and row["conv_index"] == 0 and row["conversation_id"] == "s"
    assert row["title"] == "syntax" and row["role"] == "user" and row["position"] == 0
    assert row["ts"] == pd.Timestamp("2024-01-01T00:00:00Z")
    assert row["snippet"] == "I write ⟦Python with pandas⟧"
    assert isinstance(hits.index, pd.RangeIndex)


def test_every_kind_of_source_gives_the_same_hits(tmp_path):
    env, _ = haystack()
    path = tmp_path / "h.mve.json"
    mv.write_envelope(env, path)
    messages = mv.messages_frame(env)
    with_titles = messages.merge(mv.conversations_frame(env)[["source", "conv_index", "title"]])
    folder = tmp_path / "pq"
    mv.to_parquet(env, folder, sources=["doc0"])
    expected = mv.search(env, "gardening")
    for source in (path, str(path), path.read_bytes(), open(path, "rb"), with_titles, folder, [env]):  # noqa: SIM115
        hits = mv.search(source, "gardening")
        pd.testing.assert_frame_equal(
            hits.drop(columns="source"), expected.drop(columns="source"), obj=type(source).__name__
        )
    bare = mv.search(messages, "gardening")  # a messages frame has no titles
    assert bare["title"].isna().all() and list(bare["position"]) == list(expected["position"])


def test_a_file_is_read_once(tmp_path, monkeypatch):
    env, _ = haystack()
    path = tmp_path / "h.mve.json"
    mv.write_envelope(env, path)
    opened: list[str] = []
    real_open = builtins.open

    def counting(file, *args, **kwargs):
        if isinstance(file, str | os.PathLike) and os.path.abspath(file) == str(path):
            opened.append(os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting)
    mv.messages_frame(str(path))
    by_one_frame_function = len(opened)
    opened.clear()
    history = corpus.history_frame(str(path))
    assert 0 < len(opened) == by_one_frame_function
    expected = mv.messages_frame(env).merge(mv.conversations_frame(env)[["source", "conv_index", "title"]])
    pd.testing.assert_frame_equal(
        history.drop(columns="source"),
        corpus.from_messages(expected).drop(columns="source"),
    )


def test_several_documents_and_frames_together():
    a = envelope(conv("a", "first", msg(1, "user", None, "shared word alpha")))
    b = envelope(conv("b", "second", msg(1, "user", None, "shared word beta")))
    hits = mv.search([a, b], "shared")
    assert sorted(hits["source"]) == ["doc0", "doc1"]
    mixed = mv.search([mv.messages_frame(a, sources=["left"]), b], "shared")
    assert sorted(mixed["source"]) == ["doc1", "left"]  # an input without a name is labelled by its place in the list
    assert set(mixed["title"].dropna()) == {"second"}


def test_search_on_a_converted_export():
    env = mv.convert(mv.sample_path("chatgpt"))
    hits = mv.search(env, "kafka")
    assert not hits.empty
    assert hits["snippet"].str.contains("⟦Kafka⟧", case=False).all()
    assert "Kafka consumer lag keeps growing" in set(hits["title"])


def test_empty_and_one_conversation_histories():
    empty = mv.search(envelope(), "anything")
    assert empty.empty and dict(empty.dtypes) == pandas_dtypes(RESULT_COLUMNS)
    assert mv.search([], "anything").empty
    assert mv.search(mv.messages_frame(envelope()), "anything").empty
    one = envelope(conv("only", "t", msg(1, "user", None, "a single message")))
    assert list(mv.search(one, "single")["conversation_id"]) == ["only"]


def test_a_frame_without_the_message_columns_is_refused():
    with pytest.raises(mv.FormatError, match="messages frame") as info:
        mv.search(pd.DataFrame({"text": ["x"]}), "x")
    assert info.value.reason == "wrong-frame"


# ---- the index is reused and never stale ---------------------------------------------------------


@pytest.fixture
def builds(monkeypatch):
    """The size of each index built, from a frame or from the batches of envelopes and exports read now."""
    calls: list[int] = []
    original = SearchIndex.build.__func__
    streamed = search_cache.streamed_index

    def counting(cls, history, **kw):
        calls.append(len(history))
        return original(cls, history, **kw)

    def counting_streamed(inputs, **kw):
        index, digest = streamed(inputs, **kw)
        calls.append(len(index))
        return index, digest

    monkeypatch.setattr(SearchIndex, "build", classmethod(counting))
    monkeypatch.setattr(search_cache, "streamed_index", counting_streamed)
    return calls


@pytest.mark.parametrize("hashed", [1 << 24, 0], ids=["text hashed", "text named by its buffers"])
def test_the_index_of_a_frame_is_built_once_and_rebuilt_when_the_content_changes(builds, monkeypatch, hashed):
    monkeypatch.setattr(search_cache, "_HASHED", hashed)
    env, _ = haystack()
    frame = mv.messages_frame(env)
    mv.search(frame, "roadmap")
    mv.search(frame, "gardening")
    mv.search(frame.copy(), "budget")  # same content in another object
    mv.search(frame.astype({"text": object}), "budget")  # same content in other buffers
    assert len(builds) == 1
    frame.loc[0, "text"] = "a zeppelin appears"  # changed in place
    assert list(mv.search(frame, "zeppelin")["position"]) == [0]
    assert len(builds) == 2
    frame.loc[0, "position"] = 7
    assert list(mv.search(frame, "zeppelin")["position"]) == [7]
    assert len(builds) == 3


def test_a_file_is_indexed_once_until_it_changes(tmp_path, builds):
    path = tmp_path / "h.mve.json"
    mv.write_envelope(envelope(conv("a", "t", msg(1, "user", None, "old words"))), path)
    assert len(mv.search(path, "old")) == 1
    assert len(mv.search(path, "old")) == 1
    assert len(builds) == 1
    mv.write_envelope(envelope(conv("a", "t", msg(1, "user", None, "new words here"))), path)
    assert mv.search(path, "old").empty
    assert len(mv.search(path, "new")) == 1
    assert len(builds) == 2


def test_an_export_is_indexed_once_until_its_file_changes(tmp_path, builds):
    path = tmp_path / "export.zip"
    path.write_bytes(mv.sample_path("chatgpt").read_bytes())
    first = mv.search(path, "the", limit=None)
    assert len(first) > 0
    pd.testing.assert_frame_equal(mv.search(path, "the", limit=None), first)
    assert len(builds) == 1
    path.write_bytes(mv.sample_path("claude").read_bytes())
    again = mv.search(path, "the", limit=None)
    assert len(builds) == 2
    assert set(again["conversation_id"]).isdisjoint(first["conversation_id"])  # the new file's conversations


def test_a_parquet_folder_keeps_its_index_on_disk_and_rebuilds_it_when_the_files_change(tmp_path, builds):
    folder = tmp_path / "history"
    mv.to_parquet(envelope(conv("a", "first", msg(1, "user", None, "the lighthouse keeper"))), folder)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(mv.search(folder, "lighthouse")["title"]) == ["first"]
    index_dir = folder / "search-index"
    assert (index_dir / "rows.arrow").is_file()
    assert len(builds) == 1
    clear_cache()  # a new session: the file is read, not rebuilt
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(mv.search(folder, "keeper")) == 1
    assert len(builds) == 1

    mv.to_parquet(envelope(conv("b", "second", msg(1, "user", None, "the lighthouse is gone"))), folder)
    with pytest.warns(UserWarning, match="out of date .*Parquet files changed.*rebuilding"):
        hits = mv.search(folder, "lighthouse")
    assert list(hits["title"]) == ["second"] and mv.search(folder, "keeper").empty
    assert len(builds) == 2

    (index_dir / "rows.arrow").write_bytes(b"not a database at all" * 100)
    clear_cache()
    with pytest.warns(UserWarning, match="cannot be read"):
        assert list(mv.search(folder, "gone")["title"]) == ["second"]
    assert len(builds) == 3
    assert not [p.name for p in folder.iterdir() if p.name.endswith((".tmp", ".old"))]


def test_a_read_only_folder_gets_an_index_in_memory(tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    mv.to_parquet(envelope(conv("a", "t", msg(1, "user", None, "kept in memory"))), folder)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(search_index.tempfile, "mkdtemp", refuse)
    with pytest.warns(UserWarning, match="in memory only"):
        assert len(mv.search(folder, "memory")) == 1
    assert not (folder / "search-index").exists()


def test_mv_search_stays_the_function_after_its_module_is_imported():
    code = (
        "import memvelope_tools._search, memvelope_tools._topics, memvelope_tools as mv; "
        "print(callable(mv.search) and mv.search.__name__, callable(mv.topics) and mv.topics.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["search", "topics"]


def test_importing_the_package_does_not_import_the_search_engine_or_sklearn():
    code = (
        "import sys, memvelope_tools; print(any(m in sys.modules for m in ('tantivy', 'sqlite3', 'sklearn', 'scipy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---- ranking across the engine's segments, prefixes and snippets ---------------------------------


class _Delegate:
    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _CommittingWriter(_Delegate):
    """A writer that commits every few messages, which leaves them in many segments."""

    def __init__(self, inner):
        super().__init__(inner)
        self.added = 0

    def add_document(self, document):
        self._inner.add_document(document)
        self.added += 1
        if self.added % 80 == 0:  # a few segments: many would be merged into one
            self._inner.commit()


@pytest.fixture
def segments(monkeypatch):
    """Every index is written in many segments, each ranking its equal scores in its own order."""
    original = search_engine.open_engine
    monkeypatch.setattr(search_engine.os, "cpu_count", lambda: 2)

    def many(directory, *, create):
        engine = _Delegate(original(directory, create=create))
        engine.writer = lambda *a, **kw: _CommittingWriter(engine._inner.writer(*a, **kw))
        return engine

    monkeypatch.setattr(search_index, "open_engine", many)


def twin_history() -> pd.DataFrame:
    """Every text twice, at the same time (or both undated), in a row: many scores tie."""
    rng = random.Random(3)
    convs = []
    for c in range(30):
        messages = []
        for j in range(0, 8, 2):
            role = ("user", "assistant")[j // 2 % 2]
            ts = None if c % 7 == 0 else f"2024-{1 + c % 12:02d}-{1 + j:02d}T10:00:00.000Z"
            text = filler(rng, 12) + (" quantum gardening workshop" if (c + j) % 11 == 0 else "")
            messages += [msg(j, role, ts, text), msg(j + 1, role, ts, text)]
        convs.append(conv(f"c{c}", f"title {c}", *messages))
    return corpus.history_frame(envelope(*convs))


TIE_CASES = [
    ("roadmap", {}),
    ("the", {}),
    ("budget plan", {}),
    ('"quantum gardening workshop"', {}),
    ('"quantum gardening"', {"role": "assistant"}),
    ("garden* OR rev*", {}),
    ("(roadmap OR budget) NOT plan", {}),
    ("roadmap NOT budget", {"role": "user"}),
    ("roadmap OR review", {"since": "2024-03-01", "until": "2024-06-01"}),
    ("review", {"since": "2024-05-05"}),
    ("data", {"until": "2024-04-01", "role": "assistant"}),
]


def test_equal_scores_are_ordered_by_time_then_history_order_whatever_segment_holds_them(segments):
    index = SearchIndex.build(twin_history())
    assert index._searcher.num_segments >= 2  # else the engine's own order would be the history's
    twins = index.search("roadmap", limit=None)
    assert twins["score"].value_counts().min() >= 2
    for query, kw in TIE_CASES:
        every = index.search(query, limit=None, **kw)
        assert len(every) == index.count(query, **kw) > 0, (query, kw)
        ms = every["ts"]
        key = pd.DataFrame(
            {
                "score": -every["score"],
                "undated": ms.isna(),
                "later": -(ms.dt.tz_convert(None).astype("datetime64[ns]").fillna(pd.Timestamp(0)).astype("int64")),
                "conv_index": every["conv_index"],
                "position": every["position"],
            }
        )
        assert list(key.sort_values(list(key.columns)).index) == list(range(len(every))), (query, kw)
        for limit in (50, 7, 1, 0):
            pd.testing.assert_frame_equal(
                index.search(query, limit=limit, **kw), every.head(limit), obj=f"{query!r} {kw} limit={limit}"
            )


def test_a_prefix_ranks_each_word_it_starts_like_the_word():
    env = envelope(
        conv(
            "p",
            "t",
            msg(0, "user", None, "gardening gardening gardens in the garden"),
            msg(1, "user", None, "one garden among many other words of a long message about nothing much"),
        )
    )
    hits = mv.search(env, "garden*")
    assert list(hits["position"]) == [0, 1] and hits.loc[0, "score"] > hits.loc[1, "score"] > 0
    assert hits.loc[0, "snippet"] == "⟦gardening⟧ ⟦gardening⟧ ⟦gardens⟧ in the ⟦garden⟧"
    assert mv.search(env, "zzz*").empty


def test_only_whole_phrases_are_marked_and_words_after_not_are_not():
    env = envelope(conv("p", "t", msg(0, "user", None, "Python is fun; I write Python with pandas, not R")))
    assert mv.search(env, '"python with pandas"').loc[0, "snippet"] == (
        "Python is fun; I write ⟦Python with pandas⟧, not R"
    )
    assert mv.search(env, "fun NOT spark").loc[0, "snippet"] == "Python is ⟦fun⟧; I write Python with pandas, not R"
    assert mv.search(env, '"write py"*').loc[0, "snippet"] == "Python is fun; I ⟦write Python⟧ with pandas, not R"


def test_a_large_history_is_indexed_in_a_temporary_folder_removed_on_close(monkeypatch):
    monkeypatch.setattr(search_index, "DISK_MIN", 1)
    index = SearchIndex.build(twin_history())
    assert index.path is None and index._temporary is not None
    folder = Path(index._temporary.name)
    assert (folder / "search-index" / "rows.arrow").is_file()
    assert len(index.search("roadmap")) > 0
    index.close()
    assert not folder.exists()


def test_an_index_of_an_earlier_release_beside_a_parquet_folder_is_replaced(tmp_path):
    folder = tmp_path / "history"
    mv.to_parquet(envelope(conv("a", "first", msg(1, "user", None, "the lighthouse keeper"))), folder)
    (folder / "search.sqlite").write_bytes(b"an index in an earlier format")
    (folder / "search.1.sqlite").write_bytes(b"its second part")
    assert len(mv.search(folder, "lighthouse")) == 1
    assert sorted(p.name for p in folder.iterdir() if "search" in p.name) == ["search-index"]


def test_a_word_too_long_for_the_engine_is_left_out_and_the_rest_is_indexed():
    env = envelope(conv("l", "t", msg(1, "user", None, "x" * 70_000 + " tail"), msg(2, "user", None, "x marks")))
    assert list(mv.search(env, "tail")["position"]) == [0]
    assert list(mv.search(env, "x*")["position"]) == [1]


def test_a_conversation_is_found_by_a_word_of_its_title_shown_as_its_first_message() -> None:
    env = envelope(
        conv(
            "bread",
            "Sourdough schedule",
            msg(1, "user", "2025-01-02T08:00:00Z", "When should I feed the starter?"),
            msg(2, "assistant", "2025-01-02T08:00:05Z", "Twice a day at room temperature."),
        ),
        conv("other", "Taxes", msg(1, "user", "2025-01-03T08:00:00Z", "my sourdough starter smells of acetone")),
    )
    hits = mv.search(env, "sourdough")
    # the message that holds the word, and the first message of the conversation whose title holds it
    assert sorted(zip(hits["conversation_id"], hits["position"], hits["matched"], strict=True)) == [
        ("bread", 0, "title"),
        ("other", 0, "text"),
    ]
    row = hits.set_index("conversation_id").loc["bread"]
    assert (row["role"], row["title"]) == ("user", "Sourdough schedule")
    assert row["snippet"] == "When should I feed the starter?"
    both = mv.search(env, "sourdough schedule")
    assert list(both["conversation_id"]) == ["bread"] and list(both["matched"]) == ["title"]
    # a filter applies to the message a title match shows: the first message is the user's
    assert list(mv.search(env, "sourdough", role="assistant")["conversation_id"]) == []
    found = mv.search(env, "starter")
    assert set(found["matched"]) == {"text"}
    feed = mv.search(env, "feed OR schedule")  # the first message matched by its text and its title
    assert feed.set_index("conversation_id").loc["bread", "matched"] == "text, title"
