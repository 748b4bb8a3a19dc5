"""The merged array's elements, one at a time: the provider detected from the first ones as conversion
detects it, then each element analysed by that provider's rules (or the other provider's, for a
conversation conversion leaves out) and let go, only its figures and examples kept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .._convert.assemble import detect_provider, mixed_providers, rules
from .._convert.envelope import build_envelope
from .._memory.items import Folding
from .._memory.scan import MemoryReading
from .._providers import registry
from .._providers.registry import DETECTION_WINDOW
from ..errors import ConversionError
from . import chatgpt, claude
from .findings import OTHER_PROVIDER, Analysis, ConversationFacts

Analyser = Callable[[object, ConversationFacts, Analysis], None]
ANALYSERS: Final[dict[str, Analyser]] = {"chatgpt": chatgpt.analyse, "claude": claude.analyse}


class Walk:
    """Takes the merged array's elements in order (:meth:`element`) and, once every part is read
    (:meth:`finish`), holds the provider, the error conversion would raise, and the analysis.

    Only the first :data:`DETECTION_WINDOW` elements (and their bytes) are held, until the provider is
    known; every other element is analysed as it comes. Each element is also handed, with its bytes, to
    :attr:`memory` (a :class:`~memvelope_tools._memory.scan.MemoryReading` folding its sightings as they
    come), as the pass that converts the export hands them.
    """

    def __init__(self, show_text: bool) -> None:
        self.acc = Analysis(show_text)
        self.provider: str | None = None
        self.error: tuple[str, str] | None = None
        self.elements = 0
        self.first: str | None = None  # the first part whose top level is an array: errors name it
        self.non_arrays = 0
        self.documents: list[tuple[str, str]] = []  # parts that are no array and show another provider's export
        self.memory = MemoryReading(Folding())
        self._head: list[tuple[object, str, bytes]] = []  # elements, parts and bytes, until the provider is known
        self._decided = False
        self._rules: tuple[Callable[[object], object], Callable[[object], bool]] | None = None

    def array_part(self, name: str) -> None:
        """A part whose top level is an array begins (its elements follow)."""
        if self.first is None:
            self.first = name

    def element(self, element: object, part: str, data: Any, start: int, end: int) -> None:
        """The next element of the merged array, found in ``part``, its JSON text ``data[start:end]``."""
        index = self.elements
        self.elements += 1
        if self._decided:
            if self.provider is not None:
                self._analyse(element, index, part, data, start, end)
            return
        self._head.append((element, part, bytes(data[start:end])))
        if len(self._head) >= DETECTION_WINDOW:
            self._detect(final=False)

    def finish(self) -> None:
        """Every part was read: settle the provider and the verdict.

        Raises
        ------
        memvelope_tools.errors.InputError
            The export is one of a provider the spec does not define (reason ``unsupported-provider``).
        """
        if not self._decided or self.provider is None:
            self._detect(final=True)
        provider = self.provider
        if provider is None:
            return
        acc = self.acc
        left_out = sum(1 for c in acc.conversations if c.omitted == OTHER_PROVIDER)
        if left_out:
            acc.mixed = mixed_providers(provider, left_out)
        if not any(c.kept for c in acc.conversations):
            try:  # the core's own verdict and wording for an export where nothing survives
                build_envelope(provider, [])
            except ConversionError as exc:
                self.error = (exc.reason, exc.msg)

    def _detect(self, final: bool) -> None:
        """Detect the provider from the held elements. Before the last part is read, a failure only
        stops the analysis: the verdict waits for every part, as the parts read later name the
        provider an export of another one shows, and count among those that are no array."""
        head = [element for element, _, _ in self._head]
        try:
            provider = detect_provider(head, self.first, non_arrays=self.non_arrays, documents=self.documents)
        except ConversionError as exc:
            self._decided = True
            if not final:
                return
            self._head = []
            if exc.reason == "unsupported-provider":
                raise
            self.error = (exc.reason, exc.msg)
            return
        self.provider, self._decided, self._rules = provider, True, rules(provider)
        held, self._head = self._head, []
        for index, (element, part, data) in enumerate(held):
            self._analyse(element, index, part, data, 0, len(data))

    def _analyse(self, element: object, index: int, part: str, data: Any, start: int, end: int) -> None:
        provider = self.provider
        assert provider is not None and self._rules is not None
        normalise, foreign = self._rules
        facts = ConversationFacts(index, part)
        if foreign(element) and normalise(element) is None:
            _other_provider(element, facts, self.acc, registry.OTHER[provider])
        else:
            facts.provider = provider
            ANALYSERS[provider](element, facts, self.acc)
        self.acc.conversations.append(facts)
        self.memory.element(element, provider, data, start, end)


def _other_provider(element: object, facts: ConversationFacts, acc: Analysis, other: str) -> None:
    """Diagnose a conversation of the other provider, which conversion leaves out, by its own
    provider's rules: what converting it on its own would keep, and that it is left out here."""
    facts.provider = other
    ANALYSERS[other](element, facts, acc)
    if facts.messages_kept:
        facts.dropped[OTHER_PROVIDER] += facts.messages_kept  # the messages its own provider would keep
    facts.omitted = OTHER_PROVIDER
    acc.example(f"conversation: {OTHER_PROVIDER}", facts.example(detail=registry.name(other)))
