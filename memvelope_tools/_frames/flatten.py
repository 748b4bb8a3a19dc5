"""Envelopes as Arrow tables of conversations and messages, built batch by batch in one pass, and a
Facts IR document's facts as an Arrow table (:func:`fact_table`).

A parsed envelope (:func:`flatten`) or an envelope's bytes (:func:`flatten_file`, which reads and
parses a window at a time) give the same tables, checked as they are built: columns of
:data:`~memvelope_tools._frames.columns.CONVERSATION_COLUMNS` and
:data:`~memvelope_tools._frames.columns.MESSAGE_COLUMNS`.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, wait
from operator import itemgetter
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from .._json.elements import FIELDS
from .._json.walker import Fallback, parse_spans, stream_envelope
from .._progress import progress_bar
from .._read import check, check_conversations, check_messages
from .._spec import CONVERSATION_FIELDS, ROLES
from .._stable import Windows
from .._tags import ENVELOPE_TAG
from .._workers.threads import text_pool, text_threads
from ..errors import FormatError
from . import text
from .columns import CONVERSATION_COLUMNS, FACT_COLUMNS, MESSAGE_COLUMNS, MS, arrow_schema, dictionary, timestamps
from .text import Conversations, strings, text_columns_later

_BATCH = 1 << 16
_SINK_ROWS = 4096  # messages handed on as a batch, at least, by the functions that hand batches on
# Messages of an export's conversations handed at a time to the thread building its tables: few, as their
# texts are held as Python strings (four bytes a character where one is an emoji) until they are built.
_HAND_ROWS = 256
_AHEAD_BATCHES = 2  # batches of an export's tables made before the consuming thread takes them, at most
_TEXT_WINDOW = 4 << 20  # characters of text in a batch of an export's tables, at least
_STR_OR_NONE = frozenset((str, type(None)))
_Read = tuple[Conversations, pa.Array]  # columns, and the messages' timestamps parsed
_Piece = tuple[int, int, "_Read | None"]  # conversations [start, end) of a window, read or to be parsed
_Segment = tuple[int, int, "list[Future[list[_Piece]]]"]  # conversations [lo, hi) and the parts reading them


def flatten(
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


def fact_table(doc: dict[str, Any], label: str) -> pa.Table:
    """The facts of one checked Facts IR document, labelled ``label`` (see :data:`FACT_COLUMNS`)."""
    facts = doc["facts"]
    n = len(facts)
    arrays = [pa.array([label] * n, pa.string()), pa.array(np.arange(n, dtype=np.int64))]
    for key in list(FACT_COLUMNS)[2:]:
        dtype = FACT_COLUMNS[key]
        values = list(map(itemgetter(key), facts))
        arrays.append(dictionary(values, dtype) if dtype.categories is not None else strings(values, key))
    return pa.Table.from_arrays(arrays, schema=arrow_schema(FACT_COLUMNS))


def flatten_file(
    windows: Windows, label: str, name: str, with_messages: bool, progress: bool | None
) -> tuple[tuple[pa.Table, pa.Table | None], str]:
    """An envelope's bytes, read a window at a time, as Arrow tables (and its provider).

    With the compiled helper, conversations go from their JSON text straight into columns, on the
    worker threads, while the main thread reads and scans the next window; each conversation that is
    not the plain case is parsed on its own. Raises Fallback when the input must be read whole instead
    (see memvelope_tools._json.walker.stream_envelope), Changed when it changed while it was read.
    """
    builder = _Builder(label, name, with_messages)
    with progress_bar(
        windows.size, desc=f"parsing {label}", unit="B", enabled=progress if (windows.size or 0) >= 64 << 20 else False
    ) as bar:
        windows.on_bytes = bar.update
        with windows.reading_ahead():
            members = _read_windows(windows, builder, stream_envelope(windows))
    check({**members, "conversations": []}, source_name=name)  # tags and meta
    provider = members["meta"]["source_provider"]
    return builder.tables(provider), provider


def flatten_file_batches(
    windows: Windows,
    label: str,
    name: str,
    sink: Callable[[pa.Table, pa.Table], None],
    *,
    rows: int = _SINK_ROWS,
    progress: bool | None = None,
) -> str:
    """An envelope's bytes read as :func:`flatten_file` reads them, its tables given to ``sink`` a batch
    of whole conversations at a time (about ``rows`` messages or more each, numbered on from the
    batch before), so the whole tables never exist at once; returns the provider. Raises Fallback
    also when the envelope's meta does not come before its conversations (its provider is then
    unknown while they are read)."""

    def provider_of(members: dict[str, Any]) -> str:
        meta = members.get("meta")
        provider = meta.get("source_provider") if isinstance(meta, dict) else None
        if not isinstance(provider, str):
            raise Fallback
        return provider

    with progress_bar(
        windows.size, desc=f"reading {label}", unit="B", enabled=progress if (windows.size or 0) >= 64 << 20 else False
    ) as bar:
        windows.on_bytes = bar.update
        with windows.reading_ahead():
            members, head = _in_batches(
                windows, stream_envelope, label, name, sink, rows, lambda builder: provider_of(builder.head)
            )
    check({**members, "conversations": []}, source_name=name)  # tags and meta
    provider = members["meta"]["source_provider"]
    if provider != provider_of(head):
        raise Fallback
    return str(provider)


def _in_batches(
    windows: Windows,
    stream: Callable[[Windows], Iterator[tuple[str, Any]]],
    label: str,
    name: str,
    sink: Callable[[pa.Table, pa.Table], None],
    rows: int,
    provider: Callable[[_Builder], str],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Read the conversations ``stream`` finds in ``windows``, giving ``sink`` their tables a batch at a
    time (see :func:`flatten_file_batches`), each labelled with ``provider(builder)``; the members the
    stream gives at the end, and those before the conversations. Unpaired surrogates get one warning."""
    builder = _Builder(label, name, True)
    builder.flush_rows = rows

    def hand_on(full: _Builder) -> None:
        convs, msgs = full.take(provider(full))
        assert msgs is not None
        sink(convs, msgs)

    builder.sink = hand_on
    with text.surrogates_summed():
        members = _read_windows(windows, builder, stream(windows))
        if builder.n_conv > builder.taken or builder.taken == 0:
            hand_on(builder)
    return members, builder.head


