"""Every ```python and ```console block of README.md runs, in order, and prints what the README shows.

How the README is read:

- Blocks run in the order they appear, in one temporary working folder that links to the repository's
  ``memvelope_tools/`` and ``fixtures/``, so ``memvelope_tools/samples/chatgpt-export.zip`` names what it
  names in a clone. Files a block writes are there for the blocks after it. Python blocks share one
  namespace.
- A python block's stdout must equal its expected output: the text after each ``# -> `` comment, one line
  per comment, in order, then the ```text block right after the python block, if there is one (for output
  longer than a line). A python block with neither must print nothing.
- In a console block, a line starting with ``$ `` is a command, run by bash with this interpreter's
  ``bin`` folder first on ``PATH``; the lines up to the next ``$ `` are what it prints on stdout and
  stderr together, exactly. A line holding only ``...`` stands for any number of lines (for long output);
  ``...`` inside a line stands for any text within that line (for a figure that changes with library
  versions, such as a file size).
- pandas before 3.0 shows a millisecond timestamp with six fractional digits (``16:15:49.790000``)
  where pandas 3 shows three; python output is compared as pandas 3 shows it (columns realigned).
- ``<!-- readme-test: skip (why) -->`` on the line before a block keeps that block from running (for
  commands that install or build); such blocks are counted, and there must be few.
- No other kind of fenced block is allowed, so no example escapes this test.

pytest-examples checks Python blocks only and phmdoctest turns Markdown into test files; neither runs
console sessions with exact output, so this short reader does both.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memvelope_tools.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: What the test runs: python blocks, console blocks (each of its commands checked), and skipped blocks.
EXPECTED_COUNTS = {"python": 11, "console": 10, "skipped": 2}

_FENCE = re.compile(r"^```(\S*)\s*$")
_SKIP = re.compile(r"^<!-- readme-test: skip \((.+)\) -->$")
_ARROW = re.compile(r"#\s->\s?(.*)$")
ELISION = "..."


@dataclass(frozen=True)
class Block:
    kind: str  # "python", "console" or "text"
    line: int  # 1-based line of the opening fence
    body: str
    skip: str | None = None  # the reason, for a block marked not to run
    output: str | None = None  # a python block's following ```text block

    @property
    def id(self) -> str:
        return f"L{self.line}-{self.kind}"


def parse(text: str) -> list[Block]:
    """The fenced blocks of ``text``, each python block carrying the ```text block that follows it."""
    lines = text.split("\n")
    blocks: list[Block] = []
    closed_at = -1  # the closing fence of the previous block
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        start, kind = i, match.group(1)
        end = next((j for j in range(i + 1, len(lines)) if lines[j] == "```"), None)
        if end is None:
            raise AssertionError(f"README.md:{start + 1}: a fenced block is never closed")
        body = "\n".join(lines[start + 1 : end]) + "\n"
        if kind == "text":
            previous = blocks[-1] if blocks else None
            adjacent = not any(lines[closed_at + 1 : start])
            if previous is None or previous.kind != "python" or previous.output is not None or not adjacent:
                raise AssertionError(f"README.md:{start + 1}: a ```text block must directly follow a python block")
            blocks[-1] = Block(previous.kind, previous.line, previous.body, previous.skip, body)
        else:
            skip = _SKIP.match(lines[start - 1]) if start else None
            blocks.append(Block(kind, start + 1, body, skip.group(1) if skip else None))
        closed_at = end
        i = end + 1
    return blocks


README_TEXT = README.read_text(encoding="utf-8")
BLOCKS = parse(README_TEXT)
RUN = [b for b in BLOCKS if b.skip is None]


_MICROS_OF_MILLIS = re.compile(r"(\.\d{3})000(?=\+00:00)")


def as_pandas_3_shows(out: str) -> str:
    """``out`` with pandas 2's six-digit fractions of millisecond timestamps shown in three digits; the
    padding pandas 2 added before a column's name goes too."""
    if pd_major() >= 3 or not _MICROS_OF_MILLIS.search(out):
        return out
    lines = out.splitlines(keepends=True)
    fixed = [_MICROS_OF_MILLIS.sub(r"\1", line) for line in lines]
    for i, line in enumerate(lines):
        if fixed[i] == line and i + 1 < len(lines) and fixed[i + 1] != lines[i + 1]:
            fixed[i] = line.replace("   ts", "ts", 1)  # the header row above the timestamps
    return "".join(fixed)


def pd_major() -> int:
    import pandas as pd

    return int(pd.__version__.split(".")[0])


def expected_python_output(block: Block) -> str:
    arrows = [m.group(1) for m in map(_ARROW.search, block.body.splitlines()) if m]
    return "".join(line + "\n" for line in arrows) + (block.output or "")


def commands(block: Block) -> list[tuple[str, str]]:
    """(command, expected output) pairs of a console block."""
    pairs: list[tuple[str, str]] = []
    for line in block.body.splitlines(keepends=True):
        if line.startswith("$ "):
            pairs.append((line[2:].rstrip("\n"), ""))
        elif not pairs:
            raise AssertionError(f"README.md:{block.line}: a console block starts with `$ command`")
        else:
            pairs[-1] = (pairs[-1][0], pairs[-1][1] + line)
    return pairs


