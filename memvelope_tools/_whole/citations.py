"""The saved memories ChatGPT cited in its answers, as the sharded (2026) export keeps them.

That export holds no system or tool message, so neither memory writes nor memory snapshots: what it
keeps of the memory is the citations. An assistant message that drew on a saved memory lists it in
``metadata.conversation_context_citation_metadata``, one entry per citation, each ``{citation, citation_uuid,
deleted, ...}`` whose ``citation`` is ``{conversation_context_type: "user_memory", memory_id, snippet,
title, reason, ...}``: ``snippet`` quotes the memory (a part of it, or all), ``title`` and ``reason`` are the
model's words about it. Entries of another type (``past_conversation``: an earlier chat) are not memories.

One memory is one item, by its ``memory_id``: its text is the parts of it its citations quote, each kept
once (a quote inside a longer one is dropped), in order of first citation, joined by `` … ``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

__all__ = ["CITED", "CITED_ONLY", "MARK", "citations", "is_citing", "merge_quotes"]

#: The kind of a cited memory's item.
CITED: Final = "cited"
#: Bytes every element holding a memory citation contains.
MARK: Final = b'"user_memory"'
#: The note of a ChatGPT export that keeps memory citations only.
CITED_ONLY: Final = (
    "this export format keeps no memory records (no system or tool messages); the memories listed are "
    "those ChatGPT cited in its answers, each as far as its citations quote it: memories it never cited "
    "cannot be read from it"
)
_KEY: Final = "conversation_context_citation_metadata"
_MEMORY: Final = "user_memory"
_JOIN: Final = " … "


def is_citing(metadata: object) -> bool:
    """Whether a message's ``metadata`` lists conversation-context citations (memories among them, maybe)."""
    return type(metadata) is dict and _KEY in metadata


def citations(metadata: object) -> Iterator[tuple[str, str, str | None]]:
    """``(memory id, quoted text, citation id)`` of each memory citation a message's metadata lists.

    Parameters
    ----------
    metadata
        A ChatGPT message's ``metadata``.

    Returns
    -------
    iterator of (str, str, str or None)
        One per ``user_memory`` citation with a memory id and a non-empty snippet.

    Examples
    --------
    >>> meta = {"conversation_context_citation_metadata": [{"citation_uuid": "c1", "citation": {
    ...     "conversation_context_type": "user_memory", "memory_id": "m1", "snippet": " Likes tea. "}}]}
    >>> list(citations(meta))
    [('m1', 'Likes tea.', 'c1')]
    """
    entries = metadata.get(_KEY) if type(metadata) is dict else None
    for entry in entries if type(entries) is list else ():
        if type(entry) is not dict:
            continue
        cited: Any = entry.get("citation") if type(entry.get("citation")) is dict else entry
        if cited.get("conversation_context_type") != _MEMORY:
            continue
        memory, snippet = cited.get("memory_id"), cited.get("snippet")
        if type(memory) is not str or not memory or type(snippet) is not str or not snippet.strip():
            continue
        uuid = entry.get("citation_uuid") or cited.get("citation_uuid")
        yield memory, snippet.strip(), uuid if type(uuid) is str and uuid else None


def merge_quotes(text: str, quote: str) -> str:
    """``text`` (quotes of one memory joined by `` … ``) with ``quote`` added, unless one of them holds it;
    a quote that holds one of them takes its place.

    Parameters
    ----------
    text
        The quotes so far.
    quote
        Another quote of the same memory.

    Returns
    -------
    str
        The quotes, each once, in order of first sight.

    Examples
    --------
    >>> merge_quotes("Mario tiene 45 años", "Mario tiene 45 años, nació en 1980.")
    'Mario tiene 45 años, nació en 1980.'
    >>> merge_quotes("máximo 1000 caracteres", "no usar referencias a bandas")
    'máximo 1000 caracteres … no usar referencias a bandas'
    """
    spaced = " ".join(quote.split())
    kept = text.split(_JOIN)
    if any(spaced in " ".join(k.split()) for k in kept):
        return text
    inside = [i for i, k in enumerate(kept) if " ".join(k.split()) in spaced]
    if inside:
        kept[inside[0]] = quote
        kept = [k for i, k in enumerate(kept) if i not in inside[1:]]
    else:
        kept.append(quote)
    return _JOIN.join(kept)
