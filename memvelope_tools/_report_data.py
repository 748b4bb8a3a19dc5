"""What the report shows of envelopes and exports, gathered from the stream a batch at a time.

Of each batch (see :mod:`memvelope_tools._stream`) the report keeps the conversations table, the four
message columns its charts read (``source``, ``conv_index``, ``role``, ``ts``; no text), the snippet of
each conversation's opening user message, and topics' word counts of the batch; then it lets the batch
go. What it keeps grows with the number of conversations and messages, never with their texts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ._corpus import from_tables, history_batch
from ._frames.columns import CONVERSATION_COLUMNS, INT, ROLE, TIMESTAMP, arrow_schema, pandas_dtype, to_pandas
from ._frames.documents import dedupe_mask
from ._topic_units import Counted, Counting

__all__ = ["Gather", "Gathered", "snippet"]

SNIPPET: Final = 140
#: The message columns the report's charts and tables read (``source`` as a categorical, each label held once).
LEAN_COLUMNS: Final[dict[str, Any]] = {"source": "category", "conv_index": INT, "role": ROLE, "ts": TIMESTAMP}


def snippet(text: Any) -> str:
    """``text`` on one line, whitespace runs made one space, shortened to :data:`SNIPPET` characters."""
    if text is None or text is pd.NA:
        return ""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1] + "…"


@dataclass
class Gathered:
    """What the report keeps of the envelopes it was given: their conversations frame, their messages'
    :data:`LEAN_COLUMNS`, the snippet of each conversation's opening user message (by ``source`` and
    ``conv_index``), and topics' word counts of the conversations."""

    convs: pd.DataFrame
    msgs: pd.DataFrame
    openings: dict[tuple[str, int], str]
    words: Counted


class Gather:
    """A sink of the stream (see :class:`memvelope_tools._stream.Sink`) keeping what the report shows,
    for every envelope given in turn (:meth:`begin` each)."""

    def __init__(self) -> None:
        self.convs: list[pa.Table] = []
        self.msgs: list[pa.Table] = []
        self.openings: dict[tuple[str, int], str] = {}
        self.words = Counting("conversation")
        self.mark = (0, 0)
        self.label = ""

    def begin(self, label: str) -> None:
        """An envelope labelled ``label`` starts."""
        self.mark = (len(self.convs), len(self.msgs))
        self.label = label
        self.words.begin()

    def restart(self) -> None:
        """Forget what the envelope begun last gave so far: it is read again."""
        del self.convs[self.mark[0] :], self.msgs[self.mark[1] :]
        self.openings = {key: text for key, text in self.openings.items() if key[0] != self.label}
        self.words.restart()

    def add(self, conversations: pa.Table, messages: pa.Table) -> None:
        """Keep what the report shows of one batch."""
        self.convs.append(conversations)
        self.msgs.append(
            pa.table(
                {
                    "source": messages.column("source").dictionary_encode(),
                    "conv_index": messages.column("conv_index"),
                    "role": messages.column("role"),
                    "ts": messages.column("ts"),
                }
            )
        )
        self._openings(messages)
        self.words.add(history_batch(conversations, messages))

    def _openings(self, messages: pa.Table) -> None:
        users = messages.filter(pc.equal(messages.column("role").cast(pa.string()), "user"))
        conv = users.column("conv_index").to_numpy()
        _, first = np.unique(conv, return_index=True)
        texts = users.column("text").take(pa.array(first)).to_pylist()
        sources = users.column("source").take(pa.array(first)).to_pylist()
        for at, text, source in zip(first.tolist(), texts, sources, strict=True):
            self.openings[(source, int(conv[at]))] = snippet(text)

    def finish(self, *, dedupe: bool = False) -> Gathered:
        """What was gathered, without the repeated conversations ``dedupe`` drops (as the frames' ``dedupe=True``)."""
        convs = pa.concat_tables(self.convs) if self.convs else arrow_schema(CONVERSATION_COLUMNS).empty_table()
        self.convs = []
        sizes = convs.column("n_messages").to_numpy() if convs.num_rows else np.zeros(0, np.int64)
        keep = dedupe_mask(convs) if dedupe else None
        units, counts, vocabulary = self.words.finish(None if keep is None else keep[sizes > 0])
        msgs = pa.concat_tables(self.msgs) if self.msgs else None
        self.msgs = []
        if keep is not None:
            convs = convs.filter(pa.array(keep))
            if msgs is not None:
                msgs = msgs.filter(pa.array(np.repeat(keep, sizes)))
        if msgs is None:
            lean = pd.DataFrame({name: pd.Series(dtype=pandas_dtype(dtype)) for name, dtype in LEAN_COLUMNS.items()})
        else:
            lean = msgs.to_pandas()
            lean["role"] = lean["role"].astype(ROLE.pandas)
        return Gathered(
            to_pandas(convs, CONVERSATION_COLUMNS, None),
            lean,
            self.openings,
            Counted("conversation", units, counts, vocabulary),
        )


def gathered_of(msgs: pd.DataFrame, convs: pd.DataFrame) -> Gathered:
    """What the report shows of a history already in frames (a messages frame with texts, and its
    conversations frame)."""
    gather = Gather()
    gather.begin("")
    table = pa.Table.from_pandas(msgs.loc[:, ["source", "conv_index", "role", "ts", "text"]], preserve_index=False)
    gather._openings(table)
    gather.msgs.append(table.select(["source", "conv_index", "role", "ts"]))
    history = pa.Table.from_pandas(from_tables(msgs, convs), preserve_index=False)
    gather.words.add(history)
    units, counts, vocabulary = gather.words.finish()
    lean = msgs.loc[:, list(LEAN_COLUMNS)].reset_index(drop=True)
    return Gathered(convs, lean, gather.openings, Counted("conversation", units, counts, vocabulary))