def flatten_export(
    convert: Callable[[Callable[[dict[str, Any]], Any]], dict[str, Any] | None],
    label: str,
    name: str,
    with_messages: bool,
) -> tuple[tuple[pa.Table, pa.Table | None], str] | None:
    """The tables of the envelope whose conversations ``convert(take)`` hands ``take`` one at a time as it
    makes them (as :func:`flatten_export_batches` takes them), and its provider; None when ``convert``
    took nothing (it then returns None, else the envelope's meta).

    The conversion runs in this thread, the building of the tables on another. Texts with unpaired
    surrogates get one warning.
    """
    builder = _Builder(label, name, with_messages)

    def made(hand: Callable[[_Handed], None]) -> dict[str, Any] | None:
        handing = _Handing(hand)
        return handing.finish(convert(handing.take))

    def build(part: _Handed) -> None:
        builder.add(part[0], release=True, bar=None)

    with text.surrogates_summed():
        meta = _consumed_while_made(made, build)
        if meta is None:
            return None
        check({"memvelope": ENVELOPE_TAG, "meta": meta, "conversations": []}, source_name=name)
        provider = meta["source_provider"]
        return builder.tables(provider), provider


def flatten_export_batches(
    convert: Callable[[Callable[[dict[str, Any]], Any], Callable[[str], Any]], dict[str, Any] | None],
    label: str,
    name: str,
    sink: Callable[[pa.Table, pa.Table], None],
    *,
    rows: int = _SINK_ROWS,
    window: int | None = None,
) -> str | None:
    """The conversations ``convert(take, on_provider)`` hands ``take`` one at a time as it makes them (an
    envelope's, as parsed from its bytes), their tables given to ``sink`` a batch of whole conversations
    at a time, each as soon as it holds ``rows`` messages or more and ``window`` characters of text or
    more (default 4 Mi); returns the envelope's provider, or None when ``convert`` took nothing.

    ``convert`` calls ``on_provider`` with the provider before it takes the first conversation, and returns
    the envelope's meta (None when it took nothing). The conversion runs in this thread; the building of
    the tables (as :func:`flatten_batches` builds them) and ``sink`` on another.
    """
    provider: list[str] = []
    builder = _Builder(label, name, True)
    enough = window or _TEXT_WINDOW

    def made(hand: Callable[[_Handed], None]) -> dict[str, Any] | None:
        handing = _Handing(hand, rows, enough)
        return handing.finish(convert(handing.take, provider.append))

    def build(part: _Handed) -> None:
        conversations, ends = part
        builder.add(conversations, release=True, bar=None)
        del conversations[:]
        if ends:
            tables, messages = builder.take(provider[0])
            assert messages is not None
            sink(tables, messages)

    with text.surrogates_summed():
        meta = _consumed_while_made(made, build)
    if meta is None:
        return None
    check({"memvelope": ENVELOPE_TAG, "meta": meta, "conversations": []}, source_name=name)
    if provider and provider[0] != meta["source_provider"]:
        raise Fallback
    return str(meta["source_provider"])


