"""Every message node of an export, on every branch, as a frame: the export as the provider recorded it,
beside the envelope, which keeps only the prose of each conversation's active path.

Columns (declared once as :data:`memvelope_tools._frames.columns.NODE_COLUMNS`, also the Parquet
``nodes`` table's):

``source`` string (the export's label) · ``provider`` string · ``conv_index`` Int64 (the conversation's
position in the envelope, from 0; null when the envelope omits the conversation) · ``conversation_id``
string (the envelope's id) · ``node_id`` string (ChatGPT: the mapping key; Claude: the message ``uuid``) ·
``parent_id`` string (ChatGPT ``parent``; Claude ``parent_message_uuid``) · ``role`` category (``user``,
``assistant``, ``system``, ``tool``, ``other``: the envelope's role mapping, then the roles it drops) ·
``author`` string (ChatGPT ``author.name``: the tool that answered, such as ``python``, ``bio``,
``dalle.text2im``) · ``recipient`` string (ChatGPT: who the message is addressed to, ``all`` or a tool) ·
``content_type`` string (ChatGPT ``content.content_type``; Claude: its content blocks' types, each once,
joined by ``+``) · ``kind`` category (see :data:`memvelope_tools._providers.nodes.KINDS`) · ``tools``
list of strings (the tools the node calls: ChatGPT its ``recipient``; Claude its ``tool_use`` names) ·
``model`` string (ChatGPT ``metadata.model_slug``, else ``metadata.default_model_slug``, else for an
assistant node the conversation's ``default_model_slug``; Claude: the conversation's ``model``, for
assistant messages) · ``custom_gpt`` string (ChatGPT: the gizmo id of a custom GPT, projects excluded) ·
``ts`` datetime64[ms, UTC] (as the envelope renders a message's time) · ``on_active_path`` bool ·
``message_id`` string (the envelope's id of the message this node gives, ``m1``...; null for a node the
envelope does not keep) · ``sibling``, ``siblings`` int64 (the node's place, from 1, among the nodes with
the same parent, and how many there are; 1 and 1 for a node without a parent) · ``chars`` int64 (code
points of the node's text) · ``attachments`` int64 (files it carries: ChatGPT ``metadata.attachments``;
Claude ``attachments`` and ``files``).

``on_active_path`` is True for the nodes on the path the envelope takes: ChatGPT's active path
(``current_node`` back through ``parent``), or every node where the spec falls back to the timestamp
order (no ``current_node``, or none that resolves, or a path without a message: the envelope then takes
every node); every Claude message (the envelope keeps them all, conformance A28, so a retried reply shows
in ``siblings`` rather than here). So every envelope message is exactly one node with ``on_active_path``
and its ``message_id`` (conformance C17): ``nodes.merge(messages, on=["source", "conv_index",
"message_id"])`` pairs them.

The export is read by :mod:`.read`, each batch packed by :mod:`.pack`, in worker processes for a large
export; Arrow, NumPy and pandas are imported here only once they are started (NumPy starts a thread, and
workers fork only from a process that runs one), and the workers never import them.

A node's text (``text=True``) is its prose as the envelope extracts it, else the text its content holds
(code, a tool's output, the model's thoughts, a memory snapshot): for a node the envelope keeps it is the
envelope message's text, and ``chars`` its length as :func:`memvelope_tools.messages_frame` counts it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._sources import Input
from .export import export_input, read_nodes

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["export_input", "nodes_frame", "nodes_table"]

NodesSource = str | os.PathLike[str] | bytes | Sequence[str | os.PathLike[str]]


def nodes_table(
    found: Input, *, with_text: bool = False, progress: bool | None = None, workers: int | None = None
) -> tuple[pa.Table, str]:
    """The nodes of a resolved export as an Arrow table (columns of ``nodes_frame``), and its provider."""
    table, provider, _ = read_nodes(found, with_text=with_text, progress=progress, workers=workers)
    return table, provider


def nodes_frame(
    export: NodesSource, *, text: bool = False, tz: str | None = None, progress: bool | None = None
) -> pd.DataFrame:
    """One row per message node of every conversation of an export, on every branch.

    The envelope keeps the prose of each conversation's active path; this frame is everything else the
    export records about those conversations: the branches (edited prompts, regenerated replies), the
    tool calls and their output, the model's reasoning, memory writes, canvas, the model of each reply
    and the custom GPT. The export is read once, a batch of conversations at a time.

    Parameters
    ----------
    export
        An export as downloaded: its zip, its folder, a ``conversations*.json`` part, a list of the parts
        of one export (in order), or the bytes of a zip or part.
    text
        Add a ``text`` column: each node's text (see the module docstring).
    tz
        Time zone of the ``ts`` column (default UTC; the instants are unchanged).
    progress
        Show a bar on long work (``None``: only on a terminal or in a notebook).

    Returns
    -------
    pandas.DataFrame
        One row per ChatGPT mapping node that holds a message, or per Claude ``chat_messages`` entry, in
        export order (conversations in order, a ChatGPT mapping's nodes in its own-property order). The
        columns and the ``kind`` vocabulary are listed in :mod:`memvelope_tools._whole.nodes`; the
        ``provider`` is also in ``frame.attrs["provider"]``.

    Raises
    ------
    memvelope_tools.errors.InputError
        The input is no export (an envelope has no nodes: give the export), or is missing, empty, not
        JSON, or another provider's export.
    memvelope_tools.errors.ConversionError
        The export cannot be read (a part is not valid JSON, its provider cannot be told).

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> nodes = mv.nodes_frame(mv.sample_path("chatgpt"))
    >>> kept = nodes[nodes["message_id"].notna()]
    >>> len(kept) == len(mv.messages_frame(mv.sample_path("chatgpt")))
    True
    >>> sorted(set(nodes["kind"].astype(str)) - {"prose"})  # doctest: +SKIP
    ['code', 'context', 'system', 'tool_output']
    """
    found = export_input(export, "nodes_frame()")
    table, provider = nodes_table(found, with_text=text, progress=progress)
    from .._frames.columns import NODE_COLUMNS, STRING, to_pandas  # after reading (see the module docstring)

    columns = {**NODE_COLUMNS, "text": STRING} if text else NODE_COLUMNS
    frame = to_pandas(table, columns, tz)
    frame.attrs["provider"] = provider
    return frame
