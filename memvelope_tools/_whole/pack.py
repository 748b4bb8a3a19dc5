"""A batch's nodes packed column by column into bytes, with the standard library alone, for the trip from a
worker process: so that a worker loads neither Arrow nor pandas (seconds of work for each process) and this
process turns each column into an Arrow array without touching a Python object per value
(:func:`memvelope_tools._whole.arrow.unpack`).

A string column is its UTF-8 bytes, the 64-bit end offset of each value, and a byte per value that is 1 for a
null. A column holding a lone surrogate (legal in JSON, not in UTF-8) travels as the list of its values, to
be repaired where the frames repair text (:func:`memvelope_tools._frames.text.strings`); a text holding one
travels beside the counts of characters, to be counted there as the frames count it
(:func:`memvelope_tools._frames.text.char_counts`).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from itertools import accumulate
from typing import Any, Final, NamedTuple

from .._providers.nodes import KINDS, NODE_ROLES
from .rows import Node

#: A string column: ``(offsets, data, nulls)``, or the values themselves when one is no UTF-8.
Strings = tuple[bytes, bytes, bytes] | list[Any]

_KIND_CODE: Final = {kind: i for i, kind in enumerate(KINDS)}
_ROLE_CODE: Final = {role: i for i, role in enumerate(NODE_ROLES)}
#: The string columns of a node, in the order of the nodes table.
STRING_COLUMNS: Final = (
    "conversation_id",
    "node_id",
    "parent_id",
    "author",
    "recipient",
    "content_type",
    "model",
    "custom_gpt",
    "ts",
    "message_id",
)


class Packed(NamedTuple):
    """One batch's nodes: their number, the batch's ``source`` label and ``provider``, the string columns
    (:data:`STRING_COLUMNS`), ``conv_index`` (int64, with a null byte per row), ``role`` and ``kind``
    (int8 codes in :data:`~memvelope_tools._providers.nodes.NODE_ROLES` and
    :data:`~memvelope_tools._providers.nodes.KINDS`), ``on_active_path`` (a byte per row), the int64 columns,
    the tools (their names and int32 list offsets), ``chars`` (int64, the code points of each text), ``odd``
    (the texts holding a surrogate, by row, to be counted again) and ``text`` (None unless asked for)."""

    rows: int
    source: str
    provider: str
    strings: dict[str, Strings]
    conv_index: tuple[bytes, bytes]
    role: bytes
    kind: bytes
    on_active_path: bytes
    ints: dict[str, bytes]
    tools: tuple[Strings, bytes]
    chars: bytes
    odd: dict[int, str]
    text: Strings | None


def strings(values: Any) -> Strings:
    """A string column (see the module docstring)."""
    nulls = None in values
    texts = ["" if v is None else v for v in values] if nulls else values
    try:
        data = "".join(texts).encode("utf-8")
    except UnicodeEncodeError:
        return list(values)
    lengths: Iterable[int] = map(len, texts)
    if len(data) != sum(map(len, texts)):  # not all ASCII: each value's bytes, not its characters
        lengths = (len(t.encode("utf-8")) for t in texts)
    ends = array("q", accumulate(lengths, initial=0))
    return ends.tobytes(), data, bytes([v is None for v in values]) if nulls else bytes(len(values))


def pack(
    nodes: list[Node], provider: str, lone: frozenset[int] | None = None, *, source: str, with_text: bool = False
) -> Packed:
    """The rows ``nodes`` of one batch packed (``conv_index`` counting from 0 within the batch).

    Parameters
    ----------
    nodes : list of Node
        The rows.
    provider : str
        The export's provider.
    lone : frozenset of int, optional
        The ordinals of the conversations whose texts may hold a lone surrogate (None: any may).
    source : str
        The export's label.
    with_text : bool
        Keep each node's text.

    Returns
    -------
    Packed
        The columns.

    Examples
    --------
    >>> pack([], "chatgpt", source="x").rows
    0
    """
    n = len(nodes)
    col = dict(zip(Node._fields, zip(*nodes, strict=True) if n else [() for _ in Node._fields], strict=True))
    index = col["conv_index"]
    tools = col["tools"]
    texts = col["text"]
    return Packed(
        n,
        source,
        provider,
        {name: strings(col[name]) for name in STRING_COLUMNS},
        (array("q", [0 if i is None else i for i in index]).tobytes(), bytes(i is None for i in index)),
        bytes(_ROLE_CODE[r] for r in col["role"]),
        bytes(_KIND_CODE[k] for k in col["kind"]),
        bytes(col["on_active_path"]),
        {name: array("q", col[name]).tobytes() for name in ("sibling", "siblings", "attachments")},
        (strings([t for names in tools for t in names]), array("i", accumulate(map(len, tools), initial=0)).tobytes()),
        array("q", map(len, texts)).tobytes(),
        _odd(texts, col["ordinal"], lone),
        strings(texts) if with_text else None,
    )


def _odd(texts: tuple[str, ...], ordinals: tuple[int, ...], lone: frozenset[int] | None) -> dict[int, str]:
    """The texts that hold a surrogate, by row (of the conversations ``lone`` names, or of all)."""
    if lone is not None and not lone:
        return {}
    return {
        i: t for i, t in enumerate(texts) if (lone is None or ordinals[i] in lone) and not t.isascii() and not _utf8(t)
    }


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
