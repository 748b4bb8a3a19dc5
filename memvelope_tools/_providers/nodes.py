"""What each node of an export is: the one vocabulary of node kinds, and the rules that give a ChatGPT
mapping node or a Claude chat message its kind, the tools it calls, its model and its custom GPT.

A *node* is one ChatGPT ``mapping`` node that holds a message, or one entry of a Claude conversation's
``chat_messages``. Its *kind* (:data:`KINDS`) says what it holds, for both providers alike:

``prose``
    What a person or a model said: text a user or an assistant wrote (ChatGPT ``text`` or
    ``multimodal_text`` with text; a Claude message with text). A Claude message is prose whenever it
    holds text, whatever tools it also used (its ``tools`` name them).
``code``
    Code sent to a tool to run: ChatGPT ``content_type: "code"`` (Code Interpreter, plugin and action
    calls written as code); a Claude message without text that calls the ``repl`` (analysis) tool.
``tool_output``
    What a tool answered: a ChatGPT ``tool`` message no rule below names (``execution_output``,
    ``system_error``, a plugin's reply); a Claude message holding only ``tool_result`` blocks.
``reasoning``
    The model thinking: ChatGPT ``thoughts`` and ``reasoning_recap``; Claude ``thinking`` and
    ``redacted_thinking`` blocks in a message without text.
``browsing``
    Web search and browsing: calls to and answers from ChatGPT's ``browser``, ``web`` and ``search``
    tools, ``tether_browsing_display``, ``tether_quote`` and ``sonic_webpage`` content; Claude's
    ``web_search`` and ``web_fetch`` tools.
``research``
    Deep research: ChatGPT's ``research_kickoff_tool``; Claude's ``launch_extended_search_task``.
``image``
    Pictures: calls to and answers from ChatGPT's image tools (``dalle``, and ``t2uay3k.sj1i4kz``, the
    name exports give the image generator that replaced it), and a ``multimodal_text`` whose parts hold
    images and no text (a picture sent alone, or made).
``file``
    Uploaded files: ChatGPT's ``myfiles_browser`` and ``file_search`` tools; a Claude message without
    text that carries ``attachments`` or ``files``.
``audio``
    Voice: a ChatGPT ``multimodal_text`` with an audio part (``audio_transcription``,
    ``audio_asset_pointer``, ``real_time_user_audio_video_asset_pointer``), its transcript included.
``memory``
    Memory writes: a message addressed to ChatGPT's ``bio`` tool, and the tool's reply.
``canvas``
    ChatGPT canvas (the ``canmore`` tools) and Claude artifacts (the ``artifacts`` tool).
``context``
    What the model is shown about the user: ChatGPT ``user_editable_context`` (custom instructions),
    ``model_editable_context`` (the memory snapshot) and ``metadata.user_context_message_data``.
``system``
    System prompts and hidden scaffolding: author role ``system`` (Claude: a ``system`` sender).
``other``
    Anything else: a call to a tool none of the rules names (a plugin called with text), a message
    without content.

For a ChatGPT node the rules are tried in this order: the context types; the tool the node calls or
answers for (a call's ``recipient``, a reply's ``author.name``; only the part before the first dot
counts, so ``canmore.create_textdoc`` is ``canmore``); the system role; the content type (reasoning,
browsing, code, a tool's output); a call to any other tool; then the parts (audio, prose, image). This
module reads plain values only and imports nothing, so that any module may ask it.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

#: Every kind of node, in the order they are listed.
KINDS: Final = (
    "prose",
    "code",
    "tool_output",
    "reasoning",
    "browsing",
    "research",
    "image",
    "file",
    "audio",
    "memory",
    "canvas",
    "context",
    "system",
    "other",
)

#: The roles of a node: the envelope's two, and the participants it drops (as ``memvelope doctor`` names them).
NODE_ROLES: Final = ("user", "assistant", "system", "tool", "other")

# The kind of a node that calls, or answers for, a tool of each family (the name before the first dot).
_CHATGPT_TOOLS: Final = {
    "bio": "memory",
    "canmore": "canvas",
    "browser": "browsing",
    "web": "browsing",
    "search": "browsing",
    "research_kickoff_tool": "research",
    "dalle": "image",
    "t2uay3k": "image",
    "myfiles_browser": "file",
    "file_search": "file",
}
_CLAUDE_TOOLS: Final = {
    "artifacts": "canvas",
    "web_search": "browsing",
    "web_fetch": "browsing",
    "launch_extended_search_task": "research",
    "repl": "code",
}
_CONTEXT_TYPES: Final = frozenset({"user_editable_context", "model_editable_context"})
_REASONING_TYPES: Final = frozenset({"thoughts", "reasoning_recap"})
_BROWSING_TYPES: Final = frozenset({"tether_browsing_display", "tether_quote", "sonic_webpage"})
_PROSE_TYPES: Final = frozenset({"text", "multimodal_text"})
_AUDIO_PARTS: Final = frozenset(
    {"audio_transcription", "audio_asset_pointer", "real_time_user_audio_video_asset_pointer"}
)
_IMAGE_PARTS: Final = frozenset({"image_asset_pointer"})
#: Recipients that are no tool: a message to everyone, or a tool's answer to the assistant.
_NO_TOOL: Final = frozenset({"all", "assistant", "user"})
#: ``gizmo_type`` of a ChatGPT project, whose gizmo is no custom GPT (its ids begin ``g-p-``).
_PROJECT_TYPE: Final = "snorlax"
_PROJECT_PREFIX: Final = "g-p-"


_EMPTY: Final[dict[str, Any]] = {}
_UNKNOWN: Final = "\x00unknown"


class Facts(NamedTuple):
    """What the registry says of one node: its author's role and name, its recipient and content type as
    the export writes them, its kind (one of :data:`KINDS`), the tools it calls (their names as the export
    writes them), its model, its custom GPT (a ChatGPT gizmo id) and how many files it carries."""

    role: object
    author: str | None
    recipient: str | None
    content_type: str | None
    kind: str
    tools: list[str]
    model: str | None
    custom_gpt: str | None
    attachments: int


def _family(name: str) -> str:
    return name.split(".", 1)[0]


def _text(value: object) -> str | None:
    return value if type(value) is str and value else None


# ---- ChatGPT ---------------------------------------------------------------------------------------


def chatgpt_facts(message: dict[str, Any], conversation: dict[str, Any]) -> Facts:
    """The facts of a ChatGPT mapping node's ``message`` in ``conversation``.

    ``role``, ``author``, ``recipient`` and ``content_type`` are ``author.role``, ``author.name``,
    ``recipient`` and ``content.content_type`` (None where they are no string, ``role`` as it is).
    ``kind`` follows the rules of this module's docstring. ``tools``: the message's ``recipient`` when
    that is a tool (a ``tool`` message answers, it calls nothing). ``model``: ``metadata.model_slug``,
    else ``metadata.default_model_slug``; for an assistant message naming neither, the conversation's
    ``default_model_slug``. ``custom_gpt``: ``metadata.gizmo_id``, else the conversation's ``gizmo_id``;
    a project's gizmo (``gizmo_type: "snorlax"``, ids ``g-p-...``) is no custom GPT. ``attachments``:
    the length of ``metadata.attachments``.

    Parameters
    ----------
    message : dict
        A mapping node's ``message``.
    conversation : dict
        The conversation the node belongs to.

    Returns
    -------
    Facts
        The node's facts.

    Examples
    --------
    >>> call = {"author": {"role": "assistant"}, "recipient": "python",
    ...         "content": {"content_type": "code", "text": "1+1"}, "metadata": {"model_slug": "gpt-4o"}}
    >>> facts = chatgpt_facts(call, {})
    >>> facts.kind, facts.tools, facts.model
    ('code', ['python'], 'gpt-4o')
    >>> reply = {"author": {"role": "tool", "name": "python"}, "content": {"content_type": "execution_output"}}
    >>> chatgpt_facts(reply, {}).kind
    'tool_output'
    """
    author = message.get("author")
    author = author if type(author) is dict else _EMPTY
    metadata = message.get("metadata")
    metadata = metadata if type(metadata) is dict else _EMPTY
    content = message.get("content")
    content = content if type(content) is dict else _EMPTY
    role = author.get("role")
    name = author.get("name")
    name = name if type(name) is str else None
    recipient = message.get("recipient")
    recipient = recipient if type(recipient) is str else None
    ctype = content.get("content_type")
    # A tool's reply answers for the tool that wrote it; any other message calls its recipient.
    answer = name or None
    call = recipient if recipient and recipient not in _NO_TOOL else None
    tool = answer if role == "tool" else call
    attachments = metadata.get("attachments")
    return Facts(
        role,
        name,
        recipient,
        ctype if type(ctype) is str else None,
        _chatgpt_kind(role, tool, content, metadata),
        [tool] if tool is not None and role != "tool" else [],
        _chatgpt_model(role, metadata, conversation),
        _custom_gpt(metadata, conversation),
        len(attachments) if type(attachments) is list else 0,
    )


def _chatgpt_kind(role: object, tool: str | None, content: dict[str, Any], metadata: dict[str, Any]) -> str:
    ctype = content.get("content_type")
    if ctype is not None and type(ctype) is not str:
        ctype = _UNKNOWN  # a number, a list, an object: no content type of the rules
    if ctype in _CONTEXT_TYPES or "user_context_message_data" in metadata:
        return "context"
    if tool is not None and (family := _CHATGPT_TOOLS.get(_family(tool))) is not None:
        return family
    if role == "system":
        return "system"
    if ctype in _REASONING_TYPES:
        return "reasoning"
    if ctype in _BROWSING_TYPES:
        return "browsing"
    if ctype == "code":
        return "code"
    if role == "tool" or ctype == "execution_output":
        return "tool_output"
    if tool is not None:
        return "other"  # a call to a tool no rule names, written as text
    if ctype in _IMAGE_PARTS:
        return "image"
    if ctype is None and "content_type" in content:
        return "other"
    if ctype is None or ctype == "" or ctype in _PROSE_TYPES:
        return _parts_kind(content.get("parts"))
    return "other"


def _parts_kind(parts: object) -> str:
    """The kind of a message by its ``parts``: audio when one is, else prose when one holds text, else
    image when one is; else other."""
    if type(parts) is not list:
        return "other"
    text = image = False
    for part in parts:
        if type(part) is str:
            text = text or bool(part.strip())
        elif type(part) is dict:
            ptype = part.get("content_type")
            ptype = ptype if type(ptype) is str else None
            if ptype in _AUDIO_PARTS:
                return "audio"
            if ptype in _IMAGE_PARTS or part.get("type") == "image":
                image = True
            elif type(part.get("text")) is str:
                text = text or bool(part["text"].strip())
    if text:
        return "prose"
    return "image" if image else "other"


def _chatgpt_model(role: object, metadata: dict[str, Any], conversation: dict[str, Any]) -> str | None:
    model = _text(metadata.get("model_slug")) or _text(metadata.get("default_model_slug"))
    if model is None and role == "assistant":
        model = _text(conversation.get("default_model_slug"))
    return model


def _custom_gpt(metadata: dict[str, Any], conversation: dict[str, Any]) -> str | None:
    own = _text(metadata.get("gizmo_id"))
    if own is not None and not own.startswith(_PROJECT_PREFIX):
        return own
    value = _text(conversation.get("gizmo_id"))
    if value is None or value.startswith(_PROJECT_PREFIX) or conversation.get("gizmo_type") == _PROJECT_TYPE:
        return None
    return value


# ---- Claude ----------------------------------------------------------------------------------------


def claude_facts(message: dict[str, Any], conversation: dict[str, Any], has_text: bool) -> Facts:
    """The facts of a Claude ``chat_messages`` entry in ``conversation``.

    ``role`` is the ``sender``; ``author`` and ``recipient`` are None; ``content_type`` the types of its
    content blocks, each once, in order, joined by ``+`` (None without a ``content`` array: the flat
    ``text`` of older exports). ``kind`` follows the rules of this module's docstring (``has_text``:
    whether the entry holds prose, by the converter's rule for Claude text). ``tools``: the ``name`` of
    each ``tool_use`` block, in order. ``model``: the conversation's ``model`` (where the export records
    it), for an assistant message. ``custom_gpt`` is always None. ``attachments``: its ``attachments``
    and its ``files``.

    Parameters
    ----------
    message : dict
        An entry of ``chat_messages``.
    conversation : dict
        The conversation.
    has_text : bool
        Whether the entry holds prose.

    Returns
    -------
    Facts
        The entry's facts.

    Examples
    --------
    >>> entry = {"sender": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]}
    >>> facts = claude_facts(entry, {"model": "claude-sonnet-4"}, False)
    >>> facts.kind, facts.content_type, facts.model
    ('reasoning', 'thinking', 'claude-sonnet-4')
    """
    content = message.get("content")
    blocks = [b for b in content if type(b) is dict] if type(content) is list else []
    types = dict.fromkeys(b["type"] for b in blocks if type(b.get("type")) is str)
    tools = [b["name"] for b in blocks if b.get("type") == "tool_use" and _text(b.get("name"))]
    attachments = sum(len(v) for v in (message.get("attachments"), message.get("files")) if type(v) is list)
    sender = message.get("sender")
    model = _text(conversation.get("model")) if sender == "assistant" else None
    kind = _claude_kind(sender, has_text, tools, set(types), attachments)
    ctype = "+".join(types) if type(content) is list else None
    return Facts(sender, None, None, ctype, kind, tools, model, None, attachments)


def _claude_kind(sender: object, has_text: bool, tools: list[str], types: set[str], files: int) -> str:
    if type(sender) is str and sender.lower() == "system":
        return "system"
    if has_text:
        return "prose"
    if tools:
        return _CLAUDE_TOOLS.get(tools[0], "other")
    if "tool_result" in types:
        return "tool_output"
    if "thinking" in types or "redacted_thinking" in types:
        return "reasoning"
    if "image" in types:
        return "image"
    if "document" in types or files:
        return "file"
    return "other"
