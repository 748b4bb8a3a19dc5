"""Search of envelopes and exports indexes their batches as they stream: the matches are those of the index
built from the whole history frame, however the batches are cut, in memory or in a temporary folder."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from generate import generate

import memvelope_tools as mv
from memvelope_tools import _corpus, _stream
from memvelope_tools._search import cache as search_cache
from memvelope_tools._search import index as search_index
from memvelope_tools._search.cache import clear_cache, index_for
from memvelope_tools._search.index import SearchIndex
from memvelope_tools._sources import resolve
from memvelope_tools.cli import main

QUERIES = ("the", "water OR coffee", '"the kitchen"', "plan*", "you NOT the", "a AND b")


@pytest.fixture(autouse=True)
def fresh_cache():
    clear_cache()
    yield
    clear_cache()


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Tiny batches: the size of each batch the stream gives is recorded."""
    sizes: list[int] = []

    def counted(found, sink, **kwargs):
        class Counting:
            def add(self, conversations: pa.Table, messages: pa.Table) -> None:
                sizes.append(messages.num_rows)
                sink.add(conversations, messages)

            def restart(self) -> None:
                sink.restart()

        return _stream.stream(found, Counting(), **{**kwargs, "rows": 3, "window": 2048})

    monkeypatch.setattr(_corpus, "stream", counted)
    return sizes


def whole(source) -> SearchIndex:
    """The index of the whole history frame, the route taken before any batch streamed."""
    return SearchIndex.build(_corpus.history_frame(source))


def same_hits(streamed: SearchIndex, read_whole: SearchIndex, queries=QUERIES, **filters) -> int:
    """Assert both indexes give the same matches to each query; how many matches they gave in all."""
    found = 0
    for query in queries:
        a = streamed.search(query, limit=None, **filters)
        b = read_whole.search(query, limit=None, **filters)
        pd.testing.assert_frame_equal(a, b)
        found += len(a)
    for query in queries[:2]:  # a cut among equal scores too
        pd.testing.assert_frame_equal(streamed.search(query, limit=7), read_whole.search(query, limit=7))
    return found


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A zipped generated ChatGPT export of about 400 kB (some 80 messages)."""
    folder = tmp_path_factory.mktemp("generated")
    parts = generate(folder / "json", "chatgpt", 400_000, seed=5, themes=True)
    zipped = folder / "chatgpt-export.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        for part in parts:
            archive.write(part, part.name)
    return zipped


@pytest.mark.parametrize("samples", [("chatgpt",), ("claude",), ("chatgpt", "claude")])
def test_the_samples_match_as_when_read_whole(samples, batches):
    source = [mv.sample_path(s) for s in samples]
    inputs = resolve(source, "history", list_means="documents", caller="test")
    assert search_cache.streamable(inputs)
    streamed = index_for(inputs)
    assert len(batches) > 10 and max(batches) < 40  # many batches were indexed
    assert same_hits(streamed, whole(source)) > 0
    assert same_hits(streamed, whole(source), role="user", since="2025-01-01") > 0


def test_a_generated_export_matches_as_when_read_whole(generated, batches):
    streamed = index_for(generated)
    assert len(streamed) > 50 and len(batches) >= 5
    assert same_hits(streamed, whole(generated)) > 0


@pytest.mark.parametrize("bound", [("DISK_MIN", 50), ("DISK_TEXT", 20_000)], ids=["messages", "text"])
def test_a_large_history_is_written_to_a_temporary_folder_as_it_streams(generated, batches, monkeypatch, bound):
    monkeypatch.setattr(search_index, *bound)
    streamed = index_for(generated)
    assert streamed.path is None and streamed._temporary is not None
    folder = Path(streamed._temporary.name)
    assert (folder / "search-index" / "rows.arrow").is_file()
    monkeypatch.setattr(search_index, bound[0], 10**9)
    read_whole = whole(generated)
    assert read_whole._temporary is None
    assert same_hits(streamed, read_whole) > 0
    streamed.close()
    assert not folder.exists()


def test_an_envelope_file_and_its_export_share_nothing_but_their_matches(generated, tmp_path, batches):
    envelope = tmp_path / "history.mve.json"
    assert main(["convert", str(generated), "-o", str(envelope), "-q"]) == 0
    from_file = index_for(envelope)
    assert index_for(envelope) is from_file  # kept by path, size and time
    same_hits(from_file, whole(envelope))
    as_bytes = index_for(envelope.read_bytes())
    assert index_for(envelope.read_bytes()) is as_bytes  # kept by content
    same_hits(as_bytes, whole(envelope.read_bytes()))


@pytest.mark.parametrize("disk_min", [5, 10**9])
def test_an_input_read_again_from_its_start_is_indexed_once(monkeypatch, disk_min):
    """The stream may give an input's first batches, then read it again whole (an unusual file): its first
    batches are forgotten, in memory or after they were written to the temporary folder."""
    monkeypatch.setattr(search_index, "DISK_MIN", disk_min)
    history_stream = _corpus.history_stream
    again: list[str] = []

    def twice(found, sink, **kwargs):
        if found.label.startswith("claude"):
            once = []

            class First:
                def add(self, history: pa.Table) -> None:
                    if len(once) < 2:
                        once.append(1)
                        sink.add(history)

                def restart(self) -> None:
                    sink.restart()

            history_stream(found, First(), rows=4, **kwargs)
            again.append(found.label)
            sink.restart()
        return history_stream(found, sink, **kwargs)

    monkeypatch.setattr(_corpus, "history_stream", twice)
    source = [mv.sample_path("chatgpt"), mv.sample_path("claude")]
    streamed = index_for(source)
    assert again == ["claude-export.zip"]
    assert len(streamed) == len(_corpus.history_frame(source))
    assert same_hits(streamed, whole(source)) > 0
