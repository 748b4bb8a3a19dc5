"""A partitioned Parquet dataset of many donations: one hive partition per donation and table.

``memvelope convert-many --parquet DIR`` (:func:`memvelope_tools.convert_many`) writes it. The folder holds:

* ``conversations/source=<label>/part-0.parquet`` and ``messages/source=<label>/part-0.parquet``: the
  rows of one donation (the columns of :func:`memvelope_tools.conversations_frame` and
  :func:`memvelope_tools.messages_frame`, ``source`` being the label), written by the worker that
  converted it. Beside each file, ``_donation.json`` records what the partition was written from (the
  donation's path, size, modification time and SHA-256, its row counts, and the id of the write,
  the same in both tables). Each partition is written into a temporary folder and renamed into place;
  a donation is finished when both of its partitions carry the same write id.
* ``_manifest.json``: every donation the folder has seen, finished or failed, with its reason; written
  by the client, atomically, as donations finish.

A label is the donation's file or folder name without ``.zip`` / ``.json``, its characters other than
letters, digits, ``.``, ``_`` and ``-`` replaced by ``_``, made unique with ``-2``, ``-3`` (compared
without case). Readers that know hive partitioning read each table's folder as it is (DuckDB
``read_parquet('DIR/messages/**/*.parquet', hive_partitioning=true)``, Polars, pyarrow.dataset, Spark);
files and folders whose names start with ``_`` or ``.`` are not data.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ._atomic import atomic_write
from ._frames.columns import STRING, pandas_dtypes
from ._frames.folders import KEY, PARTITIONED_TABLES, is_litter, remove_entries
from ._sources import DATASET_MANIFEST
from .errors import FormatError

#: The manifest's file in the dataset's folder.
MANIFEST = DATASET_MANIFEST
_MANIFEST_TAG = "memvelope-convert-many-manifest"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_LABEL_MAX = 100

#: The columns of the manifest (:func:`manifest_frame`), in order, and their dtypes.
MANIFEST_COLUMNS: dict[str, Any] = {
    "source": STRING,
    "input": STRING,
    "status": pd.CategoricalDtype(["done", "failed"]),
    "action": pd.CategoricalDtype(["converted", "unchanged", "failed"]),
    "provider": STRING,
    "conversations": "Int64",
    "messages": "Int64",
    "size_bytes": "Int64",
    "mtime_ns": "Int64",
    "sha256": STRING,
    "output": STRING,
    "reason": STRING,
    "error": STRING,
    "finished_at": STRING,
}


def labels(inputs: Sequence[str | os.PathLike[str]], taken: Iterable[str] = ()) -> list[str]:
    """A safe, unique label per input (see the module's docstring), none of them one of ``taken``."""
    used = {t.lower() for t in taken}
    out: list[str] = []
    for item in inputs:
        base = Path(os.fspath(item)).name or "export"
        for suffix in (".zip", ".json"):
            if base.lower().endswith(suffix) and len(base) > len(suffix):
                base = base[: -len(suffix)]
        base = _UNSAFE.sub("_", base).strip("._")[:_LABEL_MAX] or "export"
        label, count = base, 1
        while label.lower() in used:
            count += 1
            label = f"{base}-{count}"
        used.add(label.lower())
        out.append(label)
    return out


def fingerprint(path: str) -> tuple[int, int]:
    """The size in bytes and the latest modification time (ns) of a file, or of a folder's files."""
    if not os.path.isdir(path):
        st = os.stat(path)
        return st.st_size, st.st_mtime_ns
    size = mtime = 0
    for file in _files(path):
        st = os.stat(file)
        size += st.st_size
        mtime = max(mtime, st.st_mtime_ns)
    return size, mtime


def digest(path: str) -> str:
    """The SHA-256 of a file's bytes, or of a folder's files (their relative names and bytes), in hex."""
    sha = hashlib.sha256()
    files = [path] if not os.path.isdir(path) else _files(path)
    for file in files:
        if file != path:
            sha.update(os.path.relpath(file, path).encode("utf-8", "surrogateescape") + b"\0")
        with open(file, "rb") as fh:
            while chunk := fh.read(1 << 20):
                sha.update(chunk)
    return sha.hexdigest()


def _files(folder: str) -> list[str]:
    found: list[str] = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        found.extend(os.path.join(root, n) for n in sorted(names) if os.path.isfile(os.path.join(root, n)))
    return found


def remove_unfinished(base: Path, done: Iterable[str]) -> list[str]:
    """Remove what an interrupted run left in ``base``: temporary folders and files, and the partitions
    of donations not finished (not in ``done``); the names removed, relative to ``base``. Call it while
    no other run writes the folder."""
    keep = {f"{KEY}={label}" for label in done}

    def unwanted(folder: Path, name: str) -> bool:
        orphan = folder != base and name.startswith(f"{KEY}=") and name not in keep
        return is_litter(name) or orphan

    return remove_entries(base, [base, *(base / t for t in PARTITIONED_TABLES)], unwanted)


def read_manifest(base: Path) -> list[dict[str, Any]]:
    """The donations the manifest of ``base`` lists (none when it has none); a FormatError when it is damaged."""
    path = base / MANIFEST
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise FormatError(
            f"cannot read the manifest ({exc}): remove it and run again; the finished partitions are kept",
            reason="bad-manifest",
            source=str(path),
        ) from None
    listed = data.get("donations") if isinstance(data, dict) and data.get("memvelope") == _MANIFEST_TAG else None
    if not isinstance(listed, list):
        raise FormatError(
            "not a convert-many manifest: give a folder of its own to --parquet",
            reason="bad-manifest",
            source=str(path),
        )
    return [row for row in listed if isinstance(row, dict) and isinstance(row.get("source"), str)]


def write_manifest(base: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Replace the manifest of ``base`` by one listing ``rows`` (each a donation's record), atomically."""
    kept = [{k: row.get(k) for k in MANIFEST_COLUMNS if k != "action"} for row in rows]
    data = {"memvelope": _MANIFEST_TAG, "donations": kept}
    atomic_write(base / MANIFEST, json.dumps(data, ensure_ascii=False, indent=0).encode("utf-8"))


def manifest_frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The records as a frame of :data:`MANIFEST_COLUMNS`."""
    listed = list(rows)
    frame = pd.DataFrame({name: [row.get(name) for row in listed] for name in MANIFEST_COLUMNS})
    return frame.astype(pandas_dtypes(MANIFEST_COLUMNS))
