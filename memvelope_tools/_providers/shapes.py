"""How each provider's export is recognised: by the shape of one conversation, by a value that marks a
whole export, by a file's path in a folder or zip, or by the first bytes of a file that is not JSON.

ChatGPT's and Claude's conversation tests are the spec's detection rules. The others are read from the
providers' export files as people download them:

* DeepSeek: ``conversations.json``, an array of ``{id, title, inserted_at, updated_at, mapping}`` whose
  nodes hold a ``message`` with ``fragments`` (``{type: REQUEST | RESPONSE | THINK | ..., content}``),
  or, in older exports, ``content`` and ``reasoning_content``; never an ``author`` as ChatGPT's have.
* Grok (xAI): ``prod-grok-backend.json``, an object whose ``conversations`` array holds
  ``{conversation: {...}, responses: [{response: {message, sender, ...}}]}``.
* Gemini (Google Takeout): ``My Activity/Gemini Apps/MyActivity.json``, an array of activity records
  ``{header: "Gemini Apps", title, time, products: ["Gemini Apps"], ...}`` (``Bard`` before the rename).
* Perplexity: a thread as its web app serves it, ``{entries: [{backend_uuid, query_str, ...}]}``, or
  as exporters save it, ``{metadata: {thread_url: "https://www.perplexity.ai/...", ...}, ...}``.
* Microsoft Copilot: the activity history CSV of the Microsoft privacy dashboard, whose header row
  names ``Conversation``, ``Time``, ``Author`` and ``Message``.
* Mistral Le Chat: ``chat-<uuid>.json`` per conversation, an array of messages
  ``{id, chatId, role, content, contentChunks, createdAt, ...}``.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, Final

_BOM: Final = b"\xef\xbb\xbf"


# ---- the providers the spec defines --------------------------------------------------------------


def chatgpt(element: object) -> bool:
    """A ChatGPT conversation: ``mapping`` is a non-null, non-array object."""
    return type(element) is dict and type(element.get("mapping")) is dict


def claude(element: object) -> bool:
    """A Claude conversation: a string ``uuid`` and an array ``chat_messages``."""
    return type(element) is dict and type(element.get("uuid")) is str and type(element.get("chat_messages")) is list


# ---- the others ------------------------------------------------------------------------------------


def deepseek(element: object) -> bool:
    """A DeepSeek conversation: a ``mapping`` object none of whose messages has an ``author``, with a
    string ``inserted_at`` or a message holding ``fragments``."""
    if type(element) is not dict or type(element.get("mapping")) is not dict:
        return False
    nodes: list[Any] = list(element["mapping"].values())
    messages = [n["message"] for n in nodes if type(n) is dict and type(n.get("message")) is dict]
    if any("author" in m for m in messages):
        return False
    return type(element.get("inserted_at")) is str or any(type(m.get("fragments")) is list for m in messages)


def grok(element: object) -> bool:
    """A Grok conversation: a ``conversation`` object and a ``responses`` array."""
    return (
        type(element) is dict and type(element.get("conversation")) is dict and type(element.get("responses")) is list
    )


_GEMINI_HEADERS: Final = frozenset({"Gemini Apps", "Gemini", "Bard"})


def gemini(element: object) -> bool:
    """A Gemini activity record: a string ``time`` and ``header``, the header or one of the ``products``
    naming Gemini Apps (or Bard)."""
    if type(element) is not dict or type(element.get("time")) is not str or type(element.get("header")) is not str:
        return False
    products = element.get("products")
    named = [element["header"], *(products if type(products) is list else ())]
    return any(type(name) is str and name in _GEMINI_HEADERS for name in named)


def perplexity(element: object) -> bool:
    """A Perplexity thread entry: a string ``query_str`` beside one of its ids."""
    return (
        type(element) is dict
        and type(element.get("query_str")) is str
        and any(key in element for key in ("backend_uuid", "context_uuid", "thread_url_slug"))
    )


def perplexity_marker(value: object) -> bool:
    """A thread's metadata naming its address on perplexity.ai."""
    url = value.get("thread_url") if type(value) is dict else None
    return type(url) is str and "perplexity.ai" in url


def mistral(element: object) -> bool:
    """A Le Chat message: string ``chatId``, ``role`` and ``createdAt``, and ``contentChunks``."""
    return (
        type(element) is dict
        and type(element.get("chatId")) is str
        and type(element.get("role")) is str
        and type(element.get("createdAt")) is str
        and "contentChunks" in element
    )


def grok_member(path: str) -> bool:
    """Grok's conversations file, at any depth of its download."""
    return PurePosixPath(path.replace("\\", "/")).name == "prod-grok-backend.json"


def gemini_member(path: str) -> bool:
    """A file of Gemini's own folder of a Takeout's ``My Activity``."""
    parts = [p.casefold() for p in PurePosixPath(path.replace("\\", "/")).parts]
    return any(parts[i] == "my activity" and parts[i + 1] in ("gemini apps", "bard") for i in range(len(parts) - 2))


_COPILOT_COLUMNS: Final = frozenset({"conversation", "time", "author", "message"})


def copilot_head(head: bytes) -> bool:
    """A CSV file whose header row names the columns of Copilot's activity history."""
    text = head[len(_BOM) :] if head.startswith(_BOM) else head
    line = text.split(b"\n", 1)[0].rstrip(b"\r")
    try:
        header = line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    columns = {c.strip().strip('"').strip().casefold() for c in header.split(",")}
    return columns >= _COPILOT_COLUMNS
