"""A conversion from start to end: sources, then elements, then assembly, then the envelope, then bytes.

Every conversion reads its parts through the one reader (:mod:`.elements`) in bounded batches, so an
export's parse tree is never held whole; what is held is the conversations themselves (:func:`convert`)
or, when writing straight to a file (:func:`convert_stream`), one batch at a time. An export resolved
by :mod:`memvelope_tools._sources` is converted here for every caller (:func:`open_export`,
:func:`export_conversations`): the loader, the frames and the commands.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import os
import shutil
import stat
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Final

from .._atomic import atomic_output
from .._gc import gc_paused
from .._json.elements import FIELDS, JS, PartElements, Reader
from .._plural import count
from .._progress import Bar, progress_bar
from .._providers.registry import within
from .._sources import Input, explained
from ..errors import MemvelopeError, MixedProvidersWarning, OutputError
from .assemble import Assembler, Conversation, mixed_providers, rules
from .envelope import SEPARATOR, Envelope, build_envelope, dumps_envelope, envelope_frame, fragment
from .log import ConversionLog
from .parallel import Beside, Piece, Pool, Taker, workers_for
from .sources import Expansion, Part, ZipLimits, describe, expand


def counting(emit: Callable[[Conversation], None], bar: Bar) -> Callable[[Conversation], None]:
    """``emit``, also showing on the progress bar how many conversations are done."""
    show = getattr(bar, "set_postfix_str", None)
    if show is None:
        return emit
    done = 0

    def counted(conversation: Conversation) -> None:
        nonlocal done
        emit(conversation)
        done += 1
        if done % 256 == 0:
            show(count(done, "conversation"), refresh=False)

    return counted


class _Tapping:
    """The elements this process parses handed to ``beside``'s takers, a taker per range of a part (see
    :meth:`end_range`); the elements read before the provider is known wait for it."""

    def __init__(self, beside: Beside, assembler: Assembler) -> None:
        self.beside = beside
        self.assembler = assembler
        self.waiting: list[tuple[str, object, int, bytes, int, int]] = []
        self.taker: Taker | None = None

    def element(self, part: str, element: object, flags: int, buf: bytes, start: int, end: int) -> None:
        """The next element, of the part named ``part``, its JSON text ``buf[start:end]``."""
        if self.assembler.failed:
            return  # only read on to report a broken later part
        provider = self.assembler.provider
        if provider is None or self.waiting:
            self.waiting.append((part, element, flags, buf, start, end))
            self.flush()
            return
        if self.taker is None:
            self.taker = self.beside.start(provider, part)
        self.taker.add(element, flags, buf, start, end)

    def end_range(self) -> None:
        """The range of elements ends: its taker's piece is handed on."""
        if self.taker is not None:
            self.beside.put(self.taker.piece())
            self.taker = None

    def flush(self) -> None:
        """Hand on the elements waiting, a piece per part, once the provider is known."""
        provider = self.assembler.provider
        if provider is None or self.assembler.failed or not self.waiting:
            return
        waiting, self.waiting = self.waiting, []
        taker: Taker | None = None
        for n, (part, element, flags, buf, start, end) in enumerate(waiting):
            if taker is None:
                taker = self.beside.start(provider, part)
            taker.add(element, flags, buf, start, end)
            if n + 1 == len(waiting) or waiting[n + 1][0] != part:
                self.beside.put(taker.piece())
                taker = None


def _take(
    assembler: Assembler, tapping: _Tapping | None, part: str, values: list[Any], found: list[int], buf: bytes
) -> None:
    """Give the assembler (and ``tapping``) the elements ``values``, scanned as ``found`` in ``buf``,
    letting each go once taken."""
    for n in range(len(values)):
        element, values[n] = values[n], None
        assembler.element(element)
        if tapping is not None:
            start, end, flags = found[n * FIELDS + 2 : n * FIELDS + 5]
            tapping.element(part, element, flags, buf, start, end)
    if tapping is not None:
        tapping.end_range()


