"""memvelope_tools: Memvelope envelopes from ChatGPT and Claude exports, and the tools to analyse them.

>>> import memvelope_tools as mv
>>> env = mv.convert(mv.sample_path("claude"))          # doctest: +SKIP
>>> mv.write_envelope(env, "history.mve.json")           # doctest: +SKIP

Heavy optional parts (pandas frames, Parquet, plots) load only when first used.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from .convert import ConversionError, convert, dump_canonical, dumps_canonical, write_envelope
from .doctor import doctor
from .errors import (
    FormatError,
    LLMError,
    MemvelopeError,
    OutputError,
    QueryError,
    TopicsError,
    ValidationError,
)
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
    "search": "memvelope_tools.search",
    "topics": "memvelope_tools.topics",
}
_SUBMODULES = ("plot",)

__all__ = [
    "ConversionError",
    "FormatError",
    "LLMError",
    "MemvelopeError",
    "OutputError",
    "QueryError",
    "TopicsError",
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


class _Package(types.ModuleType):
    """This package's module type: importing a submodule never hides the function of the same name."""

    def __setattr__(self, name: str, value: Any) -> None:
        # The import system sets ``memvelope_tools.search`` to the submodule once it is loaded;
        # the public name is the function it defines.
        if isinstance(value, types.ModuleType) and _LAZY.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


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
