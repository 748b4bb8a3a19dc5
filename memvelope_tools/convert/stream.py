"""The streaming path: parts parsed incrementally with ijson (its C backend, yajl2_c), one conversation
at a time, so peak memory is bounded by the largest conversation rather than the export.

The bytes are those of the in-memory path. Where ijson's reading differs from ``JSON.parse`` as
:mod:`parse` gives it, the reader below works around it before ijson sees the bytes:

* a leading BOM is dropped; invalid UTF-8 (which yajl refuses) sends the part back to its start with
  the WHATWG replacement decoding of :func:`parse.decode` switched on;
* lone surrogate escapes (which yajl turns into ``?`` or refuses) are swapped for placeholders, as on
  the fast path (:mod:`fast`), and swapped back in each conversation;
* duplicate keys keep the last value at the first key's position, as a dict does;
* nesting deeper than the in-memory path parses (1024 levels, orjson's limit) is refused as ``too-deep``
  when ijson reaches it (yajl has no limit, and ``ijson.items`` needs memory growing with the square of
  the depth); see :mod:`memvelope_tools._depth` (numpy, imported only here, as ijson is).

Elements already handed on are skipped when a part is read again. Two rare kinds of part are parsed
whole instead (their memory is not bounded): one holding a number yajl cannot hold (an integer beyond
64 bits, or beyond the double range), and one whose text already holds the placeholder characters.
(ijson's decimal mode is not used for numbers: it crashes the interpreter on integers of more than 4300
digits.)
"""

from __future__ import annotations

import codecs
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, BinaryIO, Final

from .._atomic import atomic_output
from .._progress import Bar, progress_bar
from ..errors import ConversionError, MemvelopeError, OutputError
from . import _describe, fast
from .pipeline import Assembler, counting, gc_paused, parse_whole

if TYPE_CHECKING:
    from .._depth import DepthGauge
    from . import Report
    from .sources import Part

_CHUNK: Final = 1 << 20
# yajl lexes a token that spans reads again from its start at each read, which is quadratic in the token's
# size: while an element is unfinished, each read is twice the last, up to this.
_MAX_CHUNK: Final = 64 << 20
_BOM: Final = b"\xef\xbb\xbf"
_REPLACEMENT: Final = b"\xef\xbf\xbd"
_WHITESPACE: Final = b" \t\n\r"
_SAFE_WINDOW: Final = 16  # backslash-free bytes before a cut: no escape (pair) straddles it


class _Collision(Exception):
    """The part's text holds placeholder characters itself: swapping surrogates would not be reversible."""


class _TooDeep(Exception):
    """The parser reached nesting deeper than the in-memory path parses."""