_Handed = tuple[list[dict[str, Any]], bool]  # conversations, and whether a batch of tables ends with them


class _Handing:
    """An export's conversations, taken one at a time as they are made, handed on to the thread building
    their tables _HAND_ROWS messages at a time; a batch of tables ends once it holds ``rows`` messages or
    more and ``chars`` characters of text or more (by default, only at the end)."""

    def __init__(
        self, hand: Callable[[_Handed], None], rows: float = float("inf"), chars: float = float("inf")
    ) -> None:
        self.hand, self.rows, self.chars = hand, rows, chars
        self.held: list[dict[str, Any]] = []
        self.handed = 0  # messages held
        self.messages = self.text = self.batches = 0  # messages and characters of the batch so far; batches ended

    def take(self, conversation: dict[str, Any]) -> None:
        """The next conversation."""
        self.held.append(conversation)
        n = len(conversation["messages"])
        self.handed += n
        self.messages += n
        self.text += sum(len(message["text"]) for message in conversation["messages"])
        if self.messages >= self.rows and self.text >= self.chars:
            self.hand((self.held, True))
            self.held, self.handed, self.messages, self.text = [], 0, 0, 0
            self.batches += 1
        elif self.handed >= _HAND_ROWS:
            self.hand((self.held, False))
            self.held, self.handed = [], 0

    def finish(self, meta: dict[str, Any] | None) -> dict[str, Any] | None:
        """Hand on the last batch once the conversion returned ``meta`` (None: it took nothing); ``meta``."""
        if meta is not None and (self.messages or not self.batches):
            self.hand((self.held, True))
        return meta


_Made = TypeVar("_Made")


def _consumed_while_made(
    make: Callable[[Callable[[_Made], None]], dict[str, Any] | None], consume: Callable[[_Made], None]
) -> dict[str, Any] | None:
    """Run ``make(hand)`` in this thread and ``consume`` on another, given in order each batch ``make``
    hands to ``hand`` (at most _AHEAD_BATCHES of them waiting); what ``make`` returns, or None when
    ``consume`` failed first. What ``consume`` raises is raised here."""
    batches: queue.Queue[_Made | None] = queue.Queue(maxsize=_AHEAD_BATCHES)
    failure: list[BaseException] = []

    def put(batch: _Made | None) -> None:
        while True:
            try:
                batches.put(batch, timeout=0.1)
                return
            except queue.Full:
                if not consumer.is_alive():
                    raise _ReaderFailed from None

    def hand(batch: _Made) -> None:
        if failure:
            raise _ReaderFailed
        put(batch)

    def run() -> None:
        try:
            for batch in iter(batches.get, None):
                consume(batch)
                del batch
        except BaseException as exc:  # raised in the making thread
            failure.append(exc)

    consumer = threading.Thread(target=run, name="memvelope-frames")
    consumer.start()
    try:
        meta = make(hand)
    except _ReaderFailed:
        meta = None
    finally:
        with contextlib.suppress(_ReaderFailed):
            put(None)
        consumer.join()
    if failure:
        raise failure[0]
    return meta


