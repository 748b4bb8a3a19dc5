"""convert_many / `memvelope convert-many --parquet DIR`: a partitioned dataset written by the workers, one hive
partition per donation and table, a manifest, re-runs that convert only new and changed donations, and runs
stopped part-way that resume."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from generate import generate

import memvelope_tools as mv
from memvelope_tools._convert import convert
from memvelope_tools._partitions import labels
from memvelope_tools.cli import main
from memvelope_tools.errors import FormatError, OutputError

ROOT = Path(__file__).resolve().parent.parent


def _donations(folder: Path, count: int, size: int = 40_000, first_seed: int = 10) -> list[Path]:
    """``count`` good donations: ChatGPT folders and Claude part files by turns, each of its own seed."""
    made = []
    for i in range(count):
        seed = first_seed + i
        if i % 2 == 0:
            where = folder / f"p{seed:03d}"
            generate(where, "chatgpt", size, seed=seed, shards=2)
            made.append(where)
        else:
            (part,) = generate(folder / f"claude-{seed}", "claude", size, seed=seed)
            made.append(part.rename(folder / f"p{seed:03d}.json"))
    return made


def _broken(folder: Path) -> Path:
    broken = folder / "broken.json"
    broken.write_text('[{"uuid": "x", "chat_messages": [}')
    return broken


def _expected(inputs: list[Path]) -> dict[str, tuple[int, int]]:
    """label -> (conversations, messages), from the reference conversion of each donation."""
    out = {}
    for label, path in zip(labels(inputs), inputs, strict=True):
        env = convert(path, fast=False)
        out[label] = (len(env["conversations"]), sum(len(c["messages"]) for c in env["conversations"]))
    return out


def _files(base: Path) -> dict[str, tuple[int, int]]:
    """Every file of the dataset but its manifest: relative name -> (inode, mtime in ns)."""
    return {
        str(p.relative_to(base)): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in base.rglob("*")
        if p.is_file() and p.name != "_manifest.json"
    }


def _duckdb_counts(base: Path, table: str) -> dict[str, int]:
    duckdb = pytest.importorskip("duckdb")
    sql = f"SELECT source, count(*) FROM read_parquet('{base}/{table}/**/*.parquet', hive_partitioning=true) GROUP BY 1"
    return dict(duckdb.sql(sql).fetchall())


def _pyarrow_counts(base: Path, table: str) -> dict[str, int]:
    import pyarrow.dataset as ds

    rows = ds.dataset(base / table, format="parquet", partitioning="hive").to_table(columns=["source"])
    return pd.Series(rows.column("source").to_pylist()).value_counts().to_dict()


def _check_dataset(base: Path, expected: dict[str, tuple[int, int]]) -> None:
    for i, table in enumerate(("conversations", "messages")):
        want = {label: counts[i] for label, counts in expected.items()}
        assert _duckdb_counts(base, table) == want
        assert _pyarrow_counts(base, table) == want
    pl = pytest.importorskip("polars")
    found = pl.scan_parquet(f"{base}/messages/**/*.parquet", hive_partitioning=True).collect()
    assert found.group_by("source").len().sort("source").rows() == sorted((k, v[1]) for k, v in expected.items())
    frames = mv.read_parquet(base)
    assert frames["messages"].groupby("source").size().to_dict() == {k: v[1] for k, v in expected.items()}
    assert frames["messages"]["source"].dtype == "string"
    assert not [p for p in base.rglob("*") if p.name.endswith(".tmp")]


def _manifest(base: Path) -> pd.DataFrame:
    rows = json.loads((base / "_manifest.json").read_bytes())["donations"]
    return pd.DataFrame(rows).set_index("source")


@pytest.fixture
def cluster():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local,
        distributed.Client(local) as client,
    ):
        yield client


@pytest.mark.slow
def test_dask_workers_write_a_partition_per_donation_that_duckdb_pyarrow_and_polars_read(
    cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _donations(tmp_path / "in", 4)
    broken = _broken(tmp_path / "in")
    base = tmp_path / "dataset"
    address = cluster.scheduler.address
    assert main(["convert-many", *map(str, [*good, broken]), "--parquet", str(base), "--scheduler", address]) == 1
    err = capsys.readouterr().err
    assert f"failed: {broken}: not valid JSON" in err
    assert "4 converted, 0 unchanged, 1 failed" in err
    expected = _expected(good)
    assert sorted(p.name for p in (base / "messages").iterdir()) == [f"source={label}" for label in sorted(expected)]
    _check_dataset(base, expected)
    writers = {json.loads(m.read_bytes())["written_by"] for m in (base / "messages").glob("*/_donation.json")}
    workers = {f"{host}:{pid}" for host, pid in cluster.run(lambda: (os.uname().nodename, os.getpid())).values()}
    assert writers <= workers and os.getpid() not in {int(w.rsplit(":", 1)[1]) for w in writers}
    manifest = _manifest(base)
    assert manifest.loc["broken", "status"] == "failed" and manifest.loc["broken", "reason"] == "invalid-json"
    assert "not valid JSON" in manifest.loc["broken", "error"]
    for label, (conversations, messages) in expected.items():
        row = manifest.loc[label]
        assert (row["status"], row["conversations"], row["messages"]) == ("done", conversations, messages)
    part = good[1]
    assert manifest.loc[part.stem, "size_bytes"] == part.stat().st_size
    import hashlib

    assert manifest.loc[part.stem, "sha256"] == hashlib.sha256(part.read_bytes()).hexdigest()


@pytest.mark.parametrize("route", ["here", pytest.param("processes", marks=pytest.mark.slow)])
def test_a_rerun_rewrites_nothing_and_a_larger_one_writes_only_the_new_donations(route: str, tmp_path: Path) -> None:
    workers = 1 if route == "here" else 2
    first = _donations(tmp_path / "in", 3)
    base = tmp_path / "dataset"
    done = mv.convert_many(first, parquet=base, workers=workers, progress=False)
    assert done["action"].tolist() == ["converted"] * 3
    before = _files(base)
    again = mv.convert_many(first, parquet=base, workers=workers, progress=False)
    assert again["action"].tolist() == ["unchanged"] * 3
    assert _files(base) == before
    os.utime(first[1], ns=(time.time_ns(), time.time_ns()))  # touched, same bytes: found by its hash
    assert mv.convert_many(first, parquet=base, workers=workers)["action"].tolist() == ["unchanged"] * 3
    assert _files(base) == before
    more = _donations(tmp_path / "in", 2, first_seed=50)
    grown = mv.convert_many([*first, *more], parquet=base, workers=workers, progress=False)
    assert grown.set_index("source")["action"].to_dict() == {
        **{p.name.removesuffix(".json"): "unchanged" for p in first},
        **{p.name.removesuffix(".json"): "converted" for p in more},
    }
    after = _files(base)
    assert {k: v for k, v in after.items() if k in before} == before
    assert sorted({Path(k).parent.name for k in set(after) - set(before)}) == ["source=p050", "source=p051"]
    _check_dataset(base, _expected([*first, *more]))


def test_a_changed_donation_replaces_its_partitions_only(tmp_path: Path) -> None:
    first = _donations(tmp_path / "in", 3)
    base = tmp_path / "dataset"
    mv.convert_many(first, parquet=base, workers=1)
    before = _files(base)
    generate(tmp_path / "other", "claude", 40_000, seed=99)
    first[1].write_bytes((tmp_path / "other" / "conversations.json").read_bytes())
    done = mv.convert_many(first, parquet=base, workers=1).set_index("source")
    assert done["action"].to_dict() == {"p010": "unchanged", "p011": "converted", "p012": "unchanged"}
    after = _files(base)
    assert {k: v for k, v in after.items() if "p011" not in k} == {k: v for k, v in before.items() if "p011" not in k}
    assert all(after[k] != v for k, v in before.items() if "p011" in k)
    _check_dataset(base, _expected(first))


def test_an_interrupted_run_leaves_litter_and_half_partitions_that_the_next_run_removes(tmp_path: Path) -> None:
    """As a run killed part-way leaves it: a partition published in one table only, temporary folders, and
    a manifest written before the last donations finished."""
    inputs = _donations(tmp_path / "in", 3)
    base = tmp_path / "dataset"
    mv.convert_many(inputs, parquet=base, workers=1)
    kept = _files(base)
    manifest = json.loads((base / "_manifest.json").read_bytes())
    manifest["donations"] = [row for row in manifest["donations"] if row["source"] == "p010"]
    (base / "_manifest.json").write_text(json.dumps(manifest))
    for name in os.listdir(base / "conversations" / "source=p012"):
        os.unlink(base / "conversations" / "source=p012" / name)
    os.rmdir(base / "conversations" / "source=p012")
    (base / "messages" / ".source=p012.1234.tmp").mkdir()
    (base / "messages" / ".source=p012.1234.tmp" / "part-0.parquet").write_bytes(b"PAR1 half")
    (base / ".p012.1234.tables.tmp").mkdir()
    assert "p012" not in mv.read_parquet(base)["messages"]["source"].unique()  # only finished donations are read

    done = mv.convert_many(inputs, parquet=base, workers=1).set_index("source")
    assert done["action"].to_dict() == {"p010": "unchanged", "p011": "unchanged", "p012": "converted"}
    assert (done["status"] == "done").all() and done.loc["p011", "messages"] > 0  # p011 found from its partitions
    after = _files(base)
    assert {k: v for k, v in after.items() if "p012" not in k} == {k: v for k, v in kept.items() if "p012" not in k}
    _check_dataset(base, _expected(inputs))


_RUN = """
import sys
from memvelope_tools.cli import main
sys.exit(main(["convert-many", *sys.argv[2:], "--parquet", sys.argv[1], "-j", "1", "-q"]))
"""


@pytest.mark.slow
def test_a_killed_run_leaves_whole_partitions_and_the_next_run_finishes_the_rest(tmp_path: Path) -> None:
    inputs = _donations(tmp_path / "in", 14, size=150_000)
    base = tmp_path / "dataset"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.Popen([sys.executable, "-c", _RUN, str(base), *map(str, inputs)], env=env)
    try:
        deadline = time.monotonic() + 120
        while len(list(base.glob("messages/source=*"))) < 4 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert run.poll() is None, "the run ended before it could be killed"
        run.send_signal(signal.SIGKILL)
    finally:
        run.wait()
    published = {p.name.removeprefix("source=") for p in base.glob("conversations/source=*")}
    assert 3 <= len(published) < len(inputs)
    expected = _expected(inputs)
    frames = mv.read_parquet(base)
    finished = set(frames["messages"]["source"].unique())
    counts = frames["messages"].groupby("source").size().to_dict()
    assert counts == {label: expected[label][1] for label in finished}  # every partition read is whole
    before = _files(base)

    done = mv.convert_many(inputs, parquet=base, workers=1).set_index("source")
    assert {label for label, action in done["action"].items() if action == "unchanged"} == finished
    assert {k: v for k, v in _files(base).items() if k in before and not Path(k).parent.name.startswith(".")} == {
        k: v for k, v in before.items() if Path(k).parts[1].removeprefix("source=") in finished
    }
    _check_dataset(base, expected)


def test_lazy_read_pushes_the_filter_on_source_down_to_the_partitions(tmp_path: Path) -> None:
    import pyarrow.dataset as ds

    inputs = _donations(tmp_path / "in", 3)
    base = tmp_path / "dataset"
    mv.convert_many(inputs, parquet=base, workers=1)
    expected = _expected(inputs)
    tables = mv.read_parquet(base, lazy=True)
    assert sorted(tables) == ["conversations", "messages"]
    messages = tables["messages"]
    wanted = ds.field("source") == "p011"
    assert [Path(f.path).parent.name for f in messages.get_fragments(filter=wanted)] == ["source=p011"]
    assert messages.count_rows(filter=wanted) == expected["p011"][1]
    user = messages.to_table(columns=["source", "role"], filter=wanted & (ds.field("role") == "user"))
    assert 0 < user.num_rows < expected["p011"][1] and set(user.column("source").to_pylist()) == {"p011"}
    whole = mv.read_parquet(base)["messages"]
    assert len(whole) == sum(v[1] for v in expected.values())
    assert len(mv.messages_frame(base)) == len(whole)  # the frame functions take the dataset's folder too


def test_lazy_read_of_a_to_parquet_folder_and_a_history_folder(tmp_path: Path) -> None:
    import pyarrow.dataset as ds

    mv.to_parquet(mv.sample_path("claude"), tmp_path / "plain")
    lazy = mv.read_parquet(tmp_path / "plain", lazy=True)
    assert sorted(lazy) == ["conversations", "messages", "nodes"]
    assert lazy["messages"].count_rows(filter=ds.field("role") == "user") == 45
    assert str(lazy["messages"].schema.field("ts").type) == "timestamp[ms, tz=UTC]"
    assert lazy["messages"].to_table().num_rows == len(mv.read_parquet(tmp_path / "plain")["messages"])
    first, _second = mv.history_samples()
    mv.add_to_history(first, tmp_path / "history")
    with pytest.raises(FormatError) as caught:
        mv.read_parquet(tmp_path / "history", lazy=True)
    assert caught.value.reason == "bad-source"


def test_labels_are_safe_for_a_path_and_unique_without_case() -> None:
    assert labels(["in/a b.zip", "other/A_b.json", "x/ü.zip", "y/.zip", "z/p1"], taken=["p1"]) == [
        "a_b",
        "A_b-2",
        "export",
        "zip",
        "p1-2",
    ]


def test_a_damaged_manifest_and_a_folder_of_another_kind_are_refused(tmp_path: Path) -> None:
    base = tmp_path / "dataset"
    base.mkdir()
    (base / "_manifest.json").write_text("{not json")
    with pytest.raises(FormatError) as caught:
        mv.convert_many([mv.sample_path("claude")], parquet=base, workers=1)
    assert caught.value.reason == "bad-manifest" and "_manifest.json" in str(caught.value)
    mv.to_parquet(mv.sample_path("claude"), tmp_path / "plain")
    with pytest.raises(OutputError, match="another kind"):
        mv.convert_many([mv.sample_path("claude")], parquet=tmp_path / "plain", workers=1)
    with pytest.raises(OutputError, match="give a folder"):
        mv.convert_many([mv.sample_path("claude")])


def test_the_cli_reports_unchanged_donations_and_needs_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = str(mv.sample_path("claude"))
    base = str(tmp_path / "dataset")
    assert main(["convert-many", sample, "--parquet", base, "-j", "1"]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == "memvelope: 1 converted, 0 unchanged, 0 failed"
    assert main(["convert-many", sample, "--parquet", base, "-j", "1", "-q"]) == 0
    assert capsys.readouterr().err.strip() == "memvelope: 0 converted, 1 unchanged, 0 failed"
    assert main(["convert-many", sample]) == 2
    assert "give -o FOLDER" in capsys.readouterr().err


def test_progress_counts_donations_done_of_the_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvelope_tools import _many

    counted: list[tuple[int | None, str, float]] = []
    real = _many.progress_bar

    @contextlib.contextmanager
    def watched(total, **kwargs):
        with real(total, **kwargs) as bar:
            yield bar
            counted.append((total, kwargs["desc"], bar.n))  # before the bar is filled as it closes

    monkeypatch.setattr(_many, "progress_bar", watched)
    inputs = [mv.sample_path("claude"), mv.sample_path("chatgpt"), tmp_path / "missing.zip"]
    mv.convert_many(inputs, parquet=tmp_path / "dataset", workers=1, progress=True)
    assert counted == [(3, "donations", 3)]
    assert re.search(r"donations: .*\| 0/3 ", capsys.readouterr().err)


def test_an_envelope_asked_for_again_leaves_the_partitions_as_they_are(tmp_path: Path) -> None:
    inputs = _donations(tmp_path / "in", 2)
    base, out = tmp_path / "dataset", tmp_path / "envelopes"
    mv.convert_many(inputs, out, parquet=base, workers=1)
    before = _files(base)
    (out / "p011.mve.json").unlink()
    done = mv.convert_many(inputs, out, parquet=base, workers=1).set_index("source")
    assert done["action"].to_dict() == {"p010": "unchanged", "p011": "converted"}
    assert (out / "p011.mve.json").read_bytes() == mv.dumps_canonical(convert(inputs[1], fast=False))
    assert _files(base) == before


def test_a_finished_donation_that_breaks_keeps_its_partitions_and_is_named_as_failed(tmp_path: Path) -> None:
    inputs = _donations(tmp_path / "in", 2)
    base = tmp_path / "dataset"
    mv.convert_many(inputs, parquet=base, workers=1)
    before = _files(base)
    inputs[1].write_text('[{"uuid": "x", "chat_messages": [}')
    done = mv.convert_many(inputs, parquet=base, workers=1).set_index("source")
    assert done["action"].to_dict() == {"p010": "unchanged", "p011": "failed"}
    assert done.loc["p011", "status"] == "done" and done.loc["p011", "reason"] == "invalid-json"
    assert _files(base) == before
    assert main(["convert-many", *map(str, inputs), "--parquet", str(base), "-q"]) == 1


@pytest.mark.slow
def test_a_donation_whose_dask_task_fails_is_recorded_with_the_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    distributed = pytest.importorskip("distributed")
    from memvelope_tools import _many

    def no_room(job: _many.Donation) -> dict[str, object]:
        raise MemoryError("no room left on the worker")

    monkeypatch.setattr(_many, "convert_donation", no_room)
    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as local,
        distributed.Client(local) as client,
    ):
        done = mv.convert_many([mv.sample_path("claude")], parquet=tmp_path / "dataset", scheduler=client)
    row = done.iloc[0]
    assert (row["status"], row["action"], row["reason"]) == ("failed", "failed", "internal")
    assert row["error"] == "the worker running it failed or was lost (MemoryError: no room left on the worker)"
    assert _manifest(tmp_path / "dataset").loc["claude-export", "reason"] == "internal"
