"""memvelope_tools: Memvelope envelopes from ChatGPT and Claude exports, and the tools to analyse them.

>>> import memvelope_tools as mv
>>> env = mv.convert(mv.sample_path("claude"))          # doctest: +SKIP
>>> mv.write_envelope(env, "history.mve.json")           # doctest: +SKIP

Heavy optional parts (pandas frames, Parquet, plots) load only when first used.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from .convert import ConversionError, convert, dump_canonical, dumps_canonical, write_envelope
from .errors import FormatError, MemvelopeError, OutputError, ValidationError

__version__ = "0.1.0"

# name -> module that defines it; imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    "sample_path": "memvelope_tools.samples",
    "read": "memvelope_tools.read",
    "conversations_frame": "memvelope_tools.frames",
    "messages_frame": "memvelope_tools.frames",
    "facts_frame": "memvelope_tools.frames",
    "to_parquet": "memvelope_tools.parquet",
    "read_parquet": "memvelope_tools.parquet",
    "validate": "memvelope_tools.validate",
    "compute_archetype": "memvelope_tools.ir",
    "write_ir": "memvelope_tools.ir",
    "distill_structured": "memvelope_tools.ir",
    "distill_llm": "memvelope_tools.ir",
    "doctor": "memvelope_tools.doctor",
}
_SUBMODULES = ("plot",)

__all__ = [
    "ConversionError",
    "FormatError",
    "MemvelopeError",
    "OutputError",
    "ValidationError",
    "convert",
    "dump_canonical",
    "dumps_canonical",
    "write_envelope",
    *_LAZY,
    *_SUBMODULES,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        _unshadow()
        return value
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        _unshadow()
        return module
    raise AttributeError(f"module 'memvelope_tools' has no attribute {name!r}")


def _unshadow() -> None:
    """Put functions back where importing their same-named submodule bound the module instead.

    Importing ``memvelope_tools.read`` (as ``frames`` does) sets the package attribute ``read`` to the
    module, hiding the lazily exported function ``read``; the same goes for ``validate`` and ``doctor``.
    """
    for lazy, module in _LAZY.items():
        current = globals().get(lazy)
        if isinstance(current, ModuleType) and current.__name__ == module == f"{__name__}.{lazy}":
            globals()[lazy] = getattr(current, lazy)


def __dir__() -> list[str]:
    return sorted(__all__)
