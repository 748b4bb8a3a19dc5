"""The tables only an export gives (its nodes, files, projects and memory) made from the pass that converts
it: in this process or in conversion's worker processes, they are those the export's own readings give."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import memvelope_tools as mv
from memvelope_tools._convert.pipeline import convert_body
from memvelope_tools._memory.read import memory_of_pass, read_memory
from memvelope_tools._memory.scan import MemoryReading
from memvelope_tools._sources import Input, resolve_one
from memvelope_tools._stream import stream
from memvelope_tools._whole.arrow import shifted, unpack
from memvelope_tools._whole.export import READERS, assets_table, finish, projects_table, whole_tables
from memvelope_tools._whole.files import list_export
from memvelope_tools._whole.pack import pack
from memvelope_tools._whole.read import Job, read_export
from memvelope_tools._whole.tap import ExportPass


def _pass(found: Input) -> tuple[ExportPass[Any], list[pa.RecordBatch]]:
    batches: list[pa.RecordBatch] = []
    job = Job(functools.partial(pack, source=found.label), beside=READERS, elements=(MemoryReading,))
    passing = ExportPass(found, job, lambda piece, before: batches.append(shifted(unpack(piece.value), before)))
    return passing, batches


def _tables(found: Input, passing: ExportPass[Any], batches: list[pa.RecordBatch], provider: str) -> dict[str, Any]:
    files = found.files()
    assert files is not None
    assets, projects = finish(tuple(files), list_export(tuple(files)), passing.readers[:2], provider)
    memory = memory_of_pass(files, provider, passing.readers[2], passing.heads)
    assert memory is not None
    return {
        "nodes": pa.Table.from_batches(batches),
        "assets": assets_table(assets).to_pylist(),
        "projects": projects_table(projects).to_pylist(),
        "memory": [(i.kind, i.text, i.count, i.first_seen) for i in memory.items],
        "notes": memory.notes,
    }


def _expected(found: Input, path: Path) -> dict[str, Any]:
    """The same tables from the export's own readings (nodes, files and projects in one, memory in another)."""
    whole = whole_tables([found])
    memory = read_memory(path)
    files = found.files()
    assert files is not None
    return {
        "nodes": whole["nodes"],
        "assets": whole["assets"].drop_columns(["source"]).to_pylist(),
        "projects": whole["projects"].drop_columns(["source"]).to_pylist(),
        "memory": [(i.kind, i.text, i.count, i.first_seen) for i in memory.items],
        "notes": memory.notes,
    }


@pytest.mark.parametrize("name", ["chatgpt", "claude"])
@pytest.mark.parametrize("workers", [1, 2])
def test_the_conversion_pass_makes_what_the_exports_own_readings_make(name: str, workers: int) -> None:
    path = mv.sample_path(name)
    found = resolve_one(path, "export")
    passing, batches = _pass(found)
    meta = convert_body(list(found.parts), lambda _: None, workers=workers, beside=passing.beside())
    got = _tables(found, passing, batches, meta["source_provider"])
    expected = _expected(found, path)
    assert got["nodes"].equals(expected["nodes"])
    assert got["nodes"].num_rows > 0
    if name == "chatgpt" or workers > 1:  # two parts, or the first elements apart: conv_index numbered on
        assert len(batches) > 1
    for key in ("assets", "projects", "memory", "notes"):
        assert got[key] == expected[key], key
    # the samples hold files, projects (ChatGPT) and memory, so the comparisons say something
    assert got["assets"] and got["memory"]
    assert got["projects"] or name == "claude"


def test_a_pass_read_again_forgets_what_it_was_given(tmp_path: Path) -> None:
    found = resolve_one(mv.sample_path("chatgpt"), "export")
    passing, batches = _pass(found)
    cleared: list[int] = []
    passing.again = lambda: cleared.append(len(batches))
    convert_body(list(found.parts), lambda _: None, beside=passing.beside())
    assert (passing.conversations, passing.kept) == (40, 40)  # the sample's conversations, all kept
    passing.restart()
    assert cleared == [len(batches)] and passing.conversations == passing.kept == 0
    assert passing.readers[2].seen is None and not passing.readers[2].sightings
    convert_body(list(found.parts), lambda _: None, beside=passing.beside())
    assert (passing.conversations, passing.kept) == (40, 40)


def test_an_export_given_as_bytes_gives_its_nodes_in_the_pass() -> None:
    data = Path(mv.sample_path("claude")).read_bytes()
    found = resolve_one(data, "export")
    batches: list[pa.RecordBatch] = []
    job = Job(functools.partial(pack, source=found.label))
    passing = ExportPass(found, job, lambda piece, before: batches.append(shifted(unpack(piece.value), before)))

    class Drop:
        def add(self, conversations: pa.Table, messages: pa.Table) -> None:
            pass

        def restart(self) -> None:
            pass

    assert stream(found, Drop(), whole=passing) == "claude"
    assert pa.Table.from_batches(batches).equals(whole_tables([found])["nodes"])


