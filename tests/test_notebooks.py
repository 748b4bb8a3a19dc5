"""The example notebooks run top to bottom in a kernel of this interpreter, and are stored without outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
EXPECTED = [
    "01-convert-and-explore.ipynb",
    "02-activity-timeline.ipynb",
    "03-fact-categories.ipynb",
    "04-archetype.ipynb",
    "05-topics-and-search.ipynb",
    "07-what-the-ai-remembers.ipynb",
]


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``python3`` kernelspec that runs *this* interpreter (the venv's), whatever else is installed.

    JUPYTER_PATH comes first in Jupyter's search, so this spec wins over a user-level ``python3``
    spec pointing at some other Python.
    """
    base = tmp_path_factory.mktemp("jupyter")
    spec = base / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (tests)",
                "language": "python",
            }
        ),
        encoding="utf-8",
    )
    return base


@pytest.fixture
def jupyter(kernel_env: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("JUPYTER_PATH", str(kernel_env))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the package under test, also when not installed
    return tmp_path


def run(nb: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    NotebookClient(nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


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
