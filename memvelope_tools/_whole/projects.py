"""The projects and custom GPTs an export's conversations use, and Claude's projects.

Where they are found:

* Claude: ``projects.json`` (also inside ``projects-*.zip``), an array of ``{uuid, name, description,
  prompt_template, created_at, updated_at, docs: [{uuid, filename, content, created_at}]}``. A conversation
  that names its project (``project_uuid``, or a ``project`` object with a ``uuid``) counts towards it;
  when no conversation of the export names one, how many use each project cannot be told (null).
* ChatGPT: a conversation's ``gizmo_id`` or ``conversation_template_id``, and the ``gizmo_id`` of its
  messages' metadata (a GPT called inside another conversation). The export names neither a GPT nor a
  project: the id is all there is.

The kinds (:data:`PROJECT_KINDS`):

``claude-project``
    A Claude project.
``chatgpt-project``
    A ChatGPT project: a gizmo id starting ``g-p-``, or a conversation of ``gizmo_type`` ``snorlax``.
``custom-gpt``
    Any other gizmo: a custom GPT.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .._convert.timestamps import render_timestamp
from .._providers import files as known
from .conversations import read_conversations
from .files import Listing, children, side_files

__all__ = ["PROJECT_CATEGORIES", "PROJECT_COLUMNS", "PROJECT_KINDS", "Project", "ProjectReading", "read_projects"]

#: Every kind of project, in the order they are listed (see the module docstring).
PROJECT_KINDS: Final = ("claude-project", "chatgpt-project", "custom-gpt")

#: The columns of :func:`memvelope_tools.projects_frame`, in order, and their kind of value
#: (:mod:`memvelope_tools._whole.table`).
PROJECT_COLUMNS: Final = {
    "provider": "string",
    "project_id": "string",
    "kind": "category",
    "name": "string",
    "description": "string",
    "instructions": "string",
    "conversations": "int",
    "docs": "docs",
    "created_at": "timestamp",
    "updated_at": "timestamp",
    "first_used": "timestamp",
    "last_used": "timestamp",
}
#: The words of each category column.
PROJECT_CATEGORIES: Final = {"kind": PROJECT_KINDS}

# Where an element may name a project or a GPT (a string value, or a project object).
_MARKS: Final = re.compile(rb'"(?:gizmo_id|conversation_template_id|project_uuid)"\s*:\s*"|"project"\s*:\s*\{')
_SNORLAX: Final = "snorlax"  # the gizmo_type of a ChatGPT project's conversations


@dataclass(slots=True)
class Project:
    """One project or custom GPT (the columns of :func:`memvelope_tools.projects_frame`)."""

    provider: str
    project_id: str
    kind: str
    name: str | None = None
    description: str | None = None
    instructions: str | None = None
    conversations: int | None = None
    docs: list[dict[str, Any]] | None = None
    created_at: str | None = None
    updated_at: str | None = None
    first_used: str | None = None
    last_used: str | None = None
    used_in: set[str] = field(default_factory=set, repr=False)
    unnamed: int = field(default=0, repr=False)  # conversations without an id that use it


def _text(value: object) -> str | None:
    return value if type(value) is str and value else None


def _kind(gizmo: str, gizmo_type: object) -> str:
    return "chatgpt-project" if gizmo.startswith("g-p-") or gizmo_type == _SNORLAX else "custom-gpt"


class ProjectReading:
    """Counts the conversations that use each project or GPT (a reader of the one pass over the export),
    then adds Claude's ``projects.json``."""

    marks = _MARKS

    def __init__(self) -> None:
        self.found: dict[tuple[str, str], Project] = {}
        self.claude_links = False  # some Claude conversation names its project

    def take(self, conversation: dict[str, Any], provider: str, part: str) -> None:
        """Count one conversation towards each project or GPT it uses."""
        if provider == "chatgpt":
            cid = _text(conversation.get("conversation_id")) or _text(conversation.get("id"))
            start, end = conversation.get("create_time"), conversation.get("update_time")
            gizmo_type = conversation.get("gizmo_type")
            for gizmo in dict.fromkeys(_gizmos(conversation)):
                self._use("chatgpt", gizmo, _kind(gizmo, gizmo_type), cid, start, end)
            return
        project = conversation.get("project")
        uuid = _text(conversation.get("project_uuid")) or (
            _text(project.get("uuid")) if type(project) is dict else None
        )
        if uuid is not None:
            self.claude_links = True
            cid = _text(conversation.get("uuid"))
            self._use(
                "claude", uuid, "claude-project", cid, conversation.get("created_at"), conversation.get("updated_at")
            )

    def _use(self, provider: str, pid: str, kind: str, cid: str | None, start: object, end: object) -> None:
        used = Project(provider, pid, kind, used_in={cid} if cid else set(), unnamed=0 if cid else 1)
        used.first_used = render_timestamp(start) or render_timestamp(end)
        used.last_used = render_timestamp(end) or used.first_used
        self._add(used)

    def _add(self, used: Project) -> None:
        """Count the conversations ``used`` (a row of uses only) holds towards its project."""
        row = self.found.get((used.provider, used.project_id))
        if row is None:
            row = self.found[(used.provider, used.project_id)] = Project(used.provider, used.project_id, used.kind)
        row.used_in |= used.used_in
        row.unnamed += used.unnamed
        row.conversations = len(row.used_in) + row.unnamed
        first, last = used.first_used, used.last_used
        if first is not None and (row.first_used is None or first < row.first_used):
            row.first_used = first
        if last is not None and (row.last_used is None or last > row.last_used):
            row.last_used = last

    def extend(self, later: ProjectReading) -> None:
        """Count the conversations after these towards the projects they use."""
        for used in later.found.values():
            self._add(used)
        self.claude_links = self.claude_links or later.claude_links

    def finish(self, inputs: Sequence[Path]) -> list[Project]:
        """The projects: Claude's, in the order of ``projects.json`` (then those only conversations name),
        then ChatGPT's projects and GPTs in order of first use."""
        claude: list[Project] = []
        for part in side_files(inputs, known.CLAUDE_PROJECTS, "projects"):
            for _, record in children(part):
                if type(record) is dict and (uuid := _text(record.get("uuid"))) is not None:
                    row = self.found.pop(("claude", uuid), None) or Project("claude", uuid, "claude-project")
                    _describe(row, record)
                    if not self.claude_links:
                        row.conversations = None
                    elif row.conversations is None:
                        row.conversations = 0
                    claude.append(row)
        rest = list(self.found.values())
        return claude + [r for r in rest if r.provider == "claude"] + [r for r in rest if r.provider == "chatgpt"]


