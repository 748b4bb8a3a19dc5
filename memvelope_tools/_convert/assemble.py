"""The merged array's elements to conversations: the provider is detected from the first five elements
(Claude wins), then every element is normalised by that provider's rules, in order.

When detection fails the remaining parts are still read, so that an invalid part is reported before
"no provider", as when every part is parsed before anything is detected.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from .._providers import registry
from .._providers.registry import DETECTION_WINDOW, OTHER, SUPPORTED
from ..errors import ConversionError
from . import chatgpt, claude
from .envelope import build_envelope

Conversation = dict[str, Any]
Normaliser = Callable[[object], "Conversation | None"]

NORMALISERS: Final[Mapping[str, Normaliser]] = {
    "claude": claude.normalise,
    "chatgpt": chatgpt.normalise,
}
__all__ = ["DETECTION_WINDOW", "NORMALISERS", "OTHER", "Assembler", "detect_provider", "mixed_providers", "rules"]


def rules(provider: str) -> tuple[Normaliser, Callable[[object], bool]]:
    """``provider``'s normaliser, and the shape check of the other provider (which counts foreign elements)."""
    return NORMALISERS[provider], registry.conversation_test(OTHER[provider])


def detect_provider(
    elements: Sequence[object],
    source: str | None = None,
    *,
    non_arrays: int = 0,
    documents: Sequence[tuple[str, str]] = (),
) -> str:
    """The provider token, from the first five elements of the merged array (Claude wins).

    An export the registry recognises as another provider's (from those elements, else from
    ``documents``: the provider and name of each part whose top-level object shows its export) is
    refused with InputError (reason ``unsupported-provider``).
    """
    provider = registry.detect(elements)
    if provider is not None and provider in NORMALISERS:
        return provider
    if provider is None and documents:
        provider, source = documents[0]
    if provider is not None:
        raise registry.refusal(provider, source)
    if not elements:
        msg = "the export holds no conversations (no part has a top-level array with elements)"
        if non_arrays:
            msg = (
                "the export holds no conversations: its top level is not an array (a part whose top "
                "level is an object contributes nothing; a single conversation must be inside [ ])"
            )
    else:
        msg = registry.unrecognised()
    raise ConversionError(msg, reason="no-provider", source=source)


def mixed_providers(provider: str, left_out: int) -> str:
    """What was kept and left out when one conversion met conversations of both providers, and why.

    Parameters
    ----------
    provider : str
        The provider kept, ``"chatgpt"`` or ``"claude"``.
    left_out : int
        How many conversations of the other provider were left out.

    Returns
    -------
    str
        One sentence, without a leading ``memvelope:``.

    Examples
    --------
    >>> mixed_providers("chatgpt", 1)[:60]
    'the input mixes ChatGPT and Claude conversations: kept ChatG'
    """
    kept, other = registry.name(provider), registry.name(OTHER[provider])
    first = registry.name(SUPPORTED[0])  # the provider detection prefers
    why = (
        f"at least one of its first {DETECTION_WINDOW} conversations is {first}'s ({first} wins)"
        if provider == SUPPORTED[0]
        else f"none of its first {DETECTION_WINDOW} conversations is {first}'s"
    )
    both = " and ".join(sorted((kept, other)))
    plural = "conversation was" if left_out == 1 else "conversations were"
    return (
        f"the input mixes {both} conversations: kept {kept}, as {why}, and {left_out:,} {other} "
        f"{plural} left out (one export has one provider); convert each provider's files on their own, "
        "or each export to its own envelope with convert-many"
    )


class Assembler:
    """Takes the merged array's elements in order and hands each normalised conversation to ``emit``.

    Counts what it saw: ``elements``, ``conversations``, ``messages`` and ``foreign`` (elements the
    other provider's shape check accepts).
    """

    def __init__(self, emit: Callable[[Conversation], None], source: str | None) -> None:
        self.emit = emit
        self.source = source
        self.provider: str | None = None
        self.elements = self.conversations = self.messages = self.foreign = 0
        self._pending: list[object] = []
        self._non_arrays = 0
        self._documents: list[tuple[str, str]] = []
        self._normalise: Normaliser | None = None
        self._foreign: Callable[[object], bool] | None = None
        self._error: ConversionError | None = None

    def non_array(self, provider: str | None = None, name: str = "") -> None:
        """A part (named ``name``) whose top level is not an array: it contributes nothing, but when it
        shows another provider's export (``provider``), detection that finds no provider names it."""
        self._non_arrays += 1
        if provider is not None:
            self._documents.append((provider, name))

    def detect(self, first: Sequence[object]) -> str | None:
        """Detect the provider from ``first`` (the merged array's first elements, at least five when
        there are that many), without taking them; None when detection failed (raised by finish)."""
        try:
            provider = detect_provider(first, self.source, non_arrays=self._non_arrays, documents=self._documents)
        except ConversionError as exc:
            self._error = exc
            return None
        self.provider = provider
        self._normalise, self._foreign = rules(provider)
        return provider

    def element(self, element: object) -> None:
        """The next element of the merged array."""
        if self._normalise is not None:
            self._take(element)
        elif self._error is None:
            self._pending.append(element)
            if len(self._pending) >= DETECTION_WINDOW:
                self._flush()
        else:
            self.elements += 1

    def finish(self) -> str:
        """The provider, once every element was given; raises the error the reference path raises."""
        if self._normalise is None and self._error is None:
            self._flush()
        if self._error is not None:
            raise self._error
        if not self.conversations:
            build_envelope(self.provider or "", [], self.source)  # raises the "no-conversations" error
        assert self.provider is not None
        return self.provider

    @property
    def failed(self) -> bool:
        """True once detection failed: later elements are only counted."""
        return self._error is not None

    def skip(self, elements: int) -> None:
        """Count elements given after detection failed, without looking at them."""
        self.elements += elements

    def counts(self, conversations: int, messages: int, elements: int, foreign: int) -> None:
        """Add counts of elements taken elsewhere (by a worker process, with this provider)."""
        self.conversations += conversations
        self.messages += messages
        self.elements += elements
        self.foreign += foreign

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if self.detect(pending) is None:
            self.elements += len(pending)
            return
        for element in pending:
            self._take(element)

    def _take(self, element: object) -> None:
        assert self._normalise is not None and self._foreign is not None
        self.elements += 1
        if self._foreign(element):
            self.foreign += 1
        conversation = self._normalise(element)
        if conversation is None:
            return
        self.conversations += 1
        self.messages += len(conversation["messages"])
        self.emit(conversation)
