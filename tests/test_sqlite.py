"""``mv.to_sqlite`` and ``memvelope sqlite``: the toolkit's tables as one SQLite database, opened with
``sqlite3`` and served by Datasette through its own client."""

from __future__ import annotations

import asyncio
import copy
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import memvelope_tools as mv
from memvelope_tools.cli import main
from memvelope_tools.errors import FormatError, InputError, OutputError

PHRASE = "quokka marmalade"
EXPORT = mv.sample_path("chatgpt")
FACTS = mv.sample_path("facts-chatgpt")


def _iso(value: Any) -> str | None:
    """A UTC timestamp as the spec writes it (and as the database must hold it)."""
    if pd.isna(value):
        return None
    return pd.Timestamp(value).tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def _rows(db: sqlite3.Connection, table: str) -> int:
    return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


@pytest.fixture(scope="module")
def planted() -> dict[str, Any]:
    """The Claude sample's envelope with one message's text given a phrase no sample holds."""
    env = copy.deepcopy(mv.convert(mv.sample_path("claude")))
    message = env["conversations"][3]["messages"][1]
    message["text"] = f"{message['text']} The {PHRASE} is planted here."
    return env


@pytest.fixture(scope="module")
def export_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    path = tmp_path_factory.mktemp("sqlite") / "export.db"
    counts = mv.to_sqlite([EXPORT, FACTS], path)
    return path, counts


@pytest.fixture(scope="module")
def history_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("history") / "my-history"
    for export in mv.history_samples():
        mv.add_to_history(export, folder)
    return folder


def test_every_table_of_an_export_holds_the_rows_of_its_frame(export_db: tuple[Path, dict[str, int]]) -> None:
    path, counts = export_db
    expected = {
        "conversations": len(mv.conversations_frame(EXPORT)),
        "messages": len(mv.messages_frame(EXPORT)),
        "facts": len(mv.facts_frame(FACTS)),
        "nodes": len(mv.nodes_frame(EXPORT)),
        "memory": len(mv.memory_frame(EXPORT)),
        "assets": len(mv.assets_frame(EXPORT)),
        "projects": len(mv.projects_frame(EXPORT)),
    }
    assert all(n > 0 for n in expected.values()), expected
    assert counts == expected
    with sqlite3.connect(path) as db:
        assert {name: _rows(db, name) for name in expected} == expected


def test_columns_and_values_are_the_frames_with_iso_timestamps(export_db: tuple[Path, dict[str, int]]) -> None:
    path, _ = export_db
    convs = mv.conversations_frame(EXPORT)
    nodes = mv.nodes_frame(EXPORT)
    with sqlite3.connect(path) as db:
        info = {row[1]: row[2] for row in db.execute("PRAGMA table_info(conversations)")}
        assert list(info) == list(convs.columns)
        assert info["conv_index"] == "INTEGER" and info["created_at"] == "TEXT" and info["title"] == "TEXT"
        got = db.execute("SELECT conversation_id, title, created_at, last_ts, n_messages FROM conversations").fetchall()
        assert got == [
            (r.conversation_id, r.title, _iso(r.created_at), _iso(r.last_ts), r.n_messages) for r in convs.itertuples()
        ]
        assert db.execute("SELECT created_at FROM conversations LIMIT 1").fetchone()[0].endswith("Z")
        assert [row[0] for row in db.execute("SELECT typeof(n_messages) FROM conversations GROUP BY 1")] == ["integer"]
        # yes/no as 1 or 0; a list as JSON text
        assert {r[0] for r in db.execute("SELECT on_active_path FROM nodes")} == {0, 1}
        tools = [None if t is None else json.loads(t) for (t,) in db.execute("SELECT tools FROM nodes ORDER BY rowid")]
        assert tools == [None if v is None else list(v) for v in nodes["tools"]]
        # a list of records holding timestamps: JSON, the timestamps as ISO text
        docs = [json.loads(d) for (d,) in db.execute("SELECT docs FROM projects WHERE docs IS NOT NULL")]
        stamps = [doc["created_at"] for listed in docs for doc in listed if doc["created_at"] is not None]
        assert all(s.endswith("Z") and s[10] == "T" for s in stamps)


