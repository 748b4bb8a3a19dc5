"""What is wrong with the search index of a history folder, said without changing it."""

from __future__ import annotations

import os
from pathlib import Path

from .._frames.folders import INDEX_FOLDER, PARTS, parts_of_file
from ..errors import SearchIndexError
from .engine import engine_errors, open_engine
from .parts import Damaged, Unusable, check_index_place, read_parts_file, rows_table, same_part


def check_history_index(folder: str | os.PathLike[str]) -> list[str]:
    """What is wrong with the search index kept in the history folder ``folder``, one line per problem
    found (none when it is sound or there is none: search builds it); reads the index, writes nothing.

    Every file of the index is checked: ``search-index`` is a folder of its own, each file in it a
    regular file, ``parts.json`` as written, the engine's files as they were then, each part indexed
    the folder's file of that name (hashed when its name carries no digest), each rows file as written
    and holding its part's rows, and the engine holding one document per row. A part the index does not
    hold yet is said too (the next search indexes it).

    Parameters
    ----------
    folder
        A history folder (``memvelope history add``).

    Returns
    -------
    list of str
        One line per problem, each naming the file it is about; empty when there is none.

    Raises
    ------
    memvelope_tools.errors.FormatError
        The folder's state cannot be read.

    Examples
    --------
    >>> from memvelope_tools._search.check import check_history_index
    >>> check_history_index("my-history/")  # doctest: +SKIP
    []
    """
    base = Path(folder)
    path = base / INDEX_FOLDER
    if not os.path.lexists(path):
        return []
    try:
        check_index_place(path)
        held = read_parts_file(path)
    except (Unusable, SearchIndexError) as exc:
        return [f"{path}: {exc.msg if isinstance(exc, SearchIndexError) else exc}"]
    parts = parts_of_file(base / "state.parquet")
    problems = []
    for at, part in enumerate(held):
        name, rows = parts[at] if at < len(parts) else (None, 0)
        if name is None:
            problems.append(f"{path}: holds {part.name}, which the history does not list")
        elif (part.name, part.rows) != (name, rows):
            problems.append(f"{path}: holds {part.name} ({part.rows} messages) where the history lists {name} ({rows})")
        elif not same_part(part, base / PARTS / name, hash_all=True):
            problems.append(f"{path}: holds {part.name} as it was, not as the file is now")
        try:
            rows_table(path, part)
        except Damaged as exc:
            problems.append(f"{path}: {exc}")
    if len(parts) > len(held) and not problems:
        problems.append(f"{path}: does not hold {', '.join(name for name, _ in parts[len(held) :])} yet")
    if not problems:
        try:
            with engine_errors(os.fspath(path)):
                engine = open_engine(path, create=False)
                engine.reload()
                docs = engine.searcher().num_docs
            if docs != sum(part.rows for part in held):
                problems.append(f"{path}: the engine holds {docs} messages, the rows files {sum(p.rows for p in held)}")
        except SearchIndexError as exc:
            problems.append(f"{path}: {exc.msg}")
    return problems
