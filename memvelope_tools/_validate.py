"""Validate Memvelope documents of either layer, and a Facts IR against the envelope it came from.

:func:`validate` picks the schema from the document's in-document tag (top-level ``memvelope``, then
``meta.format``) and reports every violation with its JSON path and a rule name; it also checks the
counts the schema cannot express. :func:`check_ir_against_envelope` adds the checks that need the
source envelope: counts, archetype figures, ``convo_id`` membership, ``provenance`` form
(conformance B4) and that the facts' dates are sourced (the rule of :mod:`memvelope_tools._ir.dates`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from jsonschema import Draft7Validator
    from jsonschema import ValidationError as SchemaError

from ._ir.archetype import compute_archetype
from ._jsontypes import json_type
from ._plural import count

# The loader without read()'s shape check: validate reports every violation, not the first one.
from ._read import layer_of
from ._tags import ENVELOPE_TAG, IR_TAG
from .errors import FormatError
from .schema import SCHEMA_FILES, load_schema

#: ``imported:<provider>-export:<YYYY-MM>`` (conformance B4).
PROVENANCE: Final = re.compile(r"^imported:(?P<provider>[^:\s]+)-export:(?P<month>[0-9]{4}-(0[1-9]|1[0-2]))$")

#: How far a ratio in ``archetype`` may differ from the exact value (allows rounding to 2 decimals).
RATIO_TOLERANCE: Final = 0.005

_NAIVE_DATETIME = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PATTERN_HINTS: Final = {
    "generated_at": "an ISO 8601 datetime with an explicit offset (Z or +HH:MM)",
    "effective_date": "YYYY, YYYY-MM or YYYY-MM-DD",
    "in_text_date": "YYYY, YYYY-MM or YYYY-MM-DD",
    "ts": "YYYY-MM-DDTHH:mm:ss.sssZ",
    "created_at": "YYYY-MM-DDTHH:mm:ss.sssZ",
    "updated_at": "YYYY-MM-DDTHH:mm:ss.sssZ",
    "source_export_date": "YYYY-MM-DD or an ISO 8601 datetime with an offset",
    "id": "m1, m2, ...",
}
_CONST_RULES: Final = {"format": "format-not-ir", "memvelope": "memvelope-not-envelope"}


@dataclass(frozen=True, order=True)
class Violation:
    """One way a document breaks a rule: where (a JSON path such as ``$.facts[3].category``), which
    rule (a short kebab-case name), and why."""

    path: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: [{self.rule}] {self.message}"


def json_path(parts: Iterable[str | int]) -> str:
    """Render path elements as a JSONPath: ``["facts", 3, "x-y"]`` -> ``$.facts[3]['x-y']``."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.match(part):
            out += f".{part}"
        else:
            out += "[" + json.dumps(part, ensure_ascii=False).replace("'", "\\'")[1:-1].join("''") + "]"
    return out


def detect_format(doc: Any) -> str:
    """The document's format tag, read as :func:`memvelope_tools._read.layer_of` reads it (top-level
    ``memvelope`` first, then ``meta.format``); :class:`FormatError` naming the found and supported
    tags (``reason`` ``not-memvelope`` or ``unsupported-tag``) when it has no supported one."""
    return ENVELOPE_TAG if layer_of(doc) == "envelope" else IR_TAG


@functools.cache
def _validator(tag: str) -> Draft7Validator:
    from jsonschema import Draft7Validator  # imported on first use: it is slow to import

    return Draft7Validator(load_schema(SCHEMA_FILES[tag]))


def validate(doc: Any) -> list[Violation]:
    """Every violation of ``doc``'s schema plus its count rules, sorted by path then rule.

    Parameters
    ----------
    doc
        A parsed envelope or Facts IR document.

    Returns
    -------
    list of Violation
        Empty when ``doc`` conforms.

    Raises
    ------
    memvelope_tools.errors.FormatError
        ``doc`` carries no supported format tag.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> mv.validate(mv.convert(mv.sample_path("claude")))
    []
    """
    tag = detect_format(doc)
    found = {_violation(err) for err in _validator(tag).iter_errors(doc)}
    found.update(_envelope_counts(doc) if tag == ENVELOPE_TAG else _ir_counts(doc))
    return sorted(found, key=sort_key)