def test_keys_indexes_and_a_clean_foreign_key_check(export_db: tuple[Path, dict[str, int]]) -> None:
    path, _ = export_db
    with sqlite3.connect(path) as db:
        pk = {row[1]: row[5] for row in db.execute("PRAGMA table_info(conversations)") if row[5]}
        assert pk == {"source": 1, "conv_index": 2}
        facts_pk = {row[1] for row in db.execute("PRAGMA table_info(facts)") if row[5]}
        assert facts_pk == {"source", "fact_index"}
        fks = [(row[2], row[3], row[4]) for row in db.execute("PRAGMA foreign_key_list(messages)")]
        assert sorted(fks) == [("conversations", "conv_index", "conv_index"), ("conversations", "source", "source")]
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        indexed = {
            (table, tuple(col[2] for col in db.execute(f"PRAGMA index_info('{index[1]}')")))
            for table in ("messages", "conversations", "nodes", "memory")
            for index in db.execute(f"PRAGMA index_list({table})")
        }
        for wanted in [
            ("messages", ("source", "conv_index", "position")),
            ("messages", ("ts",)),
            ("messages", ("conversation_id",)),
            ("conversations", ("updated_at",)),
            ("nodes", ("message_id",)),
            ("memory", ("ts",)),
        ]:
            assert wanted in indexed


