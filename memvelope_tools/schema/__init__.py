"""The packaged JSON Schemas (draft-07) of both Memvelope layers."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

#: Schema file name for each supported in-document format tag: each file is named after its tag.
SCHEMA_FILES: dict[str, str] = {
    name.removesuffix(".schema.json"): name
    for name in sorted(entry.name for entry in resources.files(__name__).iterdir())
    if name.endswith(".schema.json")
}


@functools.cache
def _load(name: str) -> str:
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def load_schema(name: str) -> dict[str, Any]:
    """Return a fresh copy of a packaged schema, by format tag (``"envelope-v0"``) or file name."""
    file_name = SCHEMA_FILES.get(name, name)
    if file_name not in SCHEMA_FILES.values():
        known = ", ".join(sorted(SCHEMA_FILES))
        raise KeyError(f"no packaged schema named {name!r}; known: {known}")
    schema: dict[str, Any] = json.loads(_load(file_name))
    return schema
