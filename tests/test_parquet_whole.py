"""A Parquet folder is written whole: its files share one run id, replace their targets together,
and a pair of files from two different runs is refused."""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import memvelope_tools as mv
from memvelope_tools import _parquet
from memvelope_tools._parquet import RUN_KEY
from memvelope_tools.errors import FormatError, OutputError

ROOT = Path(__file__).resolve().parent.parent


def envelope(tag: str, n: int) -> dict:
    convs = [
        {
            "id": f"{tag}-{i}",
            "title": f"{tag} {i}",
            "created_at": None,
            "updated_at": None,
            "messages": [{"id": f"{tag}-{i}-m", "role": "user", "ts": None, "text": f"{tag} lighthouse {i}"}],
        }
        for i in range(n)
    ]
    meta = {"source_provider": "claude", "conversation_count": n, "message_count": n}
    return {"memvelope": "envelope-v0", "meta": meta, "conversations": convs}


def run_id(path: Path) -> bytes | None:
    return (pq.read_schema(path).metadata or {}).get(RUN_KEY)


def test_the_files_of_one_call_share_a_run_id_and_two_calls_differ(tmp_path: Path):
    mv.to_parquet(envelope("a", 3), tmp_path)
    first = run_id(tmp_path / "conversations.parquet")
    assert first and first == run_id(tmp_path / "messages.parquet")
    mv.to_parquet(envelope("b", 2), tmp_path)
    second = run_id(tmp_path / "conversations.parquet")
    assert second == run_id(tmp_path / "messages.parquet") and second != first


def mixed_pair(tmp_path: Path) -> Path:
    """A folder whose conversations come from one run of to_parquet and whose messages from another."""
    a, b, mixed = tmp_path / "a", tmp_path / "b", tmp_path / "mixed"
    mv.to_parquet(envelope("a", 3), a)
    mv.to_parquet(envelope("b", 3), b)
    mixed.mkdir()
    (mixed / "conversations.parquet").write_bytes((a / "conversations.parquet").read_bytes())
    (mixed / "messages.parquet").write_bytes((b / "messages.parquet").read_bytes())
    return mixed


def test_a_mixed_pair_is_refused_by_read_parquet_and_search(tmp_path: Path):
    mixed = mixed_pair(tmp_path)
    with pytest.raises(FormatError, match="two different runs") as info:
        mv.read_parquet(mixed)
    assert info.value.reason == "bad-parquet"
    with pytest.raises(FormatError, match="two different runs"):
        mv.search(mixed, "lighthouse")
    assert len(mv.read_parquet(tmp_path / "a")["messages"]) == 3  # a whole folder still reads