def test_full_text_search_finds_a_planted_phrase(planted: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "planted.db"
    mv.to_sqlite(planted, path)
    with sqlite3.connect(path) as db:
        sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_fts'").fetchone()[0]
        assert "USING FTS5" in sql and 'content="messages"' in sql
        hits = db.execute(
            "SELECT m.conv_index, m.position FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid "
            "WHERE messages_fts MATCH ?",
            (f'"{PHRASE}"',),
        ).fetchall()
        assert hits == [(3, 1)]
        assert db.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'quokka'").fetchone() == (1,)


def test_a_history_folder_keeps_its_statuses_and_dates(history_folder: Path, tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    counts = mv.to_sqlite(history_folder, path)
    history = mv.read_history(history_folder)
    assert counts == {name: len(frame) for name, frame in history.items()}
    with sqlite3.connect(path) as db:
        status = dict(db.execute("SELECT status, count(*) FROM messages GROUP BY status").fetchall())
        assert status == history["messages"]["status"].value_counts().to_dict()
        assert status["deleted-upstream"] > 0 and status["edited-away"] > 0
        convs = history["conversations"]
        got = db.execute("SELECT conversation_key, status, first_seen, last_seen FROM conversations").fetchall()
        assert got == [
            (r.conversation_key, r.status, _iso(r.first_seen), _iso(r.last_seen)) for r in convs.itertuples()
        ]
        dates = [row[0] for row in db.execute("SELECT date FROM snapshots ORDER BY snapshot")]
        assert dates == [_iso(d) for d in history["snapshots"]["date"]]
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_datasette_serves_the_tables_and_the_full_text_search(planted: dict[str, Any], tmp_path: Path) -> None:
    from datasette.app import Datasette

    path = tmp_path / "served.db"
    counts = mv.to_sqlite(planted, path)

    async def fetch() -> tuple[Any, Any, Any]:
        ds = Datasette([str(path)])
        table = await ds.client.get("/served/conversations.json?_shape=array&_size=max")
        search = await ds.client.get(f"/served/messages.json?_search={PHRASE.replace(' ', '+')}&_shape=array")
        found = await ds.client.get("/served/messages.json")
        return table, search, found

    table, search, found = asyncio.run(fetch())
    assert table.status_code == 200 and len(table.json()) == counts["conversations"]
    assert table.json()[3]["title"] == planted["conversations"][3]["title"]
    assert search.status_code == 200
    assert [(r["conv_index"], r["position"]) for r in search.json()] == [(3, 1)]
    assert PHRASE in search.json()[0]["text"]
    assert found.json()["filtered_table_rows_count"] == counts["messages"]


def test_rows_are_made_python_values_a_batch_at_a_time(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import memvelope_tools._sqlite as writer

    sizes: list[int] = []
    plain = writer._plain

    def recording(batch: Any) -> Any:
        sizes.append(batch.num_rows)
        return plain(batch)

    monkeypatch.setattr(writer, "_BATCH", 10)
    monkeypatch.setattr(writer, "_plain", recording)
    counts = mv.to_sqlite(EXPORT, tmp_path / "batches.db")
    assert max(sizes) == 10 and sum(sizes) == sum(counts.values())
    with sqlite3.connect(tmp_path / "batches.db") as db:
        assert {name: _rows(db, name) for name in counts} == counts


def test_the_command_writes_the_database_and_says_what_it_wrote(
    history_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cli.db"
    assert main(["sqlite", str(history_folder), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err == f"memvelope: wrote {out} (snapshots: 2 rows, conversations: 40 rows, messages: 116 rows)\n"
    with sqlite3.connect(out) as db:
        assert _rows(db, "messages") == 116


@pytest.mark.parametrize("api", [True, False], ids=["api", "cli"])
def test_bad_input_writes_nothing_and_keeps_the_earlier_database(
    api: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "kept.db"
    out.write_bytes(b"the earlier database")
    bad = tmp_path / "notes.json"
    bad.write_text("{ not json", encoding="utf-8")
    if api:
        with pytest.raises(InputError) as caught:
            mv.to_sqlite([EXPORT, bad], out)
        assert caught.value.reason == "invalid-json"
    else:
        assert main(["sqlite", str(EXPORT), str(bad), "-o", str(out)]) == 1
        err = capsys.readouterr().err
        assert err.startswith("memvelope: error: ") and "notes.json" in err and err.count("\n") == 1
    assert out.read_bytes() == b"the earlier database"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.db", "notes.json"]


def test_a_failure_while_writing_removes_the_temporary_file(tmp_path: Path) -> None:
    # Two Parquet folders written from the same export hold its rows under one label: the database
    # is begun, its primary key refuses the second copy, and nothing is left of it.
    for name in ("a", "b"):
        mv.to_parquet(EXPORT, tmp_path / name)
    out = tmp_path / "kept.db"
    out.write_bytes(b"the earlier database")
    with pytest.raises(FormatError) as caught:
        mv.to_sqlite([tmp_path / "a", tmp_path / "b"], out)
    assert caught.value.reason == "bad-source" and "one source label" in str(caught.value)
    assert out.read_bytes() == b"the earlier database"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "kept.db"]


def test_a_history_folder_is_given_alone(history_folder: Path, tmp_path: Path) -> None:
    with pytest.raises(FormatError) as caught:
        mv.to_sqlite([history_folder, EXPORT], tmp_path / "mixed.db")
    assert caught.value.reason == "bad-source"
    assert list(tmp_path.iterdir()) == []


def test_a_missing_output_folder_is_an_output_error_before_any_reading(tmp_path: Path) -> None:
    with pytest.raises(OutputError):
        mv.to_sqlite(tmp_path / "no-such-input.json", tmp_path / "missing" / "out.db")


def test_a_missing_sqlite_utils_names_the_extra_before_any_input_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "sqlite_utils", None)  # as if the extra were not installed
    slow = tmp_path / "export.zip"
    slow.write_bytes(EXPORT.read_bytes())
    with pytest.raises(ModuleNotFoundError):
        mv.to_sqlite(tmp_path / "no-such-input.json", tmp_path / "out.db")
    assert main(["sqlite", str(slow), "-o", str(tmp_path / "out.db")]) == 1
    err = capsys.readouterr().err
    assert err == (
        "memvelope: error: `memvelope sqlite` needs sqlite_utils, which the 'sqlite' extra installs: "
        "pip install 'memvelope_tools[sqlite]'\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.zip"]


def test_envelopes_parquet_folders_and_facts_give_their_own_tables(tmp_path: Path) -> None:
    claude = mv.sample_path("claude")
    mv.write_envelope(mv.convert(claude), tmp_path / "claude.mve.json")
    mv.to_parquet(claude, tmp_path / "folder")
    frames = {"conversations": len(mv.conversations_frame(claude)), "messages": len(mv.messages_frame(claude))}
    assert mv.to_sqlite(tmp_path / "claude.mve.json", tmp_path / "env.db") == frames
    assert mv.to_sqlite(tmp_path / "folder", tmp_path / "folder.db") == frames
    assert mv.to_sqlite(FACTS, tmp_path / "facts.db") == {"facts": len(mv.facts_frame(FACTS))}
    with sqlite3.connect(tmp_path / "facts.db") as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables == {"facts"}
    # the messages waited in a file beside the database while the inputs were read: it is gone
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "claude.mve.json",
        "env.db",
        "facts.db",
        "folder",
        "folder.db",
    ]


def test_a_file_given_twice_needs_dedupe(tmp_path: Path) -> None:
    env = tmp_path / "claude.mve.json"
    mv.write_envelope(mv.convert(mv.sample_path("claude")), env)
    with pytest.raises(FormatError) as caught:
        mv.to_sqlite([env, env], tmp_path / "twice.db")
    assert caught.value.reason == "bad-source" and "dedupe" in str(caught.value)
    assert not (tmp_path / "twice.db").exists()
    once = mv.to_sqlite([env, env], tmp_path / "once.db", dedupe=True)
    assert once == {"conversations": 40, "messages": len(mv.messages_frame(env))}
