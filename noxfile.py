"""The test suite on every supported Python, and once with the oldest declared version of every dependency.

Each session runs the quick suite (every test not marked ``slow``); ``make test`` runs the whole suite,
slow tests included, on Python 3.11 with the newest releases, so CI stays near a quarter of an hour.
``make matrix`` runs every session; ``.venv/bin/nox -s oldest`` one of them, and
``.venv/bin/nox -s oldest -- -m ""`` its whole suite. Each session installs the package with every extra that
pyproject.toml declares, so a new extra or a new floor is tested without editing this file.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import nox
from uv import find_uv_bin

ROOT = Path(__file__).resolve().parent
NEWEST = ["3.12", "3.13"]
OLDEST = "3.11"  # the oldest Python pyproject.toml admits

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "uv"
nox.options.error_on_missing_interpreters = True  # a missing Python fails the run, never skips it
nox.options.sessions = ["oldest", "tests"]

# Interpreters installed with pyenv are found even where its shims serve another version.
_PYENV = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
for _version in [*NEWEST, OLDEST]:
    for _bin in sorted(_PYENV.glob(f"{_version}.*/bin"), reverse=True)[:1]:
        os.environ["PATH"] = f"{_bin}{os.pathsep}{os.environ['PATH']}"
os.environ.setdefault("UV_PYTHON_DOWNLOADS", "never")  # test the interpreters we have, never a downloaded one

_EXTRAS = ",".join(
    tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
)
_PACKAGE = f".[{_EXTRAS}]"
_ENV = {"MEMVELOPE_REQUIRE_NATIVE": "1", "MPLBACKEND": "Agg"}
_UV = find_uv_bin()
_PYTEST = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow"]


@nox.session(python=OLDEST)
def oldest(session: nox.Session) -> None:
    """The whole suite with the lowest version every ``>=`` in pyproject.toml admits (newest for the rest)."""
    session.install("--resolution=lowest-direct", "-e", _PACKAGE)
    session.run(_UV, "pip", "freeze", external=True)
    session.run(*_PYTEST, *session.posargs, env=_ENV)


@nox.session(python=NEWEST)
def tests(session: nox.Session) -> None:
    """The whole suite with the newest releases; a DeprecationWarning fails it."""
    session.install("-e", _PACKAGE)
    session.run(_UV, "pip", "freeze", external=True)
    session.run(*_PYTEST, "-W", "error::DeprecationWarning", *session.posargs, env=_ENV)
