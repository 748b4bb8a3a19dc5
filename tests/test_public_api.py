"""The public API: ``memvelope_tools/__init__`` lists only public names, each function documents its
Parameters, Returns, Raises and Examples, the public modules import on their own, and type checkers
see the real signatures of the lazily loaded names."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memvelope_tools as mv

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("Parameters", "Returns", "Raises", "Examples")
PUBLIC_MODULES = ("errors", "plot", "cli", "samples", "schema", "demo")


def _functions() -> list[str]:
    return [n for n in mv.__all__ if inspect.isfunction(getattr(mv, n))]


def test_all_holds_only_public_names_the_package_defines() -> None:
    assert mv.__all__ == sorted(mv.__all__)
    for name in mv.__all__:
        assert not name.startswith("_"), name
        value = getattr(mv, name)
        module = value.__name__ if inspect.ismodule(value) else value.__module__
        assert module.startswith("memvelope_tools"), name
        if inspect.isclass(value):
            assert issubclass(value, mv.MemvelopeError), f"{name}: only the error classes are public classes"
        else:
            assert inspect.isfunction(value) or inspect.ismodule(value), name
    assert len(_functions()) >= 20


@pytest.mark.parametrize("name", _functions())
def test_every_public_function_has_the_numpydoc_sections(name: str) -> None:
    doc = inspect.getdoc(getattr(mv, name)) or ""
    missing = [s for s in SECTIONS if f"\n{s}\n{'-' * len(s)}\n" not in f"\n{doc}\n"]
    assert missing == [], f"{name} lacks {', '.join(missing)}"
    where = [f"\n{doc}\n".index(f"\n{s}\n{'-' * len(s)}\n") for s in SECTIONS]
    assert where == sorted(where), f"{name}: the sections are not in numpydoc's order"
    assert ">>> " in doc[where[-1] :]


def test_the_section_check_finds_a_missing_section() -> None:
    def half() -> None:
        """What.

        Parameters
        ----------
        Returns
        -------
        """

    doc = inspect.getdoc(half) or ""
    assert [s for s in SECTIONS if f"\n{s}\n{'-' * len(s)}\n" not in f"\n{doc}\n"] == ["Raises", "Examples"]


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_each_public_module_imports_on_its_own(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import memvelope_tools.{module}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"},
    )
    assert done.returncode == 0, done.stderr


def test_no_function_shadows_a_module() -> None:
    import pkgutil

    modules = {m.name for m in pkgutil.iter_modules(mv.__path__)}
    assert {n for n in mv.__all__ if inspect.isfunction(getattr(mv, n))} & modules == set()


@pytest.mark.slow
def test_mypy_sees_the_real_signature_of_a_lazy_name(tmp_path: Path) -> None:
    script = tmp_path / "uses_frames.py"
    script.write_text(
        "import memvelope_tools as mv\n\n"
        'frame = mv.messages_frame("history.mve.json")\n'
        "reveal_type(frame)\n"
        'mv.messages_frame("history.mve.json", dedupe="yes")\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "MYPYPATH": str(ROOT)},
    )
    assert 'Revealed type is "pandas.core.frame.DataFrame"' in done.stdout, done.stdout + done.stderr
    assert 'Argument "dedupe" to "messages_frame" has incompatible type "str"; expected "bool"' in done.stdout
    assert done.stdout.count("error:") == 1, done.stdout
