"""``memvelope history add`` in a process of its own writes the folder the same command writes in this
test process (which already runs several threads), and an export that fails to convert leaves the folder
as it was."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import fresh

from memvelope_tools._frames.folders import HISTORY_ID_KEY
from memvelope_tools._history.folder import read_history
from memvelope_tools.cli import main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
HISTORY = ROOT / "fixtures" / "history"
OLD = HISTORY / "chatgpt-old" / "conversations.json"
NEW = HISTORY / "chatgpt-new" / "conversations.json"


def downloaded(tmp_path: Path, export: Path, stamp: str) -> Path:
    """``export`` as the part of a ChatGPT download unpacked to a folder whose name holds ``stamp``."""
    folder = tmp_path / f"0123456789abcdef0123-{stamp}"
    folder.mkdir()
    return Path(shutil.copy(export, folder / "conversations.json"))


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_export_converted_early_keeps_its_name_and_the_date_in_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = downloaded(tmp_path, OLD, "2025-01-05-10-00-00")
    new = downloaded(tmp_path, NEW, "2025-03-07-08-30-00")
    here, there = tmp_path / "here", tmp_path / "there"
    assert main(["history", "add", str(old), "--to", str(here)]) == 0
    assert main(["history", "add", str(new), "--to", str(here)]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[0].startswith(
        f"added conversations.json (2025-01-05 10:00 UTC, from the file name) to {here}: 7 conversations"
    )
    for export in (old, new):
        run = fresh("history", "add", str(export), "--to", str(there))
        assert (run.returncode, run.stderr) == (0, "")
        assert run.stdout.replace(str(there), str(here)) == said.pop(0) + "\n"
    assert said == []
    stored = read_history(there)
    assert list(stored["snapshots"]["date_source"]) == ["file name", "file name"]
    assert list(stored["snapshots"]["date"].dt.strftime("%Y-%m-%d %H:%M")) == ["2025-01-05 10:00", "2025-03-07 08:30"]
    assert set(stored["messages"]["source"]) == {"conversations.json"}
    mine, theirs = files(here), files(there)
    assert {n for n in mine if "/" not in n} == {"conversations.parquet", "state.parquet", "snapshots.parquet"}
    parts = sorted(n for n in mine if n.startswith("messages/"))
    assert [n[: len("messages/part-00000")] for n in parts] == ["messages/part-00000", "messages/part-00001"]
    assert mine[parts[1]] == theirs[parts[1]]  # a part is named by its content: the same name, the same bytes
    for name in ("conversations.parquet", "state.parquet", "snapshots.parquet"):
        ours, other = pq.read_table(here / name), pq.read_table(there / name)
        assert ours.equals(other)
        assert without_id(ours.schema.metadata) == without_id(other.schema.metadata)
        assert ours.schema.metadata[HISTORY_ID_KEY] != other.schema.metadata[HISTORY_ID_KEY]


def without_id(metadata: dict[bytes, bytes]) -> dict[bytes, bytes]:
    return {k: v for k, v in metadata.items() if k != HISTORY_ID_KEY}


def test_an_export_that_fails_to_convert_is_one_line_and_leaves_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "h"
    assert main(["history", "add", str(OLD), "--to", str(folder), "--date", "2025-01-01", "-q"]) == 0
    before = files(folder)
    broken = tmp_path / "conversations.json"
    broken.write_bytes(NEW.read_bytes()[:-40])  # cut short: not JSON any more
    run = fresh("history", "add", str(broken), "--to", str(folder), "--date", "2025-03-01")
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("memvelope: error:")
    assert "Traceback" not in run.stderr
    assert files(folder) == before
