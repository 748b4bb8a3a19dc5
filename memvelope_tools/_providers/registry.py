"""The one table of providers: their ids and names, how each is recognised, and the detection order.

Every door asks here: the converter's detection (:func:`detect`), the resolver that says what an input
is (:func:`provider_of`, :func:`document_provider`, :func:`member_provider`, :func:`head_provider`),
doctor and the memory reader. ChatGPT and Claude are converted (the spec defines their exports); the
other providers' exports are recognised only to be refused with one line naming them (:func:`refusal`).

Detection order (:data:`PROVIDERS`): one conversation is the first provider's whose test accepts it,
Claude first (the spec's "Claude wins"), ChatGPT last, so that an export whose conversations also hold
a ``mapping`` (DeepSeek's) is not taken for ChatGPT. An export is a provider the spec defines when any
of its first :data:`DETECTION_WINDOW` elements is one of its conversations (Claude before ChatGPT);
else it is the other provider that recognises the first of them it can.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from ..errors import InputError
from . import shapes

#: The spec whose exports the toolkit converts.
SPEC: Final = "Memvelope spec v0.2.0"
#: How many of the merged array's first elements decide the provider.
DETECTION_WINDOW: Final = 5
_WINDOW_WORD: Final = "five"


@dataclass(frozen=True)
class Provider:
    """One provider: its id (``source_provider`` in an envelope), the name people know it by, whether
    the toolkit converts its exports, and the tests that recognise them.

    ``conversation`` accepts one conversation (an element of the export's array, or a conversation
    object on its own) and ``looks`` says in words what it accepts; ``marker`` accepts a value that
    shows a whole export is the provider's; ``member`` accepts a file's path inside a folder or zip;
    ``head`` accepts the first bytes of a file that is not JSON.
    """

    id: str
    name: str
    supported: bool
    conversation: Callable[[object], bool] | None = None
    looks: str = ""
    marker: Callable[[object], bool] | None = None
    member: Callable[[str], bool] | None = None
    head: Callable[[bytes], bool] | None = None


#: Every provider, in detection order.
PROVIDERS: Final[tuple[Provider, ...]] = (
    Provider("claude", "Claude", True, shapes.claude, "'uuid' and 'chat_messages'"),
    Provider("deepseek", "DeepSeek", False, shapes.deepseek),
    Provider("grok", "Grok", False, shapes.grok, member=shapes.grok_member),
    Provider("gemini", "Gemini", False, shapes.gemini, member=shapes.gemini_member),
    Provider("perplexity", "Perplexity", False, shapes.perplexity, marker=shapes.perplexity_marker),
    Provider("copilot", "Microsoft Copilot", False, head=shapes.copilot_head),
    Provider("mistral", "Mistral Le Chat", False, shapes.mistral),
    Provider("chatgpt", "ChatGPT", True, shapes.chatgpt, "an object with a 'mapping' object"),
)
BY_ID: Final = {p.id: p for p in PROVIDERS}
#: The ids of the providers the spec defines, in detection order.
SUPPORTED: Final = tuple(p.id for p in PROVIDERS if p.supported)
#: The other supported provider of each (the one whose conversations a conversion counts as foreign).
OTHER: Final = dict(zip(SUPPORTED, reversed(SUPPORTED), strict=True))


def name(provider: str | None, default: str = "the provider") -> str:
    """The name people know ``provider`` (an id) by, ``default`` for None or an unknown id.

    Parameters
    ----------
    provider : str or None
        A provider id such as ``"chatgpt"``.
    default : str
        What to say for None or an id no provider has.

    Returns
    -------
    str
        The provider's name.

    Examples
    --------
    >>> name("chatgpt"), name("deepseek"), name(None)
    ('ChatGPT', 'DeepSeek', 'the provider')
    """
    found = BY_ID.get(provider or "")
    return found.name if found is not None else default


def conversation_test(provider: str) -> Callable[[object], bool]:
    """The test that accepts one of ``provider``'s conversations on its own (before detection order)."""
    test = BY_ID[provider].conversation
    assert test is not None
    return test


def provider_of(element: object) -> str | None:
    """The first provider, in detection order, whose conversation test accepts ``element``, else None.

    Parameters
    ----------
    element : object
        A parsed JSON value: an element of an export's array, or a whole file's value.

    Returns
    -------
    str or None
        A provider id.

    Examples
    --------
    >>> provider_of({"mapping": {}}), provider_of({"mapping": {}, "inserted_at": "2025-01-01"})
    ('chatgpt', 'deepseek')
    """
    for provider in PROVIDERS:
        if provider.conversation is not None and provider.conversation(element):
            return provider.id
    return None


