"""Many independent exports (say, a study's donated exports) converted in parallel, one envelope each.

Each input is one export (a zip, a folder, or a part file) and becomes ``<name>.mve.json`` in the output
folder. Work runs in worker processes (``concurrent.futures``), or on a Dask cluster when a
``dask.distributed`` client is given. A broken export does not stop the others: it is listed, with its
one-line error, in the result. Optionally every envelope also goes into one Parquet dataset whose rows
carry a ``source`` column naming the export.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._atomic import output_folder
from ._workers.processes import run_each
from .errors import MemvelopeError


@dataclass(frozen=True)
class Converted:
    """One export converted: where its envelope went and what it holds."""

    input: str
    output: str
    provider: str
    conversations: int
    messages: int


@dataclass(frozen=True)
class Failed:
    """One export that could not be converted, with the one-line error."""

    input: str
    error: str
    reason: str


@dataclass
class ManyResult:
    """What :func:`convert_many` did, in input order."""

    converted: list[Converted] = field(default_factory=list)
    failed: list[Failed] = field(default_factory=list)
    parquet: dict[str, Path] | None = None

    @property
    def ok(self) -> bool:
        return not self.failed


def output_names(inputs: Sequence[str | os.PathLike[str]]) -> list[str]:
    """``<name>.mve.json`` per input, from its file or folder name; repeated names get ``-2``, ``-3``."""
    names: list[str] = []
    seen: dict[str, int] = {}
    for item in inputs:
        base = Path(os.fspath(item)).name or "export"
        for suffix in (".zip", ".json"):
            if base.lower().endswith(suffix) and len(base) > len(suffix):
                base = base[: -len(suffix)]
        count = seen.get(base, 0) + 1
        seen[base] = count
        names.append(f"{base}.mve.json" if count == 1 else f"{base}-{count}.mve.json")
    return names


def convert_one(source: str, output: str) -> Converted | Failed:
    """Convert one export to ``output`` (streaming, so memory stays bounded); never raises for bad input."""
    from ._convert.pipeline import convert_stream
    from ._sources import resolve

    try:
        resolve([source], "export", list_means="parts", caller="convert_many()")  # a wrong input, worded as anywhere
        meta = convert_stream(source, output, progress=False)
    except MemvelopeError as exc:
        return Failed(source, str(exc), exc.reason)
    except Exception as exc:  # a worker must report, not die: the other exports go on
        return Failed(source, f"{type(exc).__name__}: {exc}", "internal")
    return Converted(source, output, meta["source_provider"], meta["conversation_count"], meta["message_count"])


def convert_many(
    inputs: Sequence[str | os.PathLike[str]],
    out_folder: str | os.PathLike[str],
    *,
    workers: int | None = None,
    parquet: str | os.PathLike[str] | None = None,
    client: Any = None,
) -> ManyResult:
    """Convert each input (one export each) to its own envelope in ``out_folder``, in parallel.

    ``workers`` worker processes (default: one per CPU); with a ``dask.distributed`` ``client`` the
    conversions are submitted to its cluster instead (paths must be readable by the workers). With
    ``parquet``, every envelope written also goes into that Parquet dataset folder, rows tagged with
    a ``source`` column (the input as given). Failures are collected, never raised. An output folder
    this call creates is removed again when nothing went into it (every input failed).

    Worker processes import the calling script, so a script that calls this with more than one
    worker keeps its work under ``if __name__ == "__main__":``, as for any process pool.
    """
    made = _missing_folders(Path(out_folder))
    out = output_folder(out_folder)
    try:
        return _convert_into(out, inputs, workers, parquet, client)
    finally:
        for folder in made:  # folders made here that hold nothing (every input failed) are removed
            try:
                folder.rmdir()
            except OSError:
                break


def _missing_folders(path: Path) -> list[Path]:
    """``path`` and those of its parents that do not exist, deepest first."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing


def _convert_into(
    out: Path,
    inputs: Sequence[str | os.PathLike[str]],
    workers: int | None,
    parquet: str | os.PathLike[str] | None,
    client: Any,
) -> ManyResult:
    sources = [os.fspath(i) for i in inputs]
    targets = [str(out / name) for name in output_names(sources)]
    outcomes = run_each(convert_one, sources, targets, workers=workers, client=client)
    outcomes = [
        o if o is not None else Failed(s, "the Dask task failed", "internal")
        for s, o in zip(sources, outcomes, strict=True)
    ]
    result = ManyResult()
    for outcome in outcomes:
        if isinstance(outcome, Converted):
            result.converted.append(outcome)
        else:
            result.failed.append(outcome)
    if parquet is not None and result.converted:
        from ._tables import to_parquet

        result.parquet = to_parquet(
            [c.output for c in result.converted], parquet, sources=[c.input for c in result.converted], progress=False
        )
    return result
