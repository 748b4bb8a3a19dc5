"""convert_many / `memvelope convert-many`: one envelope per export, in parallel, past broken ones."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from generate import generate

from memvelope_tools._convert import convert, dumps_canonical
from memvelope_tools._many import Converted, output_names, run_many
from memvelope_tools._workers.processes import worker_context
from memvelope_tools.cli import main


@pytest.fixture
def exports(tmp_path: Path) -> list[Path]:
    """Two good exports (a ChatGPT folder, a Claude part file) and a broken one between them."""
    chatgpt = tmp_path / "in" / "alice"
    generate(chatgpt, "chatgpt", 60_000, seed=1, shards=2)
    claude_dir = tmp_path / "in" / "bob"
    (part,) = generate(claude_dir, "claude", 60_000, seed=2)
    broken = tmp_path / "in" / "carol.json"
    broken.write_text('[{"uuid": "x", "chat_messages": [}')
    return [chatgpt, broken, part]


def _check(result, exports: list[Path], out: Path) -> None:
    assert [c.input for c in result.converted] == [str(exports[0]), str(exports[2])]
    assert [(f.input, f.reason) for f in result.failed] == [(str(exports[1]), "invalid-json")]
    assert "not valid JSON" in result.failed[0].error and "\n" not in result.failed[0].error
    assert not result.ok
    for done in result.converted:
        assert Path(done.output).parent == out
        assert Path(done.output).read_bytes() == dumps_canonical(convert(done.input, fast=False))
    assert [c.provider for c in result.converted] == ["chatgpt", "claude"]
    assert sorted(p.name for p in out.iterdir()) == ["alice.mve.json", "conversations.mve.json"]


@pytest.mark.slow
def test_convert_many_in_worker_processes(exports: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    _check(run_many(exports, out, workers=2), exports, out)


@pytest.mark.slow
@pytest.mark.filterwarnings("error::DeprecationWarning")
def test_worker_processes_are_not_forked_from_a_process_running_threads(exports: list[Path], tmp_path: Path) -> None:
    """A forked child can deadlock on a lock another thread held (Python 3.12+ warns): a notebook runs threads."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert worker_context().get_start_method() in {"forkserver", "spawn"}
        result = run_many(exports, tmp_path / "out", workers=2)
    finally:
        stop.set()
        other.join()
    _check(result, exports, tmp_path / "out")


def test_output_names_are_unique() -> None:
    assert output_names(["a/x.zip", "b/x.zip", "c/x", "y.json", "z/"]) == [
        "x.mve.json",
        "x-2.mve.json",
        "x-3.mve.json",
        "y.mve.json",
        "z.mve.json",
    ]


@pytest.mark.slow
def test_convert_many_on_a_dask_cluster(exports: list[Path], tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    out = tmp_path / "out"
    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        result = run_many(exports, out, scheduler=client)
    _check(result, exports, out)
    assert all(isinstance(c, Converted) for c in result.converted)


@pytest.mark.slow
def test_cli_convert_many(exports: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli-out"
    assert main(["convert-many", *map(str, exports), "-o", str(out), "-j", "2"]) == 1
    err = capsys.readouterr().err
    assert f"failed: {exports[1]}: not valid JSON" in err
    assert "2 converted, 1 failed" in err
    assert (out / "alice.mve.json").exists()
    assert main(["convert-many", str(exports[0]), "-o", str(out), "-q"]) == 0
    assert capsys.readouterr().err.strip() == "memvelope: 1 converted, 0 failed"
