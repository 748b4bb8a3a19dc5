"""The whole export's frames: the files uploaded and generated, and the projects and custom GPTs."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .assets import ASSET_CATEGORIES, ASSET_COLUMNS, read_assets
from .export import assets_table, export_inputs, projects_table
from .files import list_export
from .projects import PROJECT_CATEGORIES, PROJECT_COLUMNS, read_projects
from .table import frame_of

if TYPE_CHECKING:
    import pandas as pd

    from .._sources import Input

__all__ = ["assets_frame", "projects_frame"]


def assets_frame(*paths: str | os.PathLike[str] | Input, progress: bool | None = None) -> pd.DataFrame:
    """One row per file people uploaded to a conversation or the provider made in one, and whether the
    download still holds it.

    Parameters
    ----------
    *paths
        The export, as ``convert`` takes it: a zip as downloaded, a folder, or its files. Only its
        listing and the small JSON files beside the conversations are read, never a file's bytes.
    progress
        Show a progress bar while the conversations are read (None: when stderr is a terminal or in a
        notebook).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`~memvelope_tools._whole.assets.ASSET_COLUMNS`, in the order the export names the
        files (every node of a conversation, abandoned branches too: a file sent in several messages has
        a row for each). ``kind`` is one of ``image``, ``generated_image``, ``audio``, ``video``, ``file``
        (see :mod:`memvelope_tools._whole.assets` for what each means and where files are found);
        ``pointer`` is the file's id (ChatGPT's ``file-...``/``file_...``, Claude's ``file_uuid``);
        ``member`` is the file's path inside the download when it holds it; ``present`` says whether it
        does; ``found_in`` is where the export names it (``content``, ``attachments``, ``library``,
        ``download`` (a file no conversation names), ``files``); ``role`` is who sent the message and
        ``ts`` when. ``frame.attrs["provider"]`` is the export's provider.

    Raises
    ------
    InputError
        When the export cannot be read (missing, a bad zip, invalid JSON) or is not an export.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> frame = mv.assets_frame(mv.sample_path("claude"))
    >>> frame[["kind", "name", "present"]].head(2)
        kind                    name  present
    0   file               README.md     True
    1  image  teto_casa_de_banho.jpg    False
    """
    inputs = export_inputs(paths, "assets_frame()")
    rows, provider = read_assets(inputs, list_export(inputs), progress)
    frame = frame_of(assets_table(rows), ASSET_COLUMNS, ASSET_CATEGORIES)
    frame.attrs["provider"] = provider
    return frame


def projects_frame(*paths: str | os.PathLike[str] | Input, progress: bool | None = None) -> pd.DataFrame:
    """One row per Claude project, ChatGPT project and custom GPT an export holds or its conversations use.

    Parameters
    ----------
    *paths
        The export, as ``convert`` takes it: a zip as downloaded, a folder, or its files.
    progress
        Show a progress bar while the conversations are read (None: when stderr is a terminal or in a
        notebook).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`~memvelope_tools._whole.projects.PROJECT_COLUMNS`. ``kind`` is one of
        ``claude-project``, ``chatgpt-project``, ``custom-gpt`` (see :mod:`memvelope_tools._whole.projects`
        for where each is found); ``conversations`` is how many conversations use it (null when the export
        cannot say); ``docs`` lists a Claude project's documents, each ``{name, size_bytes, created_at}``
        (the size of its text in UTF-8); ``instructions`` are a Claude project's own; ``first_used`` and
        ``last_used`` span the conversations that use it.

    Raises
    ------
    InputError
        When the export cannot be read (missing, a bad zip, invalid JSON) or is not an export.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> frame = mv.projects_frame(mv.sample_path("claude"))
    >>> frame[["kind", "name"]].head(2)
                 kind               name
    0  claude-project  How to use Claude
    1  claude-project    Job search 2025
    """
    inputs = export_inputs(paths, "projects_frame()")
    rows = read_projects(inputs, list_export(inputs), progress)
    return frame_of(projects_table(rows), PROJECT_COLUMNS, PROJECT_CATEGORIES)
