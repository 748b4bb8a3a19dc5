"""memvelope_tools: Memvelope envelopes from ChatGPT and Claude exports, and the tools to analyse them.

>>> import memvelope_tools as mv
>>> env = mv.convert(mv.sample_path("claude"))          # doctest: +SKIP
>>> mv.write_envelope(env, "history.mve.json")           # doctest: +SKIP

Heavy optional parts (pandas frames, Parquet, plots) load only when first used.
"""

from __future__ import annotations

import importlib
from typing import Any

from .convert import ConversionError, convert, dump_canonical, dumps_canonical, write_envelope
from .doctor import doctor
from .errors import FormatError, LLMError, MemvelopeError, OutputError, ValidationError
from .load import load, sniff
from .read import read
from .validate import validate

__version__ = "0.1.0"

# name -> module that defines it; imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    "sample_path": "memvelope_tools.samples",
    "layer_of": "memvelope_tools.read",
    "conversations_frame": "memvelope_tools.frames",
    "messages_frame": "memvelope_tools.frames",
    "facts_frame": "memvelope_tools.frames",
    "to_parquet": "memvelope_tools.parquet",
    "read_parquet": "memvelope_tools.parquet",
    "compute_archetype": "memvelope_tools.ir",
    "write_ir": "memvelope_tools.ir",
    "distill_structured": "memvelope_tools.ir",
    "distill_llm": "memvelope_tools.ir",
    "archetype_frame": "memvelope_tools.frames",
}
_SUBMODULES = ("plot",)

__all__ = [
    "ConversionError",
    "FormatError",
    "LLMError",
    "MemvelopeError",
    "OutputError",
    "ValidationError",
    "convert",
    "doctor",
    "dump_canonical",
    "dumps_canonical",
    "load",
    "read",
    "sniff",
    "validate",
    "write_envelope",
    *_LAZY,
    *_SUBMODULES,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        return module
    raise AttributeError(f"module 'memvelope_tools' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
