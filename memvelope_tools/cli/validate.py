"""``memvelope validate``: check envelopes and Facts IR documents against their schemas."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .._printable import printable
from .._sources import resolve_one
from .._tags import ENVELOPE_TAG, IR_TAG
from ..errors import FormatError, InputError

if TYPE_CHECKING:
    from .._validate import Violation


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "validate",
        help=f"check {ENVELOPE_TAG} and {IR_TAG} files against their schemas",
        description=(
            "Check each FILE against the schema its in-document tag names (top-level 'memvelope', then "
            "'meta.format'). Prints 'FILE: ok', or one line per violation: 'FILE: $.json.path: [rule] "
            "why'. With --envelope, Facts IR files are also checked against the envelope they were "
            "distilled from: counts, archetype figures, convo_id, provenance, and that every date is "
            "sourced. Exit status 1 when any file is invalid or unreadable.\n\n"
            "Examples:\n  memvelope validate history.mve.json\n"
            "  memvelope validate facts.mv.json --envelope history.mve.json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="an envelope or Facts IR document")
    p.add_argument(
        "--envelope",
        metavar="ENVELOPE",
        help="the source envelope (or the export, converted in memory), for the cross-checks of Facts IR files",
    )
    p.set_defaults(func=run)


def _document(path: str) -> Any:
    """The JSON value of ``path``, unjudged; InputError when it is no document at all (see
    :mod:`memvelope_tools._sources`)."""
    return resolve_one(path, "document").document()


def _load_envelope(path: str) -> dict[str, Any]:
    from .._validate import detect_format, validate
    from .common import load_input

    doc = load_input(path, quiet=True)  # an export is converted in memory
    if detect_format(doc) == IR_TAG:
        raise FormatError(
            f"--envelope must be an {ENVELOPE_TAG} document, not a Facts IR", reason="not-envelope", source=path
        )
    if validate(doc):
        raise FormatError(
            "--envelope is not a valid envelope; run `memvelope validate` on it first",
            reason="invalid-envelope",
            source=path,
        )
    return doc


def check_file(path: str, envelope: dict[str, Any] | None = None) -> list[Violation]:
    """Violations of one file (schema, counts, and the cross-checks when ``envelope`` is given)."""
    from .._validate import Violation, check_ir_against_envelope, detect_format, sort_key, validate

    doc = _document(path)
    try:
        tag = detect_format(doc)
    except FormatError as exc:
        return [Violation(exc.path or "$", exc.reason, exc.msg)]
    found = set(validate(doc))
    if envelope is not None and tag == IR_TAG:
        found.update(check_ir_against_envelope(doc, envelope))
    return sorted(found, key=sort_key)


def run(args: argparse.Namespace) -> int:
    envelope = _load_envelope(args.envelope) if args.envelope else None
    status = 0
    for path in args.files:
        try:
            violations = check_file(path, envelope)
        except InputError as exc:  # missing, unreadable, not JSON, not a document: as every command says it
            print(f"memvelope: error: {printable(str(exc))}", file=sys.stderr)
            status = 1
            continue
        if not violations:
            print(f"{path}: ok")
            continue
        status = 1
        for v in violations:
            print(f"{path}: {printable(str(v))}")
    sys.stdout.flush()
    return status
