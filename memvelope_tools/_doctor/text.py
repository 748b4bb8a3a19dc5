"""The doctor's findings as a readable terminal summary (plain text, no colours)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._plural import count, plural
from .._printable import printable
from .._providers import registry

if TYPE_CHECKING:
    from .findings import Diagnosis, Example

_WIDTH = 40


def _example(e: Example) -> str:
    name = e.conversation_id if e.conversation_id is not None else "(no id)"
    bits = [name]
    if e.title:
        bits.append(repr(e.title if len(e.title) <= 40 else e.title[:40] + "…"))
    if e.at:
        bits.append(f"at {e.at}")
    if e.detail:
        bits.append(f"[{e.detail}]")
    line = " ".join(bits)
    if e.text is not None:
        line += f" text: {e.text!r}"
    return line


def _counts(lines: list[str], counts: dict[str, int], diagnosis: Diagnosis, prefix: str) -> None:
    for reason, n in counts.items():
        lines.append(f"    {reason:<{_WIDTH}} {n:>7,}")
        for e in diagnosis.examples.get(f"{prefix}: {reason}", [])[:2]:
            lines.append(f"      e.g. {_example(e)}")


def render(diagnosis: Diagnosis) -> str:
    """The summary ``memvelope doctor`` prints by default, each line made printable."""
    lines = _head(diagnosis)
    if diagnosis.provider is None:
        if diagnosis.if_wrapped is not None:
            lines.append("")
            lines.append("Had each single-conversation part been wrapped in [ ], doctor would report:")
            wrapped = diagnosis.if_wrapped
            if wrapped.error:
                lines.append(f"  | does NOT convert ({wrapped.error[0]}): {wrapped.error[1]}")
            lines += ["  | " + line for line in _body(wrapped)]
        return "\n".join(map(printable, lines)) + "\n"
    return "\n".join(map(printable, lines + _body(diagnosis))) + "\n"


def _head(diagnosis: Diagnosis) -> list[str]:
    lines: list[str] = []
    provider = diagnosis.provider or "unknown provider"
    verdict = "converts" if diagnosis.converts else f"does NOT convert ({diagnosis.error[0]})"  # type: ignore[index]
    lines.append(f"memvelope doctor: {provider} export, {count(len(diagnosis.parts), 'part')}; {verdict}")
    if diagnosis.error:
        lines.append(f"  {diagnosis.error[1]}")
    lines.append("")
    lines.append("Parts read, in this order:")
    for p in diagnosis.parts:
        size = f"{p.size:,} bytes, " if p.size is not None else ""
        shape = f"array of {p.elements:,}" if p.top_level == "array" else p.top_level
        extra = f", {count(p.replaced, 'invalid UTF-8 sequence')} replaced" if p.replaced else ""
        lines.append(f"  {p.order}. {p.name} ({size}{shape}{extra})")
        if p.note:
            lines.append(f"     {p.note}")
    if diagnosis.ignored:
        lines.append("Passed over:")
        lines += [f"  {name} ({why})" for name, why in diagnosis.ignored]
    return lines


def _body(diagnosis: Diagnosis) -> list[str]:
    lines: list[str] = [""]
    lines.append(
        f"Conversations: {diagnosis.elements:,} in the export, {diagnosis.conversations_kept:,} kept, "
        f"{diagnosis.elements - diagnosis.conversations_kept:,} dropped"
    )
    _counts(lines, diagnosis.conversations_dropped, diagnosis, "conversation")
    mixed = diagnosis.mixed_providers()
    if mixed is not None:
        name = registry.name(mixed["provider"])
        lines.append(
            f"  The {count(mixed['conversations'], f'{name} conversation')} "
            f"{'is' if mixed['conversations'] == 1 else 'are'} read by {name}'s rules: "
            f"{count(mixed['messages'], 'message')}, {mixed['messages_kept_on_their_own']:,} of them kept when "
            "converted on their own."
        )
        lines.append(f"  note: {mixed['note']}")
    nodes = sum(c.nodes for c in diagnosis.conversations)
    structural = sum(c.structural for c in diagnosis.conversations)
    node_note = (
        f" ({count(nodes, 'mapping node')}, {structural:,} without a message)"
        if diagnosis.provider == "chatgpt"
        else ""
    )
    lines.append(
        f"Messages: {diagnosis.messages_total:,} in the export{node_note}, {diagnosis.messages_kept:,} kept, "
        f"{diagnosis.messages_total - diagnosis.messages_kept:,} dropped"
    )
    _counts(lines, diagnosis.messages_dropped, diagnosis, "message")
    lines.append("")
    lines.append("Branches:")
    for key, n in diagnosis.branches().items():
        lines.append(f"    {key.replace('_', ' '):<{_WIDTH}} {n:>7,}")
    fallback = diagnosis.to_json()["fallback"]
    for trigger, n in fallback.items():
        lines.append(f"    fallback order used: {trigger:<{_WIDTH - 22}} {n:>7,}")
    lines.append("Timestamps:")
    for name, tally in sorted(diagnosis.timestamps.items()):
        bad = sum(tally.unparseable.values())
        values = f"{tally.values:>7,} {plural(tally.values, 'value')}"
        lines.append(f"    {name:<{_WIDTH}} {values}, {tally.null:,} null, {bad:,} unparseable")
        for form, n in tally.unparseable.most_common():
            lines.append(f"      {form}: {n:,}")
            for e in diagnosis.examples.get(f"timestamp: {form}", [])[:1]:
                lines.append(f"        e.g. {_example(e)}")
    lines.append("Ordering:")
    for key, n in diagnosis.ordering().items():
        lines.append(f"    {key.replace('_', ' '):<{_WIDTH}} {n:>7,}")
    lines.append("Content types seen:")
    for family, counts in sorted(diagnosis.types.items()):
        listed = ", ".join(f"{name} {n:,}" for name, n in counts.most_common())
        lines.append(f"    {family}: {listed}")
    if any(diagnosis.unknown_types.values()):
        lines.append("Never seen before (a new provider feature?):")
        for family, counts in sorted(diagnosis.unknown_types.items()):
            for name, n in counts.most_common():
                lines.append(f"    {family} {name}: {n:,}")
    else:
        lines.append("No content type or block type we have not seen before.")
    if diagnosis.memory is not None:
        memory = diagnosis.memory
        lines.append(
            "Provider memory (left aside by conversion; `memvelope memory` lists it): "
            f"{count(memory['items'], 'item')}, {memory['also_in_envelope']:,} of them also an envelope message"
        )
        for kind, n in memory["by_kind"].items():
            lines.append(f"    {kind:<{_WIDTH}} {n:>7,}")
        lines += [f"    note: {note}" for note in memory["notes"]]
    if not diagnosis.show_text:
        lines.append("")
        lines.append("(message text is not shown; pass --show-text to include excerpts)")
    return lines
