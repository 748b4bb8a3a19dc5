"""Search refuses politely and heals: limits past the index, engine failures (panics included) as
SearchIndexError, deep nesting as QueryError, a damaged index beside a Parquet folder rebuilt once."""

from __future__ import annotations

import struct
import sys
import time
import warnings
from pathlib import Path

import pytest

import memvelope_tools as mv
from memvelope_tools._search import index as search_index
from memvelope_tools._search.cache import clear_cache, index_for
from memvelope_tools._search.index import SearchIndex
from memvelope_tools._search.query import MAX_NESTING, parse_query
from memvelope_tools.errors import MemvelopeError, QueryError, SearchIndexError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_search import haystack


@pytest.fixture(scope="module")
def env() -> dict:
    return haystack()[0]


@pytest.mark.parametrize("limit", [3_000_000_000, 2**31, 2**62, 2**63 - 1, 10**30])
def test_a_limit_past_what_the_index_holds_gives_every_match(env: dict, limit: int):
    everything = mv.search(env, "the", limit=None)
    assert len(everything) > 100
    assert mv.search(env, "the", limit=limit).equals(everything)


def test_the_cli_takes_a_huge_limit(tmp_path: Path, env: dict, capsys: pytest.CaptureFixture[str]):
    from memvelope_tools.cli import main

    path = tmp_path / "h.mve.json"
    path.write_bytes(mv.dumps_canonical(env))
    assert main(["search", str(path), "quantum gardening", "--limit", "3000000000"]) == 0
    assert "⟦quantum⟧ ⟦gardening⟧" in capsys.readouterr().out


def _panic_class() -> type[BaseException]:
    """The engine's own panic exception, got by asking it for more hits than it can hold."""
    import tantivy

    from memvelope_tools import _corpus

    index = SearchIndex.build(_corpus.history_frame(haystack()[0]))

    query = tantivy.Query.all_query()
    try:
        index._searcher.search(query, 2**62)
    except BaseException as exc:  # the point: a panic is no Exception
        assert not isinstance(exc, Exception)
        return type(exc)
    pytest.skip("this engine version does not panic on an oversized request")


def test_an_engine_panic_is_a_search_index_error(env: dict, monkeypatch: pytest.MonkeyPatch):
    panic = _panic_class()

    def fail(self, *args):
        raise panic("called `Option::unwrap()` on a `None` value")

    index = index_for(env)
    monkeypatch.setattr(SearchIndex, "_best", fail)
    with pytest.raises(SearchIndexError) as info:
        index.search("quantum")
    assert isinstance(info.value, MemvelopeError) and info.value.reason == "bad-index"
    assert "search engine failed" in str(info.value) and "unwrap" in str(info.value)


def test_an_engine_value_error_is_a_search_index_error(env: dict, monkeypatch: pytest.MonkeyPatch):
    def fail(self, *args):
        raise ValueError("An IO error occurred: 'No space left on device'")

    index = index_for(env)
    monkeypatch.setattr(SearchIndex, "_best", fail)
    with pytest.raises(SearchIndexError, match="No space left"):
        index.search("quantum")


def test_bad_filters_stay_plain_argument_errors(env: dict):
    with pytest.raises(ValueError, match="role must be one of") as info:
        mv.search(env, "quantum", role="robot")
    assert not isinstance(info.value, SearchIndexError)


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 124, 5000])
def test_deep_nesting_is_a_query_error(depth: int):
    query = "(" * depth + "quantum" + ")" * depth
    with pytest.raises(QueryError, match=f"nested more than {MAX_NESTING} deep") as info:
        parse_query(query)
    assert info.value.reason == "bad-query"


def test_nesting_up_to_the_limit_is_searched(env: dict):
    query = "(" * MAX_NESTING + "quantum gardening" + ")" * MAX_NESTING
    assert mv.search(env, query).equals(mv.search(env, "quantum gardening"))


# ---- an index beside a Parquet folder that is damaged is rebuilt once ----------------------------


