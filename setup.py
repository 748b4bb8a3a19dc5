"""Builds the optional C helpers (everything else is declared in pyproject.toml).

``memvelope_tools._frames._textscan`` makes ``messages_frame`` several times faster; ``memvelope_tools._json._scan``
finds the elements of a JSON document at memory speed for every reader. Without a C compiler the install
still succeeds (``optional=True``): the frames use their NumPy path and the reader its pure-Python twin.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("memvelope_tools._frames._textscan", ["memvelope_tools/_frames/_textscan.c"], optional=True),
        Extension("memvelope_tools._json._scan", ["memvelope_tools/_json/_scan.c"], optional=True),
    ]
)
