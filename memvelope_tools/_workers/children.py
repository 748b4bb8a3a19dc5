"""An export converted in a child process forked before the command loads its heavy libraries (so its own
worker processes start in milliseconds): to a temporary envelope file, or through a pipe as it is made."""

from __future__ import annotations

import json
import os
import queue
import tempfile
import threading
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


_AHEAD = 64  # pieces of the piped text (1 MiB at most each) read ahead of the batch being worked on


class Piped:
    """An export being converted in a child process, its envelope's conversations array coming through a
    pipe as it is made (see :func:`converting_piped`): the provider's name and a newline, the array's
    text, then, once the conversion is done, a NUL, the envelope's meta as JSON and a NUL (JSON text
    holds no NUL byte)."""

    def __init__(self, child: Any, fd: int) -> None:
        self.child, self.fd = child, fd
        self.rest = b""
        self.told: dict[str, Any] | None = None
        self.stopping = threading.Event()
        self.pump: threading.Thread | None = None

    def close(self) -> bool:
        """Stop the thread reading the pipe ahead, once the child has ended (so the pipe ends too); whether
        it stopped, so that the pipe's descriptor may be closed (the thread never reads a descriptor that
        was closed, or reused for another file)."""
        self.stopping.set()
        if self.pump is not None:
            self.pump.join(timeout=10)
            return not self.pump.is_alive()
        return True

    def provider(self) -> str | None:
        """The export's provider, the first line the child writes (None: the conversion gave none)."""
        data = b""
        while b"\n" not in data:
            piece = os.read(self.fd, 1 << 16)
            if not piece:
                return None
            data += piece
        line, self.rest = data.split(b"\n", 1)
        return line.decode() or None

    def pieces(self) -> Iterator[bytes]:
        """The text of the conversations array, as it comes. A thread reads the pipe meanwhile, up to
        :data:`_AHEAD` pieces ahead, so the conversion never waits while a batch is worked on here."""
        ahead: queue.Queue[bytes] = queue.Queue(maxsize=_AHEAD)
        already = self.rest.count(b"\0")

        def pump() -> None:
            piece, ends = b"-", already
            while piece and ends < 2 and not self.stopping.is_set():  # the text's end marker, the meta's
                piece = os.read(self.fd, 1 << 20)
                ends += piece.count(b"\0")
                while not self.stopping.is_set():
                    try:
                        ahead.put(piece, timeout=0.1)
                        break
                    except queue.Full:
                        continue

        self.pump = threading.Thread(target=pump, name="memvelope-pipe", daemon=True)
        self.pump.start()
        data = self.rest
        self.rest = b""
        while True:
            end = data.find(b"\0")
            if end >= 0:
                if end:
                    yield data[:end]
                self._meta(data[end + 1 :], ahead)
                return
            if data:
                yield data
            data = ahead.get()
            if not data:
                return

    def _meta(self, data: bytes, ahead: queue.Queue[bytes]) -> None:
        while b"\0" not in data:
            piece = ahead.get()
            if not piece:
                return
            data += piece
        try:
            self.told = json.loads(data[: data.index(b"\0")])
        except ValueError:
            self.told = None

    def meta(self) -> dict[str, Any] | None:
        """The envelope's meta, once the array was read; None when the conversion failed."""
        return self.told


@contextmanager
def converting_piped(source: str, progress: bool | None) -> Iterator[Piped | None]:
    """Start converting the export at ``source`` in a process of its own, before anything heavy is loaded
    (so its workers start in milliseconds), the text coming through a pipe as it is made; None when
    ``source`` is no export given by path, or no child can be forked here (the command converts it)."""
    from .._sources import resolve_one

    parts = resolve_one(source, "any").files()
    context = fork_context() if parts is not None else None
    if context is None:
        yield None
        return
    read_end, write_end = os.pipe()
    child = None
    piped: Piped | None = None
    try:
        with held():  # a stop landing in Python's after-fork callbacks would be dropped
            child = context.Process(target=_pipe_child, args=(parts, read_end, write_end, progress, os.getpid()))
            child.start()
        os.close(write_end)
        write_end = -1
        piped = Piped(child, read_end)
        yield piped
    finally:
        if child is not None and child.exitcode is None:
            child.terminate()
            child.join()
        if piped is None or piped.close():
            os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def _pipe_child(parts: list[Path], read_end: int, write_end: int, progress: bool | None, parent: int) -> None:
    """In a child process: convert the export ``parts``, writing to ``write_end`` what :class:`Piped` reads;
    exit status 1 on any failure (the meta is then not written)."""
    from .._convert.pipeline import convert_body

    bind_to_parent(parent)
    status = 1
    try:
        os.close(read_end)
        with os.fdopen(write_end, "wb", buffering=1 << 20) as out:
            made = convert_body(
                parts,
                out.write,
                progress=progress,
                workers=None,
                on_provider=lambda name: out.write(name.encode() + b"\n"),
            )
            out.write(b"\0" + json.dumps(made).encode() + b"\0")
        status = 0
    finally:
        os._exit(status)  # not through multiprocessing's exit, which waits for every process this one started


def _convert_child(parts: list[Path], envelope: Path, progress: bool | None, parent: int) -> None:
    """In a child process: convert the export ``parts`` to the file ``envelope``; exit status 1 on any failure."""
    from .._convert.pipeline import convert_stream

    bind_to_parent(parent)
    try:
        with open(envelope, "wb") as sink:
            convert_stream(parts, None, stdout=sink, workers=None, progress=progress)
    except BaseException:
        os._exit(1)
