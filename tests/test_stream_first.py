"""The analyses read their input before they load the libraries they draw and model with: the report's
stream runs before matplotlib and scikit-learn are imported, topics' before scikit-learn, so that the
memory of those libraries and that of the stream's batches never add up; and a stream makes Arrow allocate
from a pool that gives memory back soon, the caller's pool Arrow's default again once it is done."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import memvelope_tools as mv

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("matplotlib", "sklearn")

# Runs the command line in a fresh interpreter, noting which of HEAVY were imported when the stream began
# (each call of memvelope_tools._stream.stream) and when the command ended.
_SCRIPT = """
import json, sys
import memvelope_tools._stream as stream_module

heavy = {heavy!r}
seen = []
original = stream_module.stream

def noted(*args, **kwargs):
    seen.append(sorted(m for m in heavy if m in sys.modules))
    return original(*args, **kwargs)

stream_module.stream = noted
from memvelope_tools.cli import main

code = main({argv!r})
print(json.dumps({{"code": code, "at_stream": seen, "at_end": sorted(m for m in heavy if m in sys.modules)}}))
"""


def _loaded(argv: list[str]) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env["MPLBACKEND"] = "Agg"
    script = _SCRIPT.format(heavy=HEAVY, argv=argv)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    return dict(json.loads(run.stdout.strip().splitlines()[-1]))


@pytest.mark.slow
def test_the_report_streams_its_export_before_it_loads_matplotlib_and_scikit_learn(tmp_path):
    found = _loaded(["report", str(mv.sample_path("chatgpt")), "-o", str(tmp_path / "report.html"), "-q"])
    assert found["code"] == 0
    assert found["at_stream"] == [[]]  # one stream, with neither library loaded yet
    assert found["at_end"] == ["matplotlib", "sklearn"]  # both were needed: charts and topics were made


@pytest.mark.slow
def test_topics_streams_its_export_before_it_loads_scikit_learn():
    found = _loaded(["topics", str(mv.sample_path("chatgpt"))])
    assert found["code"] == 0
    assert found["at_stream"] == [[]]
    assert found["at_end"] == ["sklearn"]  # the topics were found with it, and nothing was drawn


_POOL = """
import sys
import pyarrow as pa
from memvelope_tools._sources import resolve_one
from memvelope_tools._stream import stream

during = set()

class Noting:
    def add(self, conversations, messages):
        during.add(pa.default_memory_pool().backend_name)

    def restart(self):
        pass

before = pa.default_memory_pool().backend_name
stream(resolve_one(sys.argv[1], "history"), Noting(), progress=False)
[used] = during
print(before, used, pa.default_memory_pool().backend_name)
"""


def _pools(chosen: str | None) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("ARROW_DEFAULT_MEMORY_POOL", None)
    if chosen is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = chosen
    argv = [sys.executable, "-c", _POOL, str(mv.sample_path("chatgpt"))]
    run = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


@pytest.mark.slow
def test_a_stream_makes_arrow_allocate_from_jemalloc_unless_a_pool_was_chosen():
    """jemalloc gives what a batch freed back soon; mimalloc, Arrow's default on Linux, keeps it until asked."""
    import pyarrow as pa

    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        pytest.skip("this pyarrow has no jemalloc")
    before, during, after = _pools(None)
    assert during == "jemalloc"
    assert before != "jemalloc"  # it was the stream that chose it
    assert after == before  # and the caller's pool is the default again once the stream is done
    assert _pools("system") == ["system", "system", "system"]  # the pool the user chose is kept


@pytest.fixture
def system_pool() -> Iterator[None]:
    """The system allocator as Arrow's default pool (a pool a user chose in a notebook, say), for the test."""
    import pyarrow as pa

    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        pytest.skip("this pyarrow has no jemalloc")
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        pytest.skip("ARROW_DEFAULT_MEMORY_POOL chooses the pool of every stream")
    before = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    yield
    pa.set_memory_pool(before)


def test_the_callers_pool_is_arrows_default_again_after_each_stream(tmp_path: Path, system_pool: None) -> None:
    import pyarrow as pa

    from memvelope_tools._report import build_report
    from memvelope_tools._sources import resolve_one
    from memvelope_tools._stream import stream

    sample = mv.sample_path("chatgpt")
    during: set[str] = set()

    class Noting:
        def add(self, conversations: pa.Table, messages: pa.Table) -> None:
            during.add(pa.default_memory_pool().backend_name)

        def restart(self) -> None:
            pass

    assert stream(resolve_one(sample, "history"), Noting(), progress=False) == "chatgpt"
    assert during == {"jemalloc"}
    assert pa.default_memory_pool().backend_name == "system"
    frame = mv.messages_frame(sample)
    assert len(frame) and pa.default_memory_pool().backend_name == "system"
    assert "<h1>" in build_report([sample])
    assert pa.default_memory_pool().backend_name == "system"
    mv.to_parquet(sample, tmp_path / "tables")
    assert pa.default_memory_pool().backend_name == "system"


def test_the_callers_pool_is_arrows_default_again_when_a_stream_fails(tmp_path: Path, system_pool: None) -> None:
    import pyarrow as pa

    from memvelope_tools._sources import resolve_one
    from memvelope_tools._stream import stream
    from memvelope_tools.errors import MemvelopeError

    export = tmp_path / "export"  # a folder: the resolver does not read its conversations, the stream does
    export.mkdir()
    (export / "conversations.json").write_bytes(b'[{"title": "cut short", "mapping": {')  # ends mid-conversation

    class Nothing:
        def add(self, conversations: pa.Table, messages: pa.Table) -> None:
            pass

        def restart(self) -> None:
            pass

    with pytest.raises(MemvelopeError):
        stream(resolve_one(export, "history"), Nothing(), progress=False)
    assert pa.default_memory_pool().backend_name == "system"


def test_a_history_folder_is_indexed_on_the_streams_pool_and_the_callers_is_kept(
    tmp_path: Path, system_pool: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Indexing the parts of a history folder reads its row groups as a stream's batches are read: from the
    pool that gives memory back soon, the caller's pool the default again once the index is written."""
    import pyarrow as pa

    import memvelope_tools._search.history as history

    during: set[str] = set()
    original = history.add_rows

    def noted(*args: object, **kwargs: object) -> None:
        during.add(pa.default_memory_pool().backend_name)
        original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(history, "add_rows", noted)
    mv.add_to_history(mv.sample_path("chatgpt"), tmp_path / "history", progress=False)
    assert during == {"jemalloc"}
    assert pa.default_memory_pool().backend_name == "system"