def output_pattern(expected: str) -> re.Pattern[str]:
    """``expected`` as a regular expression, with the two elisions of the module docstring."""
    parts = []
    for line in expected.splitlines():
        if line == ELISION:
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(r"[^\n]*?".join(map(re.escape, line.split(ELISION))) + r"\n")
    return re.compile("".join(parts))


@dataclass
class Session:
    work: Path
    namespace: dict[str, Any]
    env: dict[str, str]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    work = tmp_path_factory.mktemp("readme")
    for name in ("memvelope_tools", "fixtures"):
        (work / name).symlink_to(ROOT / name, target_is_directory=True)
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as they would on a terminal
    env["MPLBACKEND"] = "Agg"
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    pd.reset_option("^display")  # frames print as they do in a fresh interpreter
    before = Path.cwd()
    os.chdir(work)
    try:
        yield Session(work, {"__name__": "__readme__"}, env)
    finally:
        os.chdir(before)
        import matplotlib.pyplot as plt

        plt.close("all")


@pytest.mark.parametrize("block", RUN, ids=[b.id for b in RUN])
def test_block(block: Block, session: Session) -> None:
    if block.kind == "python":
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block.body, f"README.md:{block.line}", "exec"), session.namespace)
        assert as_pandas_3_shows(out.getvalue()) == expected_python_output(block)
        return
    for command, expected in commands(block):
        proc = subprocess.run(
            ["bash", "-c", command],
            cwd=session.work,
            env=session.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
        )
        if ELISION in expected:
            assert output_pattern(expected).fullmatch(proc.stdout), f"$ {command}\n{proc.stdout}"
        else:
            assert proc.stdout == expected, f"$ {command}"


def test_every_block_is_run_or_counted() -> None:
    kinds = {b.kind for b in BLOCKS}
    assert kinds <= {"python", "console"}, f"fenced blocks the test does not run: {kinds - {'python', 'console'}}"
    counts = Counter(b.kind for b in RUN)
    found = {"python": counts["python"], "console": counts["console"], "skipped": len(BLOCKS) - len(RUN)}
    assert found == EXPECTED_COUNTS
    print(f"README.md: ran {found['python']} python and {found['console']} console blocks, skipped {found['skipped']}")


def test_every_command_is_in_the_commands_table() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    table = README_TEXT.split("## Commands", 1)[1].split("\n## ", 1)[0]
    for name in sub.choices:  # type: ignore[union-attr]
        assert f"| `memvelope {name}" in table, f"the README's Commands table lacks `memvelope {name}`"


def test_no_pointer_outside_the_repository() -> None:
    for path in [README, *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "fixtures").glob("*/README.md"))]:
        text = path.read_text(encoding="utf-8")
        assert "../shared" not in text and "NOTES" not in text, path.name


def test_no_pointer_outside_the_repository_in_the_package() -> None:
    """Docstrings, messages and doctor output cite docs/conformance.md, never the spec notes beside the repo."""
    for path in sorted((ROOT / "memvelope_tools").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "../shared" not in text and "NOTES" not in text, path.relative_to(ROOT)


def test_conformance_links_name_existing_entries() -> None:
    anchors = set(
        re.findall(r'<a id="([a-z]\d+)"></a>', (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8"))
    )
    assert {f"a{i}" for i in range(1, 29)} | {f"b{i}" for i in range(1, 6)} <= anchors
    for path in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"conformance\.md#([a-z0-9]+)", path.read_text(encoding="utf-8")):
            assert target in anchors, f"{path.name} links to a missing entry #{target}"
        for cited in re.findall(r"conformance ([A-C]\d+)", path.read_text(encoding="utf-8")):
            assert cited.lower() in anchors, f"{path.name} cites a missing entry {cited}"


def test_output_pattern_elisions() -> None:
    assert output_pattern("a\n...\nz\n").fullmatch("a\nb\nc\nz\n")
    assert output_pattern("a\n...\nz\n").fullmatch("a\nz\n")
    assert not output_pattern("a\n...\nz\n").fullmatch("a\nb\n")
    assert output_pattern("wrote x (... KiB)\n").fullmatch("wrote x (110 KiB)\n")
    assert not output_pattern("wrote x (... KiB)\n").fullmatch("wrote x (110 KiB)\nmore\n")


def test_each_conformance_entry_says_what_why_and_where_it_is_tested() -> None:
    text = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    entries = re.split(r'<a id="[a-z]\d+"></a>\n', text)[1:]
    assert len(entries) == 28 + 5 + len(re.findall(r'<a id="c\d+">', text))
    for entry in entries:
        title = entry.split("\n", 1)[0]
        for part in ("**Question.**", "**Answer.**", "**Why.**", "**Tested in.**"):
            assert part in entry, f"{title}: no {part}"
        tested = entry.split("**Tested in.**", 1)[1].split("\n\n", 1)[0]
        for name in re.findall(r"`([^`]+)`", tested):
            where = ROOT / name if name.startswith("tests/") else ROOT / "fixtures" / "envelope" / name
            assert where.exists(), f"{title}: {name} does not exist"
