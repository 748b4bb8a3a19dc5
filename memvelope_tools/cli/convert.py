"""``memvelope convert``: one export (files, folders, zips) to one canonical envelope."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from .._convert.sources import ZipLimits, expand
from .._plural import count
from .._printable import printable
from .._sources import explained, resolve
from .common import check_output_file, conversion_notes

if TYPE_CHECKING:
    from .._convert.log import ConversionLog

_DEFAULTS = ZipLimits()
# Inputs larger than this (bytes, inflated) are converted streaming: as fast, and memory stays flat (in
# memory, the envelope's bytes are held until the end, about half the export's size).
STREAM_ABOVE = 128 * 1024**2


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "convert",
        help="convert a ChatGPT or Claude export to an envelope-v0 document",
        description=(
            "Convert one export to one envelope-v0 document. Each PATH is a conversations*.json part, "
            "a folder, or an export zip as downloaded (read in memory, never extracted). Several PATHs "
            "are parts of one export, in the order given. Without -o the canonical bytes go to stdout.\n\n"
            "Example:\n  memvelope convert ~/Downloads/chatgpt-export.zip -o history.mve.json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="export zip, folder or part file")
    p.add_argument("-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout")
    p.add_argument("-v", "--verbose", action="store_true", help="list the parts read, always")
    p.add_argument("-q", "--quiet", action="store_true", help="no notes or warnings on stderr")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--stream",
        action="store_true",
        help="hold at most 128 MiB of the envelope in memory, the rest in a temporary file (same bytes; the "
        "default above 128 MiB of input)",
    )
    mode.add_argument(
        "--no-stream", action="store_true", help="never switch to streaming by itself (the envelope is held in memory)"
    )
    p.add_argument(
        "--zip-max-bytes",
        type=int,
        default=_DEFAULTS.max_member_bytes,
        metavar="N",
        help="refuse zip members larger than N bytes (default %(default)s)",
    )
    p.add_argument(
        "--zip-max-ratio",
        type=float,
        default=_DEFAULTS.max_ratio,
        metavar="R",
        help="refuse large zip members compressed more than R:1 (default %(default)s)",
    )
    p.add_argument(
        "--zip-max-total-bytes",
        type=int,
        default=_DEFAULTS.max_total_bytes,
        metavar="N",
        help="refuse a zip whose members inflate past N bytes in all (default %(default)s)",
    )
    p.set_defaults(func=run)


def _notes(report: ConversionLog, provider: str, args: argparse.Namespace, limits: ZipLimits) -> None:
    if args.quiet:
        return
    err = sys.stderr
    if args.verbose or report.chose:
        print(
            f"memvelope: read {count(len(report.parts), 'part')}: {', '.join(map(printable, report.parts))}", file=err
        )
        for name, why in report.ignored if args.verbose else []:
            print(f"memvelope: passed over {printable(name)} ({why})", file=err)
    conversion_notes(report, provider)
    _unconverted(args.paths, limits)


def _unconverted(paths: list[str], limits: ZipLimits) -> None:
    """The note naming the files of the export the spec does not convert (group chats, the library, ...)."""
    from .._whole.files import unconverted_note
    from .._whole.sections import unconverted_files
    from ..errors import MemvelopeError

    try:
        note = unconverted_note(unconverted_files(*paths, limits=limits))
    except MemvelopeError as exc:  # the conversion is done: a listing that fails is said, not fatal
        note = f"the export's other files could not be listed: {exc}"
    if note is not None:
        print(f"memvelope: note: {printable(note)}", file=sys.stderr)


def _streaming(args: argparse.Namespace, limits: ZipLimits) -> bool:
    if args.stream or args.no_stream:
        return bool(args.stream)
    size = sum(p.size or 0 for p in expand(args.paths, limits).parts)
    if size <= STREAM_ABOVE:
        return False
    if not args.quiet:
        print(
            f"memvelope: the export is {size / 1e6:,.0f} MB: converting streaming, the envelope through a "
            "temporary file (--no-stream to hold it in memory)",
            file=sys.stderr,
        )
    return True


def run(args: argparse.Namespace) -> int:
    if args.output:
        check_output_file(args.output)
    resolve(args.paths, "export", list_means="parts", caller="memvelope convert")
    with explained(args.paths):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from .._convert.log import ConversionLog
    from .._convert.pipeline import convert_stream

    report = ConversionLog()
    limits = ZipLimits(
        max_member_bytes=args.zip_max_bytes, max_ratio=args.zip_max_ratio, max_total_bytes=args.zip_max_total_bytes
    )
    progress = False if args.quiet else None
    in_memory = not _streaming(args, limits)
    meta = convert_stream(
        args.paths, args.output, report=report, zip_limits=limits, progress=progress, workers=None, in_memory=in_memory
    )
    _notes(report, meta["source_provider"], args, limits)
    if args.verbose and args.output:
        print(
            f"memvelope: wrote {args.output}: {meta['source_provider']}, "
            f"{count(meta['conversation_count'], 'conversation')}, {count(meta['message_count'], 'message')}",
            file=sys.stderr,
        )
    return 0
