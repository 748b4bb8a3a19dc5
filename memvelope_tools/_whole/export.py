"""One pass over a whole export for its tables: the ``nodes`` (see :func:`memvelope_tools.nodes_frame`), and
the ``assets`` and ``projects`` read from the same conversations in the same worker processes
(:data:`READERS`), then told against the download's listing and the files beside the conversations; and
the inventory's sections of those files and projects.

Arrow, NumPy and pandas are imported only once the workers are started (see :mod:`memvelope_tools._whole.nodes`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .._sources import Input, resolve
from ..errors import InputError
from .assets import ASSET_CATEGORIES, ASSET_COLUMNS, Asset, AssetReading
from .conversations import ConversationReader
from .files import Listing, list_export, unconverted_in, verify_in
from .pack import pack
from .projects import PROJECT_CATEGORIES, PROJECT_COLUMNS, Project, ProjectReading
from .read import Job, read_export
from .table import arrow_table

if TYPE_CHECKING:
    import pyarrow as pa

    from .tap import ExportPass

__all__ = [
    "READERS",
    "PassedTables",
    "assets_table",
    "export_input",
    "export_inputs",
    "finish",
    "load_arrow",
    "projects_table",
    "read_nodes",
    "sections",
    "whole_tables",
]


def export_input(export: Any, caller: str) -> Input:
    """``export`` resolved as one export (a list is its parts); InputError for anything else, an envelope
    included: it keeps only the prose of the active path, so the nodes are not in it."""
    [found] = resolve(export, "any", list_means="parts", caller=caller)
    if found.kind != "export":
        what = {"envelope": "an envelope", "ir": "a Facts IR document"}.get(found.kind, f"a {found.kind}")
        raise InputError(
            f"{what}, not an export: an envelope keeps only the prose of each conversation's active path, so "
            "the nodes, branches and tools are not in it; give the export it came from (its zip, its folder "
            "or its conversations*.json)",
            reason="no-provider",
            source=found.name,
        )
    return found


def export_inputs(paths: Sequence[Any], caller: str) -> tuple[Path, ...]:
    """The files and folders of one export (paths, as ``convert`` takes them, or one resolved input),
    each checked once; InputError for a wrong one, or for an export given as bytes."""
    if len(paths) == 1 and isinstance(paths[0], Input):
        export = paths[0]
    else:
        [export] = resolve(list(paths), "export", list_means="parts", caller=caller)
    found = export.files()
    if found is None:
        raise InputError(
            f"{caller} reads an export's files on disk: give its zip, folder or files", reason="bad-source"
        )
    return tuple(found)


def load_arrow() -> None:
    """Import what turns the packed batches into a frame (Arrow, NumPy, pandas), while the workers read."""
    from . import arrow  # noqa: F401


def read_nodes(
    found: Input,
    *,
    with_text: bool = False,
    progress: bool | None = None,
    workers: int | None = None,
    beside: tuple[Callable[[], ConversationReader], ...] = (),
) -> tuple[pa.Table, str, list[ConversationReader]]:
    """The nodes of a resolved export as an Arrow table (columns of ``nodes_frame``), its provider, and
    the readers ``beside`` made, each handed every conversation of the same pass."""
    job = Job(functools.partial(pack, source=found.label, with_text=with_text), beside=beside)
    whole = read_export(found, job, progress=progress, workers=workers, meanwhile=load_arrow)
    from .arrow import to_table

    return to_table(whole.pieces, with_text=with_text), whole.provider, whole.readers


def assets_table(rows: Sequence[Asset]) -> pa.Table:
    """``rows`` as an Arrow table of the assets' columns (``kind`` dictionary-encoded)."""
    return arrow_table(rows, ASSET_COLUMNS, ASSET_CATEGORIES)


def projects_table(rows: Sequence[Project]) -> pa.Table:
    """``rows`` as an Arrow table of the projects' columns."""
    return arrow_table(rows, PROJECT_COLUMNS, PROJECT_CATEGORIES)


#: What reads an export's conversations for its files and its projects: a reader of each, in this order.
READERS: Final[tuple[Callable[[], ConversationReader], ...]] = (AssetReading, ProjectReading)


def finish(
    inputs: Sequence[Path], listing: Listing, readers: Sequence[ConversationReader], provider: str | None
) -> tuple[list[Asset], list[Project]]:
    """The files and the projects of an export whose conversations ``readers`` (those of :data:`READERS`)
    were handed, told against its download and the files beside its conversations."""
    assets, projects = readers
    assert isinstance(assets, AssetReading) and isinstance(projects, ProjectReading)
    return assets.finish(inputs, listing, provider), projects.finish(inputs)