@pytest.mark.parametrize("name", ["chatgpt", "claude"])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_pass_of_its_own_makes_what_the_exports_own_readings_make(name: str, workers: int) -> None:
    """An export read in a pass of its own, not beside its conversion, hands its element readers each element's
    bytes as conversion's pass does: its memory is read in the same pass as its nodes."""
    path = mv.sample_path(name)
    found = resolve_one(path, "export")
    passing, batches = _pass(found)
    whole = read_export(found, passing.job, workers=workers)
    passing.take(whole)
    got = _tables(found, passing, batches, whole.provider)
    expected = _expected(found, path)
    assert got["nodes"].equals(expected["nodes"]) and got["nodes"].num_rows > 0
    for key in ("assets", "projects", "memory", "notes"):
        assert got[key] == expected[key], key
    assert got["memory"]
    assert (passing.conversations, passing.kept) == (whole.conversations, sum(p.kept for p in whole.pieces))


@pytest.mark.parametrize("given", ["chatgpt", "claude", "claude as bytes"])
def test_the_table_set_makes_its_whole_tables_as_the_exports_own_readings_make_them(given: str) -> None:
    """``read_tables(with_whole=True)`` makes the nodes, files and projects from the pass that converts each
    export (read whole, for an export given as bytes): they are those the export's own reading gives."""
    from memvelope_tools._tables import read_tables

    name = given.split()[0]
    path = mv.sample_path(name)
    source: Any = Path(path).read_bytes() if given.endswith("bytes") else path
    tables = read_tables([source, mv.sample_path("chatgpt")], sources=["one", "two"], with_whole=True)
    expected = whole_tables(
        [resolve_one(source, "export", label="one"), resolve_one(mv.sample_path("chatgpt"), "export", label="two")]
    )
    assert sorted(tables.whole) == sorted(expected)
    for key, table in expected.items():
        assert tables.whole[key].equals(table), key
    assert tables.whole["nodes"].num_rows > 0


def _extracted(name: str, folder: Path) -> list[Path]:
    """The conversation parts of a sample export, each a file of its own in ``folder``."""
    import re
    import zipfile

    with zipfile.ZipFile(mv.sample_path(name)) as held:
        names = sorted(n for n in held.namelist() if re.fullmatch(r"conversations(-\d+)?\.json", n))
        held.extractall(folder, names)
    return [folder / n for n in names]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_pass_over_several_paths_gives_the_memory_each_path_read_on_its_own_gives(
    tmp_path: Path, workers: int
) -> None:
    from memvelope_tools._memory.read import read_memories
    from memvelope_tools._sources import resolve

    paths = _extracted("chatgpt", tmp_path)
    [found] = resolve(list(paths), "export", list_means="parts", caller="the test")
    passing, _ = _pass(found)
    convert_body(list(found.parts), lambda _: None, workers=workers, beside=passing.beside())
    # each part's first five elements, every one a ChatGPT conversation (the sample's 20 a part)
    assert passing.heads == {str(p): ["chatgpt"] * 5 for p in paths}
    read = memory_of_pass(paths, "chatgpt", passing.readers[2], passing.heads)
    [expected] = read_memories(paths)
    assert read is not None and read.items and read.items == expected.items and read.notes == expected.notes


def test_a_pass_over_paths_of_two_providers_leaves_the_memory_to_each_path(tmp_path: Path) -> None:
    """A Claude part beside a ChatGPT one: converted as ChatGPT's (the Claude conversations left out), while
    reading each path on its own reads the memory of each provider, which the pass cannot give."""
    from memvelope_tools._sources import resolve
    from memvelope_tools.errors import MixedProvidersWarning

    chatgpt = _extracted("chatgpt", tmp_path / "chatgpt")[0]
    claude = _extracted("claude", tmp_path / "claude")[0]
    [found] = resolve([chatgpt, claude], "export", list_means="parts", caller="the test")
    passing, _ = _pass(found)
    with pytest.warns(MixedProvidersWarning):
        meta = convert_body(list(found.parts), lambda _: None, beside=passing.beside())
    assert meta["source_provider"] == "chatgpt"
    assert passing.heads is not None and passing.heads[str(claude)][:1] == ["claude"]
    assert memory_of_pass([chatgpt, claude], "chatgpt", passing.readers[2], passing.heads) is None
