"""memvelope_tools._history_folder and ``memvelope history``: a Parquet history folder that grows."""

from __future__ import annotations

import re
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from memvelope_tools import _history_folder
from memvelope_tools._frames.folders import HISTORY_ID_KEY, INDEX_FOLDER
from memvelope_tools._history.folder import read_history
from memvelope_tools._history.history import history
from memvelope_tools._history.merge import Merge
from memvelope_tools._history_folder import add_to_history
from memvelope_tools._tables import read_parquet, to_parquet
from memvelope_tools.cli import main
from memvelope_tools.errors import FormatError

HISTORY = Path(__file__).resolve().parent.parent / "fixtures" / "history"
OLD = HISTORY / "chatgpt-old" / "conversations.json"
NEW = HISTORY / "chatgpt-new" / "conversations.json"


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def top(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def numbered(folder: Path) -> list[str]:
    """The parts' names in ``folder``, each without the digest of its content (``part-00000``, ...)."""
    names = top(folder)
    assert all(re.fullmatch(r"part-\d{5}-[0-9a-f]{16}\.parquet", n) for n in names), names
    return [n[:10] for n in names]


def assert_holds_history(folder: Path, exports: list[Path]) -> None:
    """The folder holds what history() gives of ``exports`` dated 2025-01-01 and 2025-03-01 (its
    ``source`` aside: history() labels two files of one name by path, the folder by name)."""
    stored = read_history(folder)
    merged = history(exports, dates=["2025-01-01", "2025-03-01"])
    for name in ("conversations", "messages"):
        pd.testing.assert_frame_equal(stored[name].drop(columns="source"), merged[name].drop(columns="source"))


def test_adding_the_same_export_again_changes_no_file(tmp_path: Path) -> None:
    folder = tmp_path / "h"
    assert add_to_history(OLD, folder, date="2025-01-01")["added"] is True
    assert add_to_history(NEW, folder, date="2025-03-01")["added"] is True
    before = files(folder)
    assert top(folder) == ["conversations.parquet", "messages", "search-index", "snapshots.parquet", "state.parquet"]
    assert numbered(folder / "messages") == ["part-00000", "part-00001"]
    assert any(name.startswith("search-index/") for name in before)
    again = add_to_history(NEW, folder, date="2025-03-01")
    assert again["added"] is False
    assert again["date"] == pd.Timestamp("2025-03-01", tz="UTC")
    assert files(folder) == before


def test_each_add_that_changes_the_messages_leaves_the_search_index_up_to_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvelope_tools._search.cache import clear_cache
    from memvelope_tools._search.function import search
    from memvelope_tools._search.history import open_history_index
    from memvelope_tools._search.index import SearchIndex

    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    assert len(open_history_index(folder)) == 13
    add_to_history(NEW, folder, date="2025-03-01")
    stored = open_history_index(folder)
    assert len(stored) == 22  # every message the history holds, the edited-away and deleted ones too
    assert stored.count("secret") == 1  # deleted upstream by the second export, still found
    stored.close()
    clear_cache()
    builds: list[Any] = []
    real = SearchIndex.build

    def counted(*args: Any, **kwargs: Any) -> Any:
        builds.append(kwargs.get("path"))
        return real(*args, **kwargs)

    monkeypatch.setattr(SearchIndex, "build", counted)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an index found out of date would warn as it is rebuilt
        found = search(folder, "cats")
    assert builds == [] and list(found["snippet"]) == ["Write a haiku about ⟦cats⟧"]


def test_an_index_that_cannot_be_written_leaves_the_history_added_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvelope_tools._search import history as search_history

    def failing(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(search_history, "add_rows", failing)
    folder = tmp_path / "h"
    with pytest.warns(UserWarning, match=r"cannot write the search index of .*No space left on device"):
        assert add_to_history(OLD, folder, date="2025-01-01")["added"] is True
    assert top(folder) == ["conversations.parquet", "messages", "snapshots.parquet", "state.parquet"]
    assert len(read_history(folder)["messages"]) == 13


def test_the_folder_holds_what_history_gives(tmp_path: Path) -> None:
    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    add_to_history(NEW, folder, date="2025-03-01")
    assert_holds_history(folder, [OLD, NEW])
    stored = read_history(folder)
    assert set(stored["messages"]["source"]) == {"conversations.json"}
    assert list(stored["snapshots"]["new"]) == [7, 1]  # the renamed draft is matched by its first message


def test_the_folder_is_a_parquet_folder_the_usual_readers_take(tmp_path: Path) -> None:
    from memvelope_tools._search.function import search

    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    add_to_history(NEW, folder, date="2025-03-01")
    frames = read_parquet(folder)
    assert len(frames["messages"]) == 22 and len(frames["conversations"]) == 8
    found = search(folder, "cats")
    # the prompt an edit replaced is still found, under its own conversation's title
    assert list(found["title"]) == ["Edited prompt"]
    assert list(found["snippet"]) == ["Write a haiku about ⟦cats⟧"]


def test_an_interrupted_add_leaves_the_folder_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    before = files(folder)
    real = _history_folder.write_table
    calls: list[Path] = []

    def interrupted(table: Any, fh: Any) -> None:
        calls.append(fh.name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(table, fh)

    monkeypatch.setattr(_history_folder, "write_table", interrupted)
    with pytest.raises(KeyboardInterrupt):
        add_to_history(NEW, folder, date="2025-03-01")
    assert len(calls) == 2
    assert files(folder) == before  # no file replaced, no temporary file left


def test_an_older_export_after_a_newer_one_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "h"
    add_to_history(NEW, folder, date="2025-03-01")
    before = files(folder)
    with pytest.raises(FormatError, match="add exports oldest first"):
        add_to_history(OLD, folder, date="2025-01-01")
    assert files(folder) == before


def test_an_older_export_the_folder_already_holds_is_said_to_be_held(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    add_to_history(NEW, folder, date="2025-03-01")
    before = files(folder)
    row = add_to_history(OLD, folder, date="2025-01-01")
    assert (row["added"], row["snapshot"], row["messages"]) == (False, 0, 13)
    assert main(["history", "add", str(OLD), "--to", str(folder), "--date", "2025-01-01"]) == 0
    assert (
        capsys.readouterr().out
        == f"{folder} already holds this export (2025-01-01 00:00 UTC, given): nothing written\n"
    )
    assert files(folder) == before


def test_a_backup_found_later_is_refused_with_the_commands_that_put_it_in_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    add_to_history(NEW, folder, date="2025-03-01")
    before = files(folder)
    assert main(["history", "add", str(OLD), "--to", str(folder), "--date", "2025-02-01"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    # both dates as the rest of the command line shows them, then every export in date order
    assert "dated 2025-02-01 00:00 UTC, before the folder's newest chatgpt export (2025-03-01 00:00 UTC)" in err
    add = "memvelope history add conversations.json --to NEW-FOLDER --date "
    assert f"{add}2025-01-01T00:00:00Z; {add}2025-02-01T00:00:00Z; {add}2025-03-01T00:00:00Z" in err
    assert "+00:00" not in err
    assert files(folder) == before


def test_a_parquet_folder_that_is_not_a_history_is_refused(tmp_path: Path) -> None:
    to_parquet(OLD, tmp_path / "p")
    with pytest.raises(FormatError, match="not a history folder"):
        add_to_history(NEW, tmp_path / "p", date="2025-03-01")
    with pytest.raises(FormatError, match="not a history folder"):
        read_history(tmp_path / "p")


def test_cli_history_add_and_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "h"
    assert main(["history", "add", str(OLD), "--to", str(folder), "--date", "2025-01-01"]) == 0
    assert main(["history", "add", str(NEW), "--to", str(folder), "--date", "2025-03-01"]) == 0
    assert main(["history", "add", str(NEW), "--to", str(folder), "--date", "2025-03-01"]) == 0
    assert main(["history", "show", str(folder)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"added conversations.json (2025-01-01 00:00 UTC, given) to {folder}: 7 conversations, 13 messages; new 7",
        f"added conversations.json (2025-03-01 00:00 UTC, given) to {folder}: 7 conversations, 17 messages; "
        "new 1, grown 2, edited 2, unchanged 2, missing 1",
        f"{folder} already holds this export (2025-03-01 00:00 UTC, given): nothing written",
        f"{folder}: 2 snapshots",
        "  #0  2025-01-01 00:00 UTC, given  chatgpt  conversations.json: 7 conversations, 13 messages; new 7",
        "  #1  2025-03-01 00:00 UTC, given  chatgpt  conversations.json: 7 conversations, 17 messages; "
        "new 1, grown 2, edited 2, unchanged 2, missing 1",
        "conversations: 8 (current 7, deleted-upstream 1)",
        "messages: 22 (current 17, edited-away 3, deleted-upstream 2)",
    ]


def test_cli_history_show_of_a_missing_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "show", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a history folder" in err


def test_search_of_a_history_folder_says_which_messages_the_provider_no_longer_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memvelope_tools._search.function import search

    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    add_to_history(NEW, folder, date="2025-03-01")
    found = search(folder, "cats OR dogs OR secret")
    by_text = dict(zip(found["snippet"], found["status"], strict=True))
    assert by_text == {
        "Write a haiku about ⟦cats⟧": "edited-away",
        "Write a haiku about ⟦dogs⟧": "current",
        "⟦Secret⟧ plans": "deleted-upstream",
    }
    assert "status" not in search(NEW, "dogs").columns  # not a history folder: results as ever
    assert main(["search", str(folder), "secret"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[5] == "status" and row.split()[5] == "deleted-upstream" and row.endswith("⟦Secret⟧ plans")


def test_search_of_a_history_folder_keeps_the_status_on_a_narrow_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    add_to_history(NEW, folder, date="2025-03-01")
    monkeypatch.setenv("COLUMNS", "60")  # as a narrow terminal, or a pipe told its width
    assert main(["search", str(folder), "cats OR dogs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    statuses = {line.split()[5]: line for line in lines[1:]}  # rank, score, day, time, role, status
    assert sorted(statuses) == ["current", "edited-away"]
    assert "cats" in statuses["edited-away"] and "dogs" in statuses["current"]


def test_search_of_a_history_folder_gives_a_message_edited_in_place_a_status_for_each_text(
    edited_in_place: Path,
) -> None:
    from memvelope_tools._search.function import search

    folder = edited_in_place  # the same message (id, role, time, place), its text changed between two exports
    found = search(folder, "ferrets OR otters")
    assert dict(zip(found["snippet"], found["status"], strict=True)) == {
        "tell me about ⟦ferrets⟧": "edited-away",
        "tell me about ⟦otters⟧": "current",
    }
    # found by its title: shown as the most recent of its first messages
    by_title = search(folder, "pets")
    assert list(zip(by_title["snippet"], by_title["status"], by_title["matched"], strict=True)) == [
        ("tell me about otters", "current", "title")
    ]


def test_a_history_folder_searched_with_an_index_kept_in_memory_answers_as_its_own_index_does(
    edited_in_place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvelope_tools._search import history as search_history
    from memvelope_tools._search.function import search

    def refused(path: Path) -> Any:
        raise PermissionError(13, "Permission denied")

    shutil.rmtree(edited_in_place / INDEX_FOLDER)
    monkeypatch.setattr(search_history, "new_folder", refused)  # its index cannot be written beside it
    with pytest.warns(UserWarning, match="in memory only"):
        found = search(edited_in_place, "ferrets OR otters")
    assert dict(zip(found["snippet"], found["status"], strict=True)) == {
        "tell me about ⟦ferrets⟧": "edited-away",
        "tell me about ⟦otters⟧": "current",
    }
    by_title = search(edited_in_place, "pets")  # shown as the most recent of its first messages
    assert list(zip(by_title["snippet"], by_title["status"], by_title["matched"], strict=True)) == [
        ("tell me about otters", "current", "title")
    ]


CLAUDE_OLD = HISTORY / "claude-old" / "conversations.json"
CLAUDE_NEW = HISTORY / "claude-new" / "conversations.json"


def _in_small_batches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Hand every conversation of an export on as a batch of its own (as soon as it holds a message and a
    character of text); the sizes of the batches the add compares, as it compares them."""
    monkeypatch.setattr(_history_folder, "_WINDOW", 1)
    monkeypatch.setattr(_history_folder, "_BATCH_ROWS", 1)
    return _batches_merged(monkeypatch, lambda convs, msgs: int(convs.num_rows))


def _batches_merged(monkeypatch: pytest.MonkeyPatch, size: Callable[[Any, Any], int]) -> list[int]:
    """The ``size`` of each batch (its conversations and messages tables) the add compares, as it compares them."""
    sizes: list[int] = []
    real = Merge.add

    def counted(self: Any, convs: Any, msgs: Any) -> None:
        sizes.append(size(convs, msgs))
        real(self, convs, msgs)

    monkeypatch.setattr(Merge, "add", counted)
    return sizes


@pytest.mark.parametrize(("old", "new"), [(OLD, NEW), (CLAUDE_OLD, CLAUDE_NEW)])
def test_an_add_compares_the_export_a_batch_at_a_time_as_history_merges_it(
    old: Path, new: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvelope_tools.cli import main as cli

    sizes = _in_small_batches(monkeypatch)
    folder = tmp_path / "h"
    # The add reads the export's conversations in batches as they are converted.
    assert cli(["history", "add", str(old), "--to", str(folder), "--date", "2025-01-01", "-q"]) == 0
    assert cli(["history", "add", str(new), "--to", str(folder), "--date", "2025-03-01", "-q"]) == 0
    assert_holds_history(folder, [old, new])
    assert len(sizes) > 4  # in batches, not whole
    if old == OLD:  # the ChatGPT export holds a conversation without an id: read again whole
        assert sizes[-1] == 7


def test_an_add_hands_on_each_window_of_the_envelope_as_a_batch_however_few_its_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A batch bounded by a count of messages alone would hold a whole export of a few long messages; one
    # is handed on as soon as it holds the window's characters of text too (here one: each conversation).
    monkeypatch.setattr(_history_folder, "_WINDOW", 1)
    sizes = _batches_merged(monkeypatch, lambda convs, msgs: int(msgs.num_rows))
    add_to_history(CLAUDE_OLD, tmp_path / "h", date="2025-01-01")
    assert len(sizes) > 2 and max(sizes) < sum(sizes)
    add_to_history(CLAUDE_NEW, tmp_path / "h", date="2025-03-01")
    assert_holds_history(tmp_path / "h", [CLAUDE_OLD, CLAUDE_NEW])


@pytest.mark.parametrize(("old", "new"), [(OLD, NEW), (CLAUDE_OLD, CLAUDE_NEW)])
def test_a_folder_added_to_a_window_at_a_time_holds_what_one_added_whole_holds(
    old: Path, new: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow.parquet as pq

    def added(folder: Path) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
        add_to_history(old, folder, date="2025-01-01")
        add_to_history(new, folder, date="2025-03-01")
        parts = [pq.read_table(folder / "messages" / name).to_pandas() for name in top(folder / "messages")]
        return read_history(folder), pd.concat(parts, ignore_index=True)

    monkeypatch.setattr(_history_folder, "_BATCH_ROWS", 1 << 20)
    whole, whole_parts = added(tmp_path / "whole")
    monkeypatch.setattr(_history_folder, "_WINDOW", 100)
    monkeypatch.setattr(_history_folder, "_BATCH_ROWS", 1)
    windowed, windowed_parts = added(tmp_path / "windowed")
    for name in ("snapshots", "conversations", "messages"):
        pd.testing.assert_frame_equal(windowed[name], whole[name])
    pd.testing.assert_frame_equal(windowed_parts, whole_parts)
    assert numbered(tmp_path / "windowed" / "messages") == numbered(tmp_path / "whole" / "messages")


def test_an_export_with_an_id_repeated_in_a_later_batch_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    convs = [c for c in json.loads(NEW.read_text(encoding="utf-8")) if c.get("id")]
    doubled = tmp_path / "doubled" / "conversations.json"
    doubled.parent.mkdir()
    doubled.write_text(json.dumps([*convs, convs[0]]), encoding="utf-8")
    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    sizes = _in_small_batches(monkeypatch)
    add_to_history(doubled, folder, date="2025-03-01")
    assert sizes[-1] == len(convs) + 1 and len(sizes) > 2
    assert_holds_history(folder, [OLD, doubled])


def test_each_add_writes_only_the_messages_it_saw_first(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    [name] = top(folder / "messages")
    first = files(folder)[f"messages/{name}"]
    add_to_history(NEW, folder, date="2025-03-01")
    add_to_history(NEW, folder, date="2025-04-01")  # nothing new: no part
    assert numbered(folder / "messages") == ["part-00000", "part-00001"]
    assert files(folder)[f"messages/{name}"] == first
    assert [pq.read_metadata(folder / "messages" / name).num_rows for name in top(folder / "messages")] == [13, 9]
    stored = read_history(folder)
    assert len(stored["messages"]) == 22 and list(stored["snapshots"]["new"]) == [7, 1, 0]
    assert (stored["messages"]["first_seen"] == pd.Timestamp("2025-03-01", tz="UTC")).sum() == 9


def test_a_folder_of_the_earlier_layout_is_read_and_its_next_add_writes_parts(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from memvelope_tools._frames.folders import read_tables

    add_to_history(OLD, tmp_path / "parts", date="2025-01-01")
    tables = read_tables(tmp_path / "parts")
    assert tables is not None
    folder = tmp_path / "h"
    folder.mkdir()
    for name, table in tables.items():  # one file per table, as the earlier release wrote them (no history id)
        kept = {k: v for k, v in (table.schema.metadata or {}).items() if k != HISTORY_ID_KEY}
        pq.write_table(table.replace_schema_metadata(kept), folder / f"{name}.parquet")
    earlier = read_history(folder)
    assert len(earlier["messages"]) == 13 and len(read_parquet(folder)["messages"]) == 13
    add_to_history(NEW, folder, date="2025-03-01")
    assert top(folder) == ["conversations.parquet", "messages", "search-index", "snapshots.parquet", "state.parquet"]
    assert_holds_history(folder, [OLD, NEW])


def test_the_frame_functions_take_a_history_folder_and_a_parquet_folder(tmp_path: Path) -> None:
    from memvelope_tools import conversations_frame, messages_frame

    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    add_to_history(NEW, folder, date="2025-03-01")
    stored = read_parquet(folder)
    pd.testing.assert_frame_equal(messages_frame(folder), stored["messages"])
    pd.testing.assert_frame_equal(conversations_frame(folder), stored["conversations"])
    assert len(messages_frame(folder)) == 22 and set(messages_frame(folder)["source"]) == {"conversations.json"}
    to_parquet(NEW, tmp_path / "p")
    pd.testing.assert_frame_equal(messages_frame(tmp_path / "p"), read_parquet(tmp_path / "p")["messages"])
    both = messages_frame([folder, NEW])  # beside a document, each keeps its rows
    assert len(both) == 22 + len(messages_frame(NEW))


def test_an_add_reads_its_export_through_the_one_stream_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An export is merged as the stream every analysis reads gives it, converted once in this process:
    never first written to an envelope file and read back."""
    import zipfile

    import memvelope_tools._convert.pipeline as pipeline

    export = tmp_path / "export.zip"
    with zipfile.ZipFile(export, "w") as archive:
        archive.write(CLAUDE_NEW, "conversations.json")
    streamed: list[str] = []
    real = _history_folder.stream

    def counted(found: Any, sink: Any, **options: Any) -> str:
        streamed.append(found.kind)
        return real(found, sink, **options)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the export was written to an envelope file")

    monkeypatch.setattr(_history_folder, "stream", counted)
    monkeypatch.setattr(pipeline, "convert_stream", refused)
    add_to_history(CLAUDE_OLD, tmp_path / "h", date="2025-01-01")
    add_to_history(export, tmp_path / "h", date="2025-03-01")
    assert streamed == ["export", "export"]
    monkeypatch.undo()  # history() below converts the exports as diff does
    assert_holds_history(tmp_path / "h", [CLAUDE_OLD, CLAUDE_NEW])


def test_an_add_reads_the_folders_tables_from_the_pool_that_gives_back_what_a_batch_freed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read from Arrow's default pool (mimalloc), the folder's conversations and state left tens of MB resident
    # under every later step of the add.
    import os

    import pyarrow as pa

    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        pytest.skip("the environment chose Arrow's pool")
    try:
        lean = pa.jemalloc_memory_pool().backend_name
    except NotImplementedError:
        pytest.skip("this pyarrow has no jemalloc")
    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    pools: list[tuple[str, str]] = []
    real = _history_folder.read_table

    def traced(path: Path, name: str, *args: Any, **kwargs: Any) -> Any:
        pools.append((name, pa.default_memory_pool().backend_name))
        return real(path, name, *args, **kwargs)

    monkeypatch.setattr(_history_folder, "read_table", traced)
    add_to_history(NEW, folder, date="2025-03-01")
    assert [name for name, _ in pools] == ["snapshots", "conversations", "state"]
    assert {pool for _, pool in pools} == {lean}


def test_an_add_lets_go_of_the_merged_history_before_it_updates_the_search_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The index's writer has a peak of its own: the merge's tables and arrays held meanwhile stacked under it.
    import weakref

    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    merges: list[weakref.ref[Merge]] = []
    real_init, real_index = Merge.__init__, _history_folder._index
    alive: list[int] = []

    def init(self: Merge, *args: Any, **kwargs: Any) -> None:
        merges.append(weakref.ref(self))
        real_init(self, *args, **kwargs)

    def index(base: Path) -> None:
        alive.append(sum(ref() is not None for ref in merges))
        real_index(base)

    monkeypatch.setattr(Merge, "__init__", init)
    monkeypatch.setattr(_history_folder, "_index", index)
    assert add_to_history(NEW, folder, date="2025-03-01")["added"] is True
    assert merges and alive == [0]
