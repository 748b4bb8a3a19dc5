"""Progress bars: the no-op bar and the tqdm bar take the same calls, including a total learnt late; a notebook
gets the widget bar after a delay, or no bar, never a text bar."""

from __future__ import annotations

import sys

import pytest

from memvelope_tools import _progress
from memvelope_tools._progress import progress_bar


@pytest.mark.parametrize("enabled", [True, False])
def test_a_bar_takes_a_total_learnt_late(enabled: bool, capsys: pytest.CaptureFixture[str]) -> None:
    with progress_bar(None, desc="working", unit="chunk", enabled=enabled) as bar:
        assert bar.total is None
        bar.total = 4
        bar.refresh()
        bar.update(3)
        assert bar.total == 4
    err = capsys.readouterr().err
    assert ("working" in err and "0/4" in err) is enabled  # the refresh shows the new total
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("enabled", [True, None])
def test_in_a_notebook_without_ipywidgets_there_is_no_bar_at_all(
    enabled: bool | None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_progress, "_in_notebook", lambda: True)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import fails, as when it is not installed
    with progress_bar(1000, desc="converting", unit="B", enabled=enabled) as bar:
        bar.update(10)
    assert isinstance(bar, _progress._NoBar)
    assert capsys.readouterr() == ("", "")  # no text bar, so no "converting: 0%" saved in a cell


def test_in_a_notebook_the_widget_bar_shows_only_after_the_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ipywidgets")
    import tqdm.notebook

    shown: list[object] = []
    monkeypatch.setattr(tqdm.notebook, "display", shown.append)
    monkeypatch.setattr(_progress, "_in_notebook", lambda: True)
    with progress_bar(100, desc="converting", unit="B") as bar:
        assert isinstance(bar, tqdm.notebook.tqdm) and bar.delay == _progress.NOTEBOOK_DELAY
        bar.update(50)
    assert shown == []  # quick work: the cell keeps no bar
    with progress_bar(100, desc="converting", unit="B") as bar:
        bar.start_t -= 2 * _progress.NOTEBOOK_DELAY  # as if the work had been going on for a while
        bar.last_print_t = bar.start_t
        bar.update(50)
        assert len(shown) == 1
    assert bar.n == 100


def test_work_that_ends_fills_its_bar_and_work_that_fails_does_not(capsys: pytest.CaptureFixture[str]) -> None:
    with progress_bar(10, desc="working", enabled=True) as bar:
        bar.update(3)
    assert bar.n == 10
    with pytest.raises(RuntimeError), progress_bar(10, desc="working", enabled=True) as failing:
        failing.update(3)
        raise RuntimeError("stop")
    assert failing.n == 3
    capsys.readouterr()
