"""Without its C helpers (say, Python started in a clone that was never built) the package says so
once, whichever helper it misses first, and works on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES as SUFFIXES
from pathlib import Path

import memvelope_tools as mv
from memvelope_tools._native import NOT_BUILT

PACKAGE = Path(mv.__file__).resolve().parent

_PROBE = """
import importlib.abc, json, sys, warnings

class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in ("memvelope_tools._json._scan", "memvelope_tools._frames._textscan"):
            raise ImportError(f"hidden: {name}")
        return None

sys.meta_path.insert(0, Hide())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import memvelope_tools as mv
    import memvelope_tools._frames.text
    import memvelope_tools._json.elements
    frame = mv.messages_frame(mv.sample_path("chatgpt"))
print(json.dumps({"rows": len(frame), "said": [str(w.message) for w in caught if "C helpers" in str(w.message)]}))
"""


def test_missing_c_helpers_are_said_once() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MEMVELOPE_C_HELPERS_NOTE_GIVEN"}
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, env=env)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["rows"] == 114
    assert len(result["said"]) == 1
    assert result["said"] == [NOT_BUILT]
    assert "are not built" in NOT_BUILT and "build_ext --inplace" in NOT_BUILT


def test_built_helpers_say_nothing() -> None:
    probe = _PROBE.replace("sys.meta_path.insert(0, Hide())", "")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1])["said"] == []


def _install_without_helpers(tmp_path: Path) -> Path:
    """A copy of the package without its built C helpers, as a plain install without a C compiler has it."""
    shutil.copytree(
        PACKAGE,
        tmp_path / "memvelope_tools",
        ignore=shutil.ignore_patterns("__pycache__", *(f"*{s}" for s in SUFFIXES)),
    )
    return tmp_path


def _memvelope(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMVELOPE_C_HELPERS_NOTE_GIVEN"}
    return subprocess.run(
        [sys.executable, "-m", "memvelope_tools", *args],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_without_helpers_each_command_gives_one_note_line(tmp_path: Path) -> None:
    where = _install_without_helpers(tmp_path)
    sample = str(where / "memvelope_tools" / "samples" / "chatgpt-export.zip")
    done = _memvelope(where, "info", sample)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{sample}:\n")
    assert done.stderr.splitlines() == [f"memvelope: note: {NOT_BUILT}"]
    assert "C compiler" in NOT_BUILT and "several times slower" in NOT_BUILT
    assert "install the package with pip" not in NOT_BUILT
    # Worker processes (two conversions at once) say nothing more.
    out = tmp_path / "out"
    both = [sample, str(where / "memvelope_tools" / "samples" / "claude-export.zip")]
    done = _memvelope(where, "convert-many", *both, "-o", str(out), "-j", "2")
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if "C helpers" in line] == [f"memvelope: note: {NOT_BUILT}"]
    assert "Warning" not in done.stderr and ".py:" not in done.stderr


def test_version_says_whether_the_helpers_are_in_use(tmp_path: Path) -> None:
    done = _memvelope(_install_without_helpers(tmp_path), "--version")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"memvelope {mv.__version__} (C helpers not built: same results, slower)\n"
    if os.environ.get("MEMVELOPE_REQUIRE_NATIVE") == "1":
        done = _memvelope(PACKAGE.parent, "--version")
        assert done.stdout == f"memvelope {mv.__version__} (C helpers in use)\n"
