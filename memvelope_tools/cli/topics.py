"""``memvelope topics``: what a history is about, as a table of topics and their top terms."""

from __future__ import annotations

import argparse
import json

from .._convert.zips import kept_open
from .._plural import count, plural
from .._printable import printable
from .._topic_count import N_TOPICS
from ..errors import InputError
from .common import at_least, check_inputs, conversion_notes, notes


def read_word_list(path: str) -> list[str]:
    """The words of a text file, one per line (blank lines skipped); InputError when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise InputError("no such stop-words file", reason="not-found", source=path) from None
    except OSError as exc:
        raise InputError(
            f"cannot read stop-words file: {exc.strerror or exc}", reason="unreadable", source=path
        ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"the stop-words file is not UTF-8 text (byte {exc.start:,})", reason="not-utf8", source=path
        ) from None
    return [word for line in text.splitlines() if (word := line.strip())]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "topics",
        help="the topics of a history (TF-IDF and NMF): their top terms and sizes",
        description=(
            "Find topics in the conversations (or messages) of the given histories and print one line "
            "per topic: its size, share and top terms. Each PATH is an envelope, an export zip or folder "
            "(converted as it is read), or a folder written by 'memvelope parquet'. Code, URLs, numbers "
            "and stop words are left out (--stop-words adds your own); the same input gives the same topics.\n\n"
            "Example:\n  memvelope topics history.mve.json -n 8 --stop-words my-words.txt"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="envelope, export zip or folder, or Parquet folder")
    p.add_argument(
        "-n",
        "--topics",
        type=at_least(1),
        default=None,
        metavar="N",
        help=f"how many topics (default: one per five conversations, from 2 to {N_TOPICS})",
    )
    p.add_argument("--unit", choices=("conversation", "message"), default="conversation", help="what one document is")
    p.add_argument("--terms", type=at_least(1), default=8, metavar="K", help="top terms shown per topic (default 8)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the model (default 0)")
    p.add_argument(
        "--stop-words",
        metavar="FILE",
        help="more words to leave out: a UTF-8 text file, one word per line (added to the built-in lists)",
    )
    p.add_argument("--json", action="store_true", help="print the topics as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with kept_open():  # each zip given is opened once, from its resolving to its last reading
        inputs = check_inputs(args.paths, use="history")
        extra = read_word_list(args.stop_words) if args.stop_words is not None else []
        from .._topic_units import Counted
        from .._topics import counted, topics

        with notes():
            # Each input as resolved here, read a batch at a time (an export converted as it is read).
            words = Counted(args.unit, *counted(inputs, args.unit, on_conversion=conversion_notes))
            found = topics(words, args.topics, unit=args.unit, seed=args.seed, stop_words=extra)
    sizes = found.assignments["topic"].value_counts()
    total = len(found.assignments)
    rows = []
    for t, label in found.labels.items():
        terms = found.terms.loc[found.terms["topic"] == t, "term"].head(args.terms)
        size = int(sizes.get(t, 0))
        rows.append({"topic": int(str(t)), "label": label, "size": size, "share": size / total, "terms": list(terms)})
    if args.json:
        print(json.dumps({"unit": found.unit, "units": total, "topics": rows}, ensure_ascii=False, indent=1))
        return 0
    print(f"{count(found.n_topics, 'topic')} in {count(total, found.unit)}")
    width = max(len(f"{r['size']:,}") for r in rows)
    for r in rows:
        shown = ", ".join(map(printable, r["terms"]))
        print(f"{r['topic']:>3}  {r['size']:>{width},} {plural(r['size'], found.unit):<13} {r['share']:>4.0%}  {shown}")
    unassigned = total - int(sizes.sum())
    if unassigned:
        has = "has" if unassigned == 1 else "have"
        print(f"({count(unassigned, found.unit)} without a word to go by {has} no topic)")
    return 0
