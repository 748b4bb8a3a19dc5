"""``memvelope info``: what a Memvelope file holds, at a glance."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from itertools import chain
from operator import itemgetter
from typing import Any

from .._printable import printable
from .._read import layer_of
from .._spec import CATEGORIES, ROLES, SUBJECT_TYPES
from .._tags import ENVELOPE_TAG, IR_TAG
from ..errors import MemvelopeError
from .common import check_inputs, load_input


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "info",
        help="summarise envelopes, Facts IR files and exports: layer, provider, counts, dates, roles",
        description=(
            "For each FILE (an envelope, a Facts IR document, or an export zip, folder or part, converted "
            "in memory), print its layer (from the in-document tag, never the file name), provider, "
            "conversation and message counts, date range and messages per role; for a Facts IR file the "
            "fact count, categories, subject types, date range and archetype style. A file that cannot be "
            "read gets one error line on stderr and exit status 1; the other files are still shown.\n\n"
            "Examples:\n  memvelope info history.mve.json facts.mv.json\n"
            "  memvelope info ~/Downloads/chatgpt-export.zip"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="an envelope, a Facts IR document or an export")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    status = 0
    for i, path in enumerate(args.files):
        try:
            [found] = check_inputs([path])
            doc = load_input(found)
            converted = found.kind == "export"
            lines = envelope_lines(doc, converted=converted) if layer_of(doc) == "envelope" else ir_lines(doc)
        except MemvelopeError as exc:
            print(f"memvelope: error: {printable(str(exc))}", file=sys.stderr)
            status = 1
            continue
        if i:
            print()
        print(f"{printable(path)}:")
        for line in lines:
            print(f"  {printable(line)}")
    return status


def _range(values: list[str]) -> str:
    # Envelope timestamps have the fixed YYYY-MM-DDTHH:mm:ss.sssZ form: text order is time order.
    return f"{min(values)} .. {max(values)}" if values else "none"


def _counts(counter: Counter[Any], order: tuple[str, ...]) -> str:
    known = [(k, counter[k]) for k in order if counter[k]]
    other = sorted((k, n) for k, n in counter.items() if k not in order and k is not None)
    parts = [f"{k} {n:,}" for k, n in known + other]
    if counter[None]:
        parts.append(f"null {counter[None]:,}")
    return ", ".join(parts) or "none"


def envelope_lines(doc: dict[str, Any], *, converted: bool = False) -> list[str]:
    """The ``info`` lines of an envelope (``converted``: of an export, converted to one in memory)."""
    convs = doc["conversations"]
    messages = list(chain.from_iterable(map(itemgetter("messages"), convs)))
    roles = Counter(map(itemgetter("role"), messages))
    stamps = [t for t in map(itemgetter("ts"), messages) if t is not None]
    meta = doc["meta"]
    lines = [
        f"layer: export (converted to {ENVELOPE_TAG})" if converted else f"layer: envelope ({ENVELOPE_TAG})",
        f"provider: {meta['source_provider']}",
        f"conversations: {len(convs):,}" + _stated(meta.get("conversation_count"), len(convs)),
        f"messages: {len(messages):,}" + _stated(meta.get("message_count"), len(messages)),
        f"messages per role: {_counts(roles, ROLES)}",
        f"dates (message ts): {_range(stamps)}",
        f"undated messages: {len(messages) - len(stamps):,}",
    ]
    ids = [c["id"] for c in convs]
    nulls = ids.count(None)
    dupes = len(ids) - nulls - len(set(ids) - {None})
    if nulls or dupes:
        lines.append(f"conversation ids: {nulls:,} null, {dupes:,} repeated")
    return lines


def _stated(stated: Any, actual: int) -> str:
    return "" if stated == actual else f" (meta says {stated!r})"


def ir_lines(doc: dict[str, Any]) -> list[str]:
    """The ``info`` lines of a Facts IR document."""
    meta, arch, facts = doc["meta"], doc["archetype"], doc["facts"]
    dates = [d for d in map(itemgetter("effective_date"), facts) if d is not None]
    return [
        f"layer: Facts IR ({IR_TAG})",
        f"provider: {meta['provider']}",
        f"mode: {meta['mode']}",
        f"generated at: {meta['generated_at']}",
        f"facts: {len(facts):,}" + _stated(meta.get("facts"), len(facts)),
        f"categories: {_counts(Counter(map(itemgetter('category'), facts)), CATEGORIES)}",
        "subject types: " + _counts(Counter(map(itemgetter("subject_type"), facts)), SUBJECT_TYPES),
        f"effective dates: {_range(dates)}",
        f"archetype style: {arch['style'] if arch['style'] is not None else 'null'}",
    ]
