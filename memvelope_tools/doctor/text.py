"""The doctor report as a readable terminal summary (plain text, no colours)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .report import DoctorReport, Example

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


def _counts(lines: list[str], counts: dict[str, int], report: DoctorReport, prefix: str) -> None:
    for reason, n in counts.items():
        lines.append(f"    {reason:<{_WIDTH}} {n:>7}")
        for e in report.examples.get(f"{prefix}: {reason}", [])[:2]:
            lines.append(f"      e.g. {_example(e)}")


def render(report: DoctorReport) -> str:
    """The summary ``memvelope doctor`` prints by default."""
    lines = _head(report)
    if report.provider is None:
        if report.if_wrapped is not None:
            lines.append("")
            lines.append("Had each single-conversation part been wrapped in [ ], doctor would report:")
            wrapped = report.if_wrapped
            if wrapped.error:
                lines.append(f"  | does NOT convert ({wrapped.error[0]}): {wrapped.error[1]}")
            lines += ["  | " + line for line in _body(wrapped)]
        return "\n".join(lines) + "\n"
    return "\n".join(lines + _body(report)) + "\n"


def _head(report: DoctorReport) -> list[str]:
    lines: list[str] = []
    provider = report.provider or "unknown provider"
    verdict = "converts" if report.converts else f"does NOT convert ({report.error[0]})"  # type: ignore[index]
    lines.append(f"memvelope doctor: {provider} export, {len(report.parts)} part(s); {verdict}")
    if report.error:
        lines.append(f"  {report.error[1]}")
    lines.append("")
    lines.append("Parts read, in this order:")
    for p in report.parts:
        size = f"{p.size:,} bytes, " if p.size is not None else ""
        shape = f"array of {p.elements}" if p.top_level == "array" else p.top_level
        extra = f", {p.replaced} invalid UTF-8 sequence(s) replaced" if p.replaced else ""
        lines.append(f"  {p.order}. {p.name} ({size}{shape}{extra})")
        if p.note:
            lines.append(f"     {p.note}")
    if report.ignored:
        lines.append("Passed over:")
        lines += [f"  {name} ({why})" for name, why in report.ignored]
    return lines


def _body(report: DoctorReport) -> list[str]:
    lines: list[str] = [""]
    lines.append(
        f"Conversations: {report.elements} in the export, {report.conversations_kept} kept, "
        f"{report.elements - report.conversations_kept} dropped"
    )
    _counts(lines, report.conversations_dropped, report, "conversation")
    nodes = sum(c.nodes for c in report.conversations)
    structural = sum(c.structural for c in report.conversations)
    node_note = f" ({nodes} mapping nodes, {structural} without a message)" if report.provider == "chatgpt" else ""
    lines.append(
        f"Messages: {report.messages_total} in the export{node_note}, {report.messages_kept} kept, "
        f"{report.messages_total - report.messages_kept} dropped"
    )
    _counts(lines, report.messages_dropped, report, "message")
    lines.append("")
    lines.append("Branches:")
    for key, n in report.branches().items():
        lines.append(f"    {key.replace('_', ' '):<{_WIDTH}} {n:>7}")
    fallback = report.to_json()["fallback"]
    for trigger, n in fallback.items():
        lines.append(f"    fallback order used: {trigger:<{_WIDTH - 22}} {n:>7}")
    lines.append("Timestamps:")
    for name, tally in sorted(report.timestamps.items()):
        bad = sum(tally.unparseable.values())
        lines.append(f"    {name:<{_WIDTH}} {tally.values:>7} values, {tally.null} null, {bad} unparseable")
        for form, n in tally.unparseable.most_common():
            lines.append(f"      {form}: {n}")
            for e in report.examples.get(f"timestamp: {form}", [])[:1]:
                lines.append(f"        e.g. {_example(e)}")
    lines.append("Ordering:")
    for key, n in report.ordering().items():
        lines.append(f"    {key.replace('_', ' '):<{_WIDTH}} {n:>7}")
    lines.append("Content types seen:")
    for family, counts in sorted(report.types.items()):
        listed = ", ".join(f"{name} {n}" for name, n in counts.most_common())
        lines.append(f"    {family}: {listed}")
    if any(report.unknown_types.values()):
        lines.append("Never seen before (a new provider feature?):")
        for family, counts in sorted(report.unknown_types.items()):
            for name, n in counts.most_common():
                lines.append(f"    {family} {name}: {n}")
    else:
        lines.append("No content type or block type we have not seen before.")
    if not report.show_text:
        lines.append("")
        lines.append("(message text is not shown; pass --show-text to include excerpts)")
    return lines
