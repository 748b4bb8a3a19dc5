"""The history's picture and report section: plot.history_changes and the report of a history folder."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from memvelope_tools import plot
from memvelope_tools._history.history import history
from memvelope_tools._history_folder import add_to_history
from memvelope_tools._report import build_report
from memvelope_tools.cli import main
from memvelope_tools.errors import FormatError

HISTORY = Path(__file__).resolve().parent.parent / "fixtures" / "history"
OLD = HISTORY / "chatgpt-old" / "conversations.json"
NEW = HISTORY / "chatgpt-new" / "conversations.json"


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    out = tmp_path / "h"
    add_to_history(OLD, out, date="2025-01-01")
    add_to_history(NEW, out, date="2025-03-01")
    return out


def test_history_changes_stacks_what_each_export_changed(folder: Path) -> None:
    fig, ax = plt.subplots()
    try:
        assert plot.history_changes(folder, ax=ax) is ax
        assert [t.get_text() for t in ax.get_xticklabels()] == ["2025-01-01", "2025-03-01"]
        # new, grown, edited stacked up, one bar per export, then missing down
        heights = [round(p.get_height()) for p in ax.patches]
        assert heights == [7, 1, 0, 2, 0, 2, 0, -1]
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["new", "grown", "edited", "missing"]
    finally:
        plt.close(fig)


def test_history_changes_takes_the_history_dict_too() -> None:
    fig, ax = plt.subplots()
    try:
        plot.history_changes(history([OLD, NEW], dates=["2025-01-01", "2025-03-01"]), ax=ax)
        assert [round(p.get_height()) for p in ax.patches][-1] == -1
    finally:
        plt.close(fig)


def test_history_changes_refuses_a_frame_without_the_counts() -> None:
    import pandas as pd

    with pytest.raises(FormatError, match="snapshots of a history"):
        plot.history_changes(pd.DataFrame({"date": []}))


def test_report_of_a_history_folder_has_the_history_section(folder: Path) -> None:
    page = build_report([folder])
    assert "<h2>History across 2 exports</h2>" in page
    assert "3 messages were edited away and 2 are in 1 conversation deleted upstream" in page
    assert "<h3>Deleted upstream</h3>" in page and "Deleted upstream</td>" in page
    assert "<h2>Documents</h2>" not in page
    assert "8 conversations, 22 messages" in page


def test_report_of_documents_has_no_history_section() -> None:
    assert "History across" not in build_report([NEW])


def test_a_history_folder_is_reported_on_its_own(folder: Path) -> None:
    with pytest.raises(FormatError, match="reported on its own"):
        build_report([folder, NEW])


def test_cli_report_takes_a_history_folder(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(folder), "-o", str(out), "-q"]) == 0
    assert "History across 2 exports" in out.read_text(encoding="utf-8")


def test_the_bundled_dated_exports_show_every_kind_of_change(tmp_path: Path) -> None:
    import subprocess
    import sys
    import zipfile

    from memvelope_tools.samples import history_samples

    older, newer = history_samples()
    h = history([newer, older])
    snaps = h["snapshots"]
    assert list(snaps["date_source"]) == ["file name", "file name"]
    assert [f"{d:%Y-%m-%d %H:%M:%S}" for d in snaps["date"]] == ["2026-05-01 08:30:00", "2026-10-31 18:00:00"]
    # built that way: three conversations cut after their first answer, two edited ones on their first
    # branch, two deleted in between, and the ones started after 2026-05-01 only in the newer export
    assert snaps.iloc[1][["grown", "edited", "missing"]].tolist() == [3, 2, 2]
    assert snaps.iloc[1]["new"] == 6
    assert set(h["messages"]["status"]) == {"current", "edited-away", "deleted-upstream"}
    # the committed zips are what the script builds
    script = Path(__file__).resolve().parent.parent / "fixtures" / "samples" / "build_samples.py"
    subprocess.run([sys.executable, str(script), "--out", str(tmp_path)], check=True, capture_output=True)
    for committed in (older, newer):
        with zipfile.ZipFile(committed) as a, zipfile.ZipFile(tmp_path / committed.name) as b:
            assert a.namelist() == b.namelist()
            assert all(a.read(name) == b.read(name) for name in a.namelist())
