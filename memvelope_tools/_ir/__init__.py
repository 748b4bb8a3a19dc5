"""Layer 2, the Facts IR (``memvelope-ir-v0``): archetype, writer and the two distillers.

Each name loads its module on first use (PEP 562), so that reading the archetype rules (as
``validate`` does) does not load the distillers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .archetype import compute_archetype
    from .distill import distill_structured
    from .facts import DistillStats
    from .llm import LLMConfig, distill_llm
    from .write import build_ir, dumps_ir, utc_now_iso, write_ir

_LAZY = {
    "compute_archetype": ".archetype",
    "DistillStats": ".facts",
    "distill_structured": ".distill",
    "build_ir": ".write",
    "dumps_ir": ".write",
    "utc_now_iso": ".write",
    "write_ir": ".write",
    "LLMConfig": ".llm",  # the LLM client loads urllib and jsonschema
    "distill_llm": ".llm",
}


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
