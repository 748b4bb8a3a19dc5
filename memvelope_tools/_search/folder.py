"""The index kept beside a Parquet folder: brought up to date with its files, or built anew."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import _corpus as corpus
from .._atomic import folder_lock
from .._frames.folders import INDEX_FOLDER, is_parted
from ..errors import SearchIndexError
from .engine import FORMAT, ROWS, engine_errors, open_engine
from .history import update_history_index
from .index import SearchIndex, add_documents, folder_fingerprint, new_folder, result_rows, share_files, write_rows


def _doc_keys(rows: pa.Table, texts: np.ndarray) -> pa.Table:
    """What the engine holds of each row: role, time and text (``texts``: a number per distinct text),
    with the row's occurrence number among equal ones, so that equal documents pair up one to one."""
    import pandas as pd

    keys = pd.DataFrame(
        {
            "role": rows.column("role").cast(pa.int8()).fill_null(-1).to_numpy(),
            "dated": pc.is_valid(rows.column("ts")).to_numpy(zero_copy_only=False),
            "ts": rows.column("ts").fill_null(0).to_numpy(),
            "text": texts,
        }
    )
    keys["occurrence"] = keys.groupby(["role", "dated", "ts", "text"], sort=False).cumcount().to_numpy()
    keys["row"] = np.arange(len(keys))
    return pa.Table.from_pandas(keys, preserve_index=False)


def _text_numbers(first: pa.ChunkedArray, second: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A number per distinct text, shared by the two columns (null as the empty text)."""
    both = pa.chunked_array([*first.chunks, *second.chunks], type=pa.string())  # filling the nulls would copy it
    coded = both.dictionary_encode().unify_dictionaries()
    distinct = coded.chunks[0].dictionary if coded.num_chunks else pa.array([], pa.string())
    empty = pc.index(distinct, "").as_py()
    null = empty if empty >= 0 else len(distinct)
    numbers = np.concatenate(
        [chunk.indices.fill_null(null).to_numpy() for chunk in coded.chunks] or [np.zeros(0, np.int64)]
    )
    return numbers[: len(first)].astype(np.int64), numbers[len(first) :].astype(np.int64)


def update_folder_index(folder: Path) -> None:
    """Bring the index beside the Parquet folder ``folder`` up to date with its files as they are now:
    an index kept there whose every document is still among the folder's messages gets only the new
    ones (its results are then those of an index built anew); otherwise it is built anew. Written
    beside the old one, then moved into place; raises as :func:`build_folder_index` does."""
    if is_parted(folder):
        update_history_index(folder)
        return
    path = folder / INDEX_FOLDER
    try:
        old = SearchIndex.open(path) if path.is_dir() else None
    except (ValueError, OSError, SearchIndexError):
        old = None
    if old is None or old.meta("format") != FORMAT:
        if old is not None:
            old.close()
        build_folder_index(folder)
        return
    fingerprint = folder_fingerprint(folder)
    rows = result_rows(corpus.from_parquet(folder), fingerprint)
    before = old._rows
    old_docs = before.column("doc").to_numpy() if "doc" in before.column_names else np.arange(before.num_rows)
    old.close()
    now_texts, old_texts = _text_numbers(rows.column("text"), before.column("text"))
    on = ["role", "dated", "ts", "text", "occurrence"]
    joined = _doc_keys(rows, now_texts).join(
        _doc_keys(before, old_texts), keys=on, join_type="full outer", right_suffix="_old"
    )
    new_row = joined.column("row").to_numpy(zero_copy_only=False)
    old_row = joined.column("row_old").to_numpy(zero_copy_only=False)
    if pc.any(pc.is_null(joined.column("row"))).as_py():  # a document the history no longer holds
        build_folder_index(folder)
        return
    matched = pc.is_valid(joined.column("row_old")).to_numpy(zero_copy_only=False)
    docs = np.full(rows.num_rows, -1, dtype=np.int64)
    docs[new_row[matched].astype(np.int64)] = old_docs[old_row[matched].astype(np.int64)]
    added = np.flatnonzero(docs < 0)
    first = int(old_docs.max()) + 1 if len(old_docs) else 0
    docs[added] = np.arange(first, first + len(added))
    rows = rows.append_column("doc", pa.array(docs, pa.int64()))
    with folder_lock(folder), new_folder(path) as made:
        share_files(path, made, but=ROWS)
        with engine_errors(os.fspath(path)):
            add_documents(open_engine(made, create=False), rows, added, first)
        write_rows(made, rows)
        del rows


def build_folder_index(folder: Path) -> None:
    """Build the index beside the Parquet folder ``folder`` for its files as they are now, in place of any
    index kept there; raises :class:`OSError` or :class:`~memvelope_tools.errors.SearchIndexError` when
    it cannot be written."""
    if is_parted(folder):
        update_history_index(folder, anew=True)
        return
    history = corpus.from_parquet(folder)
    with folder_lock(folder):
        SearchIndex.build(history, path=folder / INDEX_FOLDER, fingerprint=folder_fingerprint(folder)).close()
