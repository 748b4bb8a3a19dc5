"""Envelopes and Facts IR documents as typed pandas DataFrames.

Every function takes one document or a list of them. A document is anything
:func:`memvelope_tools.load` takes: an export as downloaded (its zip, its folder or a
``conversations*.json`` part, converted in memory), an envelope or Facts IR file, bytes, a binary
file object or a parsed ``dict``. A list here is always several documents, each loaded on its
own (so ``[a.zip, b.zip]`` is two exports); to pass the parts of ONE export, load them first:
``messages_frame(load([part0, part1]))``. The ``source`` column tells documents apart: the file
name for a path (the path as given when another input has the same file name), ``doc0``,
``doc1``, ... by list position otherwise, or the labels given as ``sources=``. Rows keep document
order, then conversation order, then message order; the index is a plain ``RangeIndex``.

Columns and dtypes (declared once, below, and reused for the Parquet schema):

``conversations_frame`` (:data:`CONVERSATION_COLUMNS`), one row per conversation:
  ``source`` string · ``provider`` string (the envelope's ``meta.source_provider``) ·
  ``conv_index`` int64 (position in its envelope, from 0) · ``conversation_id`` string (null and
  duplicate ids survive) · ``title`` string ·
  ``created_at``, ``updated_at`` datetime64[ms, UTC] · ``n_messages``, ``n_user``, ``n_assistant``
  int64 · ``first_ts``, ``last_ts`` datetime64[ms, UTC] (earliest and latest non-null message
  ``ts``; message order is not time order) · ``chars`` int64 (sum of the messages' ``chars``).

``messages_frame`` (:data:`MESSAGE_COLUMNS`), one row per message:
  ``source`` string · ``provider`` string · ``conv_index`` int64 · ``conversation_id`` string · ``message_id`` string ·
  ``position`` int64 (from 0 within its conversation: ``m1`` is 0) · ``role`` category
  (``user``, ``assistant``) · ``ts`` datetime64[ms, UTC] · ``text`` string · ``chars`` int64
  (code points) · ``words`` int64 (runs of non-whitespace, whitespace as in ``str.split()``).

``facts_frame`` (:data:`FACT_COLUMNS`), one row per fact:
  ``source`` string · ``fact_index`` int64 · ``subject`` string · ``subject_type`` category
  (``self``, ``person``, ``company``, ``project``, ``other``) · ``category`` category
  (``identity``, ``career``, ``projects``, ``preferences``, ``instructions``, ``relationship``) ·
  ``content``, ``effective_date``, ``in_text_date`` (partial dates stay strings),
  ``provenance``, ``convo_id`` string.

``archetype_frame`` (:data:`ARCHETYPE_COLUMNS`), one row per Facts IR document, its ``meta`` and
``archetype``: ``source``, ``format``, ``provider``, ``mode`` string · ``generated_at``
datetime64[us, UTC] (the spec allows any precision; a value without a UTC offset is not
conforming and becomes NaT rather than a guess) · ``n_facts`` int64 (``meta.facts``) · ``style``
string · ``archetype_facts`` int64 · ``self_ratio``, ``belief_ratio`` Float64 ·
``distinct_entities`` Int64 · ``categories`` object (the dict, or None).

Strings use ``pd.StringDtype("pyarrow")`` (nulls are ``pd.NA``), timestamps ``NaT`` for null.
``tz="Europe/Berlin"`` converts timestamp columns for display; the instants are unchanged.
``dedupe=True`` keeps one copy of each conversation whose non-null id occurs more than once
(across documents or within one): the one with the latest ``updated_at``, null counting as
oldest, later input winning ties; the messages of dropped copies are dropped too. Text with
unpaired surrogates (legal in JSON, not in UTF-8) gets U+FFFD in their place, with a warning.
"""

from __future__ import annotations

import collections
import itertools
import os
from collections import Counter
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from . import _text
from ._progress import progress_bar
from ._text import strings as _strings
from ._text import text_columns_later, utf8_ok
from ._words import word_counts  # noqa: F401 - part of this module's tested surface
from .errors import FormatError
from .load import document_file, load
from .read import (
    CATEGORIES,
    ROLES,
    SUBJECT_TYPES,
    Fallback,
    Source,
    _parse,
    _read_file,
    check,
    check_conversations,
    check_messages,
    source_label,
    stream_envelope,
)
from .tags import IR_TAG

