"""What the provider remembered, as a Facts IR document (``memvelope-ir-v0``).

Each remembered item becomes one fact or, when it is long or made of several statements, several:

* ``content``: a ChatGPT memory (saved or snapshot entry) is one fact when it fits the spec's 400
  characters; custom instructions and Claude memories are split into their statements (sentences; a
  Markdown heading line such as ``**Work context**`` is a label, not a statement). A statement longer than
  400 characters is split at sentence ends and, failing those, at the last space that fits, each piece
  but the last ending in ``…`` to say that it goes on; a word is never cut.
* ``category``: the zero-LLM distiller's classifier (:func:`memvelope_tools._ir.rules.categorise`),
  applied to the statement read in the first person ("User lives in Lisbon" as "I live in Lisbon");
  ``"instructions"`` for how the user wants answers (``about_model``).
* ``subject``: ``"self"`` where the statement is about the user: custom instructions, Claude's account
  memory (the provider's account of the user), or a statement naming "user", "they", "I" ...; a Claude
  project statement that does not is about the project (``subject`` the project id, ``subject_type``
  ``"project"``); else null.
* ``effective_date``: the write's own date: the day of a memory write, the day a snapshot entry states,
  the day custom instructions were first seen; for a memory ChatGPT cited, the day of its first citation
  (it was saved before). It is never invented: when the envelope cannot show that
  day (a write on an abandoned branch is not in the envelope), it is given as its month or year when
  those can be shown, else null. A Claude memory file carries no date: null.
* ``in_text_date``: the first date the statement states (:mod:`memvelope_tools._ir.dates`), when the
  envelope's text states it too (the validator's rule); else null, the date staying in ``content``.
* ``provenance``: ``imported:<provider>-export:<YYYY-MM>``, the month of the conversation the item was
  written or first seen in (conformance B4); a snapshot entry, of the day it states; a Claude memory, of
  the export's latest conversation (the memory as it stood when exported).
* ``convo_id``: the conversation a memory write or custom instructions were written or first seen in,
  when the envelope holds it; null for snapshot entries (written in a conversation the snapshot does not
  name) and Claude memories.

Each fact also carries ``memory_kind`` (the item's kind); the IR is open, readers ignore what they do
not know.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ._ir.dates import first_stated_date, is_timestamp_prefix, stated_dates
from ._ir.facts import CONTENT_MAX, DistillStats, conversation_stamp, dedup, fact_key, provenance
from ._ir.structured import CONTAINER_LABEL, sentences
from ._ir.write import Clock, build_ir
from ._memory_trace import category_of, same_statement

if TYPE_CHECKING:
    from ._convert.sources import ZipLimits
    from ._memory.items import MemoryItem, MemoryRead
    from ._sources import Input

__all__ = ["MODE", "add_memory", "build_memory_ir", "export_memory", "memory_ir", "statements"]

MODE: Final = "imported (provider memory)"
_ELLIPSIS: Final = "…"
_HEADING: Final = re.compile(r"^\s*(?:#{1,6}\s+.*|\*\*[^*]+\*\*:?|__[^_]+__:?)\s*$")
_ABOUT_USER: Final = re.compile(r"\buser(?:'s)?\b|^(?:they|their|i|my|i'm)\b", re.IGNORECASE)
_SPLIT_KINDS: Final = frozenset({"about_user", "about_model", "claude_account", "claude_project"})


@dataclass
class _Source:
    """What the envelope can show for one conversation, or (key None) for all of them."""

    timestamps: list[str]
    dates: set[str]
    month: str | None


def statements(text: str, kind: str) -> list[str]:
    """The statements of one remembered text, each within 400 characters.

    Parameters
    ----------
    text
        The remembered text.
    kind
        Its kind: custom instructions and Claude memories are split into sentences, ChatGPT memories only
        when longer than 400 characters.

    Returns
    -------
    list of str
        The statements, whitespace collapsed; a piece of a statement too long to keep whole ends in ``…``.

    Examples
    --------
    >>> statements("**Work**\\n\\nThe user teaches. They like tea.", "claude_account")
    ['The user teaches.', 'They like tea.']
    >>> statements("User is vegetarian. User lives in Lisbon.", "saved")
    ['User is vegetarian. User lives in Lisbon.']
    """
    whole = " ".join(text.split())
    if kind not in _SPLIT_KINDS and len(whole) <= CONTENT_MAX:
        return [whole] if whole else []
    lines = [line for line in text.splitlines() if not _HEADING.match(line)]
    out: list[str] = []
    for sentence in sentences("\n".join(lines)):
        if kind in _SPLIT_KINDS:
            out += _fit(sentence)
        elif out and len(out[-1]) + 1 + len(sentence) <= CONTENT_MAX and not out[-1].endswith(_ELLIPSIS):
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out += _fit(sentence)
    return out


def _fit(sentence: str) -> list[str]:
    """``sentence`` in pieces of at most 400 characters, cut at spaces, each cut marked with ``…``."""
    pieces: list[str] = []
    rest = sentence
    while len(rest) > CONTENT_MAX:
        cut = rest.rfind(" ", 0, CONTENT_MAX)  # leaves room for the ellipsis
        if cut <= 0:  # one word longer than a fact: kept whole would break the limit, so it is cut, marked
            cut = CONTENT_MAX - 1
        pieces.append(rest[:cut].rstrip() + _ELLIPSIS)
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return pieces


def _subject(sentence: str, item: MemoryItem) -> tuple[str | None, str | None]:
    if item.kind in ("about_user", "about_model", "claude_account") or _ABOUT_USER.search(sentence):
        return "self", "self"
    if item.kind == "claude_project" and item.project_id:
        return item.project_id, "project"
    return None, None


def _sources(envelope: Mapping[str, Any]) -> tuple[dict[str | None, _Source], str | None]:
    """What each envelope conversation can show (key None: all of them), and the latest month."""
    out: dict[str | None, _Source] = {}
    every = _Source([], set(), None)
    for conv in envelope.get("conversations") or []:
        stamps = [conv["created_at"]] if isinstance(conv.get("created_at"), str) else []
        dates: set[str] = set()
        for msg in conv.get("messages") or []:
            if isinstance(msg.get("ts"), str):
                stamps.append(msg["ts"])
            if isinstance(msg.get("text"), str):
                dates |= stated_dates(msg["text"])
        stamp = conversation_stamp(conv)
        cid = conv.get("id")
        if isinstance(cid, str):
            known = out.setdefault(cid, _Source([], set(), stamp[:7] if stamp else None))
            known.timestamps += stamps
            known.dates |= dates
        every.timestamps += stamps
        every.dates |= dates
    latest = max((s[:7] for s in every.timestamps), default=None)
    out[None] = every
    return out, latest


def _shown(day: str | None, source: _Source) -> str | None:
    """``day``, or the coarsest prefix of it the source can show: its month, its year; else None."""
    if day is None:
        return None
    for value in (day[:10], day[:7], day[:4]):
        if value in source.dates or is_timestamp_prefix(value, source.timestamps):
            return value
    return None


def _facts(
    item: MemoryItem, provider: str, sources: dict[str | None, _Source], latest: str | None
) -> Iterator[dict[str, Any]]:
    cid = item.conversation_id if item.kind in ("saved", "about_user", "about_model") else None
    if cid is not None and cid not in sources:
        cid = None
    source = sources[cid]
    written = item.ts
    if item.kind == "snapshot" and item.stated_date:
        written = item.stated_date
    if cid is not None:
        month = source.month
    elif written:
        month = str(written)[:7]
    else:
        month = latest
    if month is None:
        return
    effective = _shown(str(written)[:10] if written else None, source)
    for content in statements(item.text, item.kind):
        subject, subject_type = _subject(content, item)
        stated = first_stated_date(content)
        yield {
            "subject": subject,
            "subject_type": subject_type,
            "category": category_of(content, item.kind),
            "content": content,
            "effective_date": effective,
            "in_text_date": stated if stated is not None and stated in source.dates else None,
            "provenance": provenance(provider, month),
            "convo_id": cid,
            "memory_kind": item.kind,
        }


def build_memory_ir(read: MemoryRead, envelope: Mapping[str, Any], *, clock: Clock | None = None) -> dict[str, Any]:
    """The remembered items of an export as a Facts IR document that validates against its envelope.

    Parameters
    ----------
    read
        What :func:`memvelope_tools._memory.read.read_memory` found in the export.
    envelope
        The envelope the same export converts to (what ``convo_id`` and the dates are checked against).
    clock
        Stamps ``meta.generated_at`` (the current time by default).

    Returns
    -------
    dict
        A ``memvelope-ir-v0`` document, ``meta.mode`` ``"imported (provider memory)"``; repeated
        statements are kept once (the earliest dated).

    Raises
    ------
    None

    Examples
    --------
    >>> import memvelope_tools as mv                                                # doctest: +SKIP
    >>> doc = build_memory_ir(read_memory("export.zip"), mv.convert("export.zip"))  # doctest: +SKIP
    """
    provider = str(envelope["meta"]["source_provider"])
    sources, latest = _sources(envelope)
    candidates = [
        ((i, j), fact)
        for i, item in enumerate(read.items)
        for j, fact in enumerate(_facts(item, provider, sources, latest))
    ]
    return build_ir(provider, MODE, dedup(candidates), clock=clock)


def memory_ir(
    export: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *more: str | os.PathLike[str],
    zip_limits: ZipLimits | None = None,
) -> dict[str, Any]:
    """What the provider remembered, read from an export, as a Facts IR document (``memvelope-ir-v0``)
    that validates against the export's envelope.

    Parameters
    ----------
    export
        The export, as :func:`memvelope_tools.memory_frame` takes it: a zip as downloaded, a folder or a
        conversation file (one holding a single conversation is read as if inside [ ]), or a list of
        paths, all of one provider.
    *more
        Further paths, as if in the list.
    zip_limits
        Limits against zip bombs (the defaults of ``convert``).

    Returns
    -------
    dict
        The document; ``meta.mode`` is ``"imported (provider memory)"``, each fact carries
        ``memory_kind``. Write it with :func:`memvelope_tools.write_ir`.

    Raises
    ------
    ConversionError
        When the export cannot be read, or does not convert (the facts need its envelope).
    InputError
        When a path is not an export (the message says what it is), or the paths hold both providers'
        exports (``bad-source``).

    Examples
    --------
    >>> import memvelope_tools as mv                                         # doctest: +SKIP
    >>> mv.write_ir(mv.memory_ir("chatgpt-export.zip"), "memories.mv.json")  # doctest: +SKIP
    """
    from ._memory.read import envelope_of, paths_of, read_memory

    paths = paths_of(export, more)
    read = read_memory(*paths, zip_limits=zip_limits)
    return build_memory_ir(read, envelope_of(paths, read, zip_limits))


def add_memory(
    doc: Mapping[str, Any],
    read: MemoryRead,
    envelope: Mapping[str, Any],
    *,
    clock: Clock | None = None,
    stats: DistillStats | None = None,
) -> dict[str, Any]:
    """``doc`` (a Facts IR distilled from ``envelope``) with the remembered facts of ``read`` it lacks.

    A remembered fact is added unless the conversations already gave it: a fact of ``doc`` with the same
    category that says the same thing (the same content once case, punctuation and a form label such as
    "Other Information:" are set aside, or the same content words once the memory is read in the first
    person, :func:`memvelope_tools._memory_trace.same_statement`) is the one kept, in the user's own words.
    An added fact is as :func:`build_memory_ir` gives it (its own ``provenance``, ``convo_id``, dates and
    ``memory_kind``). Added facts follow those of ``doc``; ``meta.mode`` names both sources when any was
    added.

    Parameters
    ----------
    doc
        A Facts IR distilled from ``envelope``.
    read
        What :func:`memvelope_tools._memory.read.read_memory` found in the same export.
    envelope
        The envelope the export converts to.
    clock
        Stamps ``meta.generated_at`` (the current time by default).
    stats
        Learns how many facts were added (``memory_facts``) and how many the conversations already gave
        (``memory_known``); its ``facts`` becomes the new total.

    Returns
    -------
    dict
        A new ``memvelope-ir-v0`` document, its archetype computed from all its facts.

    Raises
    ------
    None

    Examples
    --------
    >>> import memvelope_tools as mv                                                 # doctest: +SKIP
    >>> env = mv.convert("export.zip")                                               # doctest: +SKIP
    >>> doc = add_memory(mv.distill_structured(env), read_memory("export.zip"), env)  # doctest: +SKIP
    """
    found = list(doc["facts"])
    keys = {fact_key(f) for f in found}
    by_category: dict[Any, list[str]] = {}
    for fact in found:
        by_category.setdefault(fact.get("category"), []).append(str(fact.get("content", "")))
    added: list[dict[str, Any]] = []
    known = 0
    for fact in build_memory_ir(read, envelope, clock=clock)["facts"]:
        said = by_category.get(fact.get("category"), [])
        content = CONTAINER_LABEL.sub("", str(fact["content"]))  # as the distiller reads custom instructions
        if fact_key({**fact, "content": content}) in keys or any(same_statement(s, content) for s in said):
            known += 1
        else:
            added.append(fact)
    mode = str(doc["meta"]["mode"]) + (f" + {MODE}" if added else "")
    if stats is not None:
        stats.memory_facts += len(added)
        stats.memory_known += known
        stats.facts = len(found) + len(added)
    return build_ir(str(doc["meta"]["provider"]), mode, [*found, *added], clock=clock)


def export_memory(found: Input, *, progress: bool | None = None) -> MemoryRead | None:
    """What the provider remembered, read from ``found`` when it is an export on disk.

    Parameters
    ----------
    found
        A resolved input (:func:`memvelope_tools._sources.resolve`).
    progress
        Show a progress bar while the export is read (None: when stderr is a terminal or in a notebook).

    Returns
    -------
    MemoryRead or None
        None for a Memvelope document (an envelope keeps no provider memory) or an export given as bytes.

    Raises
    ------
    ConversionError
        When the export cannot be read.

    Examples
    --------
    >>> from memvelope_tools._sources import resolve_one     # doctest: +SKIP
    >>> export_memory(resolve_one("export.zip", "any"))     # doctest: +SKIP
    """
    files = found.files()
    if files is None:
        return None
    from ._memory.read import read_memory

    return read_memory(*files, progress=progress)
