"""One pass over an export's conversation parts for the whole-export readers.

The parts are those conversion reads, in its order. Each element whose bytes a reader's marks match is
parsed once and handed to every reader that asked for it, with its provider (the provider whose
conversation test accepts it) and the path inside the export of the part it is in; the first elements
are always parsed, to tell the export's provider as conversion does. Memory is bounded by a batch of
the part and the largest conversation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self

from .._convert.sources import expand
from .._json.elements import FIELDS, JS, PartElements, Reader, Refused
from .._progress import progress_bar
from .._providers import registry

if TYPE_CHECKING:
    from .files import Listing

__all__ = ["ConversationReader", "read_conversations"]


class ConversationReader(Protocol):
    """What the pass hands conversations to."""

    #: An element is parsed for this reader when its bytes match.
    marks: re.Pattern[bytes]

    def take(self, conversation: dict[str, Any], provider: str, part: str) -> None:
        """One conversation (a ChatGPT or Claude one) of the part at ``part`` inside the export."""

    def extend(self, later: Self) -> None:
        """Add what another reader found in the conversations after those this one was handed."""


def read_conversations(
    inputs: Sequence[Path], listing: Listing, readers: Sequence[ConversationReader], progress: bool | None
) -> str | None:
    """Hand the export's conversations to ``readers``; return the export's provider (None when its
    first elements show none)."""
    parts = expand(list(inputs)).parts
    head: list[Any] = []
    total = sum(p.size or 0 for p in parts) or None
    with progress_bar(total, desc="reading the export", unit="B", enabled=progress) as bar:
        for part in parts:
            elements = PartElements(part, Reader(JS), on_bytes=bar.update)
            name = listing.relative(part.name)
            for buf, found, offset in elements.ranges():
                if elements.is_array is False:
                    break  # an object (a manifest given as a file) holds no conversation
                for k in range(0, len(found), FIELDS):
                    start, end, flags, depth = found[k + 2 : k + FIELDS]
                    wanting = [r for r in readers if r.marks.search(buf, start, end)]
                    if not wanting and len(head) >= registry.DETECTION_WINDOW:
                        continue
                    try:
                        value = elements.reader.value(buf, start, end, flags, depth, offset)
                    except Refused as exc:
                        raise elements.error(exc) from None
                    if len(head) < registry.DETECTION_WINDOW:
                        head.append(value)
                    provider = registry.provider_of(value)
                    if provider in registry.SUPPORTED:
                        assert type(value) is dict
                        for reader in wanting:
                            reader.take(value, provider, name)
    return registry.detect(head)
