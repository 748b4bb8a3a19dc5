"""One route: a report (or the topics) of an export zip resolves its input once and opens the zip once,
for its conversations, its topics and the provider's memory alike; the report, parquet and sqlite read
each conversation part once, for the envelope's tables and the nodes, files, projects and memory alike."""

from __future__ import annotations

import json
import re
import shutil
import sys
import zipfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

import memvelope_tools as mv
from memvelope_tools import _sources
from memvelope_tools._report import build_report
from memvelope_tools.cli import main


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture
def traced(monkeypatch):
    """The sources the resolver is asked about and the zips opened (every ``zipfile.ZipFile`` made, but for
    the zips on Python's own import path, which the import system opens)."""
    resolved: list[object] = []
    opened: list[object] = []
    monkeypatch.setattr(_sources, "TRACE", [resolved.append])
    made = zipfile.ZipFile.__init__

    def counted(self, file, *args, **kwargs):
        if str(file) not in sys.path:
            opened.append(file)
        made(self, file, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "__init__", counted)
    return resolved, opened


@pytest.fixture
def export(tmp_path) -> Path:
    path = tmp_path / "chatgpt-export.zip"
    shutil.copy(mv.sample_path("chatgpt"), path)
    return path


def test_the_command_resolves_the_zip_once_and_opens_it_once(traced, export, tmp_path):
    resolved, opened = traced
    out = tmp_path / "report.html"
    assert main(["report", str(export), "-o", str(out), "-q"]) == 0
    assert [Path(str(s)) for s in resolved] == [export]
    assert [Path(str(f)) for f in opened] == [export]
    page = out.read_text(encoding="utf-8")
    # and it read all it shows from that one opening: conversations, topics, memory
    assert "40 conversations, 114 messages" in page
    assert "8 topics found" in page
    assert "What ChatGPT remembers about you" in page


def test_the_function_resolves_the_zip_once_and_opens_it_once(traced, export):
    resolved, opened = traced
    page = build_report([export])
    assert [Path(str(s)) for s in resolved] == [export]
    assert [Path(str(f)) for f in opened] == [export]
    assert "What ChatGPT remembers about you" in page


def test_the_zip_is_closed_when_the_report_is_done(monkeypatch, export):
    closed: list[object] = []
    close = zipfile.ZipFile.close

    def counted(self):
        if self.fp is not None:
            closed.append(self.filename)
        close(self)

    monkeypatch.setattr(zipfile.ZipFile, "close", counted)
    build_report([export])
    assert [Path(str(f)) for f in closed] == [export]


def test_topics_of_a_zip_resolve_it_once_and_open_it_once(traced, export, capsys):
    resolved, opened = traced
    assert main(["topics", str(export), "-n", "4"]) == 0
    assert [Path(str(s)) for s in resolved] == [export]
    assert [Path(str(f)) for f in opened] == [export]
    assert capsys.readouterr().out.startswith("4 topics in 40 conversations")


def test_parquet_of_a_zip_resolves_it_once_and_opens_it_once(traced, export, tmp_path):
    resolved, opened = traced
    out = tmp_path / "pq"
    assert main(["parquet", str(export), "-o", str(out), "-q"]) == 0
    assert [Path(str(s)) for s in resolved] == [export]
    assert [Path(str(f)) for f in opened] == [export]
    frames = mv.read_parquet(out)
    assert len(frames["conversations"]) == 40 and len(frames["messages"]) == 114
    assert {"nodes", "assets", "projects"} <= set(frames) | {p.stem for p in out.iterdir()}


def test_search_of_a_zip_resolves_it_once_and_opens_it_once(traced, export, capsys):
    resolved, opened = traced
    assert main(["search", str(export), "kitchen tap", "--json"]) == 0
    assert [Path(str(s)) for s in resolved] == [export]
    assert [Path(str(f)) for f in opened] == [export]
    hits = json.loads(capsys.readouterr().out)
    assert hits and all(hit["source"] == "chatgpt-export.zip" for hit in hits)
    assert "Dripping kitchen tap" in {hit["title"] for hit in hits}


def test_doctor_of_a_zip_resolves_it_once_and_opens_it_once(traced, export, capsys):
    resolved, opened = traced
    assert main(["doctor", "--json", str(export)]) == 0
    assert [Path(str(s)) for s in resolved] == [export]
    assert [Path(str(f)) for f in opened] == [export]
    report = json.loads(capsys.readouterr().out)
    # the sample's 40 conversations and 114 messages (its envelope's), and the memory read from the same opening
    assert report["converts"] is True and report["conversations_kept"] == 40 and report["messages_kept"] == 114
    assert report["memory"]["items"] > 0


@pytest.fixture
def reads(monkeypatch):
    """The names of the export's conversation parts each time one is read (every reader of a part's
    elements, in this process: conversion, the nodes, the files and projects, the memory)."""
    from memvelope_tools._json import elements

    parts: list[str] = []
    made = elements.PartElements.__init__

    def counted(self, part, *args, **kwargs):
        if "conversations" in Path(part.name).name:
            parts.append(part.name)
        made(self, part, *args, **kwargs)

    monkeypatch.setattr(elements.PartElements, "__init__", counted)
    return parts


def each_part_once(reads: list[str], export: Path) -> bool:
    """Whether ``reads`` names each conversation part of the zip ``export`` once."""
    with zipfile.ZipFile(export) as held:
        parts = sorted(n for n in held.namelist() if re.fullmatch(r"conversations(-\d+)?\.json", n))
    return len(parts) > 1 and sorted(name.rsplit("!", 1)[-1] for name in reads) == parts


