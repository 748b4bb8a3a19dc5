"""What ChatGPT remembered, as one conversation holds it: memory writes, memory snapshots, custom instructions
and the memories its answers cite."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from .._convert import chatgpt as chatgpt_core
from .._convert.prose import Message
from .._convert.timestamps import render_timestamp
from .._whole import citations as cited
from .items import Seen, Sink

_SNAPSHOT_ENTRY: Final = re.compile(r"^\s*\d{1,4}\.\s+(?:\[(\d{4}-\d{2}-\d{2})\]\.?\s+)?(.*\S)\s*$", re.DOTALL)
_FENCE: Final = re.compile(r"```(.*?)```", re.DOTALL)
_BIO: Final = "bio"
_CONTEXT_TYPES: Final = frozenset({"model_editable_context", "user_editable_context"})


def chatgpt_conversation(element: object, seen: Sink) -> None:
    """Add the memory items of one conversation to ``seen``."""
    mapping = chatgpt_core.mapping_of(element)
    if mapping is None:
        return
    assert type(element) is dict
    found: list[tuple[str, Any, dict[str, Any], list[tuple[str, str, str | None]], list[Any]]] = []
    for key, node in mapping.items():
        message = node.get("message") if type(node) is dict else None
        if type(message) is not dict:
            continue
        content = message.get("content")
        metadata = message.get("metadata")
        if not (
            message.get("recipient") == _BIO
            or (type(content) is dict and content.get("content_type") in _CONTEXT_TYPES)
            or (type(metadata) is dict and "user_context_message_data" in metadata)
            or cited.is_citing(metadata)
        ):
            continue  # no memory item here (the test _chatgpt_items would make, done cheaply)
        items = list(_chatgpt_items(message))
        quotes = list(cited.citations(metadata))
        if items or quotes:
            found.append((key, node, message, items, quotes))
    if not found:
        return
    cid = chatgpt_core.conversation_id(element)
    title = chatgpt_core.title(element)
    current = element.get("current_node")
    path = chatgpt_core.active_path(mapping, current)
    on_path = {id(node): i for i, node in enumerate(path)}
    targets = [node for _, node, _, _, _ in found if isinstance(chatgpt_core.classify(node), Message)]
    ids = _envelope_ids(mapping, current, path, on_path, targets) if targets else {}
    where = cid or f"conversation {title!r}"
    for key, node, message, items, quotes in found:
        stamp = render_timestamp(message.get("create_time")) or render_timestamp(element.get("create_time"))
        for memory, quote, citation in quotes:  # counted by citation, told apart by memory id
            seen.append(
                Seen(
                    cited.CITED,
                    quote,
                    stamp,
                    citation or f"{where}/{key}/{memory}",
                    conversation_id=cid,
                    conversation_title=title,
                    message_id=ids.get(id(node)),
                    node_id=key,
                    on_active_path=id(node) in on_path,
                    memory_id=memory,
                )
            )
        for kind, text, stated in items:
            seen.append(
                Seen(
                    kind,
                    text,
                    stamp,
                    where,
                    conversation_id=cid,
                    conversation_title=title,
                    message_id=ids.get(id(node)),
                    node_id=key,
                    on_active_path=id(node) in on_path,
                    preceding_user_message=_preceding_user(mapping, node) if kind == "saved" else None,
                    stated_date=stated,
                    key=kind if kind.startswith("about_") else None,
                )
            )


def _envelope_ids(
    mapping: dict[str, Any],
    current: object,
    path: list[Any],
    position: dict[int, int],
    targets: list[Any],
) -> dict[int, str]:
    """Envelope ids (``m1`` ...) covering the nodes ``targets`` (each gives an envelope message), as
    conversion numbers them: the kept messages of the active path, classified only as far as needed;
    the fallback order when the path keeps none."""
    last = max((position[id(t)] for t in targets if id(t) in position), default=-1)
    ids: dict[int, str] = {}
    for i, node in enumerate(path):
        if i > last and ids:
            return ids
        if isinstance(chatgpt_core.classify(node), Message):
            ids[id(node)] = f"m{len(ids) + 1}"
    if ids:
        return ids
    return {id(node): f"m{i}" for i, (node, _) in enumerate(chatgpt_core.select(mapping, current).kept, 1)}


def _chatgpt_items(message: dict[str, Any]) -> Iterator[tuple[str, str, str | None]]:
    """(kind, text, stated date) of each remembered text one message carries."""
    content = message.get("content")
    content = content if type(content) is dict else {}
    kind = content.get("content_type")
    if message.get("recipient") == _BIO:
        author = message.get("author")
        if type(author) is dict and author.get("role") == "assistant":
            written = _parts_text(content)
            if written:
                yield "saved", written, None
    if kind == "model_editable_context":
        snapshot = content.get("model_set_context")
        if type(snapshot) is str:
            yield from (("snapshot", entry, stated) for entry, stated in snapshot_entries(snapshot))
    elif kind == "user_editable_context":
        for key, name in (("user_profile", "about_user"), ("user_instructions", "about_model")):
            field_text = instruction_text(content.get(key))
            if field_text:
                yield name, field_text, None
    metadata = message.get("metadata")
    data = metadata.get("user_context_message_data") if type(metadata) is dict else None
    if type(data) is dict:
        for key, name in (("about_user_message", "about_user"), ("about_model_message", "about_model")):
            value = data.get(key)
            if type(value) is str and value.strip():
                yield name, value.strip(), None


def _parts_text(content: dict[str, Any]) -> str:
    parts = content.get("parts")
    texts = [p for p in parts if type(p) is str] if type(parts) is list else []
    if type(content.get("text")) is str:
        texts.append(content["text"])
    return "\n\n".join(t.strip() for t in texts if t.strip())


def snapshot_entries(snapshot: str) -> list[tuple[str, str | None]]:
    """The entries of a ``model_set_context`` snapshot: ``(text, stated day)`` each.

    Parameters
    ----------
    snapshot
        The snapshot text.

    Returns
    -------
    list of (str, str or None)
        One pair per numbered entry (``N. [YYYY-MM-DD]. text``); a snapshot not in that form is one
        entry with no day. Empty entries are skipped.

    Examples
    --------
    >>> snapshot_entries("1. [2024-09-29]. User likes tea.\\n\\n2. User lives in Oslo.")
    [('User likes tea.', '2024-09-29'), ('User lives in Oslo.', None)]
    """
    blocks = [b for b in re.split(r"\n\s*\n", snapshot) if b.strip()]
    matches = [_SNAPSHOT_ENTRY.match(b) for b in blocks]
    if not blocks or not all(matches):
        text = snapshot.strip()
        return [(text, None)] if text else []
    return [(" ".join(m.group(2).split()), m.group(1)) for m in matches if m is not None]


def instruction_text(value: object) -> str | None:
    """The user's own words in a custom-instructions field: the text of its fenced block when it has
    one (the provider's preamble around it is not the user's), else the whole value; None when empty.

    Parameters
    ----------
    value
        A ``user_profile`` or ``user_instructions`` value.

    Returns
    -------
    str or None
        The text, stripped.

    Examples
    --------
    >>> instruction_text("The user provided ...:\\n```I am a nurse.```")
    'I am a nurse.'
    """
    if type(value) is not str:
        return None
    blocks = [b.strip() for b in _FENCE.findall(value) if b.strip()]
    text = "\n\n".join(blocks) if blocks else value.strip()
    return text or None


def _preceding_user(mapping: dict[str, Any], node: Any) -> str | None:
    """The text of the nearest user message above ``node``."""
    seen: set[int] = set()
    current = node
    while type(current) is dict and id(current) not in seen:
        seen.add(id(current))
        parent = current.get("parent")
        if type(parent) is not str or parent not in mapping:
            return None
        current = mapping[parent]
        found = chatgpt_core.classify(current)
        if isinstance(found, Message) and found.role == "user":
            return found.text
    return None
