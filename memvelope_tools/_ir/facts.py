"""What both distillers share: a fact's dating, provenance, dedup key, and the counts of a run."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .dates import first_stated_date

CONTENT_MAX = 400


@dataclass
class DistillStats:
    """Counts from one distiller run (filled in place when passed as ``stats=``)."""

    conversations: int = 0
    conversations_undated: int = 0  #: skipped: no timestamp to form ``provenance`` from
    candidates: int = 0  #: facts found before dedup
    duplicates: int = 0
    facts: int = 0
    memory_facts: int = 0  #: added from the provider's memory
    memory_known: int = 0  #: remembered, and already among the facts found in the conversations
    # llm mode only
    chunks: int = 0
    requests: int = 0
    retries: int = 0
    cache_hits: int = 0
    invalid_facts: int = 0  #: dropped: failed the fact schema
    reasked: int = 0  #: replies that were not the JSON asked for, asked again
    unparseable_replies: int = 0  #: chunks skipped: no reply was the JSON asked for
    dates_nulled: int = 0  #: model dates the source does not contain
    invalid_reasons: dict[str, int] = field(default_factory=dict)


def conversation_month(conv: Mapping[str, Any]) -> str | None:
    """The ``YYYY-MM`` of ``provenance`` (conformance B4): the month of ``created_at``; when that is
    null, of the first message with a ``ts``; ``None`` when the conversation has no timestamp."""
    stamp = conversation_stamp(conv)
    return stamp[:7] if stamp else None


def conversation_stamp(conv: Mapping[str, Any]) -> str | None:
    """``created_at``, else the first non-null message ``ts``, else ``None``."""
    if isinstance(conv.get("created_at"), str):
        return str(conv["created_at"])
    for msg in conv.get("messages") or []:
        if isinstance(msg, dict) and isinstance(msg.get("ts"), str):
            return str(msg["ts"])
    return None


def provenance(provider: str, month: str) -> str:
    """``imported:<provider>-export:<YYYY-MM>``."""
    return f"imported:{provider}-export:{month}"


def fallback_date(conv: Mapping[str, Any]) -> str | None:
    """The conversation's date for ``effective_date`` when the text states none: the UTC day
    (``YYYY-MM-DD``) of ``created_at``, else of the first message ``ts``; ``None`` when undated."""
    stamp = conversation_stamp(conv)
    return stamp[:10] if stamp else None


def make_fact(
    *,
    subject: str | None,
    subject_type: str | None,
    category: str | None,
    content: str,
    source_text: str,
    conv: Mapping[str, Any],
    provider: str,
    month: str,
) -> dict[str, Any]:
    """A fact in the spec's key order, dated from ``source_text`` (``in_text_date``) or the
    conversation (``effective_date`` fallback)."""
    in_text = first_stated_date(source_text)
    return {
        "subject": subject,
        "subject_type": subject_type,
        "category": category,
        "content": content,
        "effective_date": in_text or fallback_date(conv),
        "in_text_date": in_text,
        "provenance": provenance(provider, month),
        "convo_id": conv.get("id") if isinstance(conv.get("id"), str) else None,
    }


def fact_key(fact: Mapping[str, Any]) -> tuple[str, str, str]:
    """Two facts are the same fact when subject, category and content agree after case-folding,
    whitespace collapsing and dropping trailing punctuation."""
    content = re.sub(r"[\s.!;:,]+$", "", " ".join(str(fact.get("content", "")).split())).casefold()
    subject = " ".join(str(fact.get("subject") or "").split()).casefold()
    return (subject, str(fact.get("category") or ""), content)


def dedup(
    candidates: Iterable[tuple[tuple[Any, ...], dict[str, Any]]], stats: DistillStats | None = None
) -> list[dict[str, Any]]:
    """Keep one fact per :func:`fact_key`: the earliest-dated occurrence (``effective_date``, undated
    last; ties by position), listed in order of position. ``candidates`` are ``(position, fact)``."""
    best: dict[tuple[str, str, str], tuple[tuple[str, tuple[Any, ...]], dict[str, Any]]] = {}
    count = 0
    for position, fact in candidates:
        count += 1
        rank = (fact.get("effective_date") or "\uffff", position)
        key = fact_key(fact)
        if key not in best or rank < best[key][0]:
            best[key] = (rank, fact)
    kept = sorted(best.values(), key=lambda item: item[0][1])
    if stats is not None:
        stats.candidates += count
        stats.duplicates += count - len(kept)
        stats.facts = len(kept)
    return [fact for _, fact in kept]