def _gizmos(conversation: dict[str, Any]) -> list[str]:
    """The gizmo ids a ChatGPT conversation uses: its own, then those its messages name."""
    found = [g for key in ("gizmo_id", "conversation_template_id") if (g := _text(conversation.get(key)))]
    mapping = conversation.get("mapping")
    for node in mapping.values() if type(mapping) is dict else ():
        message = node.get("message") if type(node) is dict else None
        metadata = message.get("metadata") if type(message) is dict else None
        if type(metadata) is dict and (gizmo := _text(metadata.get("gizmo_id"))) is not None:
            found.append(gizmo)
    return found


def _describe(row: Project, record: dict[str, Any]) -> None:
    """Fill a Claude project's row from its ``projects.json`` record."""
    row.name = record.get("name") if type(record.get("name")) is str else None
    row.description = _text(record.get("description"))
    row.instructions = _text(record.get("prompt_template"))
    row.created_at = render_timestamp(record.get("created_at"))
    row.updated_at = render_timestamp(record.get("updated_at"))
    docs = record.get("docs")
    row.docs = [
        {
            "name": doc.get("filename") if type(doc.get("filename")) is str else None,
            "size_bytes": len(doc["content"].encode("utf-8", "surrogatepass"))
            if type(doc.get("content")) is str
            else None,
            "created_at": render_timestamp(doc.get("created_at")),
        }
        for doc in (docs if type(docs) is list else [])
        if type(doc) is dict
    ]


# ---- reading ----------------------------------------------------------------------------------------


def read_projects(inputs: Sequence[Path], listing: Listing, progress: bool | None) -> list[Project]:
    """The projects and GPTs of an export (one pass over its conversations)."""
    reading = ProjectReading()
    read_conversations(inputs, listing, [reading], progress)
    return reading.finish(inputs)
