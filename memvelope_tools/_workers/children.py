"""Exports converted in child processes forked before the command loads its heavy libraries (so their own
worker processes start in milliseconds), each to a temporary envelope file."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .._signals import bind_to_parent, held
from .processes import fork_context


@contextmanager
def converting_early(sources: list[str], progress: bool | None) -> Iterator[Callable[[], list[Any]]]:
    """Start converting each export given by path to a temporary envelope file, each in a process of its
    own, before anything heavy is loaded (so its workers start in milliseconds); yields a function
    that waits for them and gives each input as the command should read it: the envelope file, or
    the input as given when it is no export or its conversion failed (the command converts it again
    and reports why)."""
    from .._sources import resolve_one

    found = [resolve_one(source, "any") for source in sources]
    exports = [f.files() for f in found]
    context = fork_context() if any(parts is not None for parts in exports) else None
    if context is None:
        yield lambda: list(sources)
        return
    with tempfile.TemporaryDirectory(prefix="memvelope-early-") as tmp:
        jobs: list[tuple[Any, Path] | None] = []
        try:
            with held():  # a stop landing in Python's after-fork callbacks would be dropped
                for n, parts in enumerate(exports):
                    if parts is None:
                        jobs.append(None)
                        continue
                    envelope = Path(tmp) / f"export-{n}.mve.json"
                    bar = progress if not any(jobs) else False  # one bar at a time on the terminal
                    child = context.Process(target=_convert_child, args=(parts, envelope, bar, os.getpid()))
                    child.start()
                    jobs.append((child, envelope))

            def converted() -> list[Any]:
                out: list[Any] = []
                for source, job in zip(sources, jobs, strict=True):
                    if job is None:
                        out.append(source)
                        continue
                    child, envelope = job
                    child.join()
                    out.append(envelope if child.exitcode == 0 else source)
                return out

            yield converted
        finally:
            for job in jobs:
                if job is not None and job[0].exitcode is None:
                    job[0].terminate()
                    job[0].join()


def _convert_child(parts: list[Path], envelope: Path, progress: bool | None, parent: int) -> None:
    """In a child process: convert the export ``parts`` to the file ``envelope``; exit status 1 on any failure."""
    from .._convert.pipeline import convert_stream

    bind_to_parent(parent)
    try:
        with open(envelope, "wb") as sink:
            convert_stream(parts, None, stdout=sink, workers=None, progress=progress)
    except BaseException:
        os._exit(1)
