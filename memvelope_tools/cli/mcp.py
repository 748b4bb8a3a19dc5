"""``memvelope mcp``: a read-only MCP server over one history, for an AI assistant."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .._plural import count
from .._printable import printable
from .common import check_inputs, document_inputs, notes


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "mcp",
        help="serve a history to an AI assistant: a read-only MCP server over stdio",
        description=(
            "Serve INPUT to an AI assistant as a Model Context Protocol (MCP) server over stdin and stdout, "
            "for an MCP client (Claude Desktop, an IDE, an agent) to start. INPUT is an export zip or folder "
            "(converted in memory), an envelope, a folder written by 'memvelope parquet', or a history folder "
            "(then every hit and message says whether it is current, edited-away or deleted-upstream). It is "
            "read once, at start, and nothing is written beside it: the search index is kept in memory (from "
            "200,000 messages in a temporary folder only you can read, removed at exit).\n\n"
            "Tools: search (query, limit, since, until, role), get_conversation (id or index), "
            "list_conversations (since, until, limit) and memory (what the provider remembered, from an "
            "export). A call with an argument that does not fit gets a tool error; the server goes on.\n\n"
            "Needs the 'mcp' extra: pip install 'memvelope_tools[mcp]'.\n\n"
            "Examples:\n"
            "  memvelope mcp ~/Downloads/chatgpt-export.zip\n"
            "  memvelope mcp my-history/ --print-config   # the entry for claude_desktop_config.json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", metavar="INPUT", help="export zip or folder, envelope, Parquet folder or history folder")
    p.add_argument("-q", "--quiet", action="store_true", help="no notes on stderr while INPUT is read")
    p.add_argument(
        "--print-config",
        action="store_true",
        help="print the mcpServers entry that starts this server (absolute paths, as Claude Desktop needs), then exit",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    found = check_inputs([args.input], use="history")
    if args.print_config:
        print(client_config(args.input))
        return 0
    import mcp.server.lowlevel  # noqa: F401  a missing extra is said before INPUT is read

    from .._assistant import load_view
    from .._mcp_server import serve

    with notes():
        sources, _ = document_inputs(found, use="history", quiet=args.quiet)
        view = load_view(found[0], sources[0])
    try:
        if not args.quiet:
            conversations, messages = view.counts
            what = f"{count(conversations, 'conversation')}, {count(messages, 'message')}"
            print(f"memvelope: serving {printable(view.label)} ({what}) over MCP on stdio", file=sys.stderr)
        serve(view)
    finally:
        view.close()
    return 0


def client_config(path: str) -> str:
    """The ``mcpServers`` entry of an MCP client's configuration that starts this server over ``path``: this
    Python with ``-m memvelope_tools`` and the input, both as absolute paths (a client does not start in
    the shell's folder nor with its PATH)."""
    target = os.path.abspath(os.path.expanduser(path))
    server = {"command": sys.executable, "args": ["-m", "memvelope_tools", "mcp", target]}
    return json.dumps({"mcpServers": {"memvelope": server}}, indent=2, ensure_ascii=False)
