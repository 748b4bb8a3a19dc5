"""Small exports written by hand from the providers' shapes, for the tests of the whole export (files,
projects, cited memories): a ChatGPT conversation of given messages, and a download as a zip or a folder."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

T0 = 1_780_000_000  # 2026-05-28


def message(
    role: str, parts: list[Any], *, metadata: dict[str, Any] | None = None, at: int = 0, name: str | None = None
) -> dict[str, Any]:
    """One ChatGPT message (``multimodal_text`` when a part is an object), sent ``at`` seconds after T0."""
    kind = "multimodal_text" if any(isinstance(p, dict) for p in parts) else "text"
    return {
        "author": {"role": role, "name": name},
        "create_time": T0 + at,
        "content": {"content_type": kind, "parts": parts},
        "metadata": metadata or {},
    }


def chatgpt(cid: str, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A ChatGPT conversation whose messages follow each other (nodes ``n1``, ``n2`` ... under a null root)."""
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    parent = "root"
    for i, msg in enumerate(messages, 1):
        node = f"n{i}"
        mapping[parent]["children"].append(node)
        mapping[node] = {"id": node, "message": {"id": node, **msg}, "parent": parent, "children": []}
        parent = node
    return {
        "conversation_id": cid,
        "id": cid,
        "title": f"title of {cid}",
        "create_time": T0,
        "update_time": T0 + 1000,
        "current_node": parent,
        "mapping": mapping,
        **extra,
    }


def _bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value).encode("utf-8")


def write_zip(path: Path, members: dict[str, Any]) -> Path:
    """A zip of ``members`` (name -> bytes, text or a value written as JSON)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, value in members.items():
            archive.writestr(name, _bytes(value))
    return path


def write_folder(path: Path, members: dict[str, Any]) -> Path:
    """A folder of ``members`` (relative path -> bytes, text or a value written as JSON)."""
    for name, value in members.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_bytes(value))
    return path