STRING = pd.StringDtype("pyarrow")
TIMESTAMP = pd.DatetimeTZDtype("ms", "UTC")
TIMESTAMP_US = pd.DatetimeTZDtype("us", "UTC")
INT = np.dtype("int64")
NULLABLE_INT = pd.Int64Dtype()
FLOAT = pd.Float64Dtype()
ROLE = pd.CategoricalDtype(list(ROLES))
SUBJECT_TYPE = pd.CategoricalDtype(list(SUBJECT_TYPES))
CATEGORY = pd.CategoricalDtype(list(CATEGORIES))
OBJECT = np.dtype("O")

CONVERSATION_COLUMNS: dict[str, Any] = {
    "source": STRING,
    "provider": STRING,
    "conv_index": INT,
    "conversation_id": STRING,
    "title": STRING,
    "created_at": TIMESTAMP,
    "updated_at": TIMESTAMP,
    "n_messages": INT,
    "n_user": INT,
    "n_assistant": INT,
    "first_ts": TIMESTAMP,
    "last_ts": TIMESTAMP,
    "chars": INT,
}
MESSAGE_COLUMNS: dict[str, Any] = {
    "source": STRING,
    "provider": STRING,
    "conv_index": INT,
    "conversation_id": STRING,
    "message_id": STRING,
    "position": INT,
    "role": ROLE,
    "ts": TIMESTAMP,
    "text": STRING,
    "chars": INT,
    "words": INT,
}
FACT_COLUMNS: dict[str, Any] = {
    "source": STRING,
    "fact_index": INT,
    "subject": STRING,
    "subject_type": SUBJECT_TYPE,
    "category": CATEGORY,
    "content": STRING,
    "effective_date": STRING,
    "in_text_date": STRING,
    "provenance": STRING,
    "convo_id": STRING,
}
ARCHETYPE_COLUMNS: dict[str, Any] = {
    "source": STRING,
    "format": STRING,
    "provider": STRING,
    "mode": STRING,
    "generated_at": TIMESTAMP_US,
    "n_facts": INT,
    "style": STRING,
    "archetype_facts": INT,
    "self_ratio": FLOAT,
    "distinct_entities": NULLABLE_INT,
    "belief_ratio": FLOAT,
    "categories": OBJECT,
}

_MS = pa.timestamp("ms", tz="UTC")
_BATCH = 1 << 16
_STR_OR_NONE = frozenset((str, type(None)))


def arrow_type(dtype: Any) -> pa.DataType:
    """The Arrow type a declared column dtype is stored as (Parquet, DuckDB)."""
    if isinstance(dtype, pd.CategoricalDtype):
        return pa.dictionary(pa.int8(), pa.string())
    if isinstance(dtype, pd.StringDtype):
        return pa.string()
    if isinstance(dtype, pd.DatetimeTZDtype):
        return pa.timestamp(dtype.unit, tz=str(dtype.tz))
    if dtype in (INT, NULLABLE_INT):
        return pa.int64()
    if dtype == FLOAT:
        return pa.float64()
    raise TypeError(f"no Arrow type for {dtype!r}")


def arrow_schema(columns: dict[str, Any]) -> pa.Schema:
    """The explicit Arrow schema of a column declaration such as :data:`MESSAGE_COLUMNS`."""
    return pa.schema([pa.field(name, arrow_type(dtype)) for name, dtype in columns.items()])


def conform(frame: pd.DataFrame, columns: dict[str, Any], *, tz: str | None = None) -> pd.DataFrame:
    """Give ``frame`` exactly the declared columns and dtypes (optionally shown in ``tz``)."""
    out = frame.loc[:, list(columns)]
    for name, dtype in columns.items():
        if out[name].dtype != dtype:
            out[name] = out[name].astype(dtype)
        if tz is not None and isinstance(dtype, pd.DatetimeTZDtype):
            out[name] = out[name].dt.tz_convert(tz)
    return out.reset_index(drop=True)


