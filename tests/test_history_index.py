"""The search index a history folder keeps: an add indexes only the messages it brings, and every
search then gives what an index built anew from the folder's files gives."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from memvelope_tools import _search
from memvelope_tools._history_folder import add_to_history

HISTORY = Path(__file__).resolve().parent.parent / "fixtures" / "history"
GPT_OLD = HISTORY / "chatgpt-old" / "conversations.json"
GPT_NEW = HISTORY / "chatgpt-new" / "conversations.json"
CLAUDE_OLD = HISTORY / "claude-old" / "conversations.json"
CLAUDE_NEW = HISTORY / "claude-new" / "conversations.json"
QUERIES = ["cats", "the", "secret", "a OR the", '"about cats"', "w*", "the NOT cats"]


def engine_files(folder: Path) -> dict[str, int]:
    """The engine's files in the index folder, each with its inode (a file kept is the same file)."""
    index = folder / _search.INDEX_DIR
    return {p.name: p.stat().st_ino for p in index.iterdir() if p.suffix in (".idx", ".term", ".store", ".pos")}


def results(folder: Path) -> list[pd.DataFrame]:
    _search.clear_cache()
    return [_search.search(folder, q, limit=None, role=role) for q in QUERIES for role in (None, "user")]


@pytest.mark.parametrize(("old", "new"), [(GPT_OLD, GPT_NEW), (CLAUDE_OLD, CLAUDE_NEW)])
def test_an_add_keeps_the_indexed_messages_and_indexes_only_the_new_ones(
    old: Path, new: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "h"
    add_to_history(old, folder, date="2025-01-01")
    kept = engine_files(folder)
    first = len(_search.SearchIndex.open(folder / _search.INDEX_DIR))
    added: list[int] = []
    real = _search._add_rows

    def counted(writer: Any, rows: pa.Table, which: Any, start: int) -> None:
        added.append(len(which))
        real(writer, rows, which, start)

    monkeypatch.setattr(_search, "_add_rows", counted)
    add_to_history(new, folder, date="2025-03-01")
    stored = _search.SearchIndex.open(folder / _search.INDEX_DIR)
    assert 0 < sum(added) == len(stored) - first  # only the messages the history gained
    stored.close()
    now = engine_files(folder)
    assert set(kept) <= set(now) and all(now[name] == inode for name, inode in kept.items())

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    for name in ("conversations.parquet", "state.parquet", "snapshots.parquet"):
        shutil.copy(folder / name, fresh / name)
    shutil.copytree(folder / "messages", fresh / "messages")
    monkeypatch.setattr(_search, "_add_rows", real)
    _search.build_folder_index(fresh)
    for updated, built in zip(results(folder), results(fresh), strict=True):
        pd.testing.assert_frame_equal(updated, built)
    assert any(len(frame) for frame in results(folder))


def test_an_index_holding_a_message_the_history_lost_is_built_anew(tmp_path: Path) -> None:
    folder = tmp_path / "h"
    add_to_history(GPT_OLD, folder, date="2025-01-01")
    other = tmp_path / "other"
    add_to_history(CLAUDE_OLD, other, date="2025-01-01")
    shutil.rmtree(folder / _search.INDEX_DIR)
    shutil.copytree(other / _search.INDEX_DIR, folder / _search.INDEX_DIR, copy_function=shutil.copy2)
    _search.update_folder_index(folder)
    stored = _search.SearchIndex.open(folder / _search.INDEX_DIR)
    assert "doc" not in stored._rows.column_names  # built anew: document i is row i
    assert len(stored) == 13
    stored.close()
    _search.clear_cache()
    assert list(_search.search(folder, "cats")["snippet"]) == ["Write a haiku about ⟦cats⟧"]


def test_a_damaged_index_is_built_anew(tmp_path: Path) -> None:
    folder = tmp_path / "h"
    add_to_history(GPT_OLD, folder, date="2025-01-01")
    (folder / _search.INDEX_DIR / "rows.arrow").write_bytes(b"not arrow")
    add_to_history(GPT_NEW, folder, date="2025-03-01")
    stored = _search.SearchIndex.open(folder / _search.INDEX_DIR)
    assert len(stored) == 23
    stored.close()


def test_texts_are_numbered_alike_in_both_columns_and_null_as_the_empty_text() -> None:
    first = pa.chunked_array([pa.array(["a", None, ""]), pa.array(["b", "a"])])
    second = pa.chunked_array([pa.array([None, "b"]), pa.array([], pa.string()), pa.array(["c", ""])])
    now, old = _search._text_numbers(first, second)
    texts = ["a", "", "", "b", "a", "", "b", "c", ""]
    numbers = [*now.tolist(), *old.tolist()]
    assert len(now) == 5 and len(old) == 4
    pairs = list(zip(numbers, texts, strict=True))
    assert all((x == y) == (s == t) for x, s in pairs for y, t in pairs)
    only_nulls = _search._text_numbers(
        pa.chunked_array([pa.array([None], pa.string())]), pa.chunked_array([], pa.string())
    )
    assert [n.tolist() for n in only_nulls] == [[0], []]
