"""One exception tree for the whole toolkit, each error with a machine-readable reason.

Every reason is listed in :data:`Reason` and explained in ``docs/errors.md``.
"""

from __future__ import annotations

from typing import Literal

Reason = Literal[
    # reading an export (convert, doctor)
    "not-found",
    "unreadable",
    "changed",
    "bad-zip",
    "zip-limit",
    "no-parts",
    "invalid-json",
    "too-deep",
    "no-provider",
    "unsupported-provider",
    "no-conversations",
    # reading a Memvelope document (read, load, frames, validate)
    "not-utf8",
    "text-mode",
    "bad-source",
    "not-memvelope",
    "unsupported-tag",
    "bad-shape",
    "bad-timestamp",
    "wrong-layer",
    "not-envelope",
    "invalid-envelope",
    "bad-parquet",
    "bad-history",
    "bad-manifest",
    "bad-vault",
    # writing
    "output",
    "not-json",
    "invalid-ir",
    # reports and plots
    "no-input",
    "bad-tz",
    "wrong-frame",
    # the LLM distiller
    "llm-not-configured",
    "llm-unreachable",
    "llm-http",
    "llm-failed",
    # search and topics
    "bad-query",
    "bad-index",
    "no-text",
    # raised without a more specific reason
    "error",
]


class MemvelopeError(Exception):
    """Base of every error this package raises on purpose."""

    reason: Reason = "error"

    def __init__(
        self, msg: str, *, reason: Reason | None = None, source: str | None = None, path: str | None = None
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
    """An export could not be converted to an envelope."""


class FormatError(MemvelopeError, ValueError):
    """A document is not a Memvelope document of a supported layer and version."""


class InputError(ConversionError, FormatError):
    """An input is not something this toolkit reads: missing, empty, not JSON, a file of another kind.

    Raised the same way, with the same message and ``reason``, by every function and command. It is
    both a :class:`ConversionError` and a :class:`FormatError`, so handlers of either catch it.
    """


class ValidationError(MemvelopeError, ValueError):
    """A document does not conform to its schema or to a rule the schema cannot express."""


class OutputError(MemvelopeError, OSError):
    """An output file could not be written; any previous file at that path is intact."""


class LLMError(MemvelopeError):
    """The LLM distiller is not configured, or its endpoint could not be reached or gave no usable answer."""


class QueryError(MemvelopeError, ValueError):
    """A search query cannot be run (``reason`` ``bad-query``); the message says what is wrong with it."""

    reason: Reason = "bad-query"


class SearchIndexError(MemvelopeError, RuntimeError):
    """The search engine failed on an index (``reason`` ``bad-index``): damaged files, or a request the
    engine could not carry out; the message says which index and what failed."""

    reason: Reason = "bad-index"


class TopicsError(MemvelopeError, ValueError):
    """Topics cannot be found in a history (``reason`` ``no-text``: nothing left to model)."""

    reason: Reason = "no-text"


class MixedProvidersWarning(UserWarning):
    """One conversion was given conversations of both providers: those of the provider not kept were left out.

    ``provider`` is the provider kept (``"chatgpt"`` or ``"claude"``) and ``left_out`` how many
    conversations of the other one were dropped; the message says why and how to convert each.
    """

    def __init__(self, msg: str, *, provider: str, left_out: int) -> None:
        super().__init__(msg)
        self.provider = provider
        self.left_out = left_out
