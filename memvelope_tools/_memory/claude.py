"""What Claude remembered: its memory files, beside the conversations or in a zip of their own."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import PurePosixPath

from .._convert.sources import Part, ZipLimits, side_parts
from .._json.elements import JS, Reader, load_part
from .items import Seen, Sink


def _is_memory_name(name: str) -> bool:
    path = PurePosixPath(name)
    return path.suffix == ".json" and (path.name == "memories.json" or "memories" in path.parts[:-1])


def _is_memory_zip(name: str) -> bool:
    base = PurePosixPath(name).name
    return base.startswith("memories") and base.endswith(".zip")


def memory_parts(paths: Sequence[str | os.PathLike[str]], limits: ZipLimits) -> list[Part]:
    """Claude memory files among the inputs: ``memories.json`` or ``memories/*.json`` in a folder or zip
    (also inside a ``memories*.zip``), or given as files.

    Parameters
    ----------
    paths
        The export's inputs, as ``convert`` takes them.
    limits
        Limits against zip bombs.

    Returns
    -------
    list of Part
        The memory files, in input order, then path order.

    Raises
    ------
    ConversionError
        When a zip cannot be opened.

    Examples
    --------
    >>> [p.name for p in memory_parts(["claude-export/"], ZipLimits())]  # doctest: +SKIP
    ['claude-export/memories.json']
    """
    return side_parts(paths, _is_memory_name, _is_memory_zip, limits)


def claude_memory_file(part: Part, seen: Sink) -> None:
    value = load_part(part, Reader(JS))
    objects = value if type(value) is list else [value]
    for obj in objects:
        if type(obj) is not dict:
            continue
        account = obj.get("account_uuid") if type(obj.get("account_uuid")) is str else None
        where = part.name
        text = obj.get("conversations_memory")
        if type(text) is str and text.strip():
            seen.append(Seen("claude_account", text.strip(), None, where, key=account or "account"))
        projects = obj.get("project_memories")
        for project, ptext in projects.items() if type(projects) is dict else ():
            if type(ptext) is str and ptext.strip():
                seen.append(Seen("claude_project", ptext.strip(), None, where, project_id=project, key=project))
