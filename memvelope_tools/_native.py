"""The one warning when a C helper is not built, whichever module finds it missing first."""

from __future__ import annotations

import warnings

__all__ = ["NativeHelpersWarning", "missing"]

_said = False


class NativeHelpersWarning(RuntimeWarning):
    """A C helper of the package is not built: the same results, several times slower."""


def missing(module: str) -> None:
    """Say, once per process, that the C helper ``module`` (e.g. ``_json._scan``) could not be imported.

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
    global _said
    if _said:
        return
    _said = True
    warnings.warn(
        f"memvelope_tools' C helpers are not built (memvelope_tools.{module} is missing): results are the same, "
        "reading and the frames several times slower. In a clone of the repository run "
        "`python setup.py build_ext --inplace`, or install the package with pip",
        NativeHelpersWarning,
        stacklevel=3,
    )
