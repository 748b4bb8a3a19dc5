"""Many independent exports (say, a study's donated exports) converted in parallel, one envelope each.

Each input is one export (a zip, a folder, or a part file): a donation. It becomes ``<label>.mve.json``
in the envelope folder, and, with a Parquet folder, its own partitions of a partitioned dataset
(:mod:`memvelope_tools._partitions`), written by the worker that converted it. Work runs in worker
processes (``concurrent.futures``), or on a Dask cluster when a ``dask.distributed`` scheduler is given;
either way the client sends paths and gets back one small record per donation. A broken export does not
stop the others: it is listed, with its one-line error, in the result (and in the dataset's manifest).
With a Parquet folder a run is resumable: a donation already finished and unchanged is not converted
again, and a run stopped part-way leaves its finished partitions whole and no other.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from ._atomic import folder_lock, output_folder
from ._frames.folders import KEY, MARKER, PART, PARTITIONED_TABLES, finished, partition
from ._partitions import (
    MANIFEST_COLUMNS,
    digest,
    fingerprint,
    labels,
    manifest_frame,
    read_manifest,
    remove_unfinished,
    write_manifest,
)
from ._progress import progress_bar
from ._signals import held
from ._workers.processes import Lost, each_done
from .errors import MemvelopeError, OutputError

#: Seconds between two writes of the manifest while donations finish (it is written at the end too).
MANIFEST_EVERY = 1.0


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


@dataclass(frozen=True)
class Donation:
    """What a worker is sent for one donation: paths and, when it was finished before, its record."""

    input: str
    label: str
    dataset: str | None
    envelope: str | None
    known: dict[str, Any] | None = None


@dataclass
class ManyResult:
    """What :func:`run_many` did: a record per donation of this run (in input order), and the manifest."""

    records: list[dict[str, Any]] = field(default_factory=list)
    manifest: list[dict[str, Any]] | None = None

    @property
    def converted(self) -> list[Converted]:
        return [_converted(r) for r in self.records if r["action"] == "converted"]

    @property
    def unchanged(self) -> list[Converted]:
        return [_converted(r) for r in self.records if r["action"] == "unchanged"]

    @property
    def failed(self) -> list[Failed]:
        return [Failed(r["input"], r["error"], r["reason"]) for r in self.records if r["status"] == "failed"]

    @property
    def ok(self) -> bool:
        return not self.failed

    def frame(self) -> pd.DataFrame:
        """The manifest (every donation of the dataset) with this run's ``action``, else this run's records."""
        if self.manifest is None:
            return manifest_frame(self.records)
        actions = {r["source"]: r["action"] for r in self.records}
        return manifest_frame({**row, "action": actions.get(row["source"])} for row in self.manifest)


def _converted(record: dict[str, Any]) -> Converted:
    return Converted(record["input"], record["output"], record["provider"], record["conversations"], record["messages"])


def output_names(inputs: Sequence[str | os.PathLike[str]]) -> list[str]:
    """``<label>.mve.json`` per input (see :func:`memvelope_tools._partitions.labels`)."""
    return [f"{label}.mve.json" for label in labels(inputs)]


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


def convert_donation(job: Donation) -> dict[str, Any]:
    """Run on a worker: convert one donation (or find it unchanged) and write its envelope and its
    partitions; the donation's record (a row of the manifest), never an exception for bad input."""
    record: dict[str, Any] = {"source": job.label, "input": job.input, "output": job.envelope}
    sha: str | None = None
    if job.dataset is not None:
        with contextlib.suppress(OSError):
            record["size_bytes"], record["mtime_ns"] = fingerprint(job.input)
        known = job.known
        if known is not None and known.get("size_bytes") == record.get("size_bytes"):
            same_time = known.get("mtime_ns") == record.get("mtime_ns")
            if not same_time:
                sha = _digest(job.input)
            if same_time or (sha is not None and sha == known.get("sha256")):
                if job.envelope is None or os.path.isfile(job.envelope):
                    return {**known, **record, "status": "done", "action": "unchanged", "reason": None, "error": None}
                return {**known, **_recorded(record, convert_one(job.input, job.envelope))}  # its partitions stay
        record["sha256"] = sha or _digest(job.input)
    if job.dataset is None:
        assert job.envelope is not None
        return _recorded(record, convert_one(job.input, job.envelope))
    base = Path(job.dataset)
    scratch = base / f".{job.label}.{uuid.uuid4().hex}.tmp"
    try:
        scratch.mkdir()
        outcome = convert_one(job.input, job.envelope or str(scratch / "envelope.mve.json"))
        if isinstance(outcome, Converted):
            record = _recorded(record, outcome)
            record["conversations"], record["messages"] = _write_partitions(outcome.output, base, job.label, record)
            return record
        return _recorded(record, outcome)
    except MemvelopeError as exc:
        return _recorded(record, Failed(job.input, str(exc), exc.reason))
    except OSError as exc:
        failed = OutputError(f"cannot write output: {exc.strerror or exc}", reason="output", source=str(base))
        return _recorded(record, Failed(job.input, str(failed), failed.reason))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _digest(path: str) -> str | None:
    try:
        return digest(path)
    except OSError:
        return None  # the conversion names what is wrong with it


