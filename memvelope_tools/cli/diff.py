"""``memvelope diff``: what changed between two exports of one account."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .._plural import count
from .._signals import bind_to_parent, held


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "diff",
        help="what changed between two exports of one account: new, grown, edited, missing conversations",
        description=(
            "Compare an older and a newer export (or envelope) of one account, conversation by conversation: "
            "new (only in NEW), missing (only in OLD: deleted or archived upstream), unchanged, grown (NEW "
            "holds every message of OLD, in order, then more), edited (they share a beginning and then "
            "differ: an edited prompt or a regenerated reply), unmatched (no id to match by, and no "
            "counterpart by created time and title). Conversations match by provider and id; messages "
            "compare by role, text and timestamp. Prints the counts per status and the conversations that "
            "changed, newest first; --json prints one JSON object instead. Neither input is changed.\n\n"
            "Examples:\n  memvelope diff old-export.zip new-export.zip\n"
            "  memvelope diff january.mve.json june.mve.json --json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("old", metavar="OLD", help="the older export or envelope")
    p.add_argument("new", metavar="NEW", help="the newer export or envelope")
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"counts": {status: n}, "conversations": [one object per changed conversation]}',
    )
    p.add_argument(
        "--limit", type=int, default=20, metavar="N", help="list at most N changed conversations (default 20)"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    progress = False if args.quiet or args.json else None
    with converting_early([args.old, args.new], progress) as converted:
        from .._history import diff, status_counts  # its libraries load while the exports convert

        old, new = converted()
        changes = diff(old, new, workers=None, progress=progress)
    counts = status_counts(changes)
    changed = _newest_first(changes[changes["status"] != "unchanged"])
    if args.json:
        rows = [_json_row(row) for row in changed.to_dict("records")]
        print(json.dumps({"counts": counts, "conversations": rows}, ensure_ascii=False, indent=2))
        return 0
    total = len(changes)
    print(f"{count(total, 'conversation')}: " + ", ".join(f"{status} {n:,}" for status, n in counts.items() if n))
    if not len(changed):
        print("nothing changed")
        return 0
    print("changed, newest first:")
    for row in changed.head(max(args.limit, 0)).to_dict("records"):
        print(f"  {_line(row)}")
    if len(changed) > args.limit:
        print(f"  ... and {len(changed) - max(args.limit, 0):,} more (--limit, or --json for all)")
    return 0


def _newest_first(changed: Any) -> Any:
    when = changed["updated_at"].fillna(changed["last_ts"]).fillna(changed["created_at"])
    return changed.assign(_when=when).sort_values("_when", ascending=False, na_position="last", kind="stable")


def _line(row: dict[str, Any]) -> str:
    import pandas as pd

    when = row["_when"]
    day = when.strftime("%Y-%m-%d") if not pd.isna(when) else "----------"
    title = row["title"] if not pd.isna(row["title"]) and row["title"] else "(untitled)"
    before, after = row["messages_before"], row["messages_after"]
    if row["status"] in ("grown", "edited"):
        counts = f"{before:,} -> {after:,} messages, differ from message {row['first_difference'] + 1}"
    else:
        counts = count(int(after if pd.isna(before) else before), "message")
    ident = "" if pd.isna(row["id"]) else f" [{row['id']}]"
    return f"{row['status']:<9}  {day}  {title}{ident} ({counts})"


def _json_row(row: dict[str, Any]) -> dict[str, Any]:
    import pandas as pd

    out: dict[str, Any] = {}
    for key, value in row.items():
        if key.startswith("_"):
            continue
        if value is None or value is pd.NA or value is pd.NaT:
            out[key] = None
        elif isinstance(value, pd.Timestamp):
            out[key] = value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
        elif hasattr(value, "item"):
            out[key] = value.item()
        else:
            out[key] = value
    return out


@contextlib.contextmanager
def converting_early(sources: list[str], progress: bool | None) -> Iterator[Callable[[], list[Any]]]:
    """Start converting each export given by path to a temporary envelope file, each in a process of its
    own, before anything heavy is loaded (so its workers start in milliseconds); yields a function
    that waits for them and gives each input as the command should read it: the envelope file, or
    the input as given when it is no export or its conversion failed (the command converts it again
    and reports why)."""
    from .._sources import resolve_one

    found = [resolve_one(source, "any") for source in sources]
    exports = [f.files() for f in found]
    from .._convert.parallel import worker_context

    # A child is forked only while this process runs a single thread, as conversion workers are.
    if all(parts is None for parts in exports) or worker_context().get_start_method() != "fork":
        yield lambda: list(sources)
        return
    import multiprocessing

    context = multiprocessing.get_context("fork")
    with tempfile.TemporaryDirectory(prefix="memvelope-diff-") as tmp:
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
