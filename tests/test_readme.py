"""Every ```python and ```console block of README.md runs, in order, as a pip user would run it, and prints
what the README shows.

How the README is read:

- The package is installed once (``pip install --no-deps --target``, from a copy of the source, C helpers
  built) into a temporary folder, and every block runs against that install: the folder comes first on
  ``PYTHONPATH`` and its ``bin/memvelope`` first on ``PATH``. The source tree is never on the path; the
  test checks which ``memvelope_tools`` and which ``memvelope`` a block gets.
- Blocks run in the order they appear, in one empty scratch folder, as after ``pip install`` in a fresh
  virtual environment. Files a block writes are there for the blocks after it. Python blocks run in one
  interpreter, started once, and share its namespace.
- A python block's stdout must equal its expected output: the text after each ``# -> `` comment, one line
  per comment, in order, then the ```text block right after the python block, if there is one (for output
  longer than a line). A python block with neither must print nothing.
- In a console block, a line starting with ``$ `` is a command, run by bash; the lines up to the next
  ``$ `` are what it prints on stdout and stderr together, exactly. A line holding only ``...`` stands for
  any number of lines (for long output); ``...`` inside a line stands for any text within that line (for
  a figure that changes with library versions, such as a file size).
- pandas before 3.0 shows a millisecond timestamp with six fractional digits (``16:15:49.790000``)
  where pandas 3 shows three; python output is compared as pandas 3 shows it (columns realigned).
- ``<!-- readme-test: clone-only (why) -->`` on the line before a console block runs it in the
  repository's folder instead (for what only a clone has: the fixture corpus, the notebooks), still
  against the install. These are the exception, and counted.
- ``<!-- readme-test: skip (why) -->`` on the line before a block keeps that block from running (for
  commands that install or build); such blocks are counted, and there must be few.
- No other kind of fenced block is allowed, so no example escapes this test.

pytest-examples checks Python blocks only and phmdoctest turns Markdown into test files; neither runs
console sessions with exact output, so this short reader does both.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memvelope_tools.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: What the test runs: python blocks and console blocks from the scratch folder, console blocks in the
#: clone, and blocks that do not run.
EXPECTED_COUNTS = {"python": 20, "console": 17, "clone-only": 2, "skipped": 4}

_FENCE = re.compile(r"^```(\S*)\s*$")
_MARK = re.compile(r"^<!-- readme-test: (skip|clone-only) \((.+)\) -->$")
_ARROW = re.compile(r"#\s->\s?(.*)$")
ELISION = "..."


@dataclass(frozen=True)
class Block:
    kind: str  # "python", "console" or "text"
    line: int  # 1-based line of the opening fence
    body: str
    skip: str | None = None  # the reason, for a block marked not to run
    output: str | None = None  # a python block's following ```text block
    clone_only: str | None = None  # the reason, for a block that runs in the repository's folder

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
            blocks[-1] = Block(previous.kind, previous.line, previous.body, previous.skip, body, previous.clone_only)
        else:
            mark = _MARK.match(lines[start - 1]) if start else None
            skip = mark.group(2) if mark and mark.group(1) == "skip" else None
            clone_only = mark.group(2) if mark and mark.group(1) == "clone-only" else None
            if clone_only is not None and kind != "console":
                raise AssertionError(f"README.md:{start + 1}: only a console block can be clone-only")
            blocks.append(Block(kind, start + 1, body, skip, None, clone_only))
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


# The interpreter that runs the python blocks: each request is one JSON line (the block's source and
# name), each answer one JSON line (what the block printed, and its traceback if it raised).
_RUNNER = r"""
import contextlib, io, json, sys, traceback
namespace = {"__name__": "__readme__"}
answers = sys.stdout
for request in sys.stdin:
    block = json.loads(request)
    out = io.StringIO()
    error = None
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(block["source"], block["name"], "exec"), namespace)
    except BaseException:
        error = traceback.format_exc()
    answers.write(json.dumps({"stdout": out.getvalue(), "error": error}) + "\n")
    answers.flush()
