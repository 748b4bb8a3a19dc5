"""The public door of the zero-LLM distiller: an envelope or an export in, the facts the rules find
(:mod:`.structured`) and, beside them, what the provider remembered about the user
(:func:`memvelope_tools._memory_ir.add_memory`) out."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import FormatError
from .facts import DistillStats
from .write import Clock

if TYPE_CHECKING:
    from .._memory.items import MemoryRead

__all__ = ["distill_structured", "envelope_and_memory"]


def distill_structured(
    envelope: Any, *, memory: bool = True, clock: Clock | None = None, stats: DistillStats | None = None
) -> dict[str, Any]:
    """Distil an envelope into a Facts IR document with the zero-LLM rules (:mod:`.structured`); no
    model, deterministic except ``meta.generated_at`` (from ``clock``). Given an export, the facts its
    provider remembered are added, each once (:func:`memvelope_tools._memory_ir.add_memory`).

    Parameters
    ----------
    envelope
        The envelope to distil (a parsed document), or an export (a zip, a folder, conversation files, a
        list of its parts) or an envelope file to read it from.
    memory
        Add what the provider remembered about the user (saved memories, memory snapshots, custom
        instructions, Claude's memories) when ``envelope`` is an export. An envelope does not hold the
        provider's memory: give the export itself to have it. ``False`` leaves it out.
    clock
        Gives ``meta.generated_at`` (default: now, UTC).
    stats
        A :class:`~memvelope_tools._ir.DistillStats` to learn what was kept and dropped.

    Returns
    -------
    dict
        The ``memvelope-ir-v0`` document; a fact from the provider's memory carries ``memory_kind``.

    Raises
    ------
    KeyError
        A parsed ``envelope`` lacks a field of the spec (check it with :func:`memvelope_tools.read` first).
    memvelope_tools.errors.FormatError
        ``envelope`` names a Facts IR (``not-envelope``) or a document that is not the spec's.
    memvelope_tools.errors.InputError
        ``envelope`` names no readable file.
    memvelope_tools.errors.ConversionError
        The export does not convert.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> ir = mv.distill_structured(mv.convert(mv.sample_path("claude")))
    >>> ir["meta"]["format"]
    'memvelope-ir-v0'
    >>> with_memory = mv.distill_structured(mv.sample_path("chatgpt"))
    >>> with_memory["meta"]["mode"]
    'structured (zero-LLM) + imported (provider memory)'
    >>> mv.distill_structured(mv.sample_path("chatgpt"), memory=False)["meta"]["mode"]
    'structured (zero-LLM)'
    """
    from .._memory_ir import add_memory
    from .structured import structured_facts

    source, read = envelope_and_memory(envelope, memory=memory, progress=False)
    stats = stats if stats is not None else DistillStats()
    doc = structured_facts(source, clock=clock, stats=stats)
    return doc if read is None else add_memory(doc, read, source, clock=clock, stats=stats)


def envelope_and_memory(
    source: Any, *, memory: bool, progress: bool | None = None
) -> tuple[Mapping[str, Any], MemoryRead | None]:
    """The envelope ``source`` holds and, when asked, what its provider remembered.

    Parameters
    ----------
    source
        A parsed envelope, or what :func:`memvelope_tools.load` takes: an export (a zip, a folder, its
        part files as a list) or an envelope file.
    memory
        Read the provider's memory too, when ``source`` is an export on disk.
    progress
        Show progress bars (None: when stderr is a terminal or in a notebook).

    Returns
    -------
    tuple
        The envelope (an export converted) and the :class:`~memvelope_tools._memory.items.MemoryRead`, or None
        when ``memory`` is false or ``source`` is not an export on disk.

    Raises
    ------
    memvelope_tools.errors.FormatError
        ``source`` is a Facts IR (``not-envelope``) or not a document of the spec.
    memvelope_tools.errors.InputError
        ``source`` names nothing readable.
    memvelope_tools.errors.ConversionError
        The export does not convert.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> env, read = envelope_and_memory(mv.sample_path("claude"), memory=True, progress=False)
    >>> env["meta"]["source_provider"], read.provider
    ('claude', 'claude')
    """
    if isinstance(source, Mapping):
        return source, None
    from .._load import open_input
    from .._memory_ir import export_memory
    from .._read import layer_of
    from .._sources import resolve

    parts = list(source) if isinstance(source, Sequence) and not isinstance(source, str | bytes) else source
    [found] = resolve(parts, "any", list_means="parts", caller="distill_structured()")
    doc = open_input(found, progress=progress)
    if layer_of(doc) != "envelope":
        raise FormatError(
            "not an envelope: the facts are distilled from an envelope or an export",
            reason="not-envelope",
            source=found.name or (os.fspath(source) if isinstance(source, str | os.PathLike) else None),
        )
    return doc, export_memory(found, progress=progress) if memory else None