def _recorded(record: dict[str, Any], outcome: Converted | Failed) -> dict[str, Any]:
    finished_at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    if isinstance(outcome, Failed):
        return {**record, "status": "failed", "action": "failed", "reason": outcome.reason, "error": outcome.error}
    return {
        **record,
        "status": "done",
        "action": "converted",
        "provider": outcome.provider,
        "conversations": outcome.conversations,
        "messages": outcome.messages,
        "finished_at": finished_at,
    }


def _write_partitions(envelope: str, base: Path, label: str, record: dict[str, Any]) -> tuple[int, int]:
    """Write the envelope's tables as ``label``'s partitions of ``base``, each into a temporary folder
    renamed into place (replacing an earlier one); the rows written (conversations, messages)."""
    import json

    from ._tables import read_tables

    tables = read_tables(envelope, sources=[label], progress=False)
    write = uuid.uuid4().hex
    rows = {"conversations": tables.conversations.num_rows, "messages": tables.messages.num_rows}  # type: ignore[union-attr]
    scratch = base / f".{label}.{write}.tables.tmp"
    try:
        written = tables.to_parquet(scratch, progress=False)
        del tables
        marker = {k: v for k, v in record.items() if k not in ("action", "output")}
        marker.update(rows, write=write, written_by=f"{platform.node()}:{os.getpid()}")
        staged = {}
        for table in PARTITIONED_TABLES:
            stage = output_folder(base / table) / f".{KEY}={label}.{write}.tmp"
            stage.mkdir()
            staged[table] = stage
            os.replace(written[table], stage / PART)
            with open(stage / MARKER, "wb") as fh:  # the folder is renamed into place whole, the marker with it
                fh.write(json.dumps(marker, ensure_ascii=False).encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
        old = []
        with held():  # a stop lands before the partitions are swapped or after, never between
            for table, stage in staged.items():
                target = partition(base, table, label)
                if target.exists():
                    old.append(target.with_name(f".{target.name}.{write}.old.tmp"))
                    os.replace(target, old[-1])
                os.replace(stage, target)
        for folder in old:
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows["conversations"], rows["messages"]


def run_many(
    inputs: Sequence[str | os.PathLike[str]],
    out_folder: str | os.PathLike[str] | None = None,
    *,
    parquet: str | os.PathLike[str] | None = None,
    workers: int | None = None,
    scheduler: Any = None,
    progress: bool | None = None,
) -> ManyResult:
    """Convert each input to its envelope in ``out_folder`` and/or its partitions of the dataset
    ``parquet`` (see :func:`memvelope_tools.convert_many`); failures are recorded, never raised."""
    if out_folder is None and parquet is None:
        raise OutputError("give a folder for the envelopes, a folder for the Parquet dataset, or both", reason="output")
    client, own = _client(scheduler)
    made = _missing_folders(Path(out_folder)) if out_folder is not None else []
    try:
        out = output_folder(out_folder) if out_folder is not None else None
        if parquet is None:
            return _run(inputs, out, None, workers, client, progress)
        base = _dataset_folder(Path(parquet))
        with folder_lock(base):
            return _run(inputs, out, base, workers, client, progress)
    finally:
        if own:
            client.close()
        for folder in made:  # folders made here that hold nothing (every input failed) are removed
            try:
                folder.rmdir()
            except OSError:
                break


def _client(scheduler: Any) -> tuple[Any, bool]:
    """The ``dask.distributed`` client for ``scheduler`` (an address, or a client), and whether it is ours."""
    if scheduler is None or not isinstance(scheduler, str):
        return scheduler, False
    from distributed import Client

    return Client(scheduler), True  # type: ignore[no-untyped-call]


def _dataset_folder(base: Path) -> Path:
    if any((base / f"{t}.parquet").exists() for t in PARTITIONED_TABLES):
        raise OutputError(
            "holds a Parquet folder of another kind (conversations.parquet, messages.parquet): give the dataset "
            "a folder of its own",
            reason="output",
            source=str(base),
        )
    return output_folder(base)


def _missing_folders(path: Path) -> list[Path]:
    """``path`` and those of its parents that do not exist, deepest first."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing


def _run(
    inputs: Sequence[str | os.PathLike[str]],
    out: Path | None,
    base: Path | None,
    workers: int | None,
    client: Any,
    progress: bool | None,
) -> ManyResult:
    sources = [os.fspath(i) for i in inputs]
    if base is None:
        jobs = [
            Donation(s, label, None, str(out / f"{label}.mve.json") if out else None)
            for s, label in zip(sources, labels(sources), strict=True)
        ]
        return ManyResult(_each(jobs, workers, client, progress, None))
    rows = _start(base)
    by_input = {row["input"]: label for label, row in rows.items()}
    jobs, seen = [], set()
    for source in sources:
        key = os.path.abspath(source)
        if key in seen:
            continue
        seen.add(key)
        label = by_input.get(key) or labels([key], taken=[*rows, *(j.label for j in jobs)])[0]
        known = rows.get(label)
        envelope = str(out / f"{label}.mve.json") if out else None
        jobs.append(Donation(key, label, str(base), envelope, known if known and known["status"] == "done" else None))
    records = _each(jobs, workers, client, progress, (base, rows))
    return ManyResult(records, list(rows.values()))


def _start(base: Path) -> dict[str, dict[str, Any]]:
    """The dataset's donations (label -> record) once what an interrupted run left is removed: those its
    manifest lists whose partitions are still whole, failed ones, and those finished but not listed."""
    listed = {row["source"]: row for row in read_manifest(base)}
    done = finished(base)
    remove_unfinished(base, done)
    rows = {label: row for label, row in listed.items() if row.get("status") == "failed" or label in done}
    for label, record in done.items():
        row = rows.get(label)
        if row is None or row.get("status") != "done" or row.get("sha256") != record.get("sha256"):
            rows[label] = {k: record.get(k) for k in MANIFEST_COLUMNS if k != "action"} | {"status": "done"}
    write_manifest(base, rows.values())  # before any partition: the manifest is what marks the folder
    return rows


def _each(
    jobs: list[Donation],
    workers: int | None,
    client: Any,
    progress: bool | None,
    manifest: tuple[Path, dict[str, dict[str, Any]]] | None,
) -> list[dict[str, Any]]:
    """Run the jobs; the records in the jobs' order, the manifest written as they finish."""
    order = {job.label: i for i, job in enumerate(jobs)}
    records: list[dict[str, Any] | None] = [None] * len(jobs)
    last = time.monotonic()
    try:
        with progress_bar(len(jobs), desc="donations", unit="donation", enabled=progress) as bar:
            for job, record in _done(jobs, workers, client):
                if isinstance(record, Lost):
                    record = _recorded(
                        {"source": job.label, "input": job.input, "output": job.envelope},
                        Failed(job.input, f"the worker running it failed or was lost ({record.error})", "internal"),
                    )
                records[order[job.label]] = record
                bar.update(1)
                if manifest is not None:
                    kept = {k: v for k, v in record.items() if k != "action"}
                    if record["status"] == "failed" and job.known is not None:  # finished before: its partitions stay
                        kept = {**job.known, "reason": record["reason"], "error": record["error"]}
                    manifest[1][job.label] = kept
                    if time.monotonic() - last >= MANIFEST_EVERY:
                        write_manifest(*manifest[:1], manifest[1].values())
                        last = time.monotonic()
    finally:
        if manifest is not None:
            write_manifest(manifest[0], manifest[1].values())
    return [r for r in records if r is not None]


def _done(jobs: list[Donation], workers: int | None, client: Any) -> Iterator[tuple[Donation, Any]]:
    if client is None and (len(jobs) <= 1 or workers == 1):
        return each_done(convert_donation, jobs, workers=1)
    if client is None:
        workers = min(workers or os.cpu_count() or 1, len(jobs))
    return each_done(convert_donation, jobs, workers=workers, client=client)


def convert_many(
    inputs: Sequence[str | os.PathLike[str]],
    out_folder: str | os.PathLike[str] | None = None,
    *,
    parquet: str | os.PathLike[str] | None = None,
    workers: int | None = None,
    scheduler: Any = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Convert many independent exports (donations) in parallel, each to its own envelope and/or its own
    partitions of one Parquet dataset, past broken ones.

    Each input is one export: a zip, a folder or a part file. Its label is its file or folder name
    without ``.zip`` / ``.json``, made safe for a file name and unique; its envelope is
    ``<label>.mve.json`` in ``out_folder``. With ``parquet``, the worker that converts a donation also
    writes its rows as the partitions ``conversations/source=<label>/`` and ``messages/source=<label>/``
    of that folder, each written under a temporary name and renamed into place, and the folder's
    ``_manifest.json`` records every donation as they finish. Run again on the same folder, a donation
    finished before whose file is unchanged (same size and modification time, or same SHA-256) is not
    converted again and its partitions are not rewritten; new and changed ones are converted; what a
    run stopped part-way left unfinished is removed first. A donation is known by its absolute path. A
    donation finished before that fails now (its file was removed or damaged) keeps its partitions: its
    row stays ``done``, with this run's reason and error.

    Parameters
    ----------
    inputs : list of str or os.PathLike
        One export each (the workers read them: on a cluster, paths every worker can read).
    out_folder : str or os.PathLike, optional
        The folder for the envelopes (created if missing); none are kept without it.
    parquet : str or os.PathLike, optional
        The folder of the partitioned dataset (created if missing), read back with
        :func:`memvelope_tools.read_parquet`. Without it nothing is resumable.
    workers : int, optional
        Worker processes on this machine (default: one per CPU; 1 converts here, one after the other).
    scheduler : str or distributed.Client, optional
        Run on this ``dask.distributed`` scheduler (its address) or client instead of local processes
        (needs the ``dask`` extra). Only paths go to the workers and only small records come back.
    progress : bool, optional
        Show donations done / total on stderr (default: on a terminal).

    Returns
    -------
    pandas.DataFrame
        With ``parquet``, the manifest: one row per donation the dataset has seen, ``action`` saying what
        this run did (``converted``, ``unchanged``, ``failed``; null for a donation not given this
        time); else one row per input. Columns: ``source`` (the label), ``input``, ``status``
        (``done``, ``failed``), ``action``, ``provider``, ``conversations``, ``messages`` (rows
        written), ``size_bytes``, ``mtime_ns``, ``sha256`` (of the donation's file, or of a folder's
        files), ``output`` (the envelope), ``reason`` and ``error`` (a failed donation's error reason
        and one-line message), ``finished_at``.

    Raises
    ------
    memvelope_tools.errors.OutputError
        Neither folder is given, a folder cannot be created, or ``parquet`` holds a Parquet folder of
        another kind.
    memvelope_tools.errors.FormatError
        The dataset's manifest is damaged (``bad-manifest``).

    Examples
    --------
    >>> import tempfile
    >>> import memvelope_tools as mv
    >>> with tempfile.TemporaryDirectory() as out:
    ...     done = mv.convert_many([mv.sample_path("chatgpt"), mv.sample_path("claude")], parquet=out, workers=1)
    ...     frames = mv.read_parquet(out)
    >>> done[["source", "status", "action", "conversations"]].values.tolist()
    [['chatgpt-export', 'done', 'converted', 40], ['claude-export', 'done', 'converted', 40]]
    >>> frames["messages"].groupby("source", observed=True).size().to_dict()
    {'chatgpt-export': 114, 'claude-export': 91}
    """
    return run_many(
        inputs, out_folder, parquet=parquet, workers=workers, scheduler=scheduler, progress=progress
    ).frame()
