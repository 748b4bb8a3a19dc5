"""Commands that make no frame run without pandas.

pyarrow imports pandas, when it is installed, the first time it converts values from or to Python or
NumPy (to tell pandas objects and pandas's missing values among them): a quarter of a second and some
45 MB for a command that makes no frame. :func:`without_pandas` keeps pandas out of a block: pyarrow
finds none, and converts as it does where pandas is not installed. pyarrow keeps what it found for the
rest of the process, so the block is for a process that imports no pandas afterwards either (a command
run from the command line); an import of pandas inside the block is the command's fault, an ImportError.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import sys
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def without_pandas() -> Iterator[None]:
    """pandas cannot be imported in the block (nothing changes when it is imported already).

    Raises
    ------
    ImportError
        Something in the block imports pandas.
    """
    if "pandas" in sys.modules:
        yield
        return
    refuse = _Refuse()
    sys.meta_path.insert(0, refuse)
    try:
        yield
    finally:
        sys.meta_path.remove(refuse)


class _Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if fullname == "pandas":
            raise ImportError("this command runs without pandas, and something imported it", name="pandas")
