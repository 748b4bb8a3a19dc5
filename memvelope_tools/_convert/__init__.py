"""Layer 1: provider exports to ``envelope-v0`` documents, a pure function of the export bytes.

The modules, in the order data goes through them: :mod:`.sources` (inputs to parts), :mod:`.elements`
(the one JSON reader), :mod:`.assemble` (detect the provider, normalise each element), :mod:`.envelope`
(the envelope and its canonical bytes), with :mod:`.pipeline` running them. This module only re-exports.
"""

from __future__ import annotations

from ..errors import ConversionError
from .assemble import DETECTION_WINDOW, NORMALISERS, detect_provider
from .canonical import dump_canonical, dumps_canonical
from .envelope import Envelope, build_envelope, dumps_envelope
from .log import ConversionLog
from .pipeline import convert, convert_parts, convert_stream, write_envelope
from .sources import Expansion, Part, ZipLimits, expand

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
    "convert_parts",
    "convert_stream",
    "detect_provider",
    "dump_canonical",
    "dumps_canonical",
    "dumps_envelope",
    "expand",
    "write_envelope",
]
