"""The search index a history folder keeps: an add indexes only the messages it brings, and every
search then gives what an index built anew from the folder's files gives."""

from __future__ import annotations

import json
import mmap
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from conftest import ROOT, fresh

from memvelope_tools._frames.folders import INDEX_FOLDER, part_digest, parts_of, read_table
from memvelope_tools._history_folder import _write_whole, add_to_history
from memvelope_tools._search import folder as search_folder
from memvelope_tools._search import history as search_history
from memvelope_tools._search import index as search_index
from memvelope_tools._search import parts as search_parts
from memvelope_tools._search.cache import clear_cache
from memvelope_tools._search.check import check_history_index
from memvelope_tools._search.folder import build_folder_index
from memvelope_tools._search.function import search
from memvelope_tools.errors import QueryError, SearchIndexError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

HISTORY = Path(__file__).resolve().parent.parent / "fixtures" / "history"
GPT_OLD = HISTORY / "chatgpt-old" / "conversations.json"
GPT_NEW = HISTORY / "chatgpt-new" / "conversations.json"
CLAUDE_OLD = HISTORY / "claude-old" / "conversations.json"
CLAUDE_NEW = HISTORY / "claude-new" / "conversations.json"
QUERIES = ["cats", "the", "secret", "a OR the", '"about cats"', "w*", "the NOT cats"]


def engine_files(folder: Path) -> dict[str, int]:
    """The engine's files in the index folder, each with its inode (a file kept is the same file)."""
    index = folder / INDEX_FOLDER
    return {p.name: p.stat().st_ino for p in index.iterdir() if p.suffix in (".idx", ".term", ".store", ".pos")}


def results(folder: Path) -> list[pd.DataFrame]:
    clear_cache()
    return [search(folder, q, limit=None, role=role) for q in QUERIES for role in (None, "user")]


