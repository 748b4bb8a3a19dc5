"""The spec's field tables and vocabulary, derived from the packaged schemas (one source for every layer).

Field lists are the ``required`` lists of the schemas' definitions, in the spec's order; each field's
JSON types are those its schema allows; the vocabularies (roles, subject types, categories, styles)
are the schemas' enums without ``null``.
"""

from __future__ import annotations

from typing import Any, Final

from ._tags import ENVELOPE_TAG, IR_TAG
from .schema import load_schema

__all__ = [
    "ARCHETYPE_FIELDS",
    "CATEGORIES",
    "CONVERSATION_FIELDS",
    "FACT_FIELDS",
    "IR_META_FIELDS",
    "MESSAGE_FIELDS",
    "ROLES",
    "STYLES",
    "SUBJECT_TYPES",
    "field_types",
]

_ENVELOPE: Final = load_schema(ENVELOPE_TAG)["definitions"]
_IR: Final = load_schema(IR_TAG)["definitions"]
_PYTHON_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,),
    "null": (type(None),),
    "array": (list,),
    "object": (dict,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def _resolved(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    return _resolved(definitions[ref.rpartition("/")[2]], definitions) if ref else node


def _enum(node: dict[str, Any], definitions: dict[str, Any]) -> tuple[str, ...]:
    return tuple(v for v in _resolved(node, definitions)["enum"] if v is not None)


def _types(node: dict[str, Any], definitions: dict[str, Any]) -> tuple[type, ...]:
    node = _resolved(node, definitions)
    if "type" in node:
        names = node["type"] if isinstance(node["type"], list) else [node["type"]]
    else:  # an enum: strings, and null when listed
        names = ["string"] + (["null"] if None in node.get("enum", ()) else [])
    found: list[type] = []
    for name in names:
        found += [t for t in _PYTHON_TYPES[name] if t not in found]
    return tuple(found)


CONVERSATION_FIELDS: Final[tuple[str, ...]] = tuple(_ENVELOPE["conversation"]["required"])
MESSAGE_FIELDS: Final[tuple[str, ...]] = tuple(_ENVELOPE["message"]["required"])
FACT_FIELDS: Final[tuple[str, ...]] = tuple(_IR["fact"]["required"])
IR_META_FIELDS: Final[tuple[str, ...]] = tuple(_IR["meta"]["required"])
ARCHETYPE_FIELDS: Final[tuple[str, ...]] = tuple(_IR["archetype"]["required"])
ROLES: Final[tuple[str, ...]] = _enum(_ENVELOPE["message"]["properties"]["role"], _ENVELOPE)
SUBJECT_TYPES: Final[tuple[str, ...]] = _enum(_IR["fact"]["properties"]["subject_type"], _IR)
CATEGORIES: Final[tuple[str, ...]] = _enum(_IR["category"], _IR)
STYLES: Final[tuple[str, ...]] = _enum(_IR["archetype"]["properties"]["style"], _IR)


def field_types(definition: str, fields: tuple[str, ...] | None = None) -> tuple[tuple[str, tuple[type, ...]], ...]:
    """``(field, Python types of its JSON values)`` for the ``required`` fields (or ``fields``) of a
    schema definition: ``conversation``, ``message`` (envelope), ``meta``, ``archetype``, ``fact`` (Facts IR);
    ``bool`` is never an integer or a number here."""
    definitions = _ENVELOPE if definition in ("conversation", "message") else _IR
    node = definitions[definition]
    names = fields if fields is not None else tuple(node["required"])
    return tuple((name, _types(node["properties"][name], definitions)) for name in names)