def test_a_report_reads_the_conversations_once(reads, export, tmp_path):
    out = tmp_path / "report.html"
    assert main(["report", str(export), "-o", str(out), "-q"]) == 0
    assert each_part_once(reads, export), reads
    page = out.read_text(encoding="utf-8")
    # the sections only the export gives are there, from that one reading
    assert "How you used it: ChatGPT" in page and "What ChatGPT remembers about you" in page


def test_parquet_reads_the_conversations_once(reads, export, tmp_path):
    out = tmp_path / "pq"
    assert main(["parquet", str(export), "-o", str(out), "-q"]) == 0
    assert each_part_once(reads, export), reads
    assert {p.stem for p in out.glob("*.parquet")} == {"conversations", "messages", "nodes", "assets", "projects"}


def test_sqlite_reads_the_conversations_once(reads, export, tmp_path):
    pytest.importorskip("sqlite_utils")
    out = tmp_path / "history.db"
    assert main(["sqlite", str(export), "-o", str(out), "-q"]) == 0
    assert each_part_once(reads, export), reads
    import sqlite3

    db = sqlite3.connect(out)
    try:
        tables = {row[0] for row in db.execute("select name from sqlite_master where type = 'table'")}
    finally:
        db.close()
    assert {"conversations", "messages", "nodes", "memory", "assets", "projects"} <= tables


def test_a_report_reads_the_export_memory_names_once_when_it_is_a_source(reads, export):
    page = build_report([export], memory=[export])
    assert each_part_once(reads, export), reads
    assert "How you used it: ChatGPT" in page and "What ChatGPT remembers about you" in page


def test_a_report_reads_an_export_memory_names_beside_its_sources_once(reads, export, tmp_path):
    """The export ``memory=`` names is not among the sources: it is read once more, in one pass for both of its
    sections."""
    other = tmp_path / "other" / "chatgpt-export.zip"
    other.parent.mkdir()
    shutil.copy(export, other)
    page = build_report([export], memory=[other])
    at = {export: [r for r in reads if str(export) in r], other: [r for r in reads if str(other) in r]}
    assert len(at[export]) + len(at[other]) == len(reads)
    assert each_part_once(at[export], export), reads
    assert each_part_once(at[other], other), reads
    assert "How you used it: ChatGPT" in page and "What ChatGPT remembers about you" in page


def test_the_table_set_with_the_whole_tables_reads_the_conversations_once(reads, export):
    from memvelope_tools._tables import read_tables

    tables = read_tables([export], with_whole=True)
    assert each_part_once(reads, export), reads
    assert tables.conversations.num_rows == 40 and tables.whole["nodes"].num_rows > 0
    assert tables.whole["assets"].num_rows > 0 and tables.whole["projects"].num_rows > 0


@pytest.fixture
def parts(export, tmp_path) -> list[Path]:
    """The sample export's conversation parts, each a file of its own."""
    folder = tmp_path / "parts"
    with zipfile.ZipFile(export) as held:
        names = sorted(n for n in held.namelist() if re.fullmatch(r"conversations-\d+\.json", n))
        held.extractall(folder, names)
    return [folder / name for name in names]


def one_export(paths: list[Path]) -> _sources.Input:
    """``paths`` resolved as the parts of one export (as ``convert`` takes them), to be handed on resolved."""
    [found] = _sources.resolve(list(paths), "export", list_means="parts", caller="the test")
    return found


def test_a_report_of_an_export_given_as_several_paths_reads_each_once(reads, parts):
    page = build_report([one_export(parts)])
    assert sorted(reads) == sorted(map(str, parts)), reads
    # its memory is that of each path read on its own (as memory_frame reads them), from that one reading
    from memvelope_tools._report import memory_section

    section = memory_section(parts)
    assert "What ChatGPT remembers about you" in section and section in page


def test_sqlite_of_an_export_given_as_several_paths_reads_each_once(reads, parts, tmp_path):
    pytest.importorskip("sqlite_utils")
    import sqlite3

    out = tmp_path / "history.db"
    mv.to_sqlite([one_export(parts)], out, progress=False)
    assert sorted(reads) == sorted(map(str, parts)), reads
    expected = mv.memory_frame(parts)
    db = sqlite3.connect(out)
    try:
        texts = sorted(row[0] for row in db.execute("select text from memory"))
    finally:
        db.close()
    assert texts == sorted(expected["text"]) and len(texts) > 0


def test_a_path_that_memory_reads_otherwise_is_read_on_its_own(reads, parts, tmp_path):
    """A single conversation given beside a part adds nothing to the envelope but is read for memory (as if
    inside [ ]): the pass cannot say what reading each path on its own says, so the paths are read again,
    and the section is memory_frame's."""
    from memvelope_tools._report import memory_section

    [first, second] = parts
    conversations = json.loads(second.read_text(encoding="utf-8"))
    single = tmp_path / "conversations-one.json"
    single.write_text(json.dumps(conversations[0]), encoding="utf-8")
    given = [first, single]
    page = build_report([one_export(given)])
    assert sorted(set(reads)) == sorted(map(str, given))
    assert reads.count(str(first)) == 2  # converted, then read again for the memory
    section = memory_section(given)
    assert "single-conversation" in section and section in page