def _flip_middle_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    footer = struct.unpack("<I", data[-8:-4])[0]  # the engine's files end with a footer, its length, a magic
    body = len(data) - 8 - footer
    data[body // 2] ^= 0xFF
    path.write_bytes(data)


@pytest.mark.parametrize("suffix", [".term", ".idx", ".store", ".fast", ".fieldnorm", ".pos"])
def test_a_damaged_index_is_rebuilt_once_with_one_warning(tmp_path: Path, env: dict, suffix: str):
    folder = tmp_path / "pq"
    mv.to_parquet(env, folder)
    expected = mv.search(folder, "quantum gardening OR budget", limit=None)
    clear_cache()
    time.sleep(0.02)  # damage comes later than the index was written
    damaged = [p for p in (folder / "search-index").iterdir() if p.name.endswith(suffix)]
    assert damaged
    for path in damaged:
        _flip_middle_byte(path)
    with pytest.warns(UserWarning, match="search-index cannot be read.*rebuilding it") as caught:
        got = mv.search(folder, "quantum gardening OR budget", limit=None)
    assert len([w for w in caught if "search-index" in str(w.message)]) == 1
    assert got.equals(expected)
    clear_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mv.search(folder, "quantum gardening OR budget", limit=None).equals(expected)


def test_an_index_the_engine_fails_on_while_querying_is_rebuilt_once(
    tmp_path: Path, env: dict, monkeypatch: pytest.MonkeyPatch
):
    folder = tmp_path / "pq"
    mv.to_parquet(env, folder)
    expected = mv.search(folder, "quantum gardening")
    panic = _panic_class()
    real, calls = SearchIndex._best, []

    def fail_once(self, *args):
        calls.append(self.path)
        if len(calls) == 1:
            raise panic("index out of bounds: the len is 3 but the index is 7")
        return real(self, *args)

    monkeypatch.setattr(SearchIndex, "_best", fail_once)
    with pytest.warns(UserWarning, match="search-index is damaged .*index out of bounds.*rebuilding it"):
        got = mv.search(folder, "quantum gardening")
    assert got.equals(expected)
    assert len(calls) == 3  # the search that failed, then the rebuilt index's search of texts and of titles


def test_an_index_that_fails_after_its_rebuild_is_an_error_not_a_loop(
    tmp_path: Path, env: dict, monkeypatch: pytest.MonkeyPatch
):
    folder = tmp_path / "pq"
    mv.to_parquet(env, folder)
    mv.search(folder, "quantum")

    def fail(self, *args):
        raise ValueError("An IO error occurred: 'Data corrupted'")

    monkeypatch.setattr(SearchIndex, "_best", fail)
    with pytest.warns(UserWarning, match="rebuilding it"), pytest.raises(SearchIndexError, match="Data corrupted"):
        mv.search(folder, "quantum")


def test_an_index_that_cannot_be_written_stays_in_memory(tmp_path: Path, env: dict, monkeypatch: pytest.MonkeyPatch):
    """The engine reports a full disk as a ValueError: the index is then kept in memory, with a warning."""
    folder = tmp_path / "pq"
    mv.to_parquet(env, folder)
    real = search_index._fill

    def full_disk(engine, history, fingerprint):
        if engine is not None and getattr(full_disk, "on_disk", True):
            full_disk.on_disk = False  # type: ignore[attr-defined]
            raise ValueError("An IO error occurred: 'No space left on device (os error 28)'")
        return real(engine, history, fingerprint)

    monkeypatch.setattr(search_index, "_fill", full_disk)
    with pytest.warns(UserWarning, match="cannot write .*No space left.*in memory only"):
        hits = mv.search(folder, "quantum gardening")
    assert len(hits) == 3
    assert not (folder / "search-index").exists()
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_an_engine_failure_while_indexing_in_memory_is_a_search_index_error(env: dict, monkeypatch: pytest.MonkeyPatch):
    panic = _panic_class()

    def fail(engine, history, fingerprint):
        raise panic("attempt to add with overflow")

    clear_cache()
    monkeypatch.setattr(search_index, "_fill", fail)
    with pytest.raises(SearchIndexError, match="overflow"):
        mv.search(env, "quantum")