def sort_key(v: Violation) -> tuple[Any, ...]:
    """Order violations by JSON path (array indices numerically), then rule, then message."""
    parts = re.findall(r"\[(\d+)\]|\.([A-Za-z_][A-Za-z0-9_]*)|\['((?:[^'\\]|\\.)*)'\]", v.path)
    key = tuple((0, int(i), "") if i else (1, 0, a or b) for i, a, b in parts)
    return (key, v.rule, v.message)


# --- schema errors -> violations -------------------------------------------------------------------


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _kebab(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "value"


def _violation(err: SchemaError) -> Violation:
    path: list[str | int] = list(err.absolute_path)
    names = [p for p in path if isinstance(p, str)]
    field = names[-1] if names else "document"
    keyword = str(err.validator)
    inst: Any = err.instance
    value: Any = err.validator_value
    if "additionalProperties" in err.absolute_schema_path and len(names) >= 2:
        field = f"{names[-2]}-value"
    if "propertyNames" in err.absolute_schema_path:
        path.append(str(inst))
        return Violation(
            json_path(path),
            f"bad-{_kebab(field)}-key",
            f"{_short(inst)} is not an allowed key here; allowed: {_allowed(err.schema)}",
        )
    if keyword == "required":
        missing = next((k for k in value if err.message == f"{k!r} is a required property"), None)
        missing = missing if missing is not None else next(k for k in value if k not in inst)
        return Violation(
            json_path([*path, missing]),
            f"missing-{_kebab(missing)}-key",
            f"required key {missing!r} is missing (presence rule: a key is never omitted; "
            "an unknown value is written as null where the spec allows it)",
        )
    if keyword == "type":
        rule = (
            f"{_kebab(field)}-item-wrong-type" if path and isinstance(path[-1], int) else f"{_kebab(field)}-wrong-type"
        )
        expected = " or ".join(value) if isinstance(value, list) else value
        found = "is null" if inst is None else f"{_short(inst)} is {json_type(inst, article=True)}"
        return Violation(json_path(path), rule, f"{found}, expected {expected}")
    if keyword == "const":
        return Violation(
            json_path(path),
            _CONST_RULES.get(field, f"{_kebab(field)}-not-{_kebab(value)}"),
            f"{_short(inst)} is not {value!r}",
        )
    if keyword == "enum":
        return Violation(
            json_path(path), f"bad-{_kebab(field)}", f"{_short(inst)} is not one of {_allowed(err.schema)}"
        )
    if keyword == "maxLength":
        return Violation(
            json_path(path), f"{_kebab(field)}-over-{value}", f"is {len(inst)} characters long; at most {value} allowed"
        )
    if keyword in ("minLength", "minItems"):
        return Violation(json_path(path), f"empty-{_kebab(field)}", "must not be empty")
    if keyword == "pattern":
        if field == "generated_at" and isinstance(inst, str) and _NAIVE_DATETIME.match(inst):
            return Violation(
                json_path(path),
                "naive-generated-at",
                f"{_short(inst)} has no UTC offset; a naive timestamp names no instant (write Z or +HH:MM)",
            )
        hint = _PATTERN_HINTS.get(field, f"the pattern {value}")
        return Violation(json_path(path), f"bad-{_kebab(field)}", f"{_short(inst)} is not {hint}")
    if keyword in ("minimum", "maximum"):
        bound = ">=" if keyword == "minimum" else "<="
        return Violation(
            json_path(path), f"{_kebab(field)}-out-of-range", f"{_short(inst)} is out of range; must be {bound} {value}"
        )
    return Violation(json_path(path), f"{_kebab(field)}-{_kebab(keyword)}", err.message[:200])


def _allowed(schema: Any) -> str:
    values = schema.get("enum", []) if isinstance(schema, dict) else []
    return ", ".join(_short(v) for v in values)


# --- rules the schema cannot express ---------------------------------------------------------------


def _envelope_counts(doc: Mapping[str, Any]) -> list[Violation]:
    meta, convs = doc.get("meta"), doc.get("conversations")
    if not isinstance(meta, dict) or not isinstance(convs, list):
        return []
    out = []
    stated = meta.get("conversation_count")
    if _is_int(stated) and stated != len(convs):
        out.append(
            Violation(
                "$.meta.conversation_count",
                "conversation-count-mismatch",
                f"is {stated} but conversations has {count(len(convs), 'entry')}",
            )
        )
    total = sum(len(c["messages"]) for c in convs if isinstance(c, dict) and isinstance(c.get("messages"), list))
    stated = meta.get("message_count")
    if _is_int(stated) and stated != total:
        out.append(
            Violation(
                "$.meta.message_count",
                "message-count-mismatch",
                f"is {stated} but the conversations hold {count(total, 'message')}",
            )
        )
    return out


def _ir_counts(doc: Mapping[str, Any]) -> list[Violation]:
    facts = doc.get("facts")
    if not isinstance(facts, list):
        return []
    out = []
    for section, rule in (("meta", "facts-count-mismatch"), ("archetype", "archetype-facts-mismatch")):
        block = doc.get(section)
        stated = block.get("facts") if isinstance(block, dict) else None
        if _is_int(stated) and stated != len(facts):
            out.append(Violation(f"$.{section}.facts", rule, f"is {stated} but facts has {count(len(facts), 'entry')}"))
    return out


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- cross-checks against the source envelope ------------------------------------------------------


@dataclass
class _Convo:
    dates: set[str]
    timestamps: list[str]
    months: set[str]


def _index(conv: Mapping[str, Any]) -> _Convo:
    from ._ir.dates import stated_dates  # the date rules load only for the cross-checks

    dates: set[str] = set()
    stamps: list[str] = []
    created = conv.get("created_at")
    if isinstance(created, str):
        stamps.append(created)
    for msg in conv.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        if isinstance(msg.get("text"), str):
            dates |= stated_dates(msg["text"])
        if isinstance(msg.get("ts"), str):
            stamps.append(msg["ts"])
    # conformance B4: the month of created_at; when that is null, a month of the conversation's messages.
    months = {created[:7]} if isinstance(created, str) else {s[:7] for s in stamps}
    return _Convo(dates, stamps, months)


def check_ir_against_envelope(ir: Mapping[str, Any], envelope: Mapping[str, Any]) -> list[Violation]:
    """What the schema cannot check: the IR's counts and archetype against its facts, and each fact
    against ``envelope`` (the one it was distilled from). Sorted like :func:`validate`.

    Raises :class:`FormatError` when ``ir`` is not ``memvelope-ir-v0`` or ``envelope`` not ``envelope-v0``.
    """
    if detect_format(ir) != IR_TAG:
        raise FormatError(
            f"the first document is not a Facts IR (meta.format {IR_TAG!r})", reason="unsupported-tag", path="$"
        )
    if detect_format(envelope) != ENVELOPE_TAG:
        raise FormatError(
            f"the source is not an envelope (memvelope {ENVELOPE_TAG!r})", reason="unsupported-tag", path="$"
        )
    out = set(_ir_counts(ir))
    raw_facts = ir.get("facts")
    facts: list[Any] = raw_facts if isinstance(raw_facts, list) else []
    out.update(_archetype_agreement(ir.get("archetype"), [f for f in facts if isinstance(f, dict)]))

    env_meta = envelope.get("meta")
    provider = env_meta.get("source_provider") if isinstance(env_meta, dict) else None
    ir_meta = ir.get("meta")
    ir_provider = ir_meta.get("provider") if isinstance(ir_meta, dict) else None
    if isinstance(provider, str) and ir_provider != provider:
        out.add(
            Violation(
                "$.meta.provider",
                "provider-mismatch",
                f"is {_short(ir_provider)} but the envelope's source_provider is {provider!r}",
            )
        )

    convs = [c for c in envelope.get("conversations") or [] if isinstance(c, dict)]
    by_id: dict[str, list[Mapping[str, Any]]] = {}
    for conv in convs:
        if isinstance(conv.get("id"), str):
            by_id.setdefault(conv["id"], []).append(conv)
    cache: dict[str | None, _Convo] = {}

    def index_for(cid: str | None) -> _Convo:
        if cid not in cache:
            parts = [_index(c) for c in (by_id[cid] if cid is not None else convs)]
            cache[cid] = _Convo(
                set().union(*(p.dates for p in parts)),
                [s for p in parts for s in p.timestamps],
                set().union(*(p.months for p in parts)),
            )
        return cache[cid]

    for i, fact in enumerate(facts):
        if isinstance(fact, dict):
            out.update(_fact_checks(i, fact, provider, by_id, index_for))
    return sorted(out, key=sort_key)


def _fact_checks(
    i: int, fact: Mapping[str, Any], provider: Any, by_id: Mapping[str, Any], index_for: Any
) -> list[Violation]:
    from ._ir.dates import DATE_VALUE, is_timestamp_prefix

    out: list[Violation] = []
    where = f"$.facts[{i}]"
    cid = fact.get("convo_id")
    if isinstance(cid, str) and cid not in by_id:
        out.append(
            Violation(
                f"{where}.convo_id",
                "unknown-convo-id",
                f"fact {i}: {_short(cid)} is not the id of any conversation in the envelope",
            )
        )
        return out
    source: _Convo = index_for(cid if isinstance(cid, str) else None)
    prov = fact.get("provenance")
    if isinstance(prov, str):
        m = PROVENANCE.match(prov)
        if not m:
            out.append(
                Violation(
                    f"{where}.provenance",
                    "bad-provenance-form",
                    f"fact {i}: {_short(prov)} is not imported:<provider>-export:<YYYY-MM>",
                )
            )
        elif isinstance(provider, str) and m.group("provider") != provider:
            out.append(
                Violation(
                    f"{where}.provenance",
                    "provenance-provider-mismatch",
                    f"fact {i}: names provider {m.group('provider')!r}, the envelope is {provider!r}",
                )
            )
        elif isinstance(cid, str) and source.months and m.group("month") not in source.months:
            out.append(
                Violation(
                    f"{where}.provenance",
                    "provenance-month-mismatch",
                    f"fact {i}: month {m.group('month')} is not the month of conversation "
                    f"{_short(cid)} ({', '.join(sorted(source.months))})",
                )
            )
    text_date = fact.get("in_text_date")
    if isinstance(text_date, str) and DATE_VALUE.match(text_date) and text_date not in source.dates:
        out.append(
            Violation(
                f"{where}.in_text_date",
                "in-text-date-not-in-source",
                f"fact {i}: {text_date} is not stated in the text of {_cited(cid)}",
            )
        )
    eff = fact.get("effective_date")
    if (
        isinstance(eff, str)
        and DATE_VALUE.match(eff)
        and eff not in source.dates
        and not is_timestamp_prefix(eff, source.timestamps)
    ):
        out.append(
            Violation(
                f"{where}.effective_date",
                "effective-date-not-in-source",
                f"fact {i}: {eff} is neither stated in the text of {_cited(cid)} nor a prefix of its timestamps",
            )
        )
    return out


def _cited(cid: Any) -> str:
    return f"conversation {_short(cid)}" if isinstance(cid, str) else "any conversation (convo_id is null)"


def _archetype_agreement(arch: Any, facts: Sequence[Mapping[str, Any]]) -> list[Violation]:
    if not isinstance(arch, dict):
        return []
    expected = compute_archetype(facts)
    out = []
    for key in ("self_ratio", "distinct_entities", "categories", "belief_ratio"):
        if key not in arch:
            continue
        got, want = arch[key], expected[key]
        if got is None and want is None:
            continue
        if got is None:
            why = f"is null although every fact has the {_needs(key)} it is computed from ({_short(want)})"
        elif want is None:
            why = f"is {_short(got)} although some facts have a null {_needs(key)}, so it cannot be known"
        elif key.endswith("_ratio"):
            if isinstance(got, (int, float)) and abs(got - want) <= RATIO_TOLERANCE:
                continue
            why = f"is {_short(got)} but the facts give {want:.4f}"
        elif got == want:
            continue
        else:
            why = f"is {_short(got)} but the facts give {_short(want)}"
        out.append(Violation(f"$.archetype.{key}", "archetype-mismatch", why))
    return out


def _needs(key: str) -> str:
    return "subject" if key in ("self_ratio", "distinct_entities") else "category"
