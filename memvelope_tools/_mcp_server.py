"""The MCP server of ``memvelope mcp``: the tools of a :class:`~memvelope_tools._assistant.HistoryView`
over stdio, with the official ``mcp`` SDK (the ``mcp`` extra), which only this module imports.

Every tool is read-only. A call the view cannot answer (an unknown tool, an argument that does not fit,
a query that cannot be run) is a tool error: a result marked ``isError`` holding one line, after which
the server answers the next call as before.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from . import __version__
from ._assistant import TOOLS, HistoryView
from ._printable import printable
from .errors import MemvelopeError

_READ_ONLY = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

logger = logging.getLogger(__name__)


def instructions(view: HistoryView) -> str:
    """What the server tells the client it serves."""
    conversations, messages = view.counts
    return (
        f"The user's own AI chat history ({view.label}: {conversations} conversations, {messages} messages), "
        "read-only. search finds messages, get_conversation reads one conversation whole, list_conversations "
        "lists them by date, memory says what the provider itself remembered about the user. Times are UTC."
    )


def build_server(view: HistoryView) -> Server[Any]:
    """The MCP server answering the tools of ``view``."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        tools = [
            types.Tool(
                name=name, description=spec["description"], input_schema=spec["input_schema"], annotations=_READ_ONLY
            )
            for name, spec in TOOLS.items()
        ]
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            answer = await anyio.to_thread.run_sync(view.call, params.name, params.arguments)
        except MemvelopeError as exc:
            return _error(str(exc))
        except Exception as exc:  # a fault of this server's own: said in one line, the next call still answered
            logger.exception("memvelope mcp: %s failed", params.name)
            return _error(f"{params.name} failed: {type(exc).__name__}: {exc}")
        text = json.dumps(answer, ensure_ascii=False)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=answer)

    return Server(
        "memvelope",
        version=__version__,
        instructions=instructions(view),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _error(message: str) -> types.CallToolResult:
    line = " ".join(printable(message).split())
    return types.CallToolResult(content=[types.TextContent(type="text", text=line)], is_error=True)


def serve(view: HistoryView) -> None:
    """Serve ``view`` over stdin and stdout until the client closes them."""
    server = build_server(view)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)