def whole_tables(inputs: Sequence[Input], *, progress: bool | None = None) -> dict[str, pa.Table]:
    """The tables of the whole exports among ``inputs``: ``nodes`` (see :func:`memvelope_tools.nodes_frame`),
    and for the exports on disk ``assets`` and ``projects`` (a ``source`` column first: each one's label);
    each export's conversations read once for the three.

    Parameters
    ----------
    inputs
        Resolved inputs, in order: only exports are read.
    progress
        Show a progress bar while the conversations are read (None: when stderr is a terminal).

    Returns
    -------
    dict of str to pyarrow.Table
        ``nodes`` when some input is an export, ``assets`` and ``projects`` when some export is on disk;
        empty when none is an export.

    Raises
    ------
    InputError
        When an export cannot be read.
    ConversionError
        When an export's conversations cannot be read (see :func:`memvelope_tools.nodes_frame`).

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> from memvelope_tools._sources import resolve_one
    >>> sorted(whole_tables([resolve_one(mv.sample_path("claude"), "export")]))
    ['assets', 'nodes', 'projects']
    """
    parts: dict[str, list[pa.Table]] = {"nodes": [], "assets": [], "projects": []}
    for found in inputs:
        if found.kind != "export":
            continue
        files = found.files()
        table, provider, readers = read_nodes(found, progress=progress, beside=READERS if files else ())
        parts["nodes"].append(table)
        if files is not None:
            _add_files(parts, found.label, files, readers, provider)
    return _joined(parts)


def _add_files(
    parts: dict[str, list[pa.Table]], label: str, files: Sequence[Path], readers: Any, provider: str | None
) -> None:
    """The ``assets`` and ``projects`` rows of an export on disk (its ``files``, what its element ``readers``
    found, its ``provider``) added to ``parts``, each with its ``source`` column (``label``) first."""
    import pyarrow as pa  # after reading (see memvelope_tools._whole.nodes)

    on_disk = tuple(files)
    assets, projects = finish(on_disk, list_export(on_disk), readers, provider)
    for name, rows in (("assets", assets_table(assets)), ("projects", projects_table(projects))):
        column = pa.array([label] * rows.num_rows, pa.string())
        parts[name].append(rows.add_column(0, "source", column))


def _joined(parts: dict[str, list[pa.Table]]) -> dict[str, pa.Table]:
    """Each table of ``parts`` as one (none when no export was read)."""
    if not parts["nodes"]:
        return {}
    import pyarrow as pa

    return {name: pa.concat_tables(tables) for name, tables in parts.items() if tables}


class PassedTables:
    """The tables :func:`whole_tables` gives, made from the passes that convert the exports (each export's
    conversations read once, for its envelope and these tables alike): :meth:`pass_of` gives what an
    export's conversion hands its batches to, :meth:`tables` the tables once every export is converted."""

    def __init__(self) -> None:
        # each export, its pass, its nodes' batches and its provider (once a batch told it)
        self._passes: list[tuple[Input, ExportPass[Any], list[Any], list[str]]] = []

    def pass_of(self, found: Input) -> ExportPass[Any]:
        """What the conversion of the export ``found`` hands its batches to."""
        from .arrow import shifted, unpack
        from .tap import ExportPass

        batches: list[Any] = []
        provider: list[str] = []

        def each(piece: Any, before: int) -> None:
            provider[:] = [piece.value.provider]
            batches.append(shifted(unpack(piece.value), before))

        job = Job(functools.partial(pack, source=found.label), beside=READERS if found.files() else ())
        passing = ExportPass(found, job, each, again=batches.clear)
        self._passes.append((found, passing, batches, provider))
        return passing

    def tables(self) -> dict[str, pa.Table]:
        """The tables of the exports converted, as :func:`whole_tables` gives them."""
        import pyarrow as pa

        from .arrow import SCHEMA

        parts: dict[str, list[pa.Table]] = {"nodes": [], "assets": [], "projects": []}
        for found, passing, batches, provider in self._passes:
            parts["nodes"].append(pa.Table.from_batches(batches, schema=SCHEMA))
            files = found.files()
            if files is not None:
                _add_files(parts, found.label, files, passing.readers, provider[0] if provider else None)
        return _joined(parts)


def sections(
    inputs: Sequence[Path], listing: Listing, assets: Sequence[Asset], projects: Sequence[Project], *, verify: bool
) -> dict[str, Any]:
    """The sections of :func:`inventory_sections`, of an export's files, its listing, the files its
    conversations name and its projects."""
    held: dict[tuple[Any, ...], bool] = {}
    for row in assets:
        key = (row.provider, row.pointer) if row.pointer else (row.provider, row.conversation_id, row.node_id, row.name)
        held[key] = held.get(key, False) or bool(row.present)
    present = sum(held.values())
    return {
        "assets": {"total": len(held), "present": present, "missing": len(held) - present},
        "projects": [
            {
                "provider": p.provider,
                "project_id": p.project_id,
                "kind": p.kind,
                "name": p.name,
                "conversations": p.conversations,
                "docs": None if p.docs is None else len(p.docs),
            }
            for p in projects
        ],
        "unconverted": unconverted_in(inputs, listing),
        "verify": verify_in(inputs, listing) if verify else None,
    }