def flatten_batches(
    doc: dict[str, Any],
    label: str,
    name: str,
    sink: Callable[[pa.Table, pa.Table], None],
    *,
    rows: int = _SINK_ROWS,
    owned: bool = False,
) -> str:
    """A parsed envelope (its tags and meta checked) as :func:`flatten` reads it, its tables given to
    ``sink`` a batch of whole conversations (about ``rows`` messages) at a time; an ``owned`` one is
    emptied on the way. Returns its provider."""
    provider = str(doc["meta"]["source_provider"])
    builder = _Builder(label, name, True)
    convs = doc["conversations"]
    lo = 0
    with text.surrogates_summed():
        while True:
            hi, held = lo, 0
            while hi < len(convs) and (held < rows or hi == lo):
                held += _messages_in(convs[hi])
                hi += 1
            part = convs[lo:hi]
            builder.add(part, release=True, bar=None)
            if owned:
                convs[lo:hi] = [None] * (hi - lo)
            conv_table, msg_table = builder.take(provider)
            assert msg_table is not None
            sink(conv_table, msg_table)
            lo = hi
            if lo >= len(convs):
                break
    if owned:
        doc["conversations"] = None
    return provider


def _messages_in(conversation: Any) -> int:
    """How many messages a conversation not yet checked holds (1 when it holds no list of them)."""
    messages = conversation.get("messages") if isinstance(conversation, dict) else None
    return len(messages) if isinstance(messages, list) else 1


class _ReaderFailed(Exception):
    """The thread building an export's tables (see :func:`_consumed_while_made`) failed: the conversion stops."""


def _read_windows(windows: Windows, builder: _Builder, stream: Iterator[tuple[str, Any]]) -> dict[str, Any]:
    """Add the conversations ``stream`` finds in ``windows`` to ``builder``; the members it gives at the end."""
    members: dict[str, Any] = {}
    pending: collections.deque[tuple[memoryview, list[int], list[_Segment]]] = collections.deque()

    def take_oldest() -> None:
        data, found, segments = pending.popleft()
        wait([part for _, _, parts in segments for part in parts])  # none may still read data if this raises
        for lo, hi, parts in segments:
            pieces = _coalesced([piece for part in parts for piece in part.result()])
            for start, end, read in pieces:
                if read is None or not builder.add_columns([read]):
                    builder.add(parse_spans(data, found[start * FIELDS : end * FIELDS]), release=True, bar=None)
            if not parts:
                builder.add(parse_spans(data, found[lo * FIELDS : hi * FIELDS]), release=True, bar=None)
        windows.give_back(data)

    try:
        for kind, value in stream:
            if kind == "spans":
                data, found = value
                pending.append((data, found, _columns_later(data, found)))
                while len(pending) > 1:
                    take_oldest()
                    builder.window_done()
            elif kind == "head":
                builder.head = value
            else:
                members = value
        while pending:
            take_oldest()
            builder.window_done()
    finally:
        for _, _, segments in pending:  # the workers read data until they are done
            wait([part for _, _, parts in segments for part in parts])
    return members


def _columns_later(data: Any, found: list[int]) -> list[_Segment]:
    """The conversations ``found`` (a window of stream_envelope's spans) as segments in order.

    A conversation the scanner flagged (a lone surrogate escape or a long integer) is a segment of
    its own, to be parsed (no futures); each run of the others is read into columns, a part per
    worker thread.
    """
    children = np.array(found, dtype=np.int64).reshape(-1, FIELDS)
    n = len(children)
    if not text.native():
        return [(0, n, [])]
    flagged = np.flatnonzero(children[:, 4]).tolist()
    segments: list[_Segment] = []
    lo = 0
    for odd in [*flagged, n]:
        if odd > lo:
            segments.append((lo, odd, _parts_later(data, children[lo:odd, 2:4], lo)))
        if odd < n:
            segments.append((odd, odd + 1, []))
        lo = odd + 1
    return segments


