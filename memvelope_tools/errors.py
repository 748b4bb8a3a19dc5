"""One exception tree for the whole toolkit, each error with a machine-readable reason."""

from __future__ import annotations


class MemvelopeError(Exception):
    """Base of every error this package raises on purpose."""

    reason: str = "error"

    def __init__(
        self, msg: str, *, reason: str | None = None, source: str | None = None, path: str | None = None
    ) -> None:
        if reason is not None:
            self.reason = reason
        self.msg = msg
        self.source = source
        self.path = path
        where = ""
        if source is not None and path:
            where = f" (in {source} at {path})"
        elif source is not None:
            where = f" (in {source})"
        elif path:
            where = f" (at {path})"
        super().__init__(f"{msg}{where}")


class ConversionError(MemvelopeError, ValueError):
    """An export could not be converted to an envelope.

    ``reason`` is one of: ``invalid-json``, ``too-deep``, ``no-provider``, ``no-conversations``,
    ``not-found``, ``unreadable``, ``bad-zip``, ``no-parts``, ``zip-limit``.
    """


class FormatError(MemvelopeError, ValueError):
    """A document is not a Memvelope document of a supported layer and version."""


class ValidationError(MemvelopeError, ValueError):
    """A document does not conform to its schema or to a rule the schema cannot express."""


class OutputError(MemvelopeError, OSError):
    """An output file could not be written; any previous file at that path is intact."""


class QueryError(MemvelopeError, ValueError):
    """A search query cannot be run (``reason`` ``bad-query``); the message says what is wrong with it."""

    reason = "bad-query"


class TopicsError(MemvelopeError, ValueError):
    """Topics cannot be found in a history (``reason`` ``no-text``: nothing left to model)."""

    reason = "no-text"
