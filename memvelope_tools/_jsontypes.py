"""The name of a value's JSON type, as error messages and ``memvelope doctor`` print it."""

from __future__ import annotations

from typing import Final

_NAMES: Final[dict[type, str]] = {
    type(None): "null",
    bool: "boolean",
    int: "number",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


def json_type(value: object, *, article: bool = False) -> str:
    """``null``, ``boolean``, ``number``, ``string``, ``array`` or ``object`` for a parsed JSON value.

    With ``article``: ``a string``, ``an object``, ... (``null`` stays bare). A value JSON cannot hold
    (only possible in a document built in Python) is named by its Python type, without an article.
    """
    name = _NAMES.get(type(value))
    if name is None:
        return type(value).__name__
    if not article or name == "null":
        return name
    return ("an " if name[0] in "ao" else "a ") + name
