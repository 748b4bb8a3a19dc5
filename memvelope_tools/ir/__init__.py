"""Layer 2, the Facts IR (``memvelope-ir-v0``): archetype, writer and the two distillers."""

from __future__ import annotations

import importlib
from typing import Any

from .archetype import compute_archetype
from .facts import DistillStats
from .structured import distill_structured
from .write import build_ir, dumps_ir, utc_now_iso, write_ir

_LAZY = {"LLMConfig": ".llm", "distill_llm": ".llm"}  # the LLM client loads urllib and jsonschema


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DistillStats",
    "LLMConfig",
    "build_ir",
    "compute_archetype",
    "distill_llm",
    "distill_structured",
    "dumps_ir",
    "utc_now_iso",
    "write_ir",
]
