"""The commands on whatever a user has (exports, documents, wrong files), and their manners:
--version, "did you mean", one line per wrong file, output checked before any work, --dedupe,
the provider column and the note about another provider's conversations."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from small_exports import CHATGPT_CONV, CLAUDE_CONV

import memvelope_tools as mv
from memvelope_tools.cli import main

SAMPLE = mv.sample_path("chatgpt")
IR = Path(mv.__file__).parent / "samples" / "facts-chatgpt.mv.json"
NOTE = (
    "memvelope: note: the input mixes ChatGPT and Claude conversations: kept ChatGPT, as none of its first 5 "
    "conversations is Claude's, and 2 Claude conversations were left out (one export has one provider); convert "
    "each provider's files on their own, or each export to its own envelope with convert-many; "
    "`memvelope doctor` lists them\n"
)


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def envelope(tmp_path: Path) -> Path:
    path = tmp_path / "history.mve.json"
    mv.write_envelope(mv.convert(SAMPLE), path)
    return path


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([CHATGPT_CONV] * 5 + [CLAUDE_CONV] * 2))
    return path


# ---- --version and "did you mean" ----------------------------------------------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith(f"memvelope {mv.__version__} (C helpers ")
    assert importlib.metadata.version("memvelope_tools") == mv.__version__


def test_a_mistyped_flag_gets_the_subcommands_usage_and_a_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["parquet", str(SAMPLE), "-o", str(tmp_path / "out"), "--dedpue"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: memvelope parquet ")
    assert err.endswith("memvelope parquet: error: unrecognized arguments: --dedpue; did you mean --dedupe?\n")
    assert not (tmp_path / "out").exists()


def test_an_unlike_flag_gets_no_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["convert", str(SAMPLE), "--zzzzzz"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: memvelope convert ")
    assert err.endswith("memvelope convert: error: unrecognized arguments: --zzzzzz\n")


# ---- exports where documents were read -----------------------------------------------------------


def test_info_on_an_export_zip(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "info", SAMPLE)
    assert code == 0 and err == ""
    assert out.splitlines()[:5] == [
        f"{SAMPLE}:",
        "  layer: export (converted to envelope-v0)",
        "  provider: chatgpt",
        "  conversations: 40",
        "  messages: 114",
    ]


def test_parquet_on_an_export_zip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "history"
    code, out, err = run(capsys, "parquet", SAMPLE, "-o", f"{out_dir}/")
    assert code == 0 and out == ""
    assert err.endswith(
        f"memvelope: wrote {out_dir / 'conversations.parquet'} (40 rows)\n"
        f"memvelope: wrote {out_dir / 'messages.parquet'} (114 rows)\n"
        f"memvelope: wrote {out_dir / 'nodes.parquet'} (206 rows)\n"
        f"memvelope: wrote {out_dir / 'assets.parquet'} (3 rows)\n"
        f"memvelope: wrote {out_dir / 'projects.parquet'} (1 row)\n"
    )
    table = pq.read_table(out_dir / "messages.parquet")
    assert set(table.column("source").to_pylist()) == {"chatgpt-export.zip"}
    assert set(table.column("provider").to_pylist()) == {"chatgpt"}


def test_report_and_distill_on_an_unzipped_part(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    part = tmp_path / "conversations-000.json"
    with zipfile.ZipFile(SAMPLE) as archive:
        name = next(n for n in archive.namelist() if n.endswith("conversations-000.json"))
        part.write_bytes(archive.read(name))
    code, _, err = run(capsys, "report", part, "-o", tmp_path / "r.html")
    assert code == 0, err
    assert "<!DOCTYPE html>" in (tmp_path / "r.html").read_text(encoding="utf-8")
    code, _, err = run(capsys, "distill", part, "-q")
    assert code == 0, err
    assert mv.load(tmp_path / "conversations-000.mv.json")["meta"]["format"] == "memvelope-ir-v0"


# ---- wrong files: one line each ------------------------------------------------------------------


def test_convert_given_an_envelope_or_facts_ir(envelope: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "convert", envelope)
    assert (code, out) == (1, "")
    assert err == (
        f"memvelope: error: already a Memvelope envelope, not an export: use info, parquet or report (in {envelope})\n"
    )
    code, _, err = run(capsys, "convert", IR)
    assert code == 1
    assert err == (
        "memvelope: error: already a Memvelope Facts IR document, not an export: use info, parquet or report "
        f"(in {IR})\n"
    )


def test_wrong_files_to_convert_and_info(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mv.to_parquet(SAMPLE, tmp_path / "pq")
    png = tmp_path / "photo.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
    single = tmp_path / "conversation.json"
    single.write_text(json.dumps(CHATGPT_CONV))
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"version": 1, "files": ["conversations-000.zip"]}))
    cases = {
        tmp_path / "pq" / "messages.parquet": (
            "a Parquet file, not JSON: give the folder that holds it (written by memvelope parquet) to search or "
            "topics, or read it with mv.read_parquet()"
        ),
        png: (
            "a PNG image, not JSON: expected an export (its zip as downloaded, its folder or a conversations*.json "
            "file), an envelope or a Facts IR document"
        ),
        single: (
            "a single ChatGPT conversation, not an export: an export is an array of conversations; put it "
            "inside [ ] to convert it"
        ),
        manifest: "an export manifest (a list of the export's files): give the export's zip or folder instead",
    }
    for path, message in cases.items():
        for command in ("convert", "info", "parquet"):
            extra = ["-o", str(tmp_path / "out")] if command == "parquet" else []
            code, out, err = run(capsys, command, path, *extra)
            assert (code, out) == (1, ""), (command, path)
            assert err == f"memvelope: error: {message} (in {path})\n", (command, path)


def test_validate_given_an_export_zip(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "validate", SAMPLE)
    assert (code, out) == (1, "")
    assert err == (
        "memvelope: error: an export zip, not a Memvelope document: convert it first (memvelope convert), "
        f"or give it to info, parquet or report, which convert it (in {SAMPLE})\n"
    )


def test_invalid_json_is_worded_alike_by_every_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{,}")
    said = "not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"
    outputs = {"convert": [], "info": [], "report": ["-o", "out.html"], "parquet": ["-o", "out"]}
    outputs["distill"] = ["-o", "f.mv.json"]
    for command, extra in outputs.items():
        extra = [str(tmp_path / e) if e != "-o" else e for e in extra]
        code, _, err = run(capsys, command, broken, *extra)
        assert code == 1, command
        assert err == f"memvelope: error: {said} (in {broken})\n", command
    code, out, err = run(capsys, "validate", broken)
    assert (code, out, err) == (1, "", f"memvelope: error: {said} (in {broken})\n")


# ---- output checked before any work --------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [["convert"], ["report"], ["distill"]],
    ids=lambda c: c[0],
)
def test_missing_output_folder_fails_before_converting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    # The input is broken too: the error about the output proves nothing was read first.
    broken = tmp_path / "broken.json"
    broken.write_text("[")
    target = tmp_path / "missing" / "out.file"
    code, out, err = run(capsys, *command, broken, "-o", target)
    assert (code, out) == (1, "")
    assert err == f"memvelope: error: output folder does not exist: {target.parent} (in {target})\n"
    assert not target.parent.exists()


def test_parquet_output_under_a_file_fails_before_converting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("[")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run(capsys, "parquet", broken, "-o", blocker / "out")
    assert code == 1
    assert err == f"memvelope: error: cannot create output folder: {blocker} is not a folder (in {blocker / 'out'})\n"


# ---- --dedupe, provider column, other provider's conversations -----------------------------------


def test_dedupe_on_parquet_and_report(envelope: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "again" / "history.mve.json"
    copy.parent.mkdir()
    shutil.copy(envelope, copy)  # the same 40 conversations twice
    assert run(capsys, "parquet", envelope, copy, "-o", tmp_path / "all", "-q")[0] == 0
    assert run(capsys, "parquet", envelope, copy, "-o", tmp_path / "one", "-q", "--dedupe")[0] == 0
    assert pq.read_metadata(tmp_path / "all" / "conversations.parquet").num_rows == 80
    assert pq.read_metadata(tmp_path / "one" / "conversations.parquet").num_rows == 40
    assert pq.read_metadata(tmp_path / "one" / "messages.parquet").num_rows == 114
    assert run(capsys, "report", envelope, copy, "-o", tmp_path / "all.html", "-q")[0] == 0
    assert run(capsys, "report", envelope, copy, "-o", tmp_path / "one.html", "-q", "--dedupe")[0] == 0
    assert "80 conversations, 228 messages" in (tmp_path / "all.html").read_text(encoding="utf-8")
    assert "40 conversations, 114 messages" in (tmp_path / "one.html").read_text(encoding="utf-8")


def test_provider_column_read_by_duckdb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    duckdb = pytest.importorskip("duckdb", reason="duckdb comes with the dev extra")
    assert run(capsys, "parquet", SAMPLE, mv.sample_path("claude"), "-o", tmp_path, "-q")[0] == 0
    rows = duckdb.sql(
        f"SELECT provider, count(*) FROM '{tmp_path / 'conversations.parquet'}' GROUP BY provider ORDER BY provider"
    ).fetchall()
    assert rows == [("chatgpt", 40), ("claude", len(mv.conversations_frame(mv.sample_path("claude"))))]


def test_other_providers_conversations_get_one_note(
    mixed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "convert", mixed, "-o", tmp_path / "x.mve.json")
    assert (code, err) == (0, NOTE)
    code, _, err = run(capsys, "info", mixed)
    assert (code, err) == (0, NOTE)
    code, _, err = run(capsys, "parquet", mixed, "-o", tmp_path / "pq")
    assert (code, err.split("memvelope: wrote ")[0]) == (0, NOTE)
    code, _, err = run(capsys, "convert", mixed, "-q", "-o", tmp_path / "y.mve.json")
    assert (code, err) == (0, "")
    code, _, err = run(capsys, "convert", SAMPLE, "-o", tmp_path / "z.mve.json")
    # no note of other providers' conversations: only the files the spec does not convert are named
    assert [line for line in err.splitlines() if "note:" in line] == [
        "memvelope: note: 6 files the spec does not convert: chat.html, message_feedback.json, "
        "shared_conversations.json, user.json and 2 uploaded or generated files"
    ]


# ---- a missing dependency is one line ------------------------------------------------------------


#: Run in a fresh interpreter: the package ``sys.argv[1]`` cannot be found, as when it is not installed (an
#: import of it raises ModuleNotFoundError; a library that probes for it, as pyarrow probes for pandas, goes on
#: without it), then the command line with the arguments ``sys.argv[2:]``.
_WITHOUT = """
import importlib.abc, sys
blocked = sys.argv[1]
class Uninstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == blocked or name.startswith(blocked + "."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Uninstalled())
from memvelope_tools.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize(
    ("blocked", "args", "line"),
    [
        (
            "pandas",
            ["topics", str(SAMPLE)],
            "memvelope: error: `memvelope topics` needs pandas, which is not installed: reinstall "
            "memvelope_tools (pip install memvelope_tools)",
        ),
        (
            "distributed",
            ["convert-many", str(SAMPLE), "-o", "{tmp}/many", "--scheduler", "tcp://127.0.0.1:1"],
            "memvelope: error: --scheduler needs dask.distributed (pip install 'memvelope_tools[dask]')",
        ),
    ],
    ids=["base-dependency", "dask-extra"],
)
def test_a_missing_dependency_is_one_line(tmp_path: Path, blocked: str, args: list[str], line: str) -> None:
    argv = [a.format(tmp=tmp_path) for a in args]
    done = subprocess.run([sys.executable, "-c", _WITHOUT, blocked, *argv], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr == line + "\n"
    assert done.stdout == ""


def test_parquet_needs_no_pandas(tmp_path: Path) -> None:
    """pandas is a dependency of the frames, not of writing Parquet: without it, pyarrow writes the dataset."""
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT, "pandas", "parquet", str(SAMPLE), "-o", str(tmp_path / "pq"), "-q"],
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stderr) == (0, "")
    table = pq.read_table(tmp_path / "pq" / "messages.parquet")
    assert table.num_rows == len(mv.messages_frame(SAMPLE)) > 0