class _Reader:
    """A part's bytes as ijson should read them: BOM dropped, optionally UTF-8 repaired, lone surrogate
    escapes swapped for placeholders. ``advance`` is told about raw bytes read (for a progress bar).

    Bytes from the bracket that nests too deeply on are held back: reading past it raises _TooDeep, so
    ijson first refuses any invalid JSON before that point, as the in-memory parser does."""

    def __init__(self, raw: BinaryIO, *, repair: bool, advance: Any, gauge: DepthGauge) -> None:
        self._raw = raw
        self._advance = advance
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace") if repair else None
        self._raw_tail = b""
        self._carry = b""
        self._buf = b""
        self._pos = 0
        self._eof = False
        self._first = True
        self._size = _CHUNK
        self._swap = fast.Swap()
        self.placeholders = self._swap.used  # placeholder characters swapped in so far
        self._genuine = False  # the text holds raw placeholder characters of its own
        self.replaced = 0
        self._gauge = gauge
        self._too_deep = False

    def element_done(self) -> None:
        """An element was completed: reads go back to their normal size."""
        self._size = _CHUNK

    def read(self, size: int = -1) -> bytes:
        while self._pos >= len(self._buf) and not self._eof:
            self._fill()
        if size < 0:
            size = len(self._buf) - self._pos
        out = self._buf[self._pos : self._pos + size]
        self._pos += len(out)
        return out

    def peek(self) -> bytes:
        """The first byte that is not JSON whitespace, without consuming it (b"" for an empty part)."""
        while True:
            rest = self._buf[self._pos :].lstrip(_WHITESPACE)
            if rest:
                return rest[:1]
            self._pos = len(self._buf)
            if self._eof:
                return b""
            self._fill()

    def _fill(self) -> None:
        if self._too_deep:
            raise _TooDeep
        data = self._raw.read(self._size)
        self._size = min(2 * self._size, _MAX_CHUNK)
        self._advance(len(data))
        if not data:
            self._eof = True
        if self._first:
            data = self._carry + data
            self._carry = b""
            if len(data) < len(_BOM) and not self._eof:
                self._carry = data
                return
            self._first = False
            if data.startswith(_BOM):
                data = data[len(_BOM) :]
        if self._decoder is not None:
            text = self._decoder.decode(data, final=self._eof)
            counted = self._raw_tail + data
            self.replaced += text.count("\ufffd") - counted.count(_REPLACEMENT) + self._raw_tail.count(_REPLACEMENT)
            self._raw_tail = counted[-2:]
            data = text.encode("utf-8")
        pending = self._carry + data
        cut = len(pending) if self._eof else _safe_cut(pending)
        region, self._carry = pending[:cut], pending[cut:]
        self._genuine = self._genuine or fast.holds_placeholders(region)
        region = fast.swap_lone_escapes(region, self._swap)
        if (self._genuine or self._swap.collides) and self._swap.used:
            raise _Collision
        keep = self._gauge.feed(region)
        if keep < len(region):
            region, self._too_deep = region[:keep], True
        self._buf = self._buf[self._pos :] + region
        self._pos = 0


def _safe_cut(data: bytes) -> int:
    """The largest cut with no backslash in the bytes before it and no UTF-8 sequence split by it."""
    cut = len(data) - 3  # keep a byte after the cut, to see whether the cut splits a UTF-8 sequence
    while cut >= _SAFE_WINDOW:
        slash = data.rfind(b"\\", cut - _SAFE_WINDOW, cut)
        if slash < 0:
            break
        cut = slash
    if cut < _SAFE_WINDOW:
        return 0
    while cut < len(data) and 0x80 <= data[cut] < 0xC0:  # at most three continuation bytes
        cut -= 1
    return cut


def _invalid(part: Part, exc: Exception) -> ConversionError:
    raw = exc.args[0] if exc.args else ""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(exc)  # yajl gives bytes
    detail = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    message = f"not valid JSON: {detail}"
    with part.open() as fh:  # the hints the in-memory path gives (parse._invalid_json_message)
        head = fh.read(4096)
    head = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    if len(head) < 4096 and not head.strip(b" \t\n\r"):
        message = "not valid JSON: the file is empty" + (" (only whitespace)" if head else "")
    elif b"\x00" in head:
        message += "; the file looks like UTF-16 text, save it as UTF-8 and convert again"
    return ConversionError(message, reason="invalid-json", source=part.name)


