"""A history folder keeps everything whatever happens to it: adds racing, files lost or taken from another
history, temporaries left by killed runs, a full disk, links where folders should be."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import fresh

import memvelope_tools as mv
from memvelope_tools._frames.folders import HISTORY_ID_KEY
from memvelope_tools._history.folder import read_history
from memvelope_tools._history_check import check_history
from memvelope_tools._history_folder import add_to_history
from memvelope_tools.errors import FormatError, MemvelopeError, SearchIndexError

ROOT = Path(__file__).resolve().parent.parent
HISTORY = ROOT / "fixtures" / "history"
OLD = HISTORY / "chatgpt-old" / "conversations.json"
NEW = HISTORY / "chatgpt-new" / "conversations.json"


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def racer(tmp_path: Path, k: int) -> Path:
    """The old fixture export with conversations of their own (new ids) whose every text ends in ``racerK``."""
    convs = json.loads(OLD.read_text(encoding="utf-8"))
    for conv in convs:
        for key in ("id", "conversation_id"):
            if conv.get(key):
                conv[key] = f"{conv[key]}-racer{k}"
        for node in conv["mapping"].values():
            parts = ((node.get("message") or {}).get("content") or {}).get("parts")
            if parts:
                node["message"]["content"]["parts"] = [f"{p} racer{k}" if isinstance(p, str) else p for p in parts]
    folder = tmp_path / f"racer{k}"
    folder.mkdir()
    path = folder / "conversations.json"
    path.write_text(json.dumps(convs), encoding="utf-8")
    return path


def _add_when_all_are_ready(export: str, folder: str, barrier: Any) -> None:
    barrier.wait()
    try:
        add_to_history(export, folder, date="2025-01-01")
    except MemvelopeError:
        os._exit(1)
    os._exit(0)


def race(exports: list[Path], folder: Path) -> list[int]:
    """Add every export to ``folder`` at once, each in a process of its own; their exit codes."""
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(len(exports))
    racers = [
        context.Process(target=_add_when_all_are_ready, args=(os.fspath(e), os.fspath(folder), barrier))
        for e in exports
    ]
    for process in racers:
        process.start()
    for process in racers:
        process.join(120)
    return [int(p.exitcode if p.exitcode is not None else -1) for p in racers]


def assert_holds_every_add(folder: Path, exports: list[Path], codes: list[int]) -> None:
    """Every add that ended well is in the folder and its index, and the index equals one built anew."""
    stored = read_history(folder)
    texts = stored["messages"]["text"].fillna("")
    kept = 0
    for k, (export, code) in enumerate(zip(exports, codes, strict=True)):
        if code != 0:
            continue
        kept += 1
        marker = export.parent.name
        assert texts.str.endswith(f" {marker}").sum() == 13, f"the add of {marker} exited 0 but is not all there"
        assert len(mv.search(folder, marker, limit=None)) == 13, f"the index lacks {marker} (add {k})"
    assert len(stored["snapshots"]) == kept
    assert check_history(folder).ok
    found = {e.parent.name: mv.search(folder, e.parent.name, limit=None) for e in exports}
    for path in sorted((folder / "search-index").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (folder / "search-index").rmdir()
    from memvelope_tools._search.cache import clear_cache

    clear_cache()
    for marker, hits in found.items():
        pd.testing.assert_frame_equal(mv.search(folder, marker, limit=None), hits)


@pytest.mark.slow
@pytest.mark.parametrize("adds", [2, 4])
def test_adds_racing_for_one_folder_each_keep_what_they_added(tmp_path: Path, adds: int) -> None:
    exports = [racer(tmp_path, k) for k in range(adds)]
    rounds = 6 if adds == 2 else 3
    for n in range(rounds):
        folder = tmp_path / f"h{n}"
        codes = race(exports, folder)
        assert codes == [0] * adds, codes  # same date, other conversations: every add is taken
        assert_holds_every_add(folder, exports, codes)


def test_an_add_after_a_race_builds_on_every_part(tmp_path: Path) -> None:
    exports = [racer(tmp_path, k) for k in range(2)]
    folder = tmp_path / "h"
    assert race(exports, folder) == [0, 0]
    add_to_history(NEW, folder, date="2025-03-01")
    stored = read_history(folder)
    assert len(stored["snapshots"]) == 3
    for export in exports:
        assert stored["messages"]["text"].fillna("").str.endswith(f" {export.parent.name}").sum() == 13


def test_parts_are_named_by_their_content(tmp_path: Path) -> None:
    from memvelope_tools._frames.folders import file_digest, part_digest

    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    add_to_history(NEW, folder, date="2025-03-01")
    parts = sorted((folder / "messages").iterdir())
    assert [p.name[:10] for p in parts] == ["part-00000", "part-00001"]
    for part in parts:
        assert part_digest(part.name) == file_digest(part)
    assert part_digest("part-00000.parquet") is None


# ---- a folder that says what is wrong ----------------------------------------------------------------


@pytest.fixture
def history_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    add_to_history(NEW, folder, date="2025-03-01")
    return folder


@pytest.mark.parametrize("name", ["state.parquet", "snapshots.parquet", "conversations.parquet"])
def test_a_folder_that_lost_a_table_is_refused_never_taken_as_empty(history_folder: Path, name: str) -> None:
    (history_folder / name).unlink()
    before = files(history_folder)
    with pytest.raises(FormatError) as caught:
        add_to_history(NEW, history_folder, date="2025-04-01")
    assert caught.value.reason == "bad-history"
    assert name in caught.value.msg and "\n" not in str(caught.value)
    assert files(history_folder) == before
    with pytest.raises(FormatError, match=re.escape(name)):
        read_history(history_folder)
    with pytest.raises(FormatError, match=re.escape(name)):
        mv.messages_frame(history_folder)
    with pytest.raises(FormatError, match=re.escape(name)):
        mv.search(history_folder, "haiku")
    for command in (["search", os.fspath(history_folder), "haiku"], ["history", "show", os.fspath(history_folder)]):
        run = fresh(*command)
        assert run.returncode == 1 and run.stderr.count("\n") == 1 and name in run.stderr, run.stderr


@pytest.mark.parametrize("name", ["state.parquet", "snapshots.parquet", "conversations.parquet"])
def test_a_damaged_table_is_refused_with_one_line_naming_it(history_folder: Path, name: str) -> None:
    path = history_folder / name
    data = bytearray(path.read_bytes())
    data[len(data) - 12 : len(data) - 8] = b"\xff\xff\xff\x7f"  # the footer's length: the file cannot be read
    path.write_bytes(bytes(data))
    before = files(history_folder)
    with pytest.raises(FormatError) as caught:
        add_to_history(NEW, history_folder, date="2025-04-01")
    assert caught.value.reason == "bad-history" and caught.value.source == str(path)
    assert "put back the folder's own copy" in caught.value.msg and "\n" not in str(caught.value)
    assert files(history_folder) == before
    assert [p for p in check_history(history_folder).problems if p.startswith(name)]
    run = fresh("search", os.fspath(history_folder), "haiku")
    assert run.returncode == 1 and run.stderr.count("\n") == 1 and "put back the folder's own copy" in run.stderr


def test_a_lost_state_through_the_command_line_is_one_line_and_exit_1(history_folder: Path) -> None:
    (history_folder / "state.parquet").unlink()
    before = files(history_folder)
    run = fresh("history", "add", os.fspath(NEW), "--to", os.fspath(history_folder), "--date", "2025-04-01")
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "state.parquet" in run.stderr and "Traceback" not in run.stderr
    assert files(history_folder) == before
    check = fresh("history", "check", os.fspath(history_folder))
    assert check.returncode == 1
    assert "state.parquet is missing" in check.stdout


def test_a_table_from_another_history_is_refused(tmp_path: Path, history_folder: Path) -> None:
    other = tmp_path / "other"
    add_to_history(OLD, other, date="2025-01-01")
    add_to_history(NEW, other, date="2025-03-01")
    ours = pq.read_schema(history_folder / "snapshots.parquet").metadata[HISTORY_ID_KEY]
    theirs = pq.read_schema(other / "snapshots.parquet").metadata[HISTORY_ID_KEY]
    assert ours != theirs
    (history_folder / "snapshots.parquet").write_bytes((other / "snapshots.parquet").read_bytes())
    with pytest.raises(FormatError, match=r"snapshots\.parquet belongs to another history") as caught:
        add_to_history(NEW, history_folder, date="2025-04-01")
    assert caught.value.reason == "bad-history"
    with pytest.raises(FormatError, match="another history"):
        read_history(history_folder)
    assert not check_history(history_folder).ok


def test_a_missing_or_damaged_part_is_refused_and_named(history_folder: Path) -> None:
    first, second = sorted((history_folder / "messages").iterdir())
    data = bytearray(second.read_bytes())
    data[len(data) // 2] ^= 0xFF
    second.write_bytes(bytes(data))
    checked = check_history(history_folder)
    assert [p for p in checked.problems if second.name in p], checked.problems
    first.unlink()
    before = files(history_folder)
    with pytest.raises(FormatError, match=re.escape(f"messages/{first.name} is missing")) as caught:
        add_to_history(NEW, history_folder, date="2025-04-01")
    assert caught.value.reason == "bad-history"
    assert files(history_folder) == before


def test_history_check_says_whole_for_a_whole_folder(history_folder: Path) -> None:
    run = fresh("history", "check", os.fspath(history_folder))
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout == f"{history_folder}: whole (2 snapshots, 2 parts, 22 messages)\n"
    checked = check_history(history_folder)
    assert checked.ok and (checked.snapshots, checked.parts, checked.messages) == (2, 2, 22)


def test_history_check_names_a_part_the_state_does_not_list(history_folder: Path) -> None:
    stray = history_folder / "messages" / "part-00009-0123456789abcdef.parquet"
    stray.write_bytes(next((history_folder / "messages").iterdir()).read_bytes())
    problems = check_history(history_folder).problems
    assert len(problems) == 1 and stray.name in problems[0] and "not part of the history" in problems[0]


# ---- no litter, right modes, no writing through links ------------------------------------------------


def test_temporaries_of_earlier_runs_are_removed_by_the_next_add_and_by_check(history_folder: Path) -> None:
    litter = [
        history_folder / "messages" / ".part-abc123.tmp",
        history_folder / ".state.parquet.x1y2.tmp",
        history_folder / ".search-index-q9.tmp" / "rows.arrow",
    ]
    for path in litter:
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"x" * 1000)
    add_to_history(NEW, history_folder, date="2025-04-01")
    assert not any(p.exists() for p in litter) and not litter[2].parent.exists()
    for path in litter[:2]:
        path.write_bytes(b"x")
    checked = check_history(history_folder)
    assert sorted(checked.removed) == [".state.parquet.x1y2.tmp", "messages/.part-abc123.tmp"]
    assert checked.ok


def test_parts_get_the_mode_the_tables_get(tmp_path: Path) -> None:
    folder = tmp_path / "h"
    mask = os.umask(0o022)
    try:
        add_to_history(OLD, folder, date="2025-01-01")
    finally:
        os.umask(mask)
    [part] = (folder / "messages").iterdir()
    modes = {stat.S_IMODE(p.stat().st_mode) for p in [part, *folder.glob("*.parquet")]}
    assert modes == {0o644}


@pytest.mark.parametrize("name", ["messages", "search-index"])
def test_a_linked_folder_inside_the_history_is_refused_and_not_written_through(
    tmp_path: Path, history_folder: Path, name: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (history_folder / name).rename(elsewhere)
    (history_folder / name).symlink_to(elsewhere)
    before, folder_before = files(elsewhere), files(history_folder)
    said = "is not a folder inside the history folder" if name == "messages" else "not a folder of its own"
    with pytest.raises((FormatError, SearchIndexError), match=said):
        add_to_history(NEW, history_folder, date="2025-04-01")
    assert files(elsewhere) == before
    assert files(history_folder) == folder_before


def _limit_file_size(limit: int) -> Any:
    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limited


@pytest.mark.slow
@pytest.mark.parametrize("limit", [1_000, 3_000, 5_000])  # the files written are 2-7 kB: each fails another
@pytest.mark.parametrize("command", ["history", "parquet", "sqlite"])
def test_a_full_disk_is_one_line_and_leaves_no_temporary(tmp_path: Path, command: str, limit: int) -> None:
    folder = tmp_path / "out"
    args = {
        "history": ["history", "add", os.fspath(NEW), "--to", os.fspath(folder), "--date", "2025-03-01"],
        "parquet": ["parquet", os.fspath(NEW), "-o", os.fspath(folder)],
        "sqlite": ["sqlite", os.fspath(NEW), "-o", os.fspath(tmp_path / "history.db")],
    }[command]
    run = subprocess.run(
        [sys.executable, "-m", "memvelope_tools", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.fspath(ROOT)},
        preexec_fn=_limit_file_size(limit),
        timeout=120,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("memvelope: error:"), run.stderr
    left = [p for p in tmp_path.rglob("*") if ".tmp" in p.name]  # a database's journal beside it included
    assert left == []


@pytest.mark.slow
def test_an_add_killed_at_any_moment_leaves_a_folder_the_next_add_completes(tmp_path: Path) -> None:
    from generate import generate

    [big] = generate(tmp_path / "big", "chatgpt", 12 << 20, seed=7)
    folder = tmp_path / "h"
    add_to_history(OLD, folder, date="2025-01-01")
    env = {**os.environ, "PYTHONPATH": os.fspath(ROOT)}
    args = [sys.executable, "-m", "memvelope_tools", "history", "add", os.fspath(big), "--to", os.fspath(folder)]
    killed = 0
    for n, delay in enumerate((0.3, 0.6, 1.0, 1.4, 1.8, 2.2, 2.6)):
        snapshots = len(read_history(folder)["snapshots"])
        process = subprocess.Popen([*args, "--date", f"2025-02-{n + 1:02d}", "-q"], env=env, start_new_session=True)
        try:
            process.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the add and its converting child, as the OOM killer might
            process.wait()
            killed += 1
        after = read_history(folder)  # whole after any kill: as before the add, or with all of it
        assert len(after["snapshots"]) in (snapshots, snapshots + 1)
    assert killed >= 2, "the export was added before any kill: make it larger"
    add_to_history(NEW, folder, date="2025-03-01")
    assert [p for p in folder.rglob("*") if p.name.endswith(".tmp")] == []
    assert check_history(folder).ok


def test_a_history_folder_given_where_an_export_is_needed_is_called_a_history_folder(history_folder: Path) -> None:
    run = fresh("info", os.fspath(history_folder))
    assert run.returncode == 1
    assert run.stderr.startswith("memvelope: error: a history folder (written by memvelope history add)")
    assert "memvelope parquet" not in run.stderr


def test_the_same_download_saved_twice_is_not_a_second_snapshot(tmp_path: Path) -> None:
    older, _ = mv.history_samples()
    twice = tmp_path / f"{Path(older).stem} (1).zip"  # a browser's name for a download saved again
    twice.write_bytes(Path(older).read_bytes())
    folder = tmp_path / "h"
    add_to_history(older, folder)
    before = files(folder)
    again = add_to_history(twice, folder)
    assert again["added"] is False
    assert files(folder) == before


def test_an_exports_envelope_added_after_it_is_not_a_second_snapshot(tmp_path: Path) -> None:
    older, _ = mv.history_samples()
    envelope = tmp_path / "older.mve.json"
    mv.write_envelope(mv.convert(older), envelope)
    folder = tmp_path / "h"
    add_to_history(older, folder)  # dated by the date in the download's name
    before = files(folder)
    when = read_history(folder)["snapshots"]["date"].iloc[0]
    again = add_to_history(envelope, folder, date=when.isoformat())
    assert again["added"] is False
    assert files(folder) == before
    assert len(read_history(folder)["snapshots"]) == 1