@pytest.mark.parametrize(("old", "new"), [(GPT_OLD, GPT_NEW), (CLAUDE_OLD, CLAUDE_NEW)])
def test_an_add_keeps_the_indexed_messages_and_indexes_only_the_new_ones(
    old: Path, new: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "h"
    add_to_history(old, folder, date="2025-01-01")
    kept = engine_files(folder)
    first = len(search_history.open_history_index(folder))
    added: list[int] = []
    real = search_history.add_rows

    def counted(writer: Any, rows: pa.Table, which: Any, start: int) -> None:
        added.append(len(which))
        real(writer, rows, which, start)

    monkeypatch.setattr(search_history, "add_rows", counted)
    add_to_history(new, folder, date="2025-03-01")
    stored = search_history.open_history_index(folder)
    assert 0 < sum(added) == len(stored) - first  # only the messages the history gained
    stored.close()
    now = engine_files(folder)
    assert set(kept) <= set(now) and all(now[name] == inode for name, inode in kept.items())

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    for name in ("conversations.parquet", "state.parquet", "snapshots.parquet"):
        shutil.copy(folder / name, fresh / name)
    shutil.copytree(folder / "messages", fresh / "messages")
    monkeypatch.setattr(search_history, "add_rows", real)
    build_folder_index(fresh)
    for updated, built in zip(results(folder), results(fresh), strict=True):
        pd.testing.assert_frame_equal(updated, built)
    assert any(len(frame) for frame in results(folder))


def test_an_index_holding_a_message_the_history_lost_is_built_anew(tmp_path: Path) -> None:
    folder = tmp_path / "h"
    add_to_history(GPT_OLD, folder, date="2025-01-01")
    other = tmp_path / "other"
    add_to_history(CLAUDE_OLD, other, date="2025-01-01")
    shutil.rmtree(folder / INDEX_FOLDER)
    shutil.copytree(other / INDEX_FOLDER, folder / INDEX_FOLDER, copy_function=shutil.copy2)
    search_folder.update_folder_index(folder)
    stored = search_history.open_history_index(folder)
    assert "doc" not in stored._rows.column_names  # built anew: document i is row i
    assert len(stored) == 13
    stored.close()
    clear_cache()
    assert list(search(folder, "cats")["snippet"]) == ["Write a haiku about ⟦cats⟧"]


def test_a_damaged_index_is_built_anew(tmp_path: Path) -> None:
    folder = tmp_path / "h"
    add_to_history(GPT_OLD, folder, date="2025-01-01")
    (folder / INDEX_FOLDER / "rows.arrow").write_bytes(b"not arrow")
    add_to_history(GPT_NEW, folder, date="2025-03-01")
    stored = search_history.open_history_index(folder)
    assert len(stored) == 22
    stored.close()


def test_texts_are_numbered_alike_in_both_columns_and_null_as_the_empty_text() -> None:
    first = pa.chunked_array([pa.array(["a", None, ""]), pa.array(["b", "a"])])
    second = pa.chunked_array([pa.array([None, "b"]), pa.array([], pa.string()), pa.array(["c", ""])])
    now, old = search_folder._text_numbers(first, second)
    texts = ["a", "", "", "b", "a", "", "b", "c", ""]
    numbers = [*now.tolist(), *old.tolist()]
    assert len(now) == 5 and len(old) == 4
    pairs = list(zip(numbers, texts, strict=True))
    assert all((x == y) == (s == t) for x, s in pairs for y, t in pairs)
    only_nulls = search_folder._text_numbers(
        pa.chunked_array([pa.array([None], pa.string())]), pa.chunked_array([], pa.string())
    )
    assert [n.tolist() for n in only_nulls] == [[0], []]


# ---- every file of the index is checked before it is read -----------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history folder of two adds, its index up to date; never changed (tests search copies of it)."""
    folder = tmp_path_factory.mktemp("built") / "h"
    add_to_history(GPT_OLD, folder, date="2025-01-01")
    add_to_history(GPT_NEW, folder, date="2025-03-01")
    return folder


@pytest.fixture(scope="module")
def expected(built: Path) -> list[pd.DataFrame]:
    return results(built)


@pytest.fixture
def folder(built: Path, tmp_path: Path) -> Path:
    """A copy of the built folder, file times kept (as ``cp -a`` copies it)."""
    copy = tmp_path / "h"
    shutil.copytree(built, copy)
    return copy


def index_files(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Each file of the folder's index, with its inode, modification time and size."""
    found = {}
    for path in (folder / INDEX_FOLDER).iterdir():
        info = path.lstat()
        found[path.name] = (info.st_ino, info.st_mtime_ns, info.st_size)
    return found


def flip(path: Path, at: int, bits: int = 0x01) -> None:
    """Flip ``bits`` of the byte at ``at``, keeping the file's times (as a restored backup does)."""
    info = path.stat()
    data = bytearray(path.read_bytes())
    data[at] ^= bits
    path.write_bytes(bytes(data))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def index_warnings(caught: Any) -> list[str]:
    return [str(w.message) for w in caught if INDEX_FOLDER in str(w.message)]


def assert_results(got: list[pd.DataFrame], want: list[pd.DataFrame]) -> None:
    assert len(got) == len(want)
    for one, other in zip(got, want, strict=True):
        pd.testing.assert_frame_equal(one, other)


def damage(folder: Path, how: str) -> str:
    """Damage a file of the folder's index, its times kept; the name of the file damaged."""
    index = folder / INDEX_FOLDER
    if how == "rows text":  # the text the index shows of a message: "cats" read as "cbts"
        rows = sorted(index.glob("rows-part-00000*.arrow"))[0]
        flip(rows, rows.read_bytes().index(b"haiku about cats") + len(b"haiku about c"), bits=0x03)
        return rows.name
    parts = index / "parts.json"
    text = parts.read_bytes()
    if how == "parts.json byte":
        flip(parts, len(text) // 2)
    else:  # a digit of a number changed: still JSON of the same shape
        at = text.index(b'"mtime_ns": ') + len(b'"mtime_ns": ')
        flip(parts, at + 3, bits=0x01 if text[at + 3] != ord("9") else 0x02)
        json.loads(parts.read_bytes())
    return parts.name


@pytest.mark.parametrize("how", ["rows text", "parts.json byte", "parts.json digit"])
def test_an_index_file_with_flipped_bits_and_its_times_kept_is_rebuilt_once(
    folder: Path, expected: list[pd.DataFrame], how: str
) -> None:
    name = damage(folder, how)
    with pytest.warns(UserWarning) as caught:
        got = results(folder)
    said = index_warnings(caught)
    assert len(said) == 1 and re.search(rf"search-index is damaged \({re.escape(name)} .*\); rebuilding it", said[0])
    assert_results(got, expected)
    assert check_history_index(folder) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_results(results(folder), expected)


@pytest.mark.parametrize("how", ["rows text", "parts.json byte"])
def test_the_command_line_rebuilds_a_damaged_index_with_one_note(
    folder: Path, expected: list[pd.DataFrame], how: str
) -> None:
    name = damage(folder, how)
    run = fresh("search", str(folder), "cats", "--json")
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1
    assert re.match(rf"memvelope: note: search index .*search-index is damaged \({re.escape(name)} ", run.stderr)
    want = expected[QUERIES.index("cats") * 2]
    assert [row["snippet"] for row in json.loads(run.stdout)] == list(want["snippet"])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
@pytest.mark.parametrize("name", ["parts.json", "rows-part-00001"])
@pytest.mark.parametrize("kind", ["pipe", "device", "link outside"])
def test_an_index_file_that_is_not_a_regular_file_is_never_read(
    folder: Path, expected: list[pd.DataFrame], tmp_path: Path, name: str, kind: str
) -> None:
    path = folder / INDEX_FOLDER / name
    if name.startswith("rows-"):
        [path] = (folder / INDEX_FOLDER).glob(f"{name}*.arrow")
    outside = tmp_path / "outside"
    outside.write_bytes(path.read_bytes())  # what the file held: read through a link, it would pass
    kept = outside.stat().st_mtime_ns
    path.unlink()
    if kind == "pipe":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero" if kind == "device" else outside)
    try:  # a pipe read waits for ever, /dev/zero never ends
        run = subprocess.run(
            [sys.executable, "-m", "memvelope_tools", "search", str(folder), "cats", "--json"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"search read {name} ({kind}) and did not end")
    assert run.returncode == 0, run.stderr
    what = "a pipe" if kind == "pipe" else "a symbolic link"
    assert run.stderr.splitlines() == [
        f"memvelope: note: search index {folder / INDEX_FOLDER} is damaged ({path.name} is {what}); rebuilding it"
    ]
    assert [row["snippet"] for row in json.loads(run.stdout)] == list(expected[QUERIES.index("cats") * 2]["snippet"])
    assert path.is_file() and not path.is_symlink()
    assert outside.stat().st_mtime_ns == kept
    assert check_history_index(folder) == []


@pytest.mark.parametrize("kind", ["link", "file"])
def test_a_search_index_that_is_not_a_folder_of_its_own_is_refused(folder: Path, tmp_path: Path, kind: str) -> None:
    index = folder / INDEX_FOLDER
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(index, elsewhere)  # an index that would serve, read through the link
    before = {p.name: p.read_bytes() for p in elsewhere.iterdir()}
    shutil.rmtree(index)
    if kind == "link":
        index.symlink_to(elsewhere, target_is_directory=True)
    else:
        index.write_bytes(b"")
    clear_cache()
    what = "a symbolic link" if kind == "link" else "a file"
    with pytest.raises(SearchIndexError, match=f"search-index is {what}, not a folder of its own"):
        search(folder, "cats")
    with pytest.raises(SearchIndexError, match="not a folder of its own"):
        search_folder.update_folder_index(folder)
    run = fresh("search", str(folder), "cats")
    assert run.returncode == 1 and len(run.stderr.splitlines()) == 1
    assert run.stderr.startswith(f"memvelope: error: search-index is {what}, not a folder of its own")
    assert index.is_symlink() if kind == "link" else index.read_bytes() == b""
    assert {p.name: p.read_bytes() for p in elsewhere.iterdir()} == before
    assert check_history_index(folder) == [
        f"{index}: search-index is {what}, not a folder of its own, so the search index is not kept there; "
        "remove it and the next search builds the index"
    ]


# ---- a query the engine cannot encode ---------------------------------------------------------------


def test_a_query_holding_a_lone_surrogate_is_the_callers_error_and_leaves_the_index_alone(folder: Path) -> None:
    before = index_files(folder)
    clear_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(QueryError, match=r"'\\ud800' is a lone surrogate") as info:
            search(folder, "\ud800abc")
    assert info.value.reason == "bad-query"
    assert index_files(folder) == before
    run = fresh("search", str(folder), "\udcffabc")  # the bytes b"\xffabc", as a shell passes them
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.splitlines() == [
        "memvelope: error: cannot search for '\\udcffabc': '\\udcff' is a lone surrogate, not a character "
        "(the query's bytes were not UTF-8?)"
    ]
    assert index_files(folder) == before


# ---- the index knows a part by its content ------------------------------------------------------------


def test_a_part_replaced_under_its_name_by_one_as_long_is_indexed_again(folder: Path, tmp_path: Path) -> None:
    [part] = (folder / "messages").glob("part-00000*.parquet")
    table = read_table(part, "part")
    texts = pc.replace_substring(table.column("text"), "cats", "dogs")
    os.replace(_write_whole(folder, table.set_column(table.schema.get_field_index("text"), "text", texts)), part)
    assert read_table(part, "part").num_rows == table.num_rows
    with pytest.warns(UserWarning, match="search-index is out of date"):
        got = results(folder)
    anew = tmp_path / "anew"
    anew.mkdir()
    for name in ("conversations.parquet", "state.parquet", "snapshots.parquet"):
        shutil.copy(folder / name, anew / name)
    shutil.copytree(folder / "messages", anew / "messages")
    build_folder_index(anew)
    assert_results(got, results(anew))
    # The first export's haiku was about cats, the second's about dogs: now both are about dogs.
    assert list(search(folder, "dogs")["snippet"]) == ["Write a haiku about ⟦dogs⟧"] * 2
    assert search(folder, "cats").empty


def test_a_part_digest_is_read_from_its_name_only() -> None:
    assert part_digest("part-00003-0123456789abcdef.parquet") == "0123456789abcdef"
    assert part_digest("part-123456-ffffffffffffffff.parquet") == "ffffffffffffffff"
    assert part_digest("part-00003.parquet") is None
    assert part_digest("part-00003-0123456789ABCDEF.parquet") is None  # hex digests are lower case
    assert part_digest("part-00003-0123456789abcde.parquet") is None
    assert part_digest("part-00003-0123456789abcdef.parquet.tmp") is None


# ---- writers hold the folder's lock ----------------------------------------------------------------


def held_elsewhere(folder: Path) -> bool:
    """Whether another holder has the folder's lock (a lock taken through another descriptor waits for it)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@pytest.mark.skipif(fcntl is None, reason="no flock here")
def test_every_write_of_the_index_holds_the_folders_lock(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = search_index._replace_folder
    locked: list[bool] = []

    def replacing(new: Path, path: Path) -> None:
        locked.append(held_elsewhere(folder))
        real(new, path)

    monkeypatch.setattr(search_index, "_replace_folder", replacing)
    shutil.rmtree(folder / INDEX_FOLDER)
    clear_cache()
    search(folder, "cats")  # builds the missing index
    damage(folder, "rows text")
    clear_cache()
    with pytest.warns(UserWarning, match="is damaged"):
        search(folder, "cats")  # rebuilds the damaged one
    build_folder_index(folder)
    add_to_history(CLAUDE_OLD, folder, date="2025-04-01")  # indexes the part it adds
    assert locked == [True, True, True, True]
    assert not held_elsewhere(folder)


def test_an_index_that_cannot_be_written_is_kept_in_memory(
    folder: Path, expected: list[pd.DataFrame], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(path: Path) -> Any:
        raise PermissionError(13, "Permission denied")

    shutil.rmtree(folder / INDEX_FOLDER)
    monkeypatch.setattr(search_history, "new_folder", refused)
    with pytest.warns(UserWarning, match="cannot write .*Permission denied.*in memory only"):
        got = results(folder)
    assert_results(got, expected)
    assert not (folder / INDEX_FOLDER).exists()


# ---- checking the index without changing it ------------------------------------------------------------


def test_check_history_index_says_each_problem_and_changes_nothing(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = index_files(folder)
    assert check_history_index(folder) == []
    assert index_files(folder) == before
    damage(folder, "rows text")
    before = index_files(folder)
    index = folder / INDEX_FOLDER
    [rows] = index.glob("rows-part-00000*.arrow")
    assert check_history_index(folder) == [f"{index}: {rows.name} is not as written (its sha256 differs)"]
    assert index_files(folder) == before
    shutil.rmtree(index)
    assert check_history_index(folder) == []  # no index: the next search builds it

    def unwritable(base: Path) -> None:
        raise OSError(28, "No space left on device")

    search_folder.update_folder_index(folder)
    monkeypatch.setattr(search_folder, "update_folder_index", unwritable)
    with pytest.warns(UserWarning, match="cannot write the search index"):
        add_to_history(CLAUDE_OLD, folder, date="2025-04-01")
    [part] = (folder / "messages").glob("part-00002*.parquet")
    assert check_history_index(folder) == [f"{index}: does not hold {part.name} yet"]


def test_parts_named_by_their_digest_are_never_hashed_when_the_index_is_opened(
    folder: Path, expected: list[pd.DataFrame], monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [name for name, _ in parts_of(read_table(folder / "state.parquet", "state"))]
    assert all(part_digest(name) is not None for name in names)  # an add names each part by its content
    assert_results(results(folder), expected)
    told = json.loads((folder / INDEX_FOLDER / "parts.json").read_text())
    assert [(p["name"], p["digest"]) for p in told["parts"]] == [(n, part_digest(n)) for n in names]
    hashed: list[str] = []
    real = search_parts._sha256_file

    def counted(path: Path) -> str:
        hashed.append(path.name)
        return real(path)

    monkeypatch.setattr(search_parts, "_sha256_file", counted)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_results(results(folder), expected)
    assert hashed == []
    assert check_history_index(folder) == []
    assert hashed == []


def test_an_add_and_a_search_check_each_rows_file_through_reads_never_through_its_mapping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A rows file holds the texts of a part: hashed through its mapping, every page of it would be resident in
    # the process that checks it (at 1 GB, 470 MB of an add's peak).
    folder = tmp_path / "h"
    add_to_history(GPT_OLD, folder, date="2025-01-01")
    hashed: list[type] = []
    real = search_parts.hashlib

    class Traced:
        @staticmethod
        def sha256(data: Any = b"") -> Any:
            digest = real.sha256()
            hashed.append(type(data))
            digest.update(data)
            return _Updates(digest, hashed)

    monkeypatch.setattr(search_parts, "hashlib", Traced)
    add_to_history(GPT_NEW, folder, date="2025-03-01")  # checks the rows file of the index it adds to
    clear_cache()
    assert len(search(folder, "the", limit=None)) > 0  # checks the rows files of the index it opens
    assert hashed and bytes in hashed
    assert not [kind for kind in hashed if issubclass(kind, mmap.mmap)]


class _Updates:
    """A digest that records the type of what it is given."""

    def __init__(self, digest: Any, seen: list[type]) -> None:
        self.digest, self.seen = digest, seen

    def update(self, data: Any) -> None:
        self.seen.append(type(data))
        self.digest.update(data)

    def hexdigest(self) -> str:
        return str(self.digest.hexdigest())
