"""Layer 2, the Facts IR (``memvelope-ir-v0``): archetype, writer and the two distillers."""

from __future__ import annotations

from .archetype import compute_archetype
from .facts import DistillReport
from .llm import LLMConfig, distill_llm
from .structured import distill_structured
from .write import build_ir, dumps_ir, utc_now_iso, write_ir

__all__ = [
    "DistillReport",
    "LLMConfig",
    "build_ir",
    "compute_archetype",
    "distill_llm",
    "distill_structured",
    "dumps_ir",
    "utc_now_iso",
    "write_ir",
]
