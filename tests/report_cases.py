"""The reports kept as fixtures (tests/data/report-*.html): the page on the bundled samples, its chart
images and the package version taken out, so a change to how the report reads its inputs is checked
against what the page showed before.

``python -m tests.report_cases`` writes the fixtures again; read every one before committing it.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import memvelope_tools as mv
from memvelope_tools._report import build_report

DATA = Path(__file__).parent / "data"
_IMAGE = re.compile(r'src="data:image/png;base64,[A-Za-z0-9+/=]*"')
_VERSION = re.compile(r"Made with memvelope_tools [^ <]+\.")


def normalised(page: str) -> str:
    """``page`` without what a chart's pixels and the package's version put in it."""
    return _VERSION.sub("Made with memvelope_tools VERSION.", _IMAGE.sub('src="data:image/png;base64,"', page))


def _envelope_and_facts(tmp: Path) -> str:
    envelope = tmp / "chatgpt.mve.json"
    mv.write_envelope(mv.convert(mv.sample_path("chatgpt")), envelope)
    return build_report([envelope, mv.sample_path("facts-chatgpt")], tz="Europe/Berlin", top=5)


def _history_folder(tmp: Path) -> str:
    from memvelope_tools._history_folder import add_to_history
    from memvelope_tools.samples import history_samples

    folder = tmp / "history"
    for export in history_samples():
        add_to_history(export, folder)
    return build_report([folder], tz="America/New_York")


def _parsed_envelope(tmp: Path) -> str:
    del tmp
    doc = mv.read(DATA / "hand.mve.json")
    return build_report([doc], labels=["hand"], converted=[False])


#: Each fixture's name and how its page is made (given a temporary folder).
CASES: dict[str, Callable[[Path], str]] = {
    "chatgpt": lambda tmp: build_report([mv.sample_path("chatgpt")]),
    "claude": lambda tmp: build_report([mv.sample_path("claude")], tz="Asia/Tokyo"),
    "both-deduped": lambda tmp: build_report(
        [mv.sample_path("chatgpt"), *mv.samples.history_samples()], dedupe=True, top=30
    ),
    "envelope-and-facts": _envelope_and_facts,
    "facts": lambda tmp: build_report([mv.sample_path("facts-claude")]),
    "history-folder": _history_folder,
    "parsed-envelope": _parsed_envelope,
}


def fixture(name: str) -> Path:
    """The file that keeps the page of case ``name``."""
    return DATA / f"report-{name}.html"


def page(name: str) -> str:
    """The page of case ``name``, normalised."""
    with tempfile.TemporaryDirectory() as tmp:
        return normalised(CASES[name](Path(tmp)))


if __name__ == "__main__":
    for case in sys.argv[1:] or list(CASES):
        fixture(case).write_text(page(case), encoding="utf-8")
        print(f"wrote {fixture(case)}")
