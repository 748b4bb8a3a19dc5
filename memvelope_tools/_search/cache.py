"""Which index serves a history: one kept in memory, one kept on disk beside a Parquet or history folder
(rebuilt, with a warning, when out of date or damaged), or one built now."""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from .. import _corpus as corpus
from .._atomic import folder_lock
from .._convert.log import ConversionLog
from .._frames.folders import INDEX_FOLDER, PARTS, is_parted, require_history_files
from .._sources import Input, resolve
from ..errors import SearchIndexError
from .build import Again, Indexing
from .engine import FORMAT
from .history import open_history_index, update_history_index
from .index import SearchIndex, folder_fingerprint
from .parts import Damaged, Stale, Unusable, check_index_place

if TYPE_CHECKING:
    import pandas as pd

_CACHED = 4  # in-memory indexes kept
_HASHED = 1 << 24  # Arrow buffers up to this size are hashed into a frame's key, larger ones named
_memory: OrderedDict[str, tuple[SearchIndex, tuple[pa.Buffer, ...]]] = OrderedDict()
_memory_lock = threading.Lock()


def _remember(key: str, index: SearchIndex, pins: tuple[pa.Buffer, ...] = ()) -> SearchIndex:
    """Keep ``index`` under ``key`` (with the buffers the key relies on) for the last few indexes."""
    with _memory_lock:
        _memory[key] = (index, pins)
        _memory.move_to_end(key)
        while len({id(kept) for kept, _ in _memory.values()}) > _CACHED:
            _memory.popitem(last=False)
    return index


def _recall(key: str) -> SearchIndex | None:
    with _memory_lock:
        entry = _memory.get(key)
        if entry is None:
            return None
        _memory.move_to_end(key)
        return entry[0]


def clear_cache() -> None:
    """Forget the indexes kept in memory (files on disk stay)."""
    with _memory_lock:
        _memory.clear()