def conversations_frame(
    doc_or_docs: Source | Sequence[Source],
    *,
    dedupe: bool = False,
    tz: str | None = None,
    sources: Sequence[str] | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """One row per conversation of one or several envelopes (see the module docstring)."""
    convs, _ = envelope_tables(doc_or_docs, dedupe=dedupe, sources=sources, progress=progress, with_messages=False)
    return _pandas(convs, CONVERSATION_COLUMNS, tz)


def messages_frame(
    doc_or_docs: Source | Sequence[Source],
    *,
    dedupe: bool = False,
    tz: str | None = None,
    sources: Sequence[str] | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """One row per message of one or several envelopes (see the module docstring)."""
    _, msgs = envelope_tables(doc_or_docs, dedupe=dedupe, sources=sources, progress=progress)
    assert msgs is not None
    return _pandas(msgs, MESSAGE_COLUMNS, tz)


def facts_frame(ir_or_irs: Source | Sequence[Source], *, sources: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per fact of one or several Facts IR documents (see the module docstring)."""
    return _pandas(facts_table(ir_or_irs, sources=sources), FACT_COLUMNS, None)


def archetype_frame(
    ir_or_irs: Source | Sequence[Source], *, sources: Sequence[str] | None = None, tz: str | None = None
) -> pd.DataFrame:
    """One row per Facts IR document: its ``meta`` and ``archetype`` (see the module docstring)."""
    rows: dict[str, list[Any]] = {name: [] for name in ARCHETYPE_COLUMNS}
    names: list[str] = []
    for label, doc, name, _ in _documents(ir_or_irs, sources, "ir", progress=False):
        meta, arch = doc["meta"], doc["archetype"]
        for key, value in (
            ("source", label),
            ("format", meta["format"]),
            ("provider", meta["provider"]),
            ("mode", meta["mode"]),
            ("n_facts", meta["facts"]),
            ("style", arch["style"]),
            ("archetype_facts", arch["facts"]),
            ("self_ratio", arch["self_ratio"]),
            ("distinct_entities", arch["distinct_entities"]),
            ("belief_ratio", arch["belief_ratio"]),
            ("categories", arch["categories"]),
        ):
            rows[key].append(value)
        rows["generated_at"].append(_instant(meta["generated_at"], name))
        names.append(name)
    for col, dtype in ARCHETYPE_COLUMNS.items():
        if dtype == STRING:  # unpaired surrogates become U+FFFD, with a warning, as in the other frames
            rows[col] = _strings(rows[col], col).to_pylist()
        elif dtype in (INT, NULLABLE_INT):
            for i, v in enumerate(rows[col]):
                if v is not None and not -(2**63) <= v < 2**63:
                    raise FormatError(
                        f"{v} does not fit a 64-bit integer",
                        reason="bad-shape",
                        source=names[i],
                        path=_ARCHETYPE_PATHS[col],
                    )
    frame = pd.DataFrame(
        {
            name: pd.Series(rows[name], dtype=dtype, index=range(len(rows[name])))
            for name, dtype in ARCHETYPE_COLUMNS.items()
        }
    )
    return conform(frame, ARCHETYPE_COLUMNS, tz=tz)


_ARCHETYPE_PATHS = {
    "n_facts": "$.meta.facts",
    "archetype_facts": "$.archetype.facts",
    "distinct_entities": "$.archetype.distinct_entities",
}


# ---- documents -----------------------------------------------------------------------------------


class _Flat:
    """An envelope file already flattened while it was parsed (see _flatten_file)."""

    def __init__(self, tables: tuple[pa.Table, pa.Table | None], provider: str) -> None:
        self.tables = tables
        self.provider = provider


def _documents(
    doc_or_docs: Source | Sequence[Source],
    sources: Sequence[str] | None,
    layer: str | None,
    *,
    progress: bool | None,
    stream: bool | None = None,
) -> Any:
    """Yield ``(label, document, name for errors, owned)`` per input, loaded and checked one at a time.

    ``owned`` is true when the document was parsed here, so nobody else holds it. With ``stream``
    set (True: with messages, False: without), an envelope file comes as a :class:`_Flat` instead:
    flattened while parsed, so its whole tree never exists at once.
    """
    inputs = list(doc_or_docs) if isinstance(doc_or_docs, list | tuple) else [doc_or_docs]
    if sources is not None:
        labels = [str(s) for s in sources]
        if len(labels) != len(inputs):
            raise ValueError(f"sources= has {len(labels)} labels for {len(inputs)} documents")
    else:
        labels = [source_label(x, i) for i, x in enumerate(inputs)]
        seen = Counter(labels)  # two files with the same name in different folders: use their paths
        labels = [
            os.fspath(x) if seen[label] > 1 and isinstance(x, str | os.PathLike) else label
            for x, label in zip(inputs, labels, strict=True)
        ]
    for label, source in zip(labels, inputs, strict=True):
        path = document_file(source)
        if path is not None:
            name = os.fspath(source) if isinstance(source, str | os.PathLike) else os.fspath(path)
            data = _read_file(os.fspath(path), progress)
            if stream is not None:
                try:
                    flat = _Flat(*_flatten_file(data, label, name, stream, progress))
                except Fallback:
                    flat = None
                if flat is not None:
                    yield label, flat, name, True
                    continue
            doc = _parse(data, name)
            del data
        else:
            doc = load(source, progress=progress, conversations=False)  # type: ignore[arg-type]
            name = os.fspath(source) if isinstance(source, str | os.PathLike) else None
        # Conversations and messages are checked batch by batch while they are flattened (see _Builder).
        found = check(doc, source_name=name, conversations=False)
        if layer is not None and found != layer:
            want = "an envelope (envelope-v0)" if layer == "envelope" else f"a Facts IR document ({IR_TAG})"
            got = "a Facts IR document" if found == "ir" else "an envelope"
            raise FormatError(f"expected {want}, found {got}", reason="wrong-layer", source=name or label)
        yield label, doc, name or label, not isinstance(source, dict)


def _pandas(table: pa.Table, columns: dict[str, Any], tz: str | None) -> pd.DataFrame:
    frame = table.to_pandas(types_mapper={pa.string(): STRING}.get)
    return conform(frame, columns, tz=tz)


def _dictionary(values: list[Any], dtype: pd.CategoricalDtype) -> pa.DictionaryArray:
    codes = pd.Categorical(values, dtype=dtype).codes.astype(np.int8)
    return pa.DictionaryArray.from_arrays(
        pa.array(codes, mask=codes < 0), pa.array(list(dtype.categories), pa.string())
    )


def _timestamps(values: list[str | None], name: str, path_of: Any) -> pa.Array:
    """Parse ``YYYY-MM-DDTHH:mm:ss.sssZ`` strings (null → null) in one vectorized cast."""
    try:
        strings = pa.array(values, pa.string())
    except UnicodeEncodeError:  # a lone surrogate, which no timestamp holds
        i = next(i for i, v in enumerate(values) if isinstance(v, str) and not utf8_ok(v))
        raise FormatError(
            f"not a timestamp: {values[i]!r} (expected YYYY-MM-DDTHH:mm:ss.sssZ)",
            reason="bad-timestamp",
            source=name,
            path=path_of(i),
        ) from None
    try:
        return strings.cast(_MS)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        for i, v in enumerate(values):
            try:
                pa.array([v], pa.string()).cast(_MS)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise FormatError(
                    f"not a timestamp: {v!r} (expected YYYY-MM-DDTHH:mm:ss.sssZ)",
                    reason="bad-timestamp",
                    source=name,
                    path=path_of(i),
                ) from None
        raise


def _instant(value: str, name: str) -> pd.Timestamp:
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError):
        raise FormatError(
            f"not a timestamp: {value!r}", reason="bad-timestamp", source=name, path="$.meta.generated_at"
        ) from None
    if ts.tzinfo is None:
        return pd.NaT  # type: ignore[return-value]
    return ts.tz_convert("UTC").floor("us").as_unit("us")  # digits beyond microseconds are cut, not rounded


# ---- envelopes -----------------------------------------------------------------------------------


def envelope_tables(
    doc_or_docs: Source | Sequence[Source],
    *,
    dedupe: bool = False,
    sources: Sequence[str] | None = None,
    progress: bool | None = None,
    with_messages: bool = True,
) -> tuple[pa.Table, pa.Table | None]:
    """Flatten envelopes into Arrow tables of conversations and (optionally) messages."""
    conv_parts: list[pa.Table] = []
    msg_parts: list[pa.Table] = []
    for label, doc, name, owned in _documents(
        doc_or_docs, sources, "envelope", progress=progress, stream=with_messages
    ):
        if isinstance(doc, _Flat):
            convs, msgs = doc.tables
        else:
            convs, msgs = _flatten(doc, label, name, with_messages, progress, owned=owned)
        conv_parts.append(convs)
        if msgs is not None:
            msg_parts.append(msgs)
        del doc
    conv_table = pa.concat_tables(conv_parts) if conv_parts else arrow_schema(CONVERSATION_COLUMNS).empty_table()
    msg_table = None
    if with_messages:
        msg_table = pa.concat_tables(msg_parts) if msg_parts else arrow_schema(MESSAGE_COLUMNS).empty_table()
    if dedupe:
        conv_table, msg_table = dedupe_tables(conv_table, msg_table)
    return conv_table, msg_table


def dedupe_tables(conv_table: pa.Table, msg_table: pa.Table | None) -> tuple[pa.Table, pa.Table | None]:
    """The tables without the conversations ``dedupe=True`` drops (see the module docstring)."""
    if not conv_table.num_rows:
        return conv_table, msg_table
    keep = _dedupe_mask(conv_table)
    if msg_table is not None:
        # Map each message to its conversation's row number in the concatenated table.
        counts = conv_table.column("n_messages").to_numpy()
        msg_table = msg_table.filter(pa.array(np.repeat(keep, counts)))
    return conv_table.filter(pa.array(keep)), msg_table


def _dedupe_mask(convs: pa.Table) -> np.ndarray:
    frame = pd.DataFrame(
        {
            "id": convs.column("conversation_id").to_pandas(types_mapper={pa.string(): STRING}.get),
            "updated": convs.column("updated_at").cast(pa.int64()).fill_null(np.iinfo(np.int64).min).to_numpy(),
            "row": np.arange(convs.num_rows),
        }
    )
    dated = frame[frame["id"].notna()].sort_values(["updated", "row"], kind="stable")
    dropped = dated.loc[dated.duplicated("id", keep="last"), "row"].to_numpy()
    keep = np.ones(convs.num_rows, dtype=bool)
    keep[dropped] = False
    return keep


def _flatten(
    doc: dict[str, Any], label: str, name: str, with_messages: bool, progress: bool | None, *, owned: bool = False
) -> tuple[pa.Table, pa.Table | None]:
    """One parsed envelope as Arrow tables (see _Builder); an ``owned`` one is emptied on the way."""
    builder = _Builder(label, name, with_messages)
    convs = doc["conversations"]
    with progress_bar(
        len(convs), desc=f"flattening {label}", unit="conv", enabled=progress if len(convs) >= 10_000 else False
    ) as bar:
        builder.add(convs, release=owned, bar=bar)
    if owned:
        doc["conversations"] = None
    return builder.tables(doc["meta"]["source_provider"])


def _flatten_file(
    data: bytearray, label: str, name: str, with_messages: bool, progress: bool | None
) -> tuple[tuple[pa.Table, pa.Table | None], str]:
    """An envelope file's bytes as Arrow tables (and its provider), parsed a batch at a time.

    Raises Fallback when the file must be read whole instead (see memvelope_tools.read.stream_envelope).
    """
    builder = _Builder(label, name, with_messages)
    members: dict[str, Any] = {}
    with progress_bar(
        len(data), desc=f"parsing {label}", unit="B", enabled=progress if len(data) >= 64 << 20 else False
    ) as bar:
        for kind, value in stream_envelope(data, batch_messages=_BATCH, on_bytes=bar.update):
            if kind == "conversations":
                builder.add(value, release=True, bar=None)
            else:
                members = value
    check({**members, "conversations": []}, source_name=name)  # tags and meta
    provider = members["meta"]["source_provider"]
    return builder.tables(provider), provider


class _Builder:
    """Columns of one envelope, built batch by batch (about _BATCH messages each) in one pass."""

    def __init__(self, label: str, name: str, with_messages: bool) -> None:
        self.label, self.name, self.with_messages = label, name, with_messages
        self.conv_cols: dict[str, list[Any]] = {k: [] for k in ("id", "title", "created_at", "updated_at")}
        self.counts: list[np.ndarray] = []
        self.cols: dict[str, list[Any]] = {k: [] for k in ("assistant", "ts", "text", "chars", "words", "id")}
        self.n_conv = 0
        self.pending: collections.deque[tuple[Any, list[Any], int]] = collections.deque()

    def add(self, convs: list[Any], *, release: bool, bar: Any) -> None:
        """Add conversations (checked here); with ``release`` each batch is dropped from ``convs``."""
        try:
            self._add(convs, release=release, bar=bar)
        except FormatError:
            while self.pending:  # a problem in an earlier batch's texts is the one to report
                self._resolve()
            raise

    def _add(self, convs: list[Any], *, release: bool, bar: Any) -> None:
        first = self.n_conv
        fields = check_conversations(convs, first, self.name)
        for key, values in self.conv_cols.items():
            values += fields[key]
        counts = np.fromiter(map(len, fields["messages"]), dtype=np.int64, count=len(convs))
        del fields
        self.counts.append(counts)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        bounds = [0, *(np.flatnonzero(np.diff(starts // _BATCH)) + 1).tolist(), len(convs)]
        for lo, hi in itertools.pairwise(dict.fromkeys(bounds)):
            batch = convs[lo:hi]
            texts = _batch(batch, first + lo, self.name, self.with_messages, self.cols)
            # The texts of a batch are worked on (by _text, on other threads without the GIL) while
            # the next batches are read; the batch is kept until then, to say where a text that is
            # not a string is.
            self.pending.append((texts, batch, first + lo))
            while len(self.pending) > _text.threads():
                self._resolve()
            if release:
                convs[lo:hi] = [None] * (hi - lo)
            if bar is not None:
                bar.update(hi - lo)
        self.n_conv += len(convs)

    def _resolve(self) -> None:
        texts, batch, first = self.pending.popleft()
        try:
            chunks, chars, words = texts()
        except TypeError:
            check_messages(batch, first, self.name)  # raises FormatError with the JSON path
            raise
        cols = self.cols
        if chunks is not None:
            cols["text"] += chunks
            cols["words"].append(words)
        cols["chars"].append(chars)

    def tables(self, provider: str) -> tuple[pa.Table, pa.Table | None]:
        """The conversations and messages tables, with ``provider`` (the envelope's) on every row."""
        while self.pending:
            self._resolve()
        label, n_conv, cols = self.label, self.n_conv, self.cols
        counts = np.concatenate([np.zeros(0, dtype=np.int64), *self.counts])
        total = int(counts.sum())
        starts = np.zeros(n_conv, dtype=np.int64)
        np.cumsum(counts[:-1], out=starts[1:])
        name = self.name
        label_value = _strings([label], "source")[0]
        provider_value = _strings([provider], "source provider")[0]

        def conv_path(field: str) -> Any:
            return lambda i: f"$.conversations[{i}].{field}"

        conv_index = np.repeat(np.arange(n_conv, dtype=np.int64), counts)
        is_assistant = np.concatenate([np.zeros(0, dtype=bool), *cols["assistant"]])
        ts = pa.chunked_array(cols["ts"], type=_MS)
        chars = pa.chunked_array(cols["chars"], type=pa.int64())
        ts_ms = ts.cast(pa.int64())
        n_assistant = np.bincount(conv_index, weights=is_assistant, minlength=n_conv).astype(np.int64)
        ids = _strings(self.conv_cols["id"], "conversation id")
        conv_table = pa.Table.from_arrays(
            [
                pa.repeat(label_value, n_conv),
                pa.repeat(provider_value, n_conv),
                pa.array(np.arange(n_conv, dtype=np.int64)),
                ids,
                _strings(self.conv_cols["title"], "title"),
                _timestamps(self.conv_cols["created_at"], name, conv_path("created_at")),
                _timestamps(self.conv_cols["updated_at"], name, conv_path("updated_at")),
                pa.array(counts),
                pa.array(counts - n_assistant),
                pa.array(n_assistant),
                _group_extreme(ts_ms, starts, counts, np.minimum),
                _group_extreme(ts_ms, starts, counts, np.maximum),
                pa.array(np.bincount(conv_index, weights=chars.to_numpy(), minlength=n_conv).astype(np.int64)),
            ],
            schema=arrow_schema(CONVERSATION_COLUMNS),
        )
        if not self.with_messages:
            return conv_table, None
        msg_table = pa.Table.from_arrays(
            [
                pa.repeat(label_value, total),
                pa.repeat(provider_value, total),
                pa.array(conv_index),
                ids.take(pa.array(conv_index)),
                pa.chunked_array(cols["id"], type=pa.string()),
                pa.array(np.arange(total, dtype=np.int64) - np.repeat(starts, counts)),
                pa.DictionaryArray.from_arrays(
                    pa.array(is_assistant.astype(np.int8)), pa.array(list(ROLES), pa.string())
                ),
                ts,
                pa.chunked_array(cols["text"], type=pa.string()),
                chars,
                pa.chunked_array(cols["words"], type=pa.int64()),
            ],
            schema=arrow_schema(MESSAGE_COLUMNS),
        )
        return conv_table, msg_table


def _batch(convs: list[Any], first: int, name: str, with_messages: bool, cols: dict[str, list[Any]]) -> Any:
    """Convert the messages of ``convs`` (``$.conversations[first]`` on) into pieces appended to ``cols``.

    Returns the texts' columns to come (see :func:`memvelope_tools._text.text_columns_later`).
    """
    flat = list(itertools.chain.from_iterable(map(itemgetter("messages"), convs)))
    # Every check here is a by-product of the conversion (a KeyError, an Arrow type error, a role
    # that is neither of the two); only then does check_messages look for the exact JSON path.
    try:
        roles = np.asarray(list(map(itemgetter("role"), flat)), dtype=object)
        stamps = list(map(itemgetter("ts"), flat))
        texts = tuple(map(itemgetter("text"), flat))
        msg_ids = _strings(list(map(itemgetter("id"), flat)), "message id") if with_messages else None
        is_assistant = roles == "assistant"
        if not (is_assistant | (roles == "user")).all():
            raise TypeError
        if msg_ids is not None and msg_ids.null_count:
            raise TypeError
        if not set(map(type, stamps)) <= _STR_OR_NONE:
            raise TypeError
    except (KeyError, TypeError, IndexError, pa.ArrowTypeError, pa.ArrowInvalid):
        check_messages(convs, first, name)  # raises FormatError with the JSON path
        raise
    del flat, roles
    ends = np.cumsum([len(c["messages"]) for c in convs])

    def ts_path(k: int) -> str:
        i = int(np.searchsorted(ends, k, side="right"))
        return f"$.conversations[{first + i}].messages[{k - (ends[i - 1] if i else 0)}].ts"

    cols["assistant"].append(is_assistant)
    cols["ts"].append(_timestamps(stamps, name, ts_path))
    if msg_ids is not None:
        cols["id"].append(msg_ids)
    return text_columns_later(texts, "text", with_text=with_messages)


def _group_extreme(ts_ms: pa.Array, starts: np.ndarray, counts: np.ndarray, ufunc: np.ufunc) -> pa.Array:
    """Per-conversation min or max of the non-null message timestamps (null when there is none)."""
    sentinel = np.iinfo(np.int64).max if ufunc is np.minimum else np.iinfo(np.int64).min
    values = ts_ms.fill_null(sentinel).to_numpy()
    out = np.full(len(counts), sentinel, dtype=np.int64)
    nonempty = counts > 0
    if values.size:
        out[nonempty] = ufunc.reduceat(values, starts[nonempty])
    return pa.array(out, mask=out == sentinel).cast(_MS)


# ---- Facts IR ------------------------------------------------------------------------------------


def facts_table(ir_or_irs: Source | Sequence[Source], *, sources: Sequence[str] | None = None) -> pa.Table:
    """Flatten Facts IR documents into one Arrow table of facts (see :data:`FACT_COLUMNS`)."""
    parts = [_facts(doc, label) for label, doc, _, _ in _documents(ir_or_irs, sources, "ir", progress=False)]
    return pa.concat_tables(parts) if parts else arrow_schema(FACT_COLUMNS).empty_table()


def _facts(doc: dict[str, Any], label: str) -> pa.Table:
    facts = doc["facts"]
    n = len(facts)
    arrays = [pa.array([label] * n, pa.string()), pa.array(np.arange(n, dtype=np.int64))]
    for key in list(FACT_COLUMNS)[2:]:
        dtype = FACT_COLUMNS[key]
        values = list(map(itemgetter(key), facts))
        arrays.append(_dictionary(values, dtype) if isinstance(dtype, pd.CategoricalDtype) else _strings(values, key))
    return pa.Table.from_arrays(arrays, schema=arrow_schema(FACT_COLUMNS))