def available() -> bool:
    """True when ijson and numpy are installed, so the streaming path can be used."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("ijson", "numpy"))


def _part_elements(part: Part, report: Report, assembler: Assembler, bar: Bar) -> None:
    """Hand the part's elements to ``assembler`` one at a time (or note that it is not an array)."""
    try:
        import ijson

        from .._depth import DepthGauge
    except ImportError:
        raise MemvelopeError(
            "streaming conversion needs ijson and numpy: pip install 'memvelope_tools[fast]'",
            reason="missing-dependency",
        ) from None

    done = 0  # elements handed on, skipped when the part is read again
    counted = 0  # raw bytes reported to the progress bar
    seen = 0  # raw bytes read in the current pass

    def advance(n: int) -> None:
        nonlocal counted, seen
        seen += n
        if seen > counted:
            bar.update(seen - counted)
            counted = seen

    repair = False
    while True:
        seen = 0
        with part.open() as raw:
            reader = _Reader(raw, repair=repair, advance=advance, gauge=DepthGauge())
            try:
                if reader.peek() != b"[":
                    for _ in ijson.basic_parse(reader, use_float=True):
                        pass
                    assembler.non_array()
                    return
                for index, element in enumerate(ijson.items(reader, "item", use_float=True, buf_size=_MAX_CHUNK)):
                    reader.element_done()
                    if index < done:
                        continue
                    assembler.element(element, reader.placeholders)
                    done += 1
            except (ijson.JSONError, UnicodeDecodeError) as exc:
                # yajl passes some invalid UTF-8 (encoded surrogates, ED A0 80) on to Python's decoder.
                message = str(exc)
                if not repair and ("UTF8" in message or isinstance(exc, UnicodeDecodeError)):
                    repair = True
                    continue
                if "overflow" not in message:
                    raise _invalid(part, exc) from None
                _whole_part(part, report, assembler, done)  # a number beyond what yajl holds
                return
            except _Collision:
                _whole_part(part, report, assembler, done)
                return
            except _TooDeep:
                raise ConversionError("JSON nested too deeply to parse", reason="too-deep", source=part.name) from None
            if reader.replaced:
                report.replaced[part.name] = reader.replaced
            return


def _whole_part(part: Part, report: Report, assembler: Assembler, done: int) -> None:
    """The last resort: the part parsed whole, as the in-memory path parses it."""
    parsed = parse_whole(part, report, fast.available())
    if type(parsed.value) is not list:
        assembler.non_array()
        return
    for element in parsed.value[done:]:
        assembler.element(element, parsed.placeholders)


def assemble_streaming(parts: Sequence[Part], report: Report, assembler: Assembler, bar: Bar) -> str:
    """Feed every part's elements to ``assembler``, streaming; return the provider."""
    for part in parts:
        _part_elements(part, report, assembler, bar)
    return assembler.finish()


def _copy(src: IO[bytes], dst: IO[bytes]) -> None:
    src.seek(0)
    shutil.copyfileobj(src, dst, 4 * _CHUNK)


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


def write_streaming(
    parts: Sequence[Part],
    out: str | os.PathLike[str] | None,
    report: Report,
    *,
    progress: bool | None = None,
    stdout: IO[bytes] | None = None,
) -> dict[str, Any]:
    """Convert ``parts`` to canonical envelope bytes in ``out`` (or ``stdout``), one conversation at a
    time; return ``meta``. Conversations go to a temporary file first, since ``meta`` comes first."""
    report.parts = [p.name for p in parts]
    folder = Path(out).resolve().parent if out is not None else None
    if folder is not None and not folder.is_dir():
        raise OutputError(
            f"output folder does not exist: {folder}",
            reason="output",
            source=os.fspath(out) if out is not None else None,
        )
    total = sum(p.size or 0 for p in parts) or None
    with _temporary(folder, out) as body:
        first = True

        def emit(conversation: dict[str, Any]) -> None:
            nonlocal first
            if not first:
                body.write(b",\n    ")
            else:
                body.write(b"    ")
                first = False
            body.write(fast.fragment(conversation))

        with progress_bar(total, desc="converting", unit="B", enabled=progress) as bar, gc_paused():
            assembler = Assembler(counting(emit, bar), _describe(parts))
            provider = assemble_streaming(parts, report, assembler, bar)
        report.foreign = assembler.foreign
        meta = {
            "source_provider": provider,
            "conversation_count": assembler.conversations,
            "message_count": assembler.messages,
        }
        head, tail = fast.envelope_frame(meta)
        if out is None:
            target = stdout if stdout is not None else _stdout()
            target.write(head)
            _copy(body, target)
            target.write(tail)
            target.flush()
        else:
            with atomic_output(out) as fh:
                fh.write(head)
                _copy(body, fh)
                fh.write(tail)
    return meta


def _stdout() -> IO[bytes]:
    import sys

    return sys.stdout.buffer
