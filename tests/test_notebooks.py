"""The example notebooks run top to bottom in a kernel of this interpreter, show no warning and no stuck
progress bar, need nothing beyond the notebooks extra, and are stored without outputs."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import re
import runpy
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError

from memvelope_tools._charts import NO_FONT

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
#: How the notebooks are executed and what their outputs must not hold, as notebooks/build_notebooks.py has it.
BUILD = runpy.run_path(str(NOTEBOOK_DIR / "build_notebooks.py"), run_name="build_notebooks")
PROBLEMS = BUILD["problems"]
EXPECTED = [
    "01-convert-and-explore.ipynb",
    "02-activity-timeline.ipynb",
    "03-fact-categories.ipynb",
    "04-archetype.ipynb",
    "05-topics-and-search.ipynb",
    "06-history-across-exports.ipynb",
    "07-what-the-ai-remembers.ipynb",
    "08-everything-in-the-export.ipynb",
]


@pytest.fixture
def jupyter(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend draws every figure, as for a user
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the package under test, also when not installed
    return tmp_path


def run(nb: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    """``nb`` executed as ``make notebooks`` executes it, in a kernel of this interpreter."""
    return BUILD["execute"](nb, cwd, timeout=300)


def test_the_notebooks_are_all_there():
    assert [p.name for p in NOTEBOOKS] == EXPECTED


def test_the_kernel_is_this_interpreter(jupyter: Path):
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.executable)"))
    out = run(nb, jupyter).cells[0].outputs[0]["text"].strip()
    assert Path(out).resolve() == Path(sys.executable).resolve()


def test_a_failing_cell_fails_the_run(jupyter: Path):
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("raise RuntimeError('boom')"))
    with pytest.raises(CellExecutionError, match="boom"):
        run(nb, jupyter)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path: Path, jupyter: Path):
    nb = run(nbformat.read(path, as_version=4), jupyter)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count for c in code)  # every cell ran, in order
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors
    # Without the Noto fonts a chart of the samples' Chinese words gives its one note (PROBLEMS checks it is alone).
    shown = json.dumps([o for c in code for o in c.outputs if NO_FONT not in o.get("text", "")])
    assert "0%" not in shown  # no progress bar saved at its first state
    assert "Warning" not in shown and "warning" not in shown
    assert PROBLEMS(nb) == []


def test_a_stuck_bar_and_a_warning_are_problems() -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("x", id="c1"))
    nb.cells[0].outputs = [
        nbformat.v4.new_output("stream", name="stderr", text="\rconverting:   0%|     | 0.00/231k [00:00<?, ?B/s]"),
        nbformat.v4.new_output("stream", name="stdout", text="a.py:3: UserWarning: Glyph 26085 missing\n"),
        nbformat.v4.new_output("display_data", data={"text/plain": "converting:   0%|  | 0/9"}),
        nbformat.v4.new_output("execute_result", data={"text/plain": "rate 10%|ok"}, execution_count=1),
    ]
    found = PROBLEMS(nb)
    assert [line.split(": ", 1)[1].split(":")[0] for line in found] == [
        "writes to stderr",
        "shows a progress bar at 0%",
        "shows a warning",
        "shows a progress bar at 0%",
    ]


def _imported_modules(path: Path) -> set[str]:
    nb = nbformat.read(path, as_version=4)
    found = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"memvelope_tools"}


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_notebooks_extra_installs_every_import(path: Path):
    """Each module a notebook imports comes with the plain install or with the notebooks extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    installed = _names(project["dependencies"]) | _names(project["optional-dependencies"]["notebooks"])
    distributions = importlib.metadata.packages_distributions()
    for module in sorted(_imported_modules(path)):
        names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        assert names & installed, f"{path.name} imports {module}, which neither the install nor the extra brings"


def test_the_imports_are_found() -> None:
    assert "duckdb" in _imported_modules(NOTEBOOK_DIR / "01-convert-and-explore.ipynb")
    found = _names(["duckdb>=1.0", "scikit-learn>=1.3  # x", "Stop_Words>=1"])
    assert found == {"duckdb", "scikit-learn", "stop-words"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_without_outputs(path: Path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]
    text = path.read_text(encoding="utf-8")
    assert "/work/" not in text and "/home/" not in text and "C:\\\\" not in text  # no absolute paths


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_uses_only_the_public_api(path: Path):
    nb = nbformat.read(path, as_version=4)
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "import memvelope_tools as mv" in source
    assert "from memvelope_tools" not in source and "mv._" not in source


def test_notebooks_match_their_build_script(tmp_path: Path):
    """The committed notebooks are exactly what notebooks/build_notebooks.py writes."""
    script = NOTEBOOK_DIR / "build_notebooks.py"
    code = (
        f"import runpy, pathlib; g = runpy.run_path({str(script)!r}, run_name='x'); "
        f"out = pathlib.Path({str(tmp_path)!r}); "
        "[(out / n).write_text(g['nbformat'].writes(g['build'](n, c)) + '\\n', encoding='utf-8') "
        "for n, c in g['NOTEBOOKS'].items()]"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    for path in NOTEBOOKS:
        assert (tmp_path / path.name).read_text(encoding="utf-8") == path.read_text(encoding="utf-8"), path.name


def test_public_functions_survive_their_submodule_being_imported():
    """``mv.read`` stays the function after ``frames`` (which imports ``memvelope_tools._read``) loads."""
    code = (
        "import memvelope_tools as mv; mv.plot; mv.messages_frame; mv.validate; "
        "print(callable(mv.read), callable(mv.validate))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.split() == ["True", "True"]


@pytest.mark.slow
def test_without_the_noto_fonts_a_notebook_shows_only_the_promised_note(jupyter: Path):
    # The topics notebook draws the samples' Chinese and Japanese words; here no fallback font is found,
    # as on a machine without the Noto fonts.
    nb = nbformat.read(NOTEBOOK_DIR / "05-topics-and-search.ipynb", as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell("import memvelope_tools._charts as c\nc.FALLBACK_FONTS = ()"))
    nb = run(nb, jupyter)
    texts = [
        o.get("text", "") + json.dumps(o.get("data", {})) for c in nb.cells if c.cell_type == "code" for o in c.outputs
    ]
    warned = [line for text in texts for line in text.splitlines() if "Warning" in line]
    assert len(warned) == 1 and f"UserWarning: {NO_FONT}" in warned[0], warned
    assert PROBLEMS(nb) == []
