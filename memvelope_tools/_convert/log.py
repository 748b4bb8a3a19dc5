"""What a conversion read, besides the envelope."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ConversionLog:
    """Parts read and passed over, decoding repairs, and how many elements the merged array held.

    ``foreign`` counts the elements of the merged array that the other provider's shape check
    accepts (a ChatGPT conversation in a Claude export, or the reverse): they are dropped.
    """

    parts: list[str] = field(default_factory=list)
    ignored: list[tuple[str, str]] = field(default_factory=list)
    chose: bool = False
    replaced: dict[str, int] = field(default_factory=dict)  # part name -> invalid UTF-8 sequences
    elements: int = 0
    foreign: int = 0
