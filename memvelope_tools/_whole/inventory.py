"""What an export holds beyond the prose, counted in one pass over its nodes (see :func:`inventory`).

Each batch of conversations is counted where it is read (in a worker process for a large export), its
files and projects read from the same conversations there, and only the counts and those rows come back,
so an inventory holds no node, and no Arrow, pandas or NumPy is loaded for it.
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from .._convert.chatgpt import stamp as chatgpt_stamp
from .._convert.timestamps import month_of_ms, number_ms, render_ms, render_timestamp
from .._providers.nodes import KINDS, chatgpt_facts, claude_facts
from .._sources import Input
from .export import READERS, export_input, export_inputs, finish, load_arrow, sections
from .files import list_export
from .pack import Packed, pack
from .read import Job, Piece, Whole, read_export
from .rows import Node, chatgpt_tree, claude_prose, claude_tree, role_of

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Counting", "Counts", "count_nodes", "inventory", "nodes_and_inventory", "summary"]

InventorySource = str | os.PathLike[str] | bytes | Sequence[str | os.PathLike[str]]


@dataclass
class Counts:
    """The counts of some nodes (see :func:`inventory` for what each counts); ``+`` adds two."""

    nodes: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    models: Counter[str] = field(default_factory=Counter)
    model_months: Counter[tuple[str, str]] = field(default_factory=Counter)
    tools: Counter[str] = field(default_factory=Counter)
    edited_prompts: int = 0
    regenerated_replies: int = 0
    abandoned_nodes: int = 0
    branched_conversations: int = 0
    custom_gpts: Counter[str] = field(default_factory=Counter)
    first: str | None = None
    last: str | None = None

    def __add__(self, other: Counts) -> Counts:
        dated = [t for t in (self.first, self.last, other.first, other.last) if t is not None]
        return Counts(
            self.nodes + other.nodes,
            self.kinds + other.kinds,
            self.models + other.models,
            self.model_months + other.model_months,
            self.tools + other.tools,
            self.edited_prompts + other.edited_prompts,
            self.regenerated_replies + other.regenerated_replies,
            self.abandoned_nodes + other.abandoned_nodes,
            self.branched_conversations + other.branched_conversations,
            self.custom_gpts + other.custom_gpts,
            min(dated, default=None),
            max(dated, default=None),
        )

    def node(self, kind: str, role: str, model: str | None, month: str | None, tools: list[str], sibling: int) -> None:
        """Count one node: its kind, role, model, month (``YYYY-MM``, None when undated), the tools it
        calls and its place among its siblings (from 1)."""
        self.nodes += 1
        self.kinds[kind] += 1
        if role == "assistant" and model is not None:
            self.models[model] += 1
            if month is not None:
                self.model_months[(month, model)] += 1
        if tools:
            self.tools.update(tools)
        if sibling > 1:
            if role == "user":
                self.edited_prompts += 1
            elif role == "assistant":
                self.regenerated_replies += 1


def count_nodes(nodes: list[Node], provider: str, lone: frozenset[int] | None = None) -> Counts:
    """The counts of ``nodes`` (the rows of whole conversations; ``provider`` and ``lone`` are not needed
    to count them).

    Parameters
    ----------
    nodes : list of Node
        Rows as :mod:`memvelope_tools._whole.rows` makes them.
    provider : str
        The export's provider.
    lone : frozenset of int, optional
        The conversations that may hold a lone surrogate (see :data:`memvelope_tools._whole.read.Consumer`).

    Returns
    -------
    Counts
        What :func:`inventory` reports, for these nodes.

    Examples
    --------
    >>> count_nodes([], "chatgpt").nodes
    0
    """
    counts = Counts()
    branched: set[int] = set()
    gpts: set[tuple[int, str]] = set()
    stamps = [node.ts for node in nodes if node.ts is not None]
    for node in nodes:
        counts.node(node.kind, node.role, node.model, node.ts and node.ts[:7], node.tools, node.sibling)
        if node.siblings > 1:
            branched.add(node.ordinal)
        if not node.on_active_path:
            counts.abandoned_nodes += 1
        if node.custom_gpt is not None:
            gpts.add((node.ordinal, node.custom_gpt))
    counts.branched_conversations = len(branched)
    counts.custom_gpts.update(gpt for _, gpt in gpts)
    counts.first, counts.last = min(stamps, default=None), max(stamps, default=None)
    return counts


class Counting:
    """The counts of a batch's conversations (a :class:`~memvelope_tools._whole.read.Tally`), taken from
    each conversation's tree (:mod:`memvelope_tools._whole.rows`) without making its node rows: what
    :func:`count_nodes` counts of the rows, with each time read as a number where it is one."""

    def __init__(self, provider: str) -> None:
        self.counts = Counts()
        self._add = self._chatgpt if provider == "chatgpt" else self._claude
        self._ms: list[int] = []  # the times given as numbers, in milliseconds
        self._rendered: list[str] = []  # the others, rendered

    def add(self, element: object) -> bool | None:
        """Count one element's nodes (see :class:`~memvelope_tools._whole.read.Tally`)."""
        return self._add(element)

    def result(self) -> Counts:
        """The counts of the conversations taken."""
        counts = self.counts
        dated = self._rendered
        if self._ms:
            # render_ms is monotonic and renders every year alike, so the earliest and latest numbers'
            # renderings rank among the rendered texts as their instants do
            dated += [t for t in map(render_ms, (min(self._ms), max(self._ms))) if t is not None]
        counts.first, counts.last = min(dated, default=None), max(dated, default=None)
        return counts

    def _month(self, value: object) -> str | None:
        ms = number_ms(value)
        if ms is not None:
            self._ms.append(ms)
            return month_of_ms(ms)
        if value is None:
            return None
        ts = render_timestamp(value)
        if ts is None:
            return None
        self._rendered.append(ts)
        return ts[:7]

    def _chatgpt(self, element: object) -> bool | None:
        tree = chatgpt_tree(element)
        if tree is None:
            return None
        assert type(element) is dict
        counts = self.counts
        selection, on_path, nodes, where = tree
        branched = False
        gpts: set[str] = set()
        for key, node in nodes:
            message = node.get("message")
            if type(message) is not dict:
                continue
            facts = chatgpt_facts(message, element)
            sibling, siblings = where.get(key, _ALONE)
            month = self._month(chatgpt_stamp(node, message))
            counts.node(facts.kind, role_of(facts.role), facts.model, month, facts.tools, sibling)
            branched = branched or siblings > 1
            if on_path is not None and id(node) not in on_path:
                counts.abandoned_nodes += 1
            if facts.custom_gpt is not None:
                gpts.add(facts.custom_gpt)
        counts.branched_conversations += branched
        counts.custom_gpts.update(gpts)
        return bool(selection.kept)

    def _claude(self, element: object) -> bool | None:
        tree = claude_tree(element)
        if tree is None:
            return None
        assert type(element) is dict
        counts = self.counts
        kept, entries, where = tree
        branched = False
        for i, message in entries:
            prose, _ = claude_prose(kept, i, message)
            facts = claude_facts(message, element, bool(prose))
            sibling, siblings = where.get(i, _ALONE)
            month = self._month(message.get("created_at"))
            counts.node(facts.kind, role_of(facts.role), facts.model, month, facts.tools, sibling)
            branched = branched or siblings > 1
        counts.branched_conversations += branched
        return bool(kept)