"""


def install(into: Path) -> Path:
    """The package installed into ``into/site`` as pip installs it (C helpers built when a compiler is
    there), from a copy of the source so the clone gets no build folders; returns the site folder."""
    for tool in ("pip", "setuptools"):
        assert importlib.util.find_spec(tool), f"the README test installs with {tool}: install the dev extra"
    source = into / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "memvelope_tools",
        source / "memvelope_tools",
        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"),
    )
    site = into / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input"]
    done = subprocess.run(
        [*pip, "--no-deps", "--no-build-isolation", "--target", str(site), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return site


@dataclass
class Session:
    scratch: Path
    site: Path
    env: dict[str, str]
    python: subprocess.Popen[str]
    ran: Counter[str] = field(default_factory=Counter)

    def run_python(self, source: str, name: str) -> tuple[str, str | None]:
        assert self.python.stdin is not None and self.python.stdout is not None
        self.python.stdin.write(json.dumps({"source": source, "name": name}) + "\n")
        self.python.stdin.flush()
        answer = self.python.stdout.readline()
        assert answer, "the interpreter running the python blocks ended"
        reply = json.loads(answer)
        return reply["stdout"], reply["error"]

    def run_command(self, command: str, cwd: Path) -> str:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
        )
        return done.stdout


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    site = install(tmp_path_factory.mktemp("install"))
    scratch = tmp_path_factory.mktemp("scratch")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env["PYTHONPATH"] = str(site)
    env["PATH"] = os.pathsep.join([str(site / "bin"), str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as they would on a terminal
    env["MPLBACKEND"] = "Agg"
    python = subprocess.Popen(
        [sys.executable, "-c", _RUNNER], cwd=scratch, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        yield Session(scratch, site, env, python)
    finally:
        assert python.stdin is not None
        python.stdin.close()
        python.wait(timeout=60)


@pytest.mark.slow
def test_the_blocks_get_the_installed_package(session: Session) -> None:
    assert list(session.scratch.iterdir()) == []  # the blocks start in an empty folder
    out, error = session.run_python("import memvelope_tools; print(memvelope_tools.__file__)", "check")
    assert error is None, error
    imported = Path(out.strip()).resolve()
    assert imported.is_relative_to(session.site.resolve()) and not imported.is_relative_to(ROOT)
    found = session.run_command("command -v memvelope; memvelope --version", session.scratch).splitlines()
    assert Path(found[0]) == session.site / "bin" / "memvelope" and found[1].startswith("memvelope ")
    shebang = (session.site / "bin" / "memvelope").read_text(encoding="utf-8").splitlines()[0]
    assert shebang == f"#!{sys.executable}"  # so the command imports from PYTHONPATH as the blocks do


@pytest.mark.slow
@pytest.mark.parametrize("block", RUN, ids=[b.id for b in RUN])
def test_block(block: Block, session: Session) -> None:
    if block.kind == "python":
        out, error = session.run_python(block.body, f"README.md:{block.line}")
        assert error is None, error
        assert as_pandas_3_shows(out) == expected_python_output(block)
        session.ran["python"] += 1
        return
    cwd = ROOT if block.clone_only else session.scratch
    for command, expected in commands(block):
        out = session.run_command(command, cwd)
        if ELISION in expected:
            assert output_pattern(expected).fullmatch(out), f"$ {command}\n{out}"
        else:
            assert out == expected, f"$ {command}"
    session.ran["clone-only" if block.clone_only else "console"] += 1


@pytest.mark.slow
def test_every_block_is_run_or_counted(
    session: Session, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    kinds = {b.kind for b in BLOCKS}
    assert kinds <= {"python", "console"}, f"fenced blocks the test does not run: {kinds - {'python', 'console'}}"
    counts = Counter("clone-only" if b.clone_only else b.kind for b in RUN)
    found = {
        "python": counts["python"],
        "console": counts["console"],
        "clone-only": counts["clone-only"],
        "skipped": len(BLOCKS) - len(RUN),
    }
    assert found == EXPECTED_COUNTS
    ran = sum(session.ran.values())
    with capsys.disabled():
        print(
            f"\nREADME.md: ran {ran} of {len(BLOCKS)} blocks against the installed package: {session.ran['python']} "
            f"python and {session.ran['console']} console from an empty folder, {session.ran['clone-only']} "
            f"console in the clone; {found['skipped']} not run (installs)"
        )
    selected = [item for item in request.session.items if getattr(item, "originalname", "") == "test_block"]
    if len(selected) == len(RUN):  # every block was selected: each ran once and printed what it shows
        assert dict(session.ran) == {k: v for k, v in found.items() if k != "skipped" and v}


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


def test_links_and_images_resolve_off_a_clone_or_say_why_not() -> None:
    """Absolute links go to the spec's public repository (the one address this project can cite); relative
    ones name files of the repository, and the README says they only work where the repository is."""
    targets = re.findall(r"\]\(([^)\s]+)\)", README_TEXT)
    absolute = [t for t in targets if "://" in t]
    assert absolute and all(t.startswith("https://github.com/memvelope/memvelope") for t in absolute), absolute
    for target in sorted(set(targets) - set(absolute)):
        assert (ROOT / target.split("#")[0]).exists(), f"README.md links to a missing file: {target}"
    intro = " ".join(README_TEXT.split("## Install", 1)[0].split())
    assert "Memvelope spec v0.2.0" in intro and "https://github.com/memvelope/memvelope" in intro
    assert "not on a package index page" in intro  # the limitation of the relative links, said
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert set(urls.values()) <= set(absolute)


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
