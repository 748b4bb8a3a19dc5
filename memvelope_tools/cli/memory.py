"""``memvelope memory``: what the provider remembered about the user, read from the export."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from .._atomic import check_output_file
from .._plural import count
from .._printable import printable
from .._providers.registry import name as provider_name

if TYPE_CHECKING:
    from .._memory.items import MemoryItem, MemoryRead

_KIND_NAMES = {
    "saved": "saved memory",
    "snapshot": "memory snapshot",
    "about_user": "about you",
    "about_model": "how to answer",
    "claude_account": "account memory",
    "claude_project": "project memory",
    "cited": "memory ChatGPT cited",
}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "memory",
        help="list what ChatGPT or Claude remembered about you, or write it as a Facts IR",
        description=(
            "Read what the provider itself remembered about you from the export (the same PATHs "
            "`memvelope convert` takes, or several exports: the PATHs of each provider are read as "
            "that provider's, so a ChatGPT and a Claude export list both): ChatGPT's saved memories "
            "(on every branch of a conversation), "
            "the memory snapshots the model was shown, your custom instructions with each version, "
            "Claude's account and project memory. Prints them oldest first, each with its date and the "
            "conversation it came from. With -o, writes one provider's as a Facts IR document "
            "(memvelope-ir-v0) that validates against the export's envelope.\n\n"
            "Exit status: 0 when the export was read, 1 when it could not be.\n\n"
            "Examples:\n  memvelope memory ~/Downloads/chatgpt-export.zip\n"
            "  memvelope memory claude-export.zip -o memories.mv.json\n"
            "  memvelope validate memories.mv.json --envelope claude-export.zip"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="export zip, folder or part file")
    p.add_argument("-o", "--output", metavar="FACTS", help="write the memories as a Facts IR document here")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, and with -o no summary line on stderr")
    p.set_defaults(func=run)


def _day(stamp: str | None) -> str:
    return stamp[:10] if stamp else "undated"


def _where(item: MemoryItem) -> str:
    bits: list[str] = []
    if item.conversation_id is not None:
        title = f'"{item.conversation_title}" ' if item.conversation_title else ""
        where = {"snapshot": "first listed in", "cited": "first cited in"}.get(item.kind, "in")
        bits.append(f"{where} {title}({item.conversation_id})")
        if item.message_id is not None:
            bits.append(f"message {item.message_id}")
        elif item.kind == "saved":
            bits.append("on an abandoned branch" if not item.on_active_path else "not in the envelope")
    if item.project_id is not None:
        bits.append(f"project {item.project_id}")
    if item.kind == "cited":
        conversations = count(len(item.conversation_ids or ()), "conversation")
        bits.append(f"memory {item.memory_id}, cited {count(item.count, 'time')} in {conversations}")
        if item.count > 1:
            bits[-1] += f" until {_day(item.last_seen)}"
    elif item.count > 1:
        bits.append(f"seen {count(item.count, 'time')} until {_day(item.last_seen)}")
    if item.stated_date:
        bits.append(f"saved on {item.stated_date} (as the snapshot says)")
    if item.current is False:
        bits.append("later replaced" if item.kind != "snapshot" else "gone from the latest snapshot")
    return "; ".join(bits)


def render(read: MemoryRead) -> str:
    """The listing ``memvelope memory`` prints: one entry per item, oldest first, then the notes, every
    value taken from the export made printable (see :func:`memvelope_tools._printable.printable`).

    Parameters
    ----------
    read
        What :func:`memvelope_tools._memory.read.read_memory` found.

    Returns
    -------
    str
        Lines of text, ending in a newline; no line holds a control character.

    Raises
    ------
    None

    Examples
    --------
    >>> from memvelope_tools._memory.items import MemoryRead
    >>> render(MemoryRead("claude", [], []))
    'What Claude remembers about you (read from the export): nothing recorded.\\n'
    """
    name = provider_name(read.provider, "The provider")
    if read.items:
        items = count(len(read.items), "item")
        lines = [f"What {name} remembers about you (read from the export): {items}, oldest first."]
    elif read.notes:
        lines = [f"What {name} remembers about you cannot be read from what was given (see the note below)."]
    else:
        lines = [f"What {name} remembers about you (read from the export): nothing recorded."]
    for item in read.items:
        text = " ".join(item.text.split())
        lines.append("")
        lines.append(f"{_day(item.ts)}  {_KIND_NAMES[item.kind]}: {text}")
        where = _where(item)
        if where:
            lines.append(f"            {where}")
        if item.preceding_user_message:
            said = " ".join(item.preceding_user_message.split())
            lines.append(f"            after you wrote: {said if len(said) <= 160 else said[:159] + '…'}")
    if read.notes:
        lines.append("")
        lines += [f"note: {note}" for note in read.notes]
    return "\n".join(map(printable, lines)) + "\n"


def run(args: argparse.Namespace) -> int:
    from .._memory.read import only, read_memories

    if args.output:
        check_output_file(args.output)
    reads = read_memories(args.paths, progress=False if args.quiet else None)
    if not args.output:
        sys.stdout.write("\n".join(map(render, reads)))
        sys.stdout.flush()
        return 0
    read = only(reads)
    from .._ir.write import write_ir
    from .._memory.read import envelope_of
    from .._memory_ir import build_memory_ir

    doc = build_memory_ir(read, envelope_of(args.paths, read))
    write_ir(doc, args.output)
    if not args.quiet:
        print(
            f"memvelope: {count(len(read.items), 'remembered item')} -> {count(doc['meta']['facts'], 'fact')} "
            f"in {args.output}",
            file=sys.stderr,
        )
        for note in read.notes:
            print(f"memvelope: note: {printable(note)}", file=sys.stderr)
    return 0