_ALONE: Final = (1, 1)


def inventory(export: InventorySource, *, verify: bool = False, progress: bool | None = None) -> dict[str, Any]:
    """What an export holds beyond the prose: its nodes by kind, the models, the tools, the branches.

    The counting rules:

    * ``conversations``: the export's conversations of its provider's shape, every one read;
      ``in_envelope``: of them, those the envelope keeps (those with at least one message).
    * ``nodes``: message nodes (ChatGPT mapping nodes that hold a message, on every branch; Claude
      ``chat_messages`` entries); ``kinds``: nodes by kind (see :mod:`memvelope_tools._providers.nodes`).
    * ``models``: assistant nodes by the model they name (nodes naming none are not counted);
      ``models_by_month``: the same by month of the node's time (UTC), undated nodes left out.
    * ``tools``: calls by tool name: a ChatGPT node addressed to a tool is one call (the tool's answer is
      not counted again); each ``tool_use`` block of a Claude message is one call.
    * ``branches``: ``edited_prompts`` are user nodes that have an earlier sibling (the same parent, and a
      place after the first among its children: each edit of a prompt makes one); ``regenerated_replies``
      are assistant nodes that have an earlier sibling (each regeneration makes one);
      ``abandoned_nodes`` are nodes off the path the envelope takes (``on_active_path`` False: always 0
      for Claude, whose every message the envelope keeps); ``branched_conversations`` are conversations
      with at least one node that has a sibling.
    * ``custom_gpts``: conversations by the custom GPT (ChatGPT gizmo id) any of their nodes names.
    * ``first``, ``last``: the earliest and latest node time (UTC), None when no node is dated.
    * ``assets`` (``total``, ``present``, ``missing``: files counted once however many messages name them),
      ``projects``, ``unconverted`` (the files the spec does not convert) and, with ``verify``, ``verify``:
      the download checked against its ``export_manifest.json`` (see
      :func:`memvelope_tools._whole.sections.inventory_sections`).

    The conversations are read once, for the nodes, the files and the projects alike.

    Parameters
    ----------
    export
        An export as downloaded: its zip, its folder, a ``conversations*.json`` part, or a list of the
        parts of one export (in order), on disk (the files beside the conversations are read too).
    verify
        Also check the download against its ``export_manifest.json`` (``verify``: ``missing`` and
        ``size_mismatch`` lists).
    progress
        Show a bar on long work (``None``: only on a terminal or in a notebook).

    Returns
    -------
    dict
        ``provider``, ``conversations``, ``in_envelope``, ``nodes``, ``kinds``, ``models``,
        ``models_by_month`` (``"YYYY-MM"`` to model to nodes, months in order), ``tools``, ``branches``,
        ``custom_gpts``, ``first``, ``last``, ``assets``, ``projects``, ``unconverted``, ``verify``; every
        count dict lists the largest first (``kinds`` in the vocabulary's order), without zeros.
        JSON-serialisable.

    Raises
    ------
    memvelope_tools.errors.InputError
        The input is no export (an envelope has no nodes: give the export), is given as bytes, or is
        missing, empty, not JSON, or another provider's export.
    memvelope_tools.errors.ConversionError
        The export cannot be read (a part is not valid JSON, its provider cannot be told).
    memvelope_tools.errors.FormatError
        With ``verify``, when the manifest is not shaped as a manifest.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> found = mv.inventory(mv.sample_path("chatgpt"))
    >>> found["provider"], found["nodes"] > found["kinds"]["prose"]
    ('chatgpt', True)
    """
    found = export_input(export, "inventory()")
    inputs = export_inputs([found], "inventory")
    whole = read_export(found, Job(None, beside=READERS, tally=Counting), progress=progress)
    listing = list_export(inputs)
    assets, projects = finish(inputs, listing, whole.readers, whole.provider)
    return {**summary(whole, found), **sections(inputs, listing, assets, projects, verify=verify)}


