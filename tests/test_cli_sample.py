"""The bundled files, reachable by name: ``mv.sample_path`` in Python and ``memvelope sample`` in the shell."""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import memvelope_tools as mv
from memvelope_tools.cli import main
from memvelope_tools.samples import BUNDLED, SAMPLES

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "memvelope_tools" / "samples"
NAMES = ["chatgpt", "claude", "facts-chatgpt", "facts-claude", "history-older", "history-newer"]


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main(["sample", *(str(a) for a in args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_every_bundled_file_has_a_name_and_every_name_a_file() -> None:
    on_disk = sorted(p.name for p in FOLDER.iterdir() if p.is_file() and p.suffix != ".py")
    assert sorted(s.file for s in BUNDLED) == on_disk
    assert [s.name for s in BUNDLED] == NAMES
    assert [mv.sample_path(name).name for name in NAMES] == [
        "chatgpt-export.zip",
        "claude-export.zip",
        "facts-chatgpt.mv.json",
        "facts-claude.mv.json",
        "29b767a0d6a6bd8a951458fec8d14ff56bdbdadb862f6eedc811c1b4fa16d89f-2026-05-01-08-30-00.zip",
        "29b767a0d6a6bd8a951458fec8d14ff56bdbdadb862f6eedc811c1b4fa16d89f-2026-10-31-18-00-00.zip",
    ]
    assert mv.history_samples() == [mv.sample_path("history-older"), mv.sample_path("history-newer")]
    assert SAMPLES == ("chatgpt", "claude")  # the exports, as demos and tests iterate them


def test_every_bundled_file_is_installed() -> None:
    """pyproject.toml's package data takes each file, so a pip install has what sample_path names."""
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    patterns = globs["package-data"]["memvelope_tools"]
    for sample in BUNDLED:
        assert any(fnmatch.fnmatch(f"samples/{sample.file}", p) for p in patterns), sample.file


def test_the_names_give_what_they_say() -> None:
    for provider in ("chatgpt", "claude"):
        assert zipfile.is_zipfile(mv.sample_path(provider))
        facts = json.loads(mv.sample_path(f"facts-{provider}").read_text(encoding="utf-8"))
        assert facts["meta"]["format"] == "memvelope-ir-v0" and facts["meta"]["provider"] == provider
    assert len(mv.facts_frame(mv.sample_path("facts-chatgpt"))) == 17


@pytest.mark.parametrize("bad", ["gemini", "ChatGPT", "", "chatgpt-export.zip", "facts", "facts-chatgpt.mv.json"])
def test_an_unknown_name_is_a_format_error_listing_the_names(bad: str) -> None:
    with pytest.raises(
        mv.FormatError,
        match=r"valid names: chatgpt, claude, facts-chatgpt, facts-claude, history-older, history-newer$",
    ) as err:
        mv.sample_path(bad)
    assert err.value.reason == "not-found" and isinstance(err.value, ValueError)


def test_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys)
    assert (code, err) == (0, "")
    rows = [line.split() for line in out.splitlines()]
    assert [(row[0], row[-1]) for row in rows] == [(s.name, s.file) for s in BUNDLED]
    assert " ".join(rows[0][1:-1]) == "a ChatGPT export (40 conversations)"


def test_a_name_writes_its_file_under_its_own_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "claude")
    size = mv.sample_path("claude").stat().st_size
    assert (code, out) == (0, "")
    assert err == f"memvelope: wrote claude-export.zip (claude sample, {size:,} bytes)\n"
    assert (tmp_path / "claude-export.zip").read_bytes() == mv.sample_path("claude").read_bytes()
    assert mv.convert("claude-export.zip")["meta"]["conversation_count"] == 40


def test_output_file_and_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "facts.mv.json"
    target.write_text("an older file", encoding="utf-8")
    assert run(capsys, "facts-claude", "-o", target, "-q") == (0, "", "")
    assert target.read_bytes() == mv.sample_path("facts-claude").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["facts.mv.json"]  # no temporary file left


def test_dash_writes_the_bytes_to_stdout(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "memvelope_tools", "sample", "facts-chatgpt", "-o", "-"],
        capture_output=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == mv.sample_path("facts-chatgpt").read_bytes()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["gemini"],
            "unknown sample 'gemini'; valid names: chatgpt, claude, facts-chatgpt, facts-claude, history-older, "
            "history-newer",
        ),
        (["-o", "x.zip"], "-o needs a NAME: which sample to write (`memvelope sample` lists them)"),
        (["chatgpt", "-o", "missing/x.zip"], "output folder does not exist: missing (in missing/x.zip)"),
    ],
)
def test_wrong_use_is_one_line_and_writes_nothing(
    args: list[str], line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(capsys, *args) == (1, "", f"memvelope: error: {line}\n")
    assert list(tmp_path.iterdir()) == []


def test_the_command_loads_nothing_heavy(tmp_path: Path) -> None:
    probe = (
        "import json, sys; from memvelope_tools.cli import main; "
        f"code = main(['sample']) + main(['sample', 'chatgpt', '-o', {str(tmp_path / 'x.zip')!r}]); "
        "print(json.dumps([code, sorted({m.split('.')[0] for m in sys.modules})]))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    code, modules = json.loads(done.stdout.splitlines()[-1])
    assert code == 0 and (tmp_path / "x.zip").is_file()
    assert set(modules) & {"pandas", "pyarrow", "numpy", "matplotlib", "jsonschema", "tqdm"} == set()
