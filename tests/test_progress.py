"""Progress bars: the no-op bar and the tqdm bar take the same calls, including a total learnt late."""

from __future__ import annotations

import pytest

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