def feed(
    parts: Sequence[Part],
    log: ConversionLog,
    assembler: Assembler,
    bar: Bar,
    *,
    fast: bool = True,
    pool: Pool | None = None,
    write: Callable[[Piece], None] | None = None,
    beside: Beside | None = None,
) -> str:
    """Read every part's elements into ``assembler``; return the provider.

    With a ``pool`` (and a ``write``), the elements after the provider is known go to its worker
    processes, and ``write`` receives their pieces in order (see :mod:`.parallel`). With ``beside``, each
    element is also handed to its takers as it is parsed (see :class:`~memvelope_tools._convert.parallel.Beside`).
    """
    log.parts = [p.name for p in parts]
    tapping = None if beside is None else _Tapping(beside, assembler)

    def take(tag: str, piece: Piece) -> None:
        assert write is not None
        write(piece)
        assembler.counts(piece.conversations, piece.messages, piece.elements, piece.foreign)
        if piece.replaced:
            log.replaced[tag] = log.replaced.get(tag, 0) + piece.replaced
        if beside is not None:
            beside.put(piece.beside)

    if pool is not None:
        pool.write = take
    for part in parts:
        reader = Reader(JS, use_orjson=fast)
        elements = PartElements(part, reader, on_bytes=bar.update)
        shows: str | None = None  # the provider whose export a part that is no array shows
        for buf, found, offset in elements.ranges():
            if not elements.is_array:
                members = elements.values(buf, found, offset)  # checked, and its repairs counted
                shows = shows or next((p for p in map(within, members) if p is not None), None)
                continue
            if assembler.failed:
                assembler.skip(len(found) // FIELDS)  # read on only to report a broken later part
                continue
            if pool is None:
                _take(assembler, tapping, part.name, elements.values(buf, found, offset), found, buf)
                continue
            k = 0  # the elements before the provider is known are taken here, the rest by the workers
            while k < len(found) and assembler.provider is None and not assembler.failed:
                one = found[k : k + FIELDS]
                _take(assembler, tapping, part.name, elements.values(buf, one, offset), one, buf)
                k += FIELDS
            if k < len(found) and assembler.failed:
                assembler.skip((len(found) - k) // FIELDS)
            elif k < len(found):
                stamp = elements.stamp
                at = None if part.path is None or stamp is None else (part.path, offset + elements.skip, stamp)
                provider = assembler.provider or ""
                taker = None if beside is None else functools.partial(beside.start, provider, part.name)
                pool.submit(part.name, buf, found[k:], *rules(provider), fast, at, taker)
        if not elements.is_array:
            assembler.non_array(shows, part.name)
        if reader.replaced:
            log.replaced[part.name] = log.replaced.get(part.name, 0) + reader.replaced
    if pool is not None:
        pool.drain()
    provider = assembler.finish()
    if tapping is not None:
        tapping.flush()
    log.elements, log.foreign = assembler.elements, assembler.foreign
    if assembler.foreign:
        warnings.warn(
            MixedProvidersWarning(mixed_providers(provider, log.foreign), provider=provider, left_out=log.foreign),
            stacklevel=_caller_level(),
        )
    return provider


def _caller_level() -> int:
    """The ``stacklevel`` of the first caller outside this package, so a warning points at its code."""
    package = str(Path(__file__).resolve().parent.parent)
    frame, level = sys._getframe(1), 1
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(package):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


def convert_parts(
    parts: Sequence[Part],
    log: ConversionLog | None = None,
    *,
    fast: bool | None = None,
    progress: bool | None = None,
    beside: Beside | None = None,
) -> Envelope:
    """Convert an ordered list of parts (see :func:`memvelope_tools._convert.sources.expand`).

    Options as for :func:`convert`; ``beside`` as for :func:`feed`.
    """
    log = log if log is not None else ConversionLog()
    conversations: list[Conversation] = []
    total = sum(p.size or 0 for p in parts) or None
    with progress_bar(total, desc="converting", unit="B", enabled=progress) as bar, gc_paused():
        assembler = Assembler(counting(conversations.append, bar), describe(parts))
        provider = feed(parts, log, assembler, bar, fast=fast is not False, beside=beside)
    return build_envelope(provider, conversations, describe(parts))


def convert(
    *paths: str | os.PathLike[str],
    report: ConversionLog | None = None,
    zip_limits: ZipLimits | None = None,
    fast: bool | None = None,
    progress: bool | None = None,
) -> Envelope:
    """Convert one export, given as part files, folders and/or zips in order, to an envelope.

    Raises :class:`ConversionError` (with ``.reason``) when the export cannot be converted, and
    warns :class:`~memvelope_tools.errors.MixedProvidersWarning` when it mixes ChatGPT and Claude
    conversations (one provider is kept, the other's conversations are left out).
    Pass a :class:`ConversionLog` as ``report`` to learn which parts were read and which files were
    passed over. ``fast`` parses with orjson (default: when installed). Parts are always read in
    bounded batches (see :func:`convert_stream` to bound memory by the batch rather than the
    envelope). Every option gives the same envelope. ``progress`` shows a bar on stderr (default: on a terminal).
    """
    expansion: Expansion = expand(paths, zip_limits)
    if report is not None:
        report.ignored = expansion.ignored
        report.chose = expansion.chose
    with expansion.explained():
        return convert_parts(expansion.parts, report, fast=fast, progress=progress)


def _copy(src: IO[bytes], dst: IO[bytes]) -> None:
    """Copy the whole of ``src`` after what ``dst`` holds: in the kernel when both are regular files."""
    src.seek(0)
    try:
        in_fd, out_fd = src.fileno(), dst.fileno()
        regular = stat.S_ISREG(os.fstat(out_fd).st_mode) and hasattr(os, "sendfile")
    except (AttributeError, OSError):  # io.UnsupportedOperation is an OSError
        regular = False
    if regular:
        dst.flush()
        size, done = os.fstat(in_fd).st_size, 0
        try:
            while done < size:
                sent = os.sendfile(out_fd, in_fd, done, size - done)
                if not sent:
                    break
                done += sent
        except OSError:
            if done:
                raise
        if done == size:
            return
        src.seek(done)
    shutil.copyfileobj(src, dst, 4 << 20)


SPOOL_BYTES: Final = 128 << 20  # envelope bytes held in memory while streaming; the rest goes to a file


class _Spool:
    """Envelope bytes in order: the first ``limit`` bytes held in memory, the rest in a temporary file
    from ``overflow()`` (opened when first needed), so most exports are written once, not twice."""

    def __init__(self, limit: float, overflow: Callable[[], IO[bytes]]) -> None:
        self.pieces: list[bytes] = []
        self.held = 0
        self.limit = limit
        self.file: IO[bytes] | None = None
        self._overflow = overflow

    def write(self, data: bytes) -> None:
        if self.file is None and self.held + len(data) <= self.limit:
            self.pieces.append(data)
            self.held += len(data)
            return
        if self.file is None:
            self.file = self._overflow()
        self.file.write(data)

    def copy_to(self, target: IO[bytes]) -> None:
        """Write everything, in order, to ``target``."""
        target.writelines(self.pieces)
        if self.file is not None:
            _copy(self.file, target)


@contextlib.contextmanager
def _temporary(folder: Path | None, out: str | os.PathLike[str] | None) -> Iterator[IO[bytes]]:
    """An anonymous temporary file beside the output (so the final copy stays on one filesystem)."""
    try:
        with tempfile.TemporaryFile(prefix=".memvelope-", dir=folder) as fh:
            yield fh
    except OutputError:
        raise
    except OSError as exc:
        raise OutputError(
            f"cannot write output: {exc.strerror or exc}",
            reason="output",
            source=os.fspath(out) if out is not None else None,
        ) from exc


def convert_stream(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str] | None,
    *,
    report: ConversionLog | None = None,
    zip_limits: ZipLimits | None = None,
    progress: bool | None = None,
    stdout: Any = None,
    workers: int | None = 1,
    in_memory: bool = False,
) -> dict[str, Any]:
    """Convert one export straight to a canonical envelope file, holding a few batches at a time.

    Peak memory is bounded by the batches, the largest conversation and the first 128 MiB of the
    envelope's bytes (the rest waits in a temporary file), not by the export; with ``in_memory`` all
    the envelope's bytes are held in memory until the end. The bytes written are those of
    ``write_envelope(convert(paths), out)``; ``out`` is written atomically. With ``out=None`` the
    bytes go to the binary stream ``stdout``. ``workers`` worker processes parse, normalise and
    serialise the elements (1: none, all in this process; None: one per core for an export of 32 MB
    or more, as ``memvelope convert`` does). Where workers cannot be forked from a process with one
    thread they start clean interpreters, so a script that asks for them must guard its entry point
    with ``if __name__ == "__main__":``. Returns the envelope's ``meta``.
    """
    inputs = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    expansion: Expansion = expand(inputs, zip_limits)
    log = report if report is not None else ConversionLog()
    log.ignored = expansion.ignored
    log.chose = expansion.chose
    parts = expansion.parts
    folder = Path(out).resolve().parent if out is not None else None
    if folder is not None and not folder.is_dir():
        raise OutputError(f"output folder does not exist: {folder}", reason="output", source=str(out))
    total = sum(p.size or 0 for p in parts) or None
    count = workers_for(total or 0, workers)
    pool = Pool(count) if count > 1 else None  # its processes start while this one reads
    try:
        with contextlib.ExitStack() as stack:
            body = _Spool(math.inf if in_memory else SPOOL_BYTES, lambda: stack.enter_context(_temporary(folder, out)))
            with expansion.explained():
                meta = _body(parts, log, body.write, pool, progress, total)
            if pool is not None:
                pool.release()
            head, tail = envelope_frame(meta)
            if out is None:
                target = stdout if stdout is not None else _stdout()
                try:
                    _finish(target, head, body, tail)
                    target.flush()
                except BrokenPipeError:
                    raise
                except OSError as exc:
                    message = f"cannot write to standard output: {exc.strerror or exc}"
                    raise OutputError(message, reason="output") from exc
            else:
                with atomic_output(out) as fh:
                    _finish(fh, head, body, tail)
    finally:
        if pool is not None:
            pool.close()
    return meta


def convert_body(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    write: Callable[[bytes], Any],
    *,
    progress: bool | None = None,
    workers: int | None = 1,
    on_provider: Callable[[str], Any] | None = None,
    log: ConversionLog | None = None,
    beside: Beside | None = None,
) -> dict[str, Any]:
    """Convert one export, giving ``write`` the text of its envelope's conversations array (what
    :func:`convert_stream` writes between the array's brackets) a piece at a time, in order, as it is
    made; nothing is held. ``workers`` are :func:`convert_stream`'s; ``on_provider`` is called with the
    provider before the first piece is written; ``log`` learns what was read and left out; ``beside`` is
    handed each element as it is parsed (see :func:`feed`). Returns the envelope's ``meta``; errors are
    :func:`convert_stream`'s."""
    return _convert_paths(paths, write, None, progress, workers, on_provider, log, beside)


def convert_conversations(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    take: Callable[[Conversation], Any],
    *,
    progress: bool | None = None,
    on_provider: Callable[[str], Any] | None = None,
    log: ConversionLog | None = None,
    beside: Beside | None = None,
) -> dict[str, Any]:
    """Convert one export in this process, handing ``take`` each of its envelope's conversations as it is
    made, in order: the values whose bytes :func:`convert_body` writes (strings and None only, so their
    canonical bytes parse back to them). ``on_provider`` is called with the provider before the first
    is taken; the other options, the result and the errors are :func:`convert_body`'s."""
    return _convert_paths(paths, None, take, progress, 1, on_provider, log, beside)


def _convert_paths(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    write: Callable[[bytes], Any] | None,
    take: Callable[[Conversation], Any] | None,
    progress: bool | None,
    workers: int | None,
    on_provider: Callable[[str], Any] | None,
    log: ConversionLog | None,
    beside: Beside | None,
) -> dict[str, Any]:
    inputs = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    expansion = expand(inputs, None)
    log = log if log is not None else ConversionLog()
    log.ignored = expansion.ignored
    log.chose = expansion.chose
    total = sum(p.size or 0 for p in expansion.parts) or None
    count = workers_for(total or 0, workers) if take is None else 1
    pool = Pool(count) if count > 1 else None
    try:
        with expansion.explained():
            meta = _body(expansion.parts, log, write, pool, progress, total, on_provider, beside, take)
        if pool is not None:
            pool.release()
    finally:
        if pool is not None:
            pool.close()
    return meta


def _body(
    parts: Sequence[Part],
    log: ConversionLog,
    put: Callable[[bytes], Any] | None,
    pool: Pool | None,
    progress: bool | None,
    total: int | None,
    on_provider: Callable[[str], Any] | None = None,
    beside: Beside | None = None,
    take: Callable[[Conversation], Any] | None = None,
) -> dict[str, Any]:
    """Give the conversations' envelope bytes to ``put`` (or, without a ``pool``, the conversations
    themselves to ``take``), in order; return the envelope's meta."""
    first = True

    def begin() -> None:
        nonlocal first
        if first and on_provider is not None:
            on_provider(str(assembler.provider))
        if put is not None:
            put(b"    " if first else SEPARATOR)
        first = False

    def emit(conversation: Conversation) -> None:
        begin()
        if take is not None:
            take(conversation)
        else:
            assert put is not None
            put(fragment(conversation))

    def write(piece: Piece) -> None:
        if piece.conversations:
            begin()
            assert put is not None
            put(piece.body)

    with progress_bar(total, desc="converting", unit="B", enabled=progress) as bar, gc_paused():
        assembler = Assembler(counting(emit, bar), describe(parts))
        provider = feed(parts, log, assembler, bar, pool=pool, write=write, beside=beside)
    return {
        "source_provider": provider,
        "conversation_count": assembler.conversations,
        "message_count": assembler.messages,
    }


def _finish(target: IO[bytes], head: bytes, body: _Spool, tail: bytes) -> None:
    target.write(head)
    body.copy_to(target)
    target.write(tail)


def _stdout() -> IO[bytes]:
    import sys

    return sys.stdout.buffer


# ---- a resolved export -----------------------------------------------------------------------------


def open_export(
    found: Input,
    *,
    report: ConversionLog | None = None,
    progress: bool | None = None,
    zip_limits: ZipLimits | None = None,
    fast: bool | None = None,
    beside: Beside | None = None,
) -> dict[str, Any]:
    """The envelope of a resolved export, converted from its parts in order (``beside``: see :func:`feed`)."""
    if len(found.parts) == 1 and isinstance(found.parts[0], bytes):
        return _from_bytes(found.parts[0], found.name, report, progress, beside)
    with explained(found.parts):
        expansion = expand(found.parts, zip_limits)
        if report is not None:
            report.ignored = expansion.ignored
            report.chose = expansion.chose
        with expansion.explained():
            return convert_parts(expansion.parts, report, fast=fast, progress=progress, beside=beside)


def export_conversations(
    found: Input,
    take: Callable[[Conversation], Any],
    *,
    progress: bool | None = None,
    on_provider: Callable[[str], Any] | None = None,
    log: ConversionLog | None = None,
    beside: Beside | None = None,
) -> dict[str, Any] | None:
    """Convert a resolved export in this process, handing ``take`` each of its envelope's conversations
    as it is made (see :func:`convert_conversations`, which also says when ``on_provider`` is called);
    returns the envelope's meta, or None, taking nothing, for an export given as bytes. ``log`` learns
    what the conversion read and left out; ``beside`` is handed each element as it is parsed (see
    :func:`feed`).

    The conversations are those ``memvelope convert`` writes the bytes of. Errors are
    :func:`open_export`'s.
    """
    if not _on_disk(found):
        return None
    with explained(found.parts):
        parts = list(found.parts)
        return convert_conversations(parts, take, progress=progress, on_provider=on_provider, log=log, beside=beside)


def _on_disk(found: Input) -> bool:
    """Whether every part of the export ``found`` is a path (not bytes given in memory)."""
    return bool(found.parts) and all(isinstance(part, str | os.PathLike) for part in found.parts)


def _from_bytes(
    data: bytes, name: str | None, report: ConversionLog | None, progress: bool | None, beside: Beside | None
) -> dict[str, Any]:
    if data[:2] != b"PK":
        part = Part(name or "<bytes>", lambda: io.BytesIO(data), len(data))
        return convert_parts([part], report, progress=progress, beside=beside)
    with tempfile.TemporaryDirectory(prefix="memvelope-") as tmp:
        path = Path(tmp) / (name if name and name.lower().endswith(".zip") else "export.zip")
        path.write_bytes(data)
        try:
            return open_export(
                Input("export", path.name, os.fspath(path), parts=(path,)),
                report=report,
                progress=progress,
                beside=beside,
            )
        except MemvelopeError as exc:
            raise _renamed(exc, f"{tmp}{os.sep}") from None


def _renamed(exc: MemvelopeError, prefix: str) -> MemvelopeError:
    """``exc`` with a temporary folder's path taken out of the file it names."""
    source = exc.source.replace(prefix, "") if exc.source else exc.source
    return type(exc)(exc.msg, reason=exc.reason, source=source, path=exc.path)


def write_envelope(envelope: Envelope, path: str | os.PathLike[str]) -> None:
    """Write the envelope's canonical bytes to ``path`` atomically (temporary file, then rename).

    Parameters
    ----------
    envelope
        The envelope.
    path
        The file to write.

    Returns
    -------
    None

    Raises
    ------
    memvelope_tools.errors.OutputError
        The file cannot be written; any earlier file at ``path`` is intact.

    Examples
    --------
    >>> import tempfile, os, memvelope_tools as mv
    >>> path = os.path.join(tempfile.mkdtemp(), "history.mve.json")
    >>> mv.write_envelope(mv.convert(mv.sample_path("claude")), path)
    """
    data = dumps_envelope(envelope)
    with atomic_output(path) as fh:
        fh.write(data)
