"""``memvelope markdown``: one Markdown note per conversation in a folder (a vault), kept current."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._plural import count
from .._printable import printable
from .common import check_inputs, check_output_folder, document_inputs


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "markdown",
        help="write one Markdown note per conversation into a folder (an Obsidian or Logseq vault), only what changed",
        description=(
            "Write one Markdown note per conversation of INPUT (an export, an envelope, a Parquet folder or a "
            "history folder) into VAULT, created if missing: YAML front matter (id, title, provider, created, "
            "updated, messages; from a history folder, status, first_seen and last_seen for a conversation "
            "deleted upstream), then each message under a heading with its role and time. A note is named by "
            "its conversation's date and title, safely for every system, and keeps that name.\n\n"
            "Only the notes whose content changes are written (each atomically): run it again after the next "
            "export and it rewrites the conversations that grew or were edited and adds the new ones. A "
            "conversation missing from INPUT keeps its note; from a history folder, one deleted upstream is "
            "marked status: deleted-upstream. VAULT/.memvelope-vault.json records the sha256 of each note as "
            "written: a note whose content differs from it was edited since, and is left as it is with a note "
            "on stderr unless --force. A note renamed inside VAULT before it was edited is followed. Files the "
            "command did not write are never touched.\n\n"
            "Examples:\n  memvelope markdown ~/Downloads/chatgpt-export.zip -o ~/Notes/ChatGPT/\n"
            "  memvelope markdown my-history/ -o ~/Notes/ChatGPT/"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", metavar="INPUT", help="an export, an envelope, a Parquet folder or a history folder")
    p.add_argument("-o", "--output", required=True, metavar="VAULT", help="the folder of notes")
    p.add_argument("--force", action="store_true", help="also replace the notes edited since they were written")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_output_folder(args.output)
    found = check_inputs([args.input], use="frames")
    from .._vault.vault import to_markdown

    sources, _ = document_inputs(found, use="frames", quiet=args.quiet)
    done = to_markdown(sources[0], args.output, force=args.force, progress=False if args.quiet else None)
    if not args.quiet:
        print(f"memvelope: {summary(done, args.output)}", file=sys.stderr)
    return 0


def summary(done: dict[str, list[Path]], vault: str) -> str:
    """The summary line of a run: what was written, what was not, and the notes left as they are."""
    new, updated = len(done["new"]), len(done["updated"])
    line = f"wrote {count(new + updated, 'note')} to {printable(vault)}"
    said = [f"{n:,} {what}" for n, what in ((new, "new"), (updated, "updated")) if n]
    if said:
        line += f" ({', '.join(said)})"
    line += f", {len(done['unchanged']):,} unchanged"
    edited = len(done["edited"])
    if edited:
        them = "it" if edited == 1 else "them"
        line += f", {count(edited, 'note')} edited since written left alone (--force replaces {them})"
    return line