def test_a_write_that_fails_part_way_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    mv.to_parquet(envelope("old", 3), tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    real = _parquet._write_chunks

    def full_disk(chunks, schema, fh, name, progress):
        if name == "messages.parquet":
            raise OSError(errno.ENOSPC, "No space left on device")
        real(chunks, schema, fh, name, progress)

    monkeypatch.setattr(_parquet, "_write_chunks", full_disk)
    with pytest.raises(OutputError, match="No space left on device"):
        mv.to_parquet(envelope("new", 5), tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert len(mv.read_parquet(tmp_path)["conversations"]) == 3


_WRITER = textwrap.dedent(
    """
    import sys
    import memvelope_tools as mv
    folder, tag, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    convs = [
        {"id": f"{tag}-{i}", "title": "t", "created_at": None, "updated_at": None,
         "messages": [{"id": f"{tag}-{i}-m", "role": "user", "ts": None, "text": "x " * 2000}]}
        for i in range(300)
    ]
    env = {"memvelope": "envelope-v0", "conversations": convs,
           "meta": {"source_provider": "claude", "conversation_count": 300, "message_count": 300}}
    print("ready", flush=True)
    sys.stdin.readline()
    for _ in range(rounds):
        mv.to_parquet(env, folder, progress=False)
    """
)


def _tags(path: Path) -> set[str]:
    """Which writer's dataset the file holds (the prefix of its conversation ids)."""
    ids = pq.read_table(path, columns=["conversation_id"]).column(0).to_pylist()
    return {cid.split("-")[0] for cid in ids}


@pytest.mark.slow
def test_two_writers_at_once_never_leave_a_mixed_folder(tmp_path: Path):
    """Two processes write their own dataset into one folder over and over; whenever neither is
    replacing files (the folder's lock is free), both files carry one run id."""
    folder = tmp_path / "out"
    folder.mkdir()
    env = {**os.environ, "PYTHONPATH": os.fspath(ROOT)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, os.fspath(folder), tag, "12"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    for w in writers:
        assert w.stdout is not None and w.stdout.readline().strip() == "ready"
    for w in writers:
        assert w.stdin is not None
        w.stdin.write("go\n")
        w.stdin.flush()
    checks = 0
    deadline = time.monotonic() + 120
    while any(w.poll() is None for w in writers):
        assert time.monotonic() < deadline
        fd = os.open(folder, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            names = {p.name for p in folder.iterdir()}
            if {"conversations.parquet", "messages.parquet"} <= names:
                assert run_id(folder / "conversations.parquet") == run_id(folder / "messages.parquet")
                assert _tags(folder / "conversations.parquet") == _tags(folder / "messages.parquet")
                checks += 1
        finally:
            os.close(fd)
        time.sleep(0.01)
    assert [w.wait() for w in writers] == [0, 0]
    assert checks > 0
    tables = mv.read_parquet(folder)
    tags = {cid.split("-")[0] for cid in tables["conversations"]["conversation_id"]}
    assert len(tags) == 1 and tags == {mid.split("-")[0] for mid in tables["messages"]["message_id"]}
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def _contents(folder: Path) -> dict[str, tuple[list[dict], dict[bytes, bytes]]]:
    """Each file's rows and its ``memvelope.*`` metadata but the run id."""
    held = {}
    for path in sorted(folder.glob("*.parquet")):
        table = pq.read_table(path)
        meta = {k: v for k, v in (table.schema.metadata or {}).items() if k.startswith(b"memvelope.") and k != RUN_KEY}
        held[path.stem] = (table.to_pylist(), meta)
    return held


def test_a_parquet_folder_written_again_keeps_every_table_and_what_its_files_say(tmp_path: Path):
    export, facts = mv.sample_path("chatgpt"), mv.sample_path("facts-chatgpt")
    mv.to_parquet([export, facts], tmp_path / "first")
    written = mv.to_parquet(tmp_path / "first", tmp_path / "again")
    names = ["assets", "conversations", "facts", "messages", "nodes", "projects"]
    assert sorted(written) == names
    first = _contents(tmp_path / "first")
    assert sorted(first) == names and all(rows for rows, _ in first.values())
    assert _contents(tmp_path / "again") == first
    assert sorted(mv.read_parquet(tmp_path / "again")) == ["archetype", "conversations", "facts", "messages", "nodes"]


def test_the_files_an_earlier_write_left_are_not_read(tmp_path: Path):
    mv.to_parquet([mv.sample_path("chatgpt"), mv.sample_path("facts-chatgpt")], tmp_path)
    mv.to_parquet(envelope("a", 3), tmp_path)  # writes conversations and messages only
    assert (tmp_path / "nodes.parquet").is_file() and (tmp_path / "facts.parquet").is_file()
    assert sorted(mv.read_parquet(tmp_path)) == ["conversations", "messages"]
    assert sorted(mv.read_parquet(tmp_path, lazy=True)) == ["conversations", "messages"]
    assert mv.to_sqlite(tmp_path, tmp_path / "a.db") == {"conversations": 3, "messages": 3}


@pytest.mark.parametrize("lazy", [False, True])
def test_both_readers_refuse_a_file_without_a_column_or_unreadable_naming_it(tmp_path: Path, lazy: bool):
    mv.to_parquet(envelope("a", 3), tmp_path)
    messages = tmp_path / "messages.parquet"
    pq.write_table(pq.read_table(messages).drop_columns(["text"]), messages)
    with pytest.raises(FormatError, match=r"missing column\(s\) text") as info:
        mv.read_parquet(tmp_path, lazy=lazy)
    assert info.value.reason == "bad-parquet" and info.value.source == str(messages)
    messages.write_bytes(b"not parquet")
    with pytest.raises(FormatError, match="cannot read Parquet file") as info:
        mv.read_parquet(tmp_path, lazy=lazy)
    assert info.value.reason == "bad-parquet" and info.value.source == str(messages)


def test_both_readers_refuse_a_mixed_pair(tmp_path: Path):
    mixed = mixed_pair(tmp_path)
    with pytest.raises(FormatError, match="two different runs"):
        mv.read_parquet(mixed, lazy=True)
