"""``memvelope doctor``: what an export holds, what conversion keeps and drops, and why.

The envelope is never touched: doctor reads the same parts in the same order as
:func:`memvelope_tools._convert.convert` (``sources.expand``), decodes and parses them with the core's
functions, detects the provider the same way, and asks the core's rules which elements survive. Its
``messages_kept`` is therefore the envelope's ``meta.message_count``.
"""

from __future__ import annotations

import os

from .._convert.sources import Part, ZipLimits, expand
from .._gc import gc_paused
from .._json.elements import FIELDS, JS, PartElements, Reader, Refused, load_part
from .._jsontypes import json_type
from .._providers import registry
from .._sources import resolve
from .findings import Diagnosis, Example, PartInfo
from .walk import ANALYSERS as ANALYSERS  # the analyser of each provider the spec defines
from .walk import Walk

__all__ = ["Diagnosis", "Example", "doctor"]


def _non_array_note(value: object) -> str:
    provider = registry.provider_of(value)
    what = f"looks like one {registry.name(provider)} conversation" if provider else "not a conversation list"
    return f"top level is {json_type(value)}, not an array ({what}); contributes nothing (conformance A16)"


def doctor(*paths: str | os.PathLike[str], show_text: bool = False, zip_limits: ZipLimits | None = None) -> Diagnosis:
    """Examine one export (the same paths ``convert`` takes) and report what conversion keeps and drops.

    When the export reads but would not convert (no provider, no conversation survives), the
    diagnosis says so in ``error`` and ``converts`` is False. Message text appears in examples only with
    ``show_text=True``.

    Parameters
    ----------
    *paths
        The export as downloaded (its zip or folder), or its ``conversations*.json`` parts in order.
    show_text
        Show message text in the examples.
    zip_limits
        Limits against zip bombs (:class:`~memvelope_tools._convert.ZipLimits`).

    Returns
    -------
    Diagnosis
        What each part holds, what conversion keeps and drops and why; ``converts`` and ``error``.

    Raises
    ------
    memvelope_tools.errors.InputError
        A path is missing, empty, not JSON, a Memvelope document or a file of another kind, or a zip or
        folder without conversations.json gives no conversation.
    memvelope_tools.errors.ConversionError
        A zip breaks its limits.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> mv.doctor(mv.sample_path("claude")).converts
    True
    """
    resolve(list(paths), "diagnose", list_means="parts", caller="doctor()")
    return diagnose(paths, show_text=show_text, zip_limits=zip_limits)


def diagnose(
    paths: tuple[str | os.PathLike[str], ...], *, show_text: bool = False, zip_limits: ZipLimits | None = None
) -> Diagnosis:
    """:func:`doctor` of paths the resolver has already checked (they are not resolved again).

    Each part is read once, in bounded batches, and its elements are analysed and let go one at a time
    (see :class:`.walk.Walk`): memory holds a batch, the figures and the examples, not the export."""
    expansion = expand(paths, zip_limits)
    parts: list[PartInfo] = []
    walk = Walk(show_text)
    singles: list[tuple[str, object, bytes]] = []  # non-array parts that look like one conversation
    with gc_paused():  # parse trees and findings hold no cycles
        for order, part in enumerate(expansion.parts, 1):
            parts.append(_read_part(order, part, walk, singles))
        walk.finish()
    if (
        walk.error is not None
        and walk.error[0] == "no-provider"
        and (bare := expansion.without_conversations(read=True)) is not None
    ):
        raise bare  # the zip or folder holds no conversations.json: the line every command gives
    inputs = [os.fspath(p) for p in paths]
    if_wrapped = None
    read = walk
    if not walk.elements and singles:  # say what the single-conversation parts hold, had they been in [ ]
        read = Walk(show_text)
        for name, value, data in singles:
            read.array_part(name)
            read.element(value, name, data, 0, len(data))
        read.finish()
        if_wrapped = _diagnosis(inputs, [], [], read, len(singles))
    found = _diagnosis(inputs, parts, list(expansion.ignored), walk, walk.elements)
    found.if_wrapped = if_wrapped
    found.memory = _memory(read, paths, zip_limits)
    return found


def _read_part(order: int, part: Part, walk: Walk, singles: list[tuple[str, object, bytes]]) -> PartInfo:
    """Read one part: an array's elements are read a batch at a time and go to ``walk`` one by one; a
    part of another top level is read whole, and noted (in ``walk`` and ``singles``) for what it shows."""
    reader = Reader(JS)
    elements = PartElements(part, reader)
    count = 0
    for buf, found, offset in elements.ranges():
        if not elements.is_array:
            break
        walk.array_part(part.name)
        value = None
        try:  # one element parsed at a time
            for k in range(0, len(found), FIELDS):
                start, end, flags, depth = found[k + 2 : k + FIELDS]
                value = reader.value(buf, start, end, flags, depth, offset)
                walk.element(value, part.name, buf, start, end)
                count += 1
        except Refused as exc:
            raise elements.error(exc) from None
        del buf, found, value  # not held while the next batch is read
    if elements.is_array:
        walk.array_part(part.name)
        return PartInfo(order, part.name, part.size, "array", count, reader.replaced)
    reader = Reader(JS)
    data = part.read()
    value = load_part(part, reader, data)
    info = PartInfo(order, part.name, part.size, json_type(value), 0, reader.replaced, _non_array_note(value))
    walk.non_arrays += 1
    if registry.provider_of(value) in registry.SUPPORTED:
        singles.append((part.name, value, data))
    elif (shown := registry.document_provider(value)) is not None:
        walk.documents.append((shown, part.name))
    return info


def _memory(walk: Walk, paths: tuple[str | os.PathLike[str], ...], zip_limits: ZipLimits | None) -> dict[str, object]:
    """What the provider remembered, counted: items by kind, those also in the envelope, notes."""
    from .._memory.claude import memory_parts
    from .._memory.items import KINDS
    from .._memory.read import memory_of_reading
    from .._whole.citations import CITED

    found = list(memory_parts(paths, zip_limits or ZipLimits()))
    read = memory_of_reading(walk.provider, walk.memory, found)
    by_kind = {kind: n for kind in KINDS if (n := sum(1 for i in read.items if i.kind == kind))}
    return {
        "items": len(read.items),
        "by_kind": by_kind,
        # a cited memory's message is the answer citing it, not the memory's text
        "also_in_envelope": sum(1 for i in read.items if i.message_id is not None and i.kind != CITED),
        "notes": read.notes,
    }


def _diagnosis(
    inputs: list[str], parts: list[PartInfo], ignored: list[tuple[str, str]], walk: Walk, elements: int
) -> Diagnosis:
    acc = walk.acc
    return Diagnosis(
        inputs=inputs,
        parts=parts,
        ignored=ignored,
        provider=walk.provider,
        error=walk.error,
        elements=elements,
        conversations=acc.conversations,
        examples=acc.examples,
        timestamps=acc.timestamps,
        types=acc.types,
        unknown_types=acc.unknown,
        show_text=acc.show_text,
        mixed=acc.mixed,
    )
