"""Doctor's view of one ChatGPT conversation: every mapping node, kept or dropped, and why.

Which nodes are kept, and why the others are dropped, is the conversion core's ``select`` and
``classify``; this module only counts, describes branches and ordering, and picks examples.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Final

from .._convert import chatgpt as core
from .._convert.prose import Message, map_role
from .findings import MALFORMED, Analysis, ConversationFacts

# content_type values ChatGPT exports are known to carry; any other is listed as unknown.
KNOWN_CONTENT_TYPES: Final = frozenset(
    {
        "text",
        "multimodal_text",
        "code",
        "execution_output",
        "tether_browsing_display",
        "tether_quote",
        "user_editable_context",
        "model_editable_context",
        "system_error",
        "thoughts",
        "reasoning_recap",
        "sonic_webpage",
        "computer_output",
    }
)
# content_type values of object parts inside multimodal_text.
KNOWN_PART_TYPES: Final = frozenset(
    {
        "image_asset_pointer",
        "audio_transcription",
        "audio_asset_pointer",
        "real_time_user_audio_video_asset_pointer",
    }
)
ABANDONED: Final = "abandoned branch"


def _raw_text(message: dict[str, Any]) -> str | None:
    content = message.get("content")
    if type(content) is not dict:
        return None
    pieces: list[str] = []
    parts = content.get("parts")
    if type(parts) is list:
        pieces += [p if type(p) is str else p.get("text", "") for p in parts if type(p) in (str, dict)]
    for key in ("text", "result", "user_profile", "user_instructions"):
        if type(content.get(key)) is str:
            pieces.append(content[key])
    joined = " ".join(p for p in pieces if type(p) is str and p.strip())
    return joined or None


def _fallback_trigger(mapping: dict[str, Any], current: object) -> str:
    if current is None:
        return "current_node absent"
    if type(current) is not str or current not in mapping:
        return "current_node does not resolve"
    return "no renderable message on the active path"


def _count_types(node: object, facts: ConversationFacts, acc: Analysis, key: str) -> None:
    message = node.get("message") if type(node) is dict else None
    if type(message) is not dict or type(message.get("content")) is not dict:
        return
    content = message["content"]
    if "content_type" in content:
        acc.seen_type("content_type", content["content_type"], KNOWN_CONTENT_TYPES, facts, key)
    parts = content.get("parts")
    for part in parts if type(parts) is list else ():
        if type(part) is dict and "content_type" in part:
            acc.seen_type("part content_type", part["content_type"], KNOWN_PART_TYPES, facts, key)


def _branches(mapping: dict[str, Any], facts: ConversationFacts, acc: Analysis) -> None:
    children: defaultdict[str, list[Any]] = defaultdict(list)
    for key, node in mapping.items():
        parent = node.get("parent") if type(node) is dict else None
        if type(parent) is str and parent in mapping and parent != key:
            children[parent].append(node)
    for parent, kids in children.items():
        roles: Counter[str | None] = Counter()
        for kid in kids:
            message = kid.get("message")
            if type(message) is dict:
                author = message.get("author")
                roles[map_role(author.get("role")) if type(author) is dict else None] += 1
        if sum(roles.values()) < 2:
            continue
        kinds = []
        if roles["assistant"] >= 2:
            facts.regenerated += 1
            kinds.append("regenerated reply")
        if roles["user"] >= 2:
            facts.edited += 1
            kinds.append("edited prompt")
        if not kinds:
            facts.other_branches += 1
            kinds.append("other branch")
        for kind in kinds:
            acc.example(f"branch: {kind}", facts.example(parent, f"{sum(roles.values())} message children"))


def analyse(element: object, facts: ConversationFacts, acc: Analysis) -> None:
    """Fill ``facts`` (and ``acc``) for one element of a ChatGPT export."""
    facts.id = core.conversation_id(element)
    facts.title = core.title(element)
    mapping = core.mapping_of(element)
    if mapping is None:
        facts.omitted = MALFORMED
        detail = "no mapping object" if type(element) is dict else "element is not an object"
        acc.example(f"conversation: {MALFORMED}", facts.example(detail=detail))
        return
    assert type(element) is dict
    current = element.get("current_node")
    selection = core.select(mapping, current)
    kept = {id(node): found for node, found in selection.kept}
    if selection.fallback:
        facts.fallback = _fallback_trigger(mapping, current)
        acc.example(f"fallback: {facts.fallback}", facts.example())
    rendered: dict[int, str | None] = {}
    for key, node in mapping.items():
        facts.nodes += 1
        _count_types(node, facts, acc, key)
        found = kept.get(id(node))
        if found is not None:
            facts.messages += 1
            facts.messages_kept += 1
            rendered[id(node)] = acc.timestamp("message ts", found.stamp, facts, key)
            continue
        verdict = core.classify(node)
        if verdict == core.NO_MESSAGE:
            facts.structural += 1
            continue
        reason = ABANDONED if isinstance(verdict, Message) else verdict.reason
        facts.messages += 1
        facts.dropped[reason] += 1
        message = node.get("message") if type(node) is dict else None
        text = _raw_text(message) if type(message) is dict else None
        acc.example(f"message: {reason}", facts.example(key, text=text))
    if not selection.fallback:
        on_path = {id(node) for node in selection.path}
        facts.off_path = sum(1 for node in mapping.values() if id(node) not in on_path)
        key_of = {id(node): key for key, node in mapping.items()}
        _inversions([(key_of[id(node)], rendered[id(node)]) for node, _ in selection.kept], facts, acc)
    _branches(mapping, facts, acc)
    acc.finish_conversation(element, facts, ("create_time", "update_time"))


def _inversions(ordered: list[tuple[str, str | None]], facts: ConversationFacts, acc: Analysis) -> None:
    previous: str | None = None
    for key, stamp in ordered:
        if stamp is None:
            continue
        if previous is not None and stamp < previous:
            facts.inversions += 1
            acc.example("timestamp: child before parent", facts.example(key, f"{stamp} < {previous}"))
        previous = stamp
