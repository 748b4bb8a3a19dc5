"""``memvelope doctor``: what an export holds, what conversion keeps and drops, and why.

The envelope is never touched: doctor reads the same parts in the same order as
:func:`memvelope_tools._convert.convert` (``sources.expand``), decodes and parses them with the core's
functions, detects the provider the same way, and asks the core's rules which elements survive. Its
``messages_kept`` is therefore the envelope's ``meta.message_count``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Final

from .._convert.assemble import detect_provider, mixed_providers, rules
from .._convert.envelope import build_envelope
from .._convert.sources import ZipLimits, expand
from .._json.elements import JS, Reader, load_part
from .._jsontypes import json_type
from .._providers import registry
from .._sources import resolve
from ..errors import ConversionError
from . import chatgpt, claude
from .findings import OTHER_PROVIDER, Analysis, ConversationFacts, Diagnosis, Example, PartInfo

__all__ = ["Diagnosis", "Example", "doctor"]

Analyser = Callable[[object, ConversationFacts, Analysis], None]
ANALYSERS: Final[dict[str, Analyser]] = {"chatgpt": chatgpt.analyse, "claude": claude.analyse}


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
    """:func:`doctor` of paths the resolver has already checked (they are not resolved again)."""
    expansion = expand(paths, zip_limits)
    parts: list[PartInfo] = []
    merged: list[object] = []
    owners: list[tuple[int, str]] = []  # (first merged index, part name)
    non_arrays = 0
    singles: list[tuple[str, object]] = []  # non-array parts that look like one conversation
    documents: list[tuple[str, str]] = []  # non-array parts showing another provider's export
    for order, part in enumerate(expansion.parts, 1):
        reader = Reader(JS)
        value = load_part(part, reader)
        info = PartInfo(order, part.name, part.size, json_type(value), 0, reader.replaced)
        if type(value) is list:
            owners.append((len(merged), part.name))
            merged.extend(value)
            info.elements = len(value)
        else:
            non_arrays += 1
            info.note = _non_array_note(value)
            if registry.provider_of(value) in registry.SUPPORTED:
                singles.append((part.name, value))
            elif (shown := registry.document_provider(value)) is not None:
                documents.append((shown, part.name))
        parts.append(info)
    provider, error, acc = _examine(merged, owners, non_arrays, show_text, documents)
    if (
        error is not None
        and error[0] == "no-provider"
        and (bare := expansion.without_conversations(read=True)) is not None
    ):
        raise bare  # the zip or folder holds no conversations.json: the line every command gives
    if_wrapped = None
    if not merged and singles:  # say what the single-conversation parts hold, had they been in [ ]
        w_provider, w_error, w_acc = _examine(
            [v for _, v in singles], [(i, name) for i, (name, _) in enumerate(singles)], 0, show_text
        )
        if_wrapped = _diagnosis([os.fspath(p) for p in paths], [], [], w_provider, w_error, len(singles), w_acc)
    found = _diagnosis([os.fspath(p) for p in paths], parts, list(expansion.ignored), provider, error, len(merged), acc)
    found.if_wrapped = if_wrapped
    found.memory = _memory(
        found.provider or (if_wrapped.provider if if_wrapped else None), merged, singles, paths, zip_limits
    )
    return found


def _memory(
    provider: str | None,
    merged: list[object],
    singles: list[tuple[str, object]],
    paths: tuple[str | os.PathLike[str], ...],
    zip_limits: ZipLimits | None,
) -> dict[str, object]:
    """What the provider remembered, counted: items by kind, those also in the envelope, notes."""
    from .._memory.claude import memory_parts
    from .._memory.items import KINDS
    from .._memory.read import collect
    from .._whole.citations import CITED

    read = collect(provider, merged or [v for _, v in singles], list(memory_parts(paths, zip_limits or ZipLimits())))
    by_kind = {kind: n for kind in KINDS if (n := sum(1 for i in read.items if i.kind == kind))}
    return {
        "items": len(read.items),
        "by_kind": by_kind,
        # a cited memory's message is the answer citing it, not the memory's text
        "also_in_envelope": sum(1 for i in read.items if i.message_id is not None and i.kind != CITED),
        "notes": read.notes,
    }


def _examine(
    merged: list[object],
    owners: list[tuple[int, str]],
    non_arrays: int,
    show_text: bool,
    documents: list[tuple[str, str]] | None = None,
) -> tuple[str | None, tuple[str, str] | None, Analysis]:
    """Detect the provider as the converter does and analyse every element of the merged array. An
    export of a provider the spec does not define is refused (InputError), not diagnosed."""
    acc = Analysis(show_text)
    error: tuple[str, str] | None = None
    provider: str | None = None
    try:
        first = owners[0][1] if owners else None  # the part the detected elements begin in
        provider = detect_provider(merged, first, non_arrays=non_arrays, documents=documents or ())
    except ConversionError as exc:
        if exc.reason == "unsupported-provider":
            raise
        error = (exc.reason, exc.msg)
    if provider is not None:
        normalise, foreign = rules(provider)
        owner = 0
        for index, element in enumerate(merged):
            while owner + 1 < len(owners) and owners[owner + 1][0] <= index:
                owner += 1
            facts = ConversationFacts(index, owners[owner][1] if owners else None)
            if foreign(element) and normalise(element) is None:
                _other_provider(element, facts, acc, registry.OTHER[provider])
            else:
                facts.provider = provider
                ANALYSERS[provider](element, facts, acc)
            acc.conversations.append(facts)
        left_out = sum(1 for c in acc.conversations if c.omitted == OTHER_PROVIDER)
        if left_out:
            acc.mixed = mixed_providers(provider, left_out)
        if not any(c.kept for c in acc.conversations):
            try:  # the core's own verdict and wording for an export where nothing survives
                build_envelope(provider, [])
            except ConversionError as exc:
                error = (exc.reason, exc.msg)
    return provider, error, acc


def _other_provider(element: object, facts: ConversationFacts, acc: Analysis, other: str) -> None:
    """Diagnose a conversation of the other provider, which conversion leaves out, by its own
    provider's rules: what converting it on its own would keep, and that it is left out here."""
    facts.provider = other
    ANALYSERS[other](element, facts, acc)
    if facts.messages_kept:
        facts.dropped[OTHER_PROVIDER] += facts.messages_kept  # the messages its own provider would keep
    facts.omitted = OTHER_PROVIDER
    acc.example(f"conversation: {OTHER_PROVIDER}", facts.example(detail=registry.name(other)))


def _diagnosis(
    inputs: list[str],
    parts: list[PartInfo],
    ignored: list[tuple[str, str]],
    provider: str | None,
    error: tuple[str, str] | None,
    elements: int,
    acc: Analysis,
) -> Diagnosis:
    return Diagnosis(
        inputs=inputs,
        parts=parts,
        ignored=ignored,
        provider=provider,
        error=error,
        elements=elements,
        conversations=acc.conversations,
        examples=acc.examples,
        timestamps=acc.timestamps,
        types=acc.types,
        unknown_types=acc.unknown,
        show_text=acc.show_text,
        mixed=acc.mixed,
    )
