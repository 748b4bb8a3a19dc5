"""``memvelope history``: a folder that keeps the history of every export added to it."""

from __future__ import annotations

import argparse
from typing import Any

from .._plural import count
from .._printable import printable


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "history",
        help="keep the history of dated exports of one account in a Parquet folder: add an export, show it",
        description=(
            "A history folder holds every conversation and message of the exports added to it, each with the "
            "dates it was first and last seen and whether it is current, edited away or deleted upstream. It "
            "is a Parquet folder like the one `memvelope parquet` writes (with extra columns), so search, "
            "topics, report and the frame readers take it.\n\n"
            "Examples:\n  memvelope history add ~/Downloads/data-2025-01-05-10-00-00-batch-0000.zip --to my-history/\n"
            "  memvelope history show my-history/"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    add = actions.add_parser(
        "add",
        help="add an export to a history folder (created if missing)",
        description=(
            "Add EXPORT (an export as downloaded or an envelope) to the history folder. Its date is --date, "
            "else the one in its download's file name, else its newest timestamp. Exports are added oldest "
            "first; adding an export the folder already holds changes nothing, and an older one it does not hold "
            "is refused with the commands that add every export again, in date order, to a new folder. A file "
            "is replaced only when its content changes, and only once every new file is written in full; an add "
            "that changes the messages also brings the folder's search index up to date."
        ),
    )
    add.add_argument("export", metavar="EXPORT", help="the export or envelope to add")
    add.add_argument("--to", required=True, metavar="FOLDER", help="the history folder")
    add.add_argument(
        "--date",
        action=_DateGiven,
        metavar="DATE",
        help="the export's date, e.g. 2025-06-01 or 2025-06-01T09:30:00Z",
    )
    add.add_argument("-q", "--quiet", action="store_true", help="no progress bars and no summary")
    add.set_defaults(func=run_add, uses_pandas=False)
    show = actions.add_parser("show", help="print a history folder's snapshots and counts")
    show.add_argument("folder", metavar="FOLDER", help="the history folder")
    show.set_defaults(func=run_show)
    check = actions.add_parser(
        "check",
        help="check every file of a history folder and say what is wrong",
        description=(
            "Check every file of the history folder against what it lists: the tables are read whole, each "
            "part of the messages must hold the rows and the content the folder's state says, and the search "
            "index's files must be files of the folder. Temporary files left by interrupted runs are removed. "
            "Prints one line per problem and exits 1 when there is any."
        ),
    )
    check.add_argument("folder", metavar="FOLDER", help="the history folder")
    check.set_defaults(func=run_check)


class _DateGiven(argparse.Action):
    """``--date``, which pandas reads: the add then uses pandas."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: Any = None
    ) -> None:
        namespace.date = values
        namespace.uses_pandas = True


def run_add(args: argparse.Namespace) -> int:
    progress = False if args.quiet else None
    from .._history_folder import add_export

    row = add_export(args.export, args.to, date=args.date, workers=None, progress=progress)
    if args.quiet:
        return 0
    if not row["added"]:
        print(f"{args.to} already holds this export ({_when(row)}): nothing written")
        return 0
    print(f"added {printable(row['source'])} ({_when(row)}) to {args.to}: {_counts(row)}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from .._history.folder import read_history

    frames = read_history(args.folder)
    print(f"{args.folder}: {count(len(frames['snapshots']), 'snapshot')}")
    for record in frames["snapshots"].to_dict("records"):
        row = {str(k): v for k, v in record.items()}
        source, provider = printable(row["source"]), printable(row["provider"])
        print(f"  #{row['snapshot']}  {_when(row)}  {provider}  {source}: {_counts(row)}")
    for name in ("conversations", "messages"):
        statuses = frames[name]["status"].value_counts()
        parts = [f"{status} {int(n):,}" for status, n in statuses.items() if n]
        print(f"{name}: {len(frames[name]):,} ({', '.join(parts)})")
    return 0


def run_check(args: argparse.Namespace) -> int:
    from .._history_check import check_history

    checked = check_history(args.folder)
    if checked.removed:
        print(f"removed {count(len(checked.removed), 'temporary file')} left by interrupted runs")
    for problem in checked.problems:
        print(f"{args.folder}: {problem}")
    if checked.problems:
        print(f"{args.folder}: {count(len(checked.problems), 'problem')} found")
        return 1
    print(
        f"{args.folder}: whole ({count(checked.snapshots, 'snapshot')}, {count(checked.parts, 'part')}, "
        f"{count(checked.messages, 'message')})"
    )
    return 0


def _when(row: dict[str, Any]) -> str:
    rule = {"given": "given", "file name": "from the file name", "newest timestamp": "its newest timestamp"}
    from .._history.dates import shown_date

    return f"{shown_date(row['date'])}, {rule.get(row['date_source'], row['date_source'])}"


def _counts(row: dict[str, Any]) -> str:
    changes = ", ".join(f"{k} {row[k]:,}" for k in ("new", "grown", "edited", "unchanged", "missing") if row[k])
    sizes = f"{count(row['conversations'], 'conversation')}, {count(row['messages'], 'message')}"
    return f"{sizes}; {changes or 'no change'}"
