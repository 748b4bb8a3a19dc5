"""``memvelope inventory``: what an export holds beyond the prose (see :func:`memvelope_tools.inventory`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .._plural import count
from .._printable import printable
from .._providers.registry import name as provider_name

_FILES_SHOWN = 20  # files the spec does not convert, listed by name
_KIND_NAMES = {
    "prose": "prose (what you and the model said)",
    "code": "code sent to a tool",
    "tool_output": "tool output",
    "reasoning": "reasoning",
    "browsing": "web search and browsing",
    "research": "deep research",
    "image": "images",
    "file": "files",
    "audio": "voice",
    "memory": "memory writes",
    "canvas": "canvas / artifacts",
    "context": "custom instructions and memory shown to the model",
    "system": "system prompts",
    "other": "other",
}
_BRANCH_NAMES = {
    "edited_prompts": "edited prompts",
    "regenerated_replies": "regenerated replies",
    "abandoned_nodes": "nodes on abandoned branches",
    "branched_conversations": "conversations with a branch",
}
_MONTHS_SHOWN = 24


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "inventory",
        help="count what an export holds beyond the prose: models, tools, branches, custom GPTs",
        description=(
            "Read the export itself (the same PATHs `memvelope convert` takes) and count what the envelope "
            "leaves out: every message node on every branch by kind (prose, code, tool output, reasoning, "
            "browsing, images, memory writes, canvas, ...), the models that answered (in all and by month), "
            "the tools called, the prompts you edited and the replies you regenerated, the custom GPTs used. "
            "--json prints one JSON object (the keys of mv.inventory()).\n\n"
            "Exit status: 0 when the export was read, 1 when it could not be.\n\n"
            "Examples:\n  memvelope inventory ~/Downloads/chatgpt-export.zip\n"
            "  memvelope inventory claude-export.zip --json > inventory.json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="export zip, folder or part file")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the listing")
    p.add_argument(
        "--verify",
        action="store_true",
        help="check the download against its export_manifest.json: each file missing or of another size is said "
        "on its own line (and under 'verify' in --json), and the exit status is 1",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _table(rows: list[tuple[str, int]], unit: str) -> list[str]:
    width = max((len(label) for label, _ in rows), default=0)
    return [f"  {label:<{width}}  {count(n, unit)}" for label, n in rows]


def render(found: dict[str, Any]) -> str:
    """The listing ``memvelope inventory`` prints for an inventory (what :func:`memvelope_tools.inventory` gives).

    Parameters
    ----------
    found
        The inventory.

    Returns
    -------
    str
        Lines of text, ending in a newline; names taken from the export are printed with their
        unprintable characters escaped.

    Raises
    ------
    KeyError
        When ``found`` lacks a key an inventory has.

    Examples
    --------
    >>> print(render({"provider": "claude", "conversations": 1, "in_envelope": 1, "nodes": 2,
    ...     "kinds": {"prose": 2}, "models": {}, "models_by_month": {}, "tools": {}, "custom_gpts": {},
    ...     "branches": {"edited_prompts": 0, "regenerated_replies": 0, "abandoned_nodes": 0,
    ...     "branched_conversations": 0}, "first": None, "last": None}).splitlines()[0])
    Claude export: 1 conversation (1 in the envelope), 2 nodes
    """
    lines = [
        f"{provider_name(found['provider'])} export: {count(found['conversations'], 'conversation')} "
        f"({found['in_envelope']:,} in the envelope), {count(found['nodes'], 'node')}"
    ]
    if found["first"] is not None:
        lines[0] += f", {found['first'][:10]} to {found['last'][:10]}"
    lines += ["", "Nodes by kind"]
    lines += _table([(_KIND_NAMES.get(k, k), n) for k, n in found["kinds"].items()], "node")
    lines += ["", "Assistant nodes by model"]
    models = [(printable(m), n) for m, n in found["models"].items()]
    lines += _table(models, "node") if models else ["  (no model recorded)"]
    months = list(found["models_by_month"].items())
    if months:
        shown = months[-_MONTHS_SHOWN:]
        title = "Assistant nodes by month and model"
        if len(shown) < len(months):
            title += f" (the last {len(shown)} of {len(months)} months; --json has them all)"
        lines += ["", title]
        lines += [
            f"  {month}  " + ", ".join(f"{printable(model)} {n:,}" for model, n in by_model.items())
            for month, by_model in shown
        ]
    lines += ["", "Tools called"]
    tools = [(printable(t), n) for t, n in found["tools"].items()]
    lines += _table(tools, "call") if tools else ["  (none)"]
    lines += ["", "Branches"]
    lines += [f"  {_BRANCH_NAMES[k]}: {n:,}" for k, n in found["branches"].items()]
    if found["custom_gpts"]:
        lines += ["", "Custom GPTs"]
        lines += _table([(printable(g), n) for g, n in found["custom_gpts"].items()], "conversation")
    assets = found.get("assets")
    if assets is not None:
        lines += ["", "Files uploaded or generated"]
        lines += [
            f"  {count(assets['total'], 'file')}: {assets['present']:,} in the download, {assets['missing']:,} missing"
        ]
    projects = [p for p in found.get("projects") or [] if p["kind"] != "custom-gpt"]  # those are listed above
    if projects:
        lines += ["", "Projects"]
        for project in projects:
            used = "" if project["conversations"] is None else f", {count(project['conversations'], 'conversation')}"
            docs = "" if project["docs"] is None else f", {count(project['docs'], 'document')}"
            name = printable(project["name"] or project["project_id"] or "(unnamed)")
            lines.append(f"  {project['kind']}  {name}{used}{docs}")
    unconverted = found.get("unconverted") or []
    if unconverted:
        lines += ["", "Files the spec does not convert"]
        lines += [f"  {printable(f['name'])}" for f in unconverted if not f.get("asset")][:_FILES_SHOWN]
    return "\n".join(lines) + "\n"


def problems(verify: dict[str, Any] | None) -> list[str]:
    """One line per problem the check of the download against its manifest found."""
    if verify is None:
        return []
    lines = [f"missing from the download: {printable(f['path'])}" for f in verify["missing"]]
    lines += [
        f"size differs: {printable(f['path'])} (the manifest says {f['expected']:,} bytes, the download holds "
        f"{f['actual']:,})"
        for f in verify["size_mismatch"]
    ]
    return lines


def run(args: argparse.Namespace) -> int:
    from .._whole.inventory import inventory

    found = inventory(args.paths, verify=args.verify, progress=False if args.quiet else None)
    if args.json:
        sys.stdout.write(json.dumps(found, indent=2) + "\n")
    else:
        sys.stdout.write(render(found))
    sys.stdout.flush()
    said = problems(found.get("verify"))
    for line in said:
        print(f"memvelope: verify: {line}", file=sys.stderr)
    checked = found.get("verify")
    if checked is not None and not said:
        held = (
            "no export_manifest.json in this export: nothing to check the download against"
            if checked["manifest"] is None
            else f"the download holds the {count(checked['checked'], 'file')} its manifest lists"
        )
        print(f"memvelope: verify: {held}", file=sys.stderr)
    return 1 if args.verify and said else 0