def _parts_later(data: Any, spans: np.ndarray, first: int) -> list[Future[list[_Piece]]]:
    """Read the conversations at ``spans`` (the first is conversation ``first`` of the window) on the workers."""
    ends = spans[:, 1] - spans[0, 0]
    parts = text_threads()
    cuts = np.searchsorted(ends, [ends[-1] * k // parts for k in range(1, parts)], side="right")
    bounds = sorted({0, len(spans), *cuts.tolist()})
    pool = text_pool()
    return [pool.submit(_read_columns, data, spans[lo:hi], first + lo) for lo, hi in itertools.pairwise(bounds)]


def _read_columns(data: Any, spans: np.ndarray, first: int) -> list[_Piece]:
    """The conversations at ``spans`` as pieces ``(first, end, columns)`` in order (on a worker thread).

    Columns hold the conversations' columns and their messages' timestamps parsed; None for a
    conversation that is to be parsed instead (not the plain case, or a timestamp that is none).
    A run that is not the plain case is halved until each conversation that is not is alone, so
    the others stay on this path.
    """
    columns = text.conversation_columns(data, spans)
    if columns is not None:
        try:
            return [(first, first + len(spans), (columns, columns.ts.cast(MS)))]
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    if len(spans) == 1:
        return [(first, first + 1, None)]
    half = len(spans) // 2
    return _read_columns(data, spans[:half], first) + _read_columns(data, spans[half:], first + half)


def _coalesced(pieces: list[_Piece]) -> list[_Piece]:
    """``pieces`` with each run of neighbouring conversations to be parsed made one piece, parsed as one batch."""
    out: list[_Piece] = []
    for start, end, read in pieces:
        if read is None and out and out[-1][2] is None and out[-1][1] == start:
            out[-1] = (out[-1][0], end, None)
        else:
            out.append((start, end, read))
    return out


class _Builder:
    """Columns of one envelope, built batch by batch (about _BATCH messages each) in one pass."""

    def __init__(self, label: str, name: str, with_messages: bool) -> None:
        self.label, self.name, self.with_messages = label, name, with_messages
        self.conv_cols: dict[str, list[Any]] = {k: [] for k in CONVERSATION_FIELDS if k != "messages"}
        self.counts: list[np.ndarray] = []
        self.cols: dict[str, list[Any]] = {k: [] for k in ("assistant", "ts", "text", "chars", "words", "id")}
        self.n_conv = 0
        self.taken = 0  # conversations already handed on as batches (see :meth:`take`)
        self.held = 0  # messages added since then
        self.head: dict[str, Any] = {}  # the envelope's members before its conversations
        #: Called with the builder after a window's conversations were added, once it holds
        #: ``flush_rows`` messages or more (it then :meth:`take` s them); none: the builder keeps all.
        self.sink: Callable[[_Builder], None] | None = None
        self.flush_rows = 1 << 18
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
        self.held += int(counts.sum())
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        bounds = [0, *(np.flatnonzero(np.diff(starts // _BATCH)) + 1).tolist(), len(convs)]
        for lo, hi in itertools.pairwise(dict.fromkeys(bounds)):
            batch = convs[lo:hi]
            texts = _batch(batch, first + lo, self.name, self.with_messages, self.cols)
            # The texts of a batch are worked on (by frames.text, on other threads without the GIL) while
            # the next batches are read; the batch is kept until then, to say where a text that is
            # not a string is.
            self.pending.append((texts, batch, first + lo))
            while len(self.pending) > text_threads():
                self._resolve()
            if release:
                convs[lo:hi] = [None] * (hi - lo)
            if bar is not None:
                bar.update(hi - lo)
        self.n_conv += len(convs)

    def add_columns(self, parts: list[_Read | None]) -> bool:
        """Add conversations from their columns and parsed timestamps, in ``parts`` (see _read_columns).

        False, adding nothing, when a part has none: the caller parses those conversations instead,
        which says where any problem is.
        """
        if not parts or any(part is None for part in parts):
            return False
        while self.pending:  # the texts of earlier batches come first
            self._resolve()
        cols = self.cols
        for read in parts:
            assert read is not None
            part, ts = read
            for key, values in self.conv_cols.items():
                values += part.fields[key].to_pylist()
            self.counts.append(part.counts)
            self.held += int(part.counts.sum())
            self.n_conv += len(part.counts)
            cols["assistant"].append(part.is_assistant)
            cols["ts"].append(ts)
            cols["chars"].append(part.chars)
            if self.with_messages:
                cols["id"].append(part.message_ids)
                cols["text"].append(part.text)
                cols["words"].append(part.words)
        return True

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

    def window_done(self) -> None:
        if self.sink is not None and self.held >= self.flush_rows:
            self.sink(self)

    def take(self, provider: str) -> tuple[pa.Table, pa.Table | None]:
        """The tables of the conversations added since the last :meth:`take` (all of them at the first),
        numbered on from those taken before, which the builder then lets go of."""
        tables = self.tables(provider)
        self.taken = self.n_conv
        self.held = 0
        self.conv_cols = {k: [] for k in self.conv_cols}
        self.counts = []
        self.cols = {k: [] for k in self.cols}
        return tables

    def tables(self, provider: str) -> tuple[pa.Table, pa.Table | None]:
        """The conversations and messages tables, with ``provider`` (the envelope's) on every row."""
        while self.pending:
            self._resolve()
        label, first, cols = self.label, self.taken, self.cols
        n_conv = self.n_conv - first
        counts = np.concatenate([np.zeros(0, dtype=np.int64), *self.counts])
        total = int(counts.sum())
        starts = np.zeros(n_conv, dtype=np.int64)
        np.cumsum(counts[:-1], out=starts[1:])
        name = self.name
        label_value = strings([label], "source")[0]
        provider_value = strings([provider], "source provider")[0]

        def conv_path(field: str) -> Any:
            return lambda i: f"$.conversations[{first + i}].{field}"

        conv_index = np.repeat(np.arange(n_conv, dtype=np.int64), counts)
        is_assistant = np.concatenate([np.zeros(0, dtype=bool), *cols["assistant"]])
        ts = pa.chunked_array(cols["ts"], type=MS)
        chars = pa.chunked_array(cols["chars"], type=pa.int64())
        ts_ms = ts.cast(pa.int64())
        n_assistant = np.bincount(conv_index, weights=is_assistant, minlength=n_conv).astype(np.int64)
        ids = strings(self.conv_cols["id"], "conversation id")
        conv_table = pa.Table.from_arrays(
            [
                pa.repeat(label_value, n_conv),
                pa.repeat(provider_value, n_conv),
                pa.array(np.arange(first, first + n_conv, dtype=np.int64)),
                ids,
                strings(self.conv_cols["title"], "title"),
                timestamps(self.conv_cols["created_at"], name, conv_path("created_at")),
                timestamps(self.conv_cols["updated_at"], name, conv_path("updated_at")),
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
                pa.array(conv_index + first),
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

    Returns the texts' columns to come (see :func:`memvelope_tools._frames.text.text_columns_later`).
    """
    flat = list(itertools.chain.from_iterable(map(itemgetter("messages"), convs)))
    # Every check here is a by-product of the conversion (a KeyError, an Arrow type error, a role
    # that is neither of the two); only then does check_messages look for the exact JSON path.
    try:
        roles = np.asarray(list(map(itemgetter("role"), flat)), dtype=object)
        stamps = list(map(itemgetter("ts"), flat))
        texts = tuple(map(itemgetter("text"), flat))
        msg_ids = strings(list(map(itemgetter("id"), flat)), "message id") if with_messages else None
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
    cols["ts"].append(timestamps(stamps, name, ts_path))
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
    return pa.array(out, mask=out == sentinel).cast(MS)