def detect(window: Sequence[object]) -> str | None:
    """The provider of an export whose merged array starts with ``window``.

    Parameters
    ----------
    window : sequence of object
        The merged array's first elements (only the first :data:`DETECTION_WINDOW` are looked at).

    Returns
    -------
    str or None
        A supported provider when one of the elements is its conversation (Claude before ChatGPT);
        else the provider that recognises the first element one does; else None.

    Examples
    --------
    >>> detect([{"mapping": {}}, {"uuid": "u", "chat_messages": []}])
    'claude'
    >>> detect([{"conversation": {}, "responses": []}]), detect([1, 2])
    ('grok', None)
    """
    return detected([provider_of(e) for e in window[:DETECTION_WINDOW]])


def detected(found: Sequence[str | None]) -> str | None:
    """The provider :func:`detect` tells of a window whose elements are conversations of ``found``.

    Parameters
    ----------
    found : sequence of str or None
        :func:`provider_of` of each of the merged array's first elements (the first
        :data:`DETECTION_WINDOW` are looked at).

    Returns
    -------
    str or None
        As :func:`detect`.

    Examples
    --------
    >>> detected(["chatgpt", None, "claude"]), detected([None, "grok"]), detected([])
    ('claude', 'grok', None)
    """
    found = found[:DETECTION_WINDOW]
    for provider in SUPPORTED:
        if provider in found:
            return provider
    return next((f for f in found if f is not None), None)


def within(value: object) -> str | None:
    """The unsupported provider whose export ``value`` (a member of a file's top-level object) shows:
    an array one of whose first elements it recognises, or a value its marker accepts; else None."""
    if type(value) is list:
        for element in value[:DETECTION_WINDOW]:
            provider = provider_of(element)
            if provider is not None and not BY_ID[provider].supported:
                return provider
        return None
    return next((p.id for p in PROVIDERS if p.marker is not None and p.marker(value)), None)


def document_provider(value: object) -> str | None:
    """The unsupported provider whose export a file's top-level object is, from its members' values.

    Parameters
    ----------
    value : object
        A file's whole parsed value.

    Returns
    -------
    str or None
        A provider id, or None when ``value`` is no object or no member shows a provider's export.

    Examples
    --------
    >>> document_provider({"conversations": [{"conversation": {}, "responses": []}]})
    'grok'
    >>> document_provider({"conversations": [{"mapping": {}}]}) is None
    True
    """
    if type(value) is not dict:
        return None
    return next((p for p in map(within, value.values()) if p is not None), None)


def member_provider(paths: Iterable[str]) -> str | None:
    """The provider one of whose files ``paths`` (the files of a folder or zip) names, else None.

    Parameters
    ----------
    paths : iterable of str
        Paths of files, as a zip's members or a folder's files.

    Returns
    -------
    str or None
        A provider id.

    Examples
    --------
    >>> member_provider(["a/b/prod-grok-backend.json"]), member_provider(["conversations.json"])
    ('grok', None)
    """
    for path in paths:
        for provider in PROVIDERS:
            if provider.member is not None and provider.member(path):
                return provider.id
    return None


def head_provider(head: bytes) -> str | None:
    """The provider whose export file (one that is not JSON) begins with ``head``, else None.

    Parameters
    ----------
    head : bytes
        A file's first bytes.

    Returns
    -------
    str or None
        A provider id.

    Examples
    --------
    >>> head_provider(b"Conversation,Time,Author,Message\\r\\n"), head_provider(b"a,b\\n")
    ('copilot', None)
    """
    return next((p.id for p in PROVIDERS if p.head is not None and p.head(head)), None)


def refusal_line(provider: str) -> str:
    """The one line refusing ``provider``'s export, naming it and the providers the spec defines.

    Parameters
    ----------
    provider : str
        The id of a provider the toolkit does not convert.

    Returns
    -------
    str
        The line, without the file it is about.

    Examples
    --------
    >>> refusal_line("grok")
    'this is a Grok export; Memvelope spec v0.2.0 defines ChatGPT and Claude exports only'
    """
    defined = " and ".join(sorted(name(p) for p in SUPPORTED))
    return f"this is a {name(provider)} export; {SPEC} defines {defined} exports only"


def refusal(provider: str, source: str | None) -> InputError:
    """The error refusing ``provider``'s export found in ``source`` (reason ``unsupported-provider``).

    Parameters
    ----------
    provider : str
        The id of a provider the toolkit does not convert.
    source : str or None
        The file the export was found in.

    Returns
    -------
    InputError
        The error, to raise.

    Examples
    --------
    >>> str(refusal("deepseek", "conversations.json"))[:28]
    'this is a DeepSeek export; M'
    """
    return InputError(refusal_line(provider), reason="unsupported-provider", source=source)


def unrecognised() -> str:
    """Why an export whose array has elements has no provider: what its first elements were expected
    to look like."""
    first, *rest = (BY_ID[p] for p in reversed(SUPPORTED))
    others = "".join(f" or a {p.name} one ({p.looks})" for p in rest)
    return (
        f"cannot identify the provider: none of the first {_WINDOW_WORD} elements looks like a "
        f"{first.name} conversation ({first.looks}){others}"
    )
