"""The format tags that name a Memvelope document's layer and version."""

from __future__ import annotations

from typing import Final

ENVELOPE_TAG: Final = "envelope-v0"
IR_TAG: Final = "memvelope-ir-v0"
RESERVED_TAGS: Final = ("memory-v0",)
SUPPORTED_TAGS: Final = (ENVELOPE_TAG, IR_TAG)
