"""Building and writing Facts IR documents (``memvelope-ir-v0``)."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from .._atomic import atomic_write
from .._tags import IR_TAG
from .._validate import validate
from ..errors import ValidationError
from .archetype import compute_archetype

# Key order of the spec's example document; keys not listed here follow in their own order.
TOP_KEYS: Final = ("meta", "archetype", "facts")
META_KEYS: Final = ("provider", "mode", "facts", "generated_at", "format")
ARCHETYPE_KEYS: Final = ("style", "facts", "self_ratio", "distinct_entities", "categories", "belief_ratio")
FACT_KEYS: Final = (
    "subject",
    "subject_type",
    "category",
    "content",
    "effective_date",
    "in_text_date",
    "provenance",
    "convo_id",
)

#: A clock returns either an aware ``datetime`` or integer nanoseconds since the Unix epoch.
Clock = Callable[[], "datetime | int"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def utc_now_iso(clock: Clock | None = None) -> str:
    """The current instant as ``YYYY-MM-DDTHH:mm:ss.ffffffZ`` in UTC, fractions truncated, never rounded.

    ``clock`` defaults to :func:`time.time_ns`; it may return integer nanoseconds or an aware datetime
    (a naive one is refused: it names no instant).
    """
    now = (clock or time.time_ns)()
    if isinstance(now, datetime):
        if now.tzinfo is None or now.utcoffset() is None:
            raise ValueError("clock returned a naive datetime; an instant needs an offset")
        utc = now.astimezone(UTC)
        return utc.strftime("%Y-%m-%dT%H:%M:%S") + f".{utc.microsecond:06d}Z"
    if isinstance(now, bool) or not isinstance(now, int):
        raise TypeError("clock must return an aware datetime or integer nanoseconds")
    seconds, nanos = divmod(now, 1_000_000_000)
    whole = datetime.fromtimestamp(seconds, UTC)
    return whole.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"


def build_ir(
    provider: str, mode: str, facts: Sequence[Mapping[str, Any]], *, clock: Clock | None = None
) -> dict[str, Any]:
    """Assemble a Facts IR document: ``meta`` (stamped now), the computed ``archetype``, ``facts``."""
    fact_list = [_ordered(f, FACT_KEYS) for f in facts]
    return {
        "meta": {
            "provider": provider,
            "mode": mode,
            "facts": len(fact_list),
            "generated_at": utc_now_iso(clock),
            "format": IR_TAG,
        },
        "archetype": compute_archetype(fact_list),
        "facts": fact_list,
    }


def _ordered(obj: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    out = {k: obj[k] for k in keys if k in obj}
    out.update((k, v) for k, v in obj.items() if k not in out)
    return out


def order_ir(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``doc`` with the spec example's key order at every level it defines."""
    out = _ordered(doc, TOP_KEYS)
    if isinstance(out.get("meta"), Mapping):
        out["meta"] = _ordered(out["meta"], META_KEYS)
    if isinstance(out.get("archetype"), Mapping):
        out["archetype"] = _ordered(out["archetype"], ARCHETYPE_KEYS)
    if isinstance(out.get("facts"), list):
        out["facts"] = [_ordered(f, FACT_KEYS) if isinstance(f, Mapping) else f for f in out["facts"]]
    return out


def dumps_ir(doc: Mapping[str, Any]) -> bytes:
    """Serialise a Facts IR document as UTF-8 JSON with two-space indentation, spec key order.

    The layout is that of ``JSON.stringify(doc, null, 2)`` (no trailing newline); a lone surrogate in
    a string is written as a ``\\udxxx`` escape so the output is always valid UTF-8.
    """
    try:
        text = json.dumps(order_ir(doc), ensure_ascii=False, indent=2, allow_nan=False)
    except ValueError as exc:
        raise ValidationError(f"cannot serialise Facts IR: {exc}", reason="not-json") from exc
    text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    return text.encode("utf-8")


def write_ir(doc: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Validate ``doc`` against ``memvelope-ir-v0`` and write it to ``path`` atomically.

    A document that does not conform is not written, and an existing file at ``path`` is left untouched.

    Parameters
    ----------
    doc
        The Facts IR document.
    path
        The file to write.

    Returns
    -------
    None

    Raises
    ------
    memvelope_tools.errors.ValidationError
        ``doc`` breaks the schema (``invalid-ir``) or holds a value JSON cannot represent (``not-json``).
    memvelope_tools.errors.OutputError
        The file cannot be written.

    Examples
    --------
    >>> import tempfile, os, memvelope_tools as mv
    >>> ir = mv.distill_structured(mv.convert(mv.sample_path("claude")))
    >>> mv.write_ir(ir, os.path.join(tempfile.mkdtemp(), "facts.mv.json"))
    """

    violations = validate(doc)
    if violations:
        shown = "; ".join(str(v) for v in violations[:3])
        more = f" (+{len(violations) - 3} more)" if len(violations) > 3 else ""
        raise ValidationError(
            f"refusing to write an invalid Facts IR: {shown}{more}", reason="invalid-ir", source=os.fspath(path)
        )
    atomic_write(path, dumps_ir(doc))
