"""The commands that make no frame run without importing pandas, and write what they write with it.

Each command runs in a new interpreter (as ``python -m memvelope_tools``) that reports at its end whether
pandas was imported; what it writes is compared with the same command run here, where pandas is imported.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import ROOT

from memvelope_tools.cli import main
from memvelope_tools.samples import sample_path

SAMPLES = ROOT / "memvelope_tools" / "samples"
OLDER, NEWER = sorted(SAMPLES.glob("29b767a0*.zip"))

#: ``memvelope ARGS`` as ``python -m memvelope_tools`` runs it; its last line on stderr says whether pandas was
#: imported and the exit status. With ``--until-results``, importing pandas fails until the index is searched.
_RUN = """
import importlib.abc, runpy, sys

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "pandas":
            raise ModuleNotFoundError("pandas refused", name="pandas")

args = sys.argv[1:]
if args[0] == "--until-results":
    args = args[1:]
    refuse = Refuse()
    sys.meta_path.insert(0, refuse)
    from memvelope_tools._search.index import SearchIndex

    search = SearchIndex.search

    def searched(*a, **k):
        if refuse in sys.meta_path:
            sys.meta_path.remove(refuse)
        return search(*a, **k)

    SearchIndex.search = searched
sys.argv = ["memvelope", *args]
try:
    runpy.run_module("memvelope_tools", run_name="__main__")
except SystemExit as stop:
    status = stop.code
print("pandas imported" if "pandas" in sys.modules else "pandas not imported", status, file=sys.stderr)
"""


def _fresh(*args: str) -> tuple[str, str]:
    """stdout, and the last line on stderr, of ``memvelope ARGS`` in a new interpreter."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run(
        [sys.executable, "-c", _RUN, *args], capture_output=True, text=True, env=env, timeout=120, cwd=ROOT
    )
    assert run.stderr.strip(), run
    return run.stdout, run.stderr.strip().splitlines()[-1]


def _tables(folder: Path) -> dict[str, object]:
    """Each Parquet file under ``folder`` as its table and schema metadata, but for the ids of one run or
    one history, which every run makes anew."""
    fresh_ids = (b"memvelope.run", b"memvelope.history.id")
    found: dict[str, object] = {}
    for path in sorted(folder.rglob("*.parquet")):
        table = pq.read_table(path)
        meta = {k: v for k, v in (table.schema.metadata or {}).items() if k not in fresh_ids}
        found[str(path.relative_to(folder))] = (table.replace_schema_metadata(None), meta)
    return found


def _same_tables(lean: Path, usual: Path) -> None:
    got, expected = _tables(lean), _tables(usual)
    assert got.keys() == expected.keys() and got
    for name, (table, meta) in got.items():
        assert table.equals(expected[name][0]) and meta == expected[name][1], name  # type: ignore[index]


def test_parquet_runs_without_pandas_and_writes_the_same_files(tmp_path: Path) -> None:
    inputs = [str(sample_path("chatgpt")), str(SAMPLES / "facts-chatgpt.mv.json")]
    _, last = _fresh("parquet", *inputs, "-o", str(tmp_path / "lean"), "--dedupe", "-q")
    assert last == "pandas not imported 0"
    assert main(["parquet", *inputs, "-o", str(tmp_path / "usual"), "--dedupe", "-q"]) == 0
    _same_tables(tmp_path / "lean", tmp_path / "usual")
    assert {p.name for p in (tmp_path / "lean").iterdir()} >= {"conversations.parquet", "facts.parquet"}


def test_sqlite_runs_without_pandas_and_writes_the_same_database(tmp_path: Path) -> None:
    inputs = [str(sample_path("claude")), str(SAMPLES / "facts-claude.mv.json")]
    _, last = _fresh("sqlite", *inputs, "-o", str(tmp_path / "lean.db"), "-q")
    assert last == "pandas not imported 0"
    assert main(["sqlite", *inputs, "-o", str(tmp_path / "usual.db"), "-q"]) == 0
    dumps = []
    for name in ("lean.db", "usual.db"):
        with sqlite3.connect(tmp_path / name) as db:
            dumps.append(list(db.iterdump()))
    assert dumps[0] == dumps[1] and any('INSERT INTO "messages"' in line for line in dumps[0])


def test_history_add_runs_without_pandas_into_a_new_folder_and_an_existing_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for export in (OLDER, NEWER):
        out, last = _fresh("history", "add", str(export), "--to", str(tmp_path / "lean"))
        assert last == "pandas not imported 0"
        assert main(["history", "add", str(export), "--to", str(tmp_path / "usual")]) == 0
        assert out.replace(str(tmp_path / "lean"), "FOLDER") == capsys.readouterr().out.replace(
            str(tmp_path / "usual"), "FOLDER"
        )
    assert "new 6, grown 3, edited 2" in out  # the second add merged into the folder the first made
    _same_tables(tmp_path / "lean", tmp_path / "usual")


def test_history_add_reads_a_given_date_with_pandas(tmp_path: Path) -> None:
    out, last = _fresh("history", "add", str(OLDER), "--to", str(tmp_path), "--date", "2026-05-02T10:00:00+02:00")
    assert last == "pandas imported 0" and "(2026-05-02 08:00 UTC, given)" in out


def test_search_of_an_export_imports_pandas_only_for_its_results(capsys: pytest.CaptureFixture[str]) -> None:
    out, last = _fresh("--until-results", "search", str(sample_path("chatgpt")), "python", "--json")
    assert last == "pandas imported 0"
    assert main(["search", str(sample_path("chatgpt")), "python", "--json"]) == 0
    assert out == capsys.readouterr().out and out.startswith("[")
