"""Layer 1: provider exports to ``envelope-v0`` documents, a pure function of the export bytes.

The modules, in the order data goes through them: :mod:`.sources` (inputs to parts), :mod:`.elements`
(the one JSON reader), :mod:`.assemble` (detect the provider, normalise each element), :mod:`.envelope`
(the envelope and its canonical bytes), with :mod:`.pipeline` running them. This module only re-exports,
each name loaded on first use, so that a command needing only ``ZipLimits`` or ``ConversionLog`` does
not load the whole pipeline.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..errors import ConversionError

if TYPE_CHECKING:
    from .assemble import DETECTION_WINDOW, NORMALISERS, detect_provider
    from .canonical import dump_canonical, dumps_canonical
    from .envelope import Envelope, build_envelope, dumps_envelope
    from .log import ConversionLog
    from .pipeline import convert, convert_body, convert_parts, convert_stream, write_envelope
    from .sources import Expansion, Part, ZipLimits, expand

# name -> submodule that defines it; imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    "DETECTION_WINDOW": "assemble",
    "NORMALISERS": "assemble",
    "detect_provider": "assemble",
    "dump_canonical": "canonical",
    "dumps_canonical": "canonical",
    "Envelope": "envelope",
    "build_envelope": "envelope",
    "dumps_envelope": "envelope",
    "ConversionLog": "log",
    "convert": "pipeline",
    "convert_body": "pipeline",
    "convert_parts": "pipeline",
    "convert_stream": "pipeline",
    "write_envelope": "pipeline",
    "Expansion": "sources",
    "Part": "sources",
    "ZipLimits": "sources",
    "expand": "sources",
}

__all__ = [
    "DETECTION_WINDOW",
    "NORMALISERS",
    "ConversionError",
    "ConversionLog",
    "Envelope",
    "Expansion",
    "Part",
    "ZipLimits",
    "build_envelope",
    "convert",
    "convert_body",
    "convert_parts",
    "convert_stream",
    "detect_provider",
    "dump_canonical",
    "dumps_canonical",
    "dumps_envelope",
    "expand",
    "write_envelope",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
