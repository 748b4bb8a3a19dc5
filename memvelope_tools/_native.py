"""The one note when a C helper is not built, whichever module finds it missing first, and whether the
helpers are in use (for ``memvelope --version``)."""

from __future__ import annotations

import os
import warnings
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Final

__all__ = ["HELPERS", "NOT_BUILT", "NativeHelpersWarning", "in_use", "missing"]

#: The C helpers, as module paths inside the package.
HELPERS: Final = ("_json._scan", "_frames._textscan")
#: What the note says (one line): what is slower, and how to get the helpers.
NOT_BUILT: Final = (
    "the C helpers are not built (there was no C compiler when memvelope_tools was installed): results are the "
    "same, but reading exports and building frames are several times slower; to build them, install a C "
    "compiler (such as gcc) and install the package again with pip's --no-cache-dir --force-reinstall "
    "(in a clone of the repository: python setup.py build_ext --inplace)"
)
# Set once the note was given, so that the worker processes a command starts do not give it again.
_GIVEN: Final = "MEMVELOPE_C_HELPERS_NOTE_GIVEN"
_missing: set[str] = set()


class NativeHelpersWarning(RuntimeWarning):
    """A C helper of the package is not built: the same results, several times slower."""


def missing(module: str) -> None:
    """Say, once per process and its workers, that the C helper ``module`` (e.g. ``_json._scan``) could
    not be imported.

    Parameters
    ----------
    module : str
        The helper's module path inside the package.

    Returns
    -------
    None

    Examples
    --------
    >>> missing("_json._scan")  # doctest: +SKIP
    """
    first = not _missing
    _missing.add(module)
    if not first or os.environ.get(_GIVEN):
        return
    os.environ[_GIVEN] = "1"
    warnings.warn(NOT_BUILT, NativeHelpersWarning, stacklevel=3)


def in_use() -> bool:
    """Whether every C helper is built and none failed to import, without importing them.

    Returns
    -------
    bool
        True when the package runs with its C helpers.

    Examples
    --------
    >>> isinstance(in_use(), bool)
    True
    """
    if _missing:
        return False
    root = Path(__file__).resolve().parent
    for module in HELPERS:
        *folders, name = module.split(".")
        where = root.joinpath(*folders)
        if not any((where / f"{name}{suffix}").is_file() for suffix in EXTENSION_SUFFIXES):
            return False
    return True