def _arrow_columns(history: pd.DataFrame) -> Iterator[tuple[str, pa.ChunkedArray, bool]]:
    """Each column of a history frame as Arrow, and whether pandas holds it as Arrow (immutable) data."""
    import pandas as pd

    table = pa.Table.from_pandas(history.loc[:, list(corpus.HISTORY_COLUMNS)], preserve_index=False)
    for name in table.column_names:
        dtype = history[name].dtype
        held = isinstance(dtype, pd.ArrowDtype) or (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow")
        yield name, table.column(name), held


def frame_fingerprint(history: pd.DataFrame) -> str:
    """A digest of a history frame's content: equal for equal content, whatever object holds it."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(FORMAT.encode())
    for name, column, _ in _arrow_columns(history):
        digest.update(name.encode())
        for chunk in column.chunks:
            if isinstance(chunk, pa.DictionaryArray):
                chunk = chunk.cast(chunk.type.value_type)
            digest.update(f"{chunk.type}:{chunk.offset}:{len(chunk)}:{chunk.null_count}".encode())
            for buffer in chunk.buffers():
                if buffer is not None:
                    digest.update(memoryview(buffer))
    return digest.hexdigest()


def _frame_key(history: pd.DataFrame) -> tuple[str, tuple[pa.Buffer, ...]]:
    """A key for exactly this content held in exactly these buffers, and the buffers it names.

    Like :func:`frame_fingerprint`, except that a large buffer of Arrow data is named by its
    address rather than hashed: pandas never writes into Arrow data (a change makes new buffers),
    and while the key is kept its buffers are kept alive, so their addresses are not reused.
    """
    digest = hashlib.blake2b(digest_size=20)
    digest.update(FORMAT.encode())
    pins: list[pa.Buffer] = []
    for name, column, held in _arrow_columns(history):
        digest.update(name.encode())
        for chunk in column.chunks:
            digest.update(f"{chunk.type}:{chunk.offset}:{len(chunk)}:{chunk.null_count}".encode())
            parts = [chunk.indices, chunk.dictionary] if isinstance(chunk, pa.DictionaryArray) else [chunk]
            for buffer in (buffer for part in parts for buffer in part.buffers()):
                if buffer is None:
                    continue
                if held and buffer.size > _HASHED:
                    digest.update(f"@{buffer.address}:{buffer.size}".encode())
                    pins.append(buffer)
                else:
                    digest.update(memoryview(buffer))
    return "buffers:" + digest.hexdigest(), tuple(pins)


def _file_key(inputs: list[Input]) -> str | None:
    """For inputs all read from files on disk (envelopes and Facts IR documents by path, exports by the
    files they are read from): a key from their paths, sizes and modification times."""
    parts = []
    for found in inputs:
        if found.kind in ("envelope", "ir") and found.value is None and found.path is not None:
            files: list[Path] | None = [found.path]
        else:
            files = found.files()
        if not files:
            return None
        for item in files:
            try:
                stat = os.stat(item)
            except OSError:
                return None
            if not os.path.isfile(item):
                return None
            parts.append(f"{found.kind}:{os.path.abspath(os.fspath(item))}:{stat.st_size}:{stat.st_mtime_ns}")
        parts.append("")  # where one input's files end
    return "files:" + "\n".join(parts)


def index_for(source: Any, *, on_conversion: Callable[[ConversionLog, str], object] | None = None) -> SearchIndex:
    """The search index of a history, built now or reused (see :mod:`memvelope_tools._search`); envelopes
    and exports are indexed as they are read, a batch at a time. ``on_conversion`` is called with what each
    export converted now read and left out, and its provider."""
    inputs = resolve(source, "history", list_means="documents", caller="search()")
    if len(inputs) == 1 and inputs[0].kind == "parquet" and inputs[0].path is not None:
        return folder_index(inputs[0].path)
    file_key = _file_key(inputs) if inputs else None
    if file_key is not None and (index := _recall(file_key)) is not None:
        return index
    if streamable(inputs):
        index, digest = streamed_index(inputs, digest=file_key is None, on_conversion=on_conversion)
        if digest is not None:
            key = "stream:" + digest
            if (held := _recall(key)) is not None:
                index.close()
                return held
            _remember(key, index)
        return _remember(file_key, index) if file_key is not None else index
    history = corpus.history_of(inputs)
    quick_key, pins = _frame_key(history)
    index = _recall(quick_key)
    if index is None:
        key = "frame:" + frame_fingerprint(history)
        index = _recall(key)
        if index is None:
            index = _remember(key, SearchIndex.build(history, fingerprint=key))
        _remember(quick_key, index, pins)
    if file_key is not None:
        _remember(file_key, index)
    return index


def streamable(inputs: list[Input]) -> bool:
    """Whether the index of ``inputs`` is built as they stream: envelopes and exports, none of them given
    parsed (those are indexed from their frame)."""
    return bool(inputs) and all(i.kind in ("envelope", "export") and not isinstance(i.value, dict) for i in inputs)


def streamed_index(
    inputs: list[Input],
    *,
    digest: bool,
    on_conversion: Callable[[ConversionLog, str], object] | None = None,
) -> tuple[SearchIndex, str | None]:
    """The index of the envelopes and exports ``inputs`` (see :func:`streamable`), each read once, a batch
    at a time, and, when ``digest``, a digest of the rows indexed (a key for the same content however it is
    given; None when an input had to be read whole). ``on_conversion`` is called with what each export's
    conversion read and left out, and its provider."""
    sink = Indexing(digest)
    try:
        for found in inputs:
            sink.begin()
            log = ConversionLog()
            provider = corpus.history_stream(found, sink, log=log)
            if log.parts and provider is not None and on_conversion is not None:
                on_conversion(log, provider)
        return sink.finish(), sink.hexdigest()
    except Again:
        sink.abandon()
        # An input read again from its start after rows were written: indexed whole from its frame.
        return SearchIndex.build(corpus.history_of(inputs)), None
    except BaseException:
        sink.abandon()
        raise


def _forget_damaged(key: str, path: Path, damaged: str) -> None:
    """Let go of the index ``key`` held in memory, which the engine failed on (``damaged``: how), saying
    that the index in the folder ``path`` is rebuilt."""
    with _memory_lock:
        entry = _memory.pop(key, None)
    if entry is not None:
        entry[0].close()
    warnings.warn(f"search index {path} is damaged ({damaged}); rebuilding it", stacklevel=5)


def folder_index(folder: Path, damaged: str | None = None) -> SearchIndex:
    """The index beside the Parquet folder ``folder``; ``damaged`` (what failed) rebuilds it whatever it holds."""
    if is_parted(folder):
        return _history_folder_index(folder, damaged)
    fingerprint = folder_fingerprint(folder)
    key = f"folder:{folder.resolve()}:{fingerprint}"
    path = folder / INDEX_FOLDER
    if damaged is not None:
        _forget_damaged(key, path, damaged)
    elif (index := _recall(key)) is not None:
        return index
    elif path.exists():
        stored: SearchIndex | None = None
        try:
            stored = SearchIndex.open(path)
            if stored.meta("format") != FORMAT:
                why = "is out of date (it was built by another version)"
            elif stored.meta("fingerprint") == fingerprint:
                return _remember(key, stored)
            else:
                why = "is out of date (the Parquet files changed since it was built)"
        except (ValueError, OSError, SearchIndexError) as exc:
            why = f"cannot be read ({exc.msg if isinstance(exc, SearchIndexError) else exc})"
        if stored is not None:
            stored.close()
        warnings.warn(f"search index {path} {why}; rebuilding it", stacklevel=4)
    history = corpus.from_parquet(folder)
    try:
        with folder_lock(folder):
            index = SearchIndex.build(history, path=path, fingerprint=fingerprint)
    except (OSError, SearchIndexError) as exc:
        failure = (exc.strerror or str(exc)) if isinstance(exc, OSError) else exc.msg
        warnings.warn(f"cannot write {path} ({failure}); keeping the index in memory only", stacklevel=4)
        index = SearchIndex.build(history, fingerprint=fingerprint)
    return _remember(key, index)


def _history_folder_index(folder: Path, damaged: str | None) -> SearchIndex:
    """The index beside the history folder ``folder``, brought up to date first when it is not (with a
    warning that says why) under the folder's lock; ``damaged`` (what failed) rebuilds it whatever it holds."""
    require_history_files(folder)
    stamp = [
        f"{name}:{(folder / name).stat().st_size}:{(folder / name).stat().st_mtime_ns}"
        for name in ("state.parquet", "conversations.parquet")
    ]
    with contextlib.suppress(FileNotFoundError):  # a part renamed into place changes its folder's time
        stamp.append(f"{PARTS}:{(folder / PARTS).stat().st_mtime_ns}")
    key = f"history:{folder.resolve()}:{':'.join(stamp)}"
    path = folder / INDEX_FOLDER
    check_index_place(path)
    found: Unusable | None = None
    if damaged is None:
        if (index := _recall(key)) is not None:
            return index
        try:
            return _remember(key, open_history_index(folder))
        except Unusable:
            pass
    with folder_lock(folder):
        if damaged is None:
            try:  # another process may have brought it up to date meanwhile
                return _remember(key, open_history_index(folder))
            except Unusable as exc:
                found = exc
        if damaged is not None or isinstance(found, Damaged):
            _forget_damaged(key, path, damaged or str(found))
        elif os.path.lexists(path):
            warnings.warn(f"search index {path} is out of date ({found}); bringing it up to date", stacklevel=4)
        try:
            update_history_index(folder, anew=not isinstance(found, Stale))
        except (OSError, SearchIndexError) as exc:
            if isinstance(exc, SearchIndexError) and exc.source != os.fspath(path):
                raise  # a part that cannot be read
            failure = (exc.strerror or str(exc)) if isinstance(exc, OSError) else exc.msg
            warnings.warn(f"cannot write {path} ({failure}); keeping the index in memory only", stacklevel=4)
            return _remember(key, SearchIndex.build(corpus.from_history_folder(folder), fingerprint=key))
        try:
            return _remember(key, open_history_index(folder))
        except Unusable as exc:
            raise SearchIndexError(f"the index just written cannot be read: {exc}", source=os.fspath(path)) from None
