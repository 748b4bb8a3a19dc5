"""memvelope_tools: Memvelope envelopes from ChatGPT and Claude exports, and the tools to analyse them.

>>> import memvelope_tools as mv
>>> env = mv.convert(mv.sample_path("claude"))          # doctest: +SKIP
>>> mv.write_envelope(env, "history.mve.json")           # doctest: +SKIP

Heavy optional parts (pandas frames, Parquet, plots) load only when first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    ConversionError,
    FormatError,
    InputError,
    LLMError,
    MemvelopeError,
    OutputError,
    QueryError,
    SearchIndexError,
    TopicsError,
    ValidationError,
)

__version__ = "0.1.0"

if TYPE_CHECKING:  # the real signatures of the lazy names, for type checkers and editors
    from . import plot
    from ._convert import dump_canonical, dumps_canonical, write_envelope
    from ._doctor import doctor
    from ._frames.envelopes import conversations_frame, messages_frame
    from ._frames.facts import archetype_frame, facts_frame
    from ._history.diff import diff
    from ._history.folder import read_history
    from ._history.history import history
    from ._history_folder import add_to_history
    from ._ir import compute_archetype, distill_llm, distill_structured, write_ir
    from ._load import convert, load, read, sniff
    from ._many import convert_many
    from ._memory.frame import memory_frame
    from ._memory_ir import memory_ir
    from ._read import layer_of
    from ._search.function import search
    from ._sqlite import to_sqlite
    from ._tables import read_parquet, to_parquet
    from ._topics import topics
    from ._validate import validate
    from ._vault.vault import to_markdown
    from ._whole.frames import assets_frame, projects_frame
    from ._whole.inventory import inventory
    from ._whole.nodes import nodes_frame
    from .samples import history_samples, sample_path

# name -> module that defines it; imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    "convert": "memvelope_tools._load",
    "dump_canonical": "memvelope_tools._convert",
    "dumps_canonical": "memvelope_tools._convert",
    "write_envelope": "memvelope_tools._convert",
    "doctor": "memvelope_tools._doctor",
    "load": "memvelope_tools._load",
    "sniff": "memvelope_tools._load",
    "read": "memvelope_tools._load",
    "validate": "memvelope_tools._validate",
    "sample_path": "memvelope_tools.samples",
    "layer_of": "memvelope_tools._read",
    "conversations_frame": "memvelope_tools._frames.envelopes",
    "messages_frame": "memvelope_tools._frames.envelopes",
    "facts_frame": "memvelope_tools._frames.facts",
    "to_parquet": "memvelope_tools._tables",
    "convert_many": "memvelope_tools._many",
    "read_parquet": "memvelope_tools._tables",
    "to_sqlite": "memvelope_tools._sqlite",
    "compute_archetype": "memvelope_tools._ir",
    "write_ir": "memvelope_tools._ir",
    "distill_structured": "memvelope_tools._ir",
    "distill_llm": "memvelope_tools._ir",
    "archetype_frame": "memvelope_tools._frames.facts",
    "search": "memvelope_tools._search.function",
    "topics": "memvelope_tools._topics",
    "diff": "memvelope_tools._history.diff",
    "history": "memvelope_tools._history.history",
    "add_to_history": "memvelope_tools._history_folder",
    "read_history": "memvelope_tools._history.folder",
    "history_samples": "memvelope_tools.samples",
    # what the provider remembered about the user
    "memory_frame": "memvelope_tools._memory.frame",
    "memory_ir": "memvelope_tools._memory_ir",
    # the whole export: the files uploaded and generated, the projects and custom GPTs
    "assets_frame": "memvelope_tools._whole.frames",
    "projects_frame": "memvelope_tools._whole.frames",
    # what the export holds beyond the envelope's prose
    "nodes_frame": "memvelope_tools._whole.nodes",
    "inventory": "memvelope_tools._whole.inventory",
    # one Markdown note per conversation, kept current
    "to_markdown": "memvelope_tools._vault.vault",
}
_SUBMODULES = ("plot",)

__all__ = [
    "ConversionError",
    "FormatError",
    "InputError",
    "LLMError",
    "MemvelopeError",
    "OutputError",
    "QueryError",
    "SearchIndexError",
    "TopicsError",
    "ValidationError",
    "add_to_history",
    "archetype_frame",
    "assets_frame",
    "compute_archetype",
    "conversations_frame",
    "convert",
    "convert_many",
    "diff",
    "distill_llm",
    "distill_structured",
    "doctor",
    "dump_canonical",
    "dumps_canonical",
    "facts_frame",
    "history",
    "history_samples",
    "inventory",
    "layer_of",
    "load",
    "memory_frame",
    "memory_ir",
    "messages_frame",
    "nodes_frame",
    "plot",
    "projects_frame",
    "read",
    "read_history",
    "read_parquet",
    "sample_path",
    "search",
    "sniff",
    "to_markdown",
    "to_parquet",
    "to_sqlite",
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