def summary(whole: Whole[Counts], found: Input) -> dict[str, Any]:
    """The inventory (see :func:`inventory`) of the counts of an export's batches."""
    total = sum((p.value for p in whole.pieces), Counts())
    months: dict[str, dict[str, int]] = {}
    for (month, model), n in sorted(total.model_months.items(), key=lambda item: (item[0][0], -item[1])):
        months.setdefault(month, {})[model] = n
    return {
        "provider": whole.provider,
        "conversations": whole.conversations,
        "in_envelope": sum(p.kept for p in whole.pieces),
        "nodes": total.nodes,
        "kinds": {kind: total.kinds[kind] for kind in KINDS if total.kinds[kind]},
        "models": dict(total.models.most_common()),
        "models_by_month": months,
        "tools": dict(total.tools.most_common()),
        "branches": {
            "edited_prompts": total.edited_prompts,
            "regenerated_replies": total.regenerated_replies,
            "abandoned_nodes": total.abandoned_nodes,
            "branched_conversations": total.branched_conversations,
        },
        "custom_gpts": dict(total.custom_gpts.most_common()),
        "first": total.first,
        "last": total.last,
    }


def packed_and_counted(
    nodes: list[Node], provider: str, lone: frozenset[int] | None = None, *, source: str
) -> tuple[Packed, Counts]:
    """A batch's nodes packed (see :func:`memvelope_tools._whole.nodes.nodes_table`) and counted."""
    return pack(nodes, provider, lone, source=source), count_nodes(nodes, provider)


def nodes_and_inventory(found: Input, *, progress: bool | None = None) -> tuple[pa.Table, dict[str, Any]]:
    """The nodes of a resolved export (the table of ``nodes_frame``) and its inventory, from one pass."""
    make = functools.partial(packed_and_counted, source=found.label)
    whole = read_export(found, Job(make), progress=progress, meanwhile=load_arrow)
    from .arrow import to_table  # after reading (see memvelope_tools._whole.nodes)

    table = to_table([Piece(p.value[0], p.conversations, p.kept, p.foreign) for p in whole.pieces])
    counts = Whole(whole.provider, [Piece(p.value[1], p.conversations, p.kept, p.foreign) for p in whole.pieces])
    return table, summary(counts, found)
