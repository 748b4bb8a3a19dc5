"""memvelope_tools: Memvelope envelopes from ChatGPT and Claude exports, and the tools to analyse them.

>>> import memvelope_tools as mv
>>> env = mv.convert(mv.sample_path("claude"))          # doctest: +SKIP
>>> mv.write_envelope(env, "history.mve.json")           # doctest: +SKIP

Heavy optional parts (pandas frames, Parquet, plots) load only when first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._convert import ConversionError, convert, dump_canonical, dumps_canonical, write_envelope
from ._doctor import doctor
from ._load import load, sniff
from ._read import read
from ._validate import validate
from .errors import (
    FormatError,
    LLMError,
    MemvelopeError,
    OutputError,
    QueryError,
    TopicsError,
    ValidationError,
)

__version__ = "0.1.0"

if TYPE_CHECKING:  # the real signatures of the lazy names, for type checkers and editors
    from . import plot
    from ._frames import archetype_frame, conversations_frame, facts_frame, messages_frame
    from ._ir import compute_archetype, distill_llm, distill_structured, write_ir
    from ._parquet import read_parquet
    from ._read import layer_of
    from ._search import search
    from ._tables import to_parquet
    from ._topics import topics
    from .samples import sample_path

# name -> module that defines it; imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    "sample_path": "memvelope_tools.samples",
    "layer_of": "memvelope_tools._read",
    "conversations_frame": "memvelope_tools._frames",
    "messages_frame": "memvelope_tools._frames",
    "facts_frame": "memvelope_tools._frames",
    "to_parquet": "memvelope_tools._tables",
    "read_parquet": "memvelope_tools._parquet",
    "compute_archetype": "memvelope_tools._ir",
    "write_ir": "memvelope_tools._ir",
    "distill_structured": "memvelope_tools._ir",
    "distill_llm": "memvelope_tools._ir",
    "archetype_frame": "memvelope_tools._frames",
    "search": "memvelope_tools._search",
    "topics": "memvelope_tools._topics",
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
    "archetype_frame",
    "compute_archetype",
    "conversations_frame",
    "convert",
    "distill_llm",
    "distill_structured",
    "doctor",
    "dump_canonical",
    "dumps_canonical",
    "facts_frame",
    "layer_of",
    "load",
    "messages_frame",
    "plot",
    "read",
    "read_parquet",
    "sample_path",
    "search",
    "sniff",
    "to_parquet",
    "topics",
    "validate",
    "write_envelope",
    "write_ir",
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
