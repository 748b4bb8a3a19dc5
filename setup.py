"""Builds the optional C helper of the frames (everything else is declared in pyproject.toml).

``memvelope_tools._textscan`` makes ``messages_frame`` several times faster. Without a C compiler
the install still succeeds (``optional=True``) and the frames use their NumPy path instead.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("memvelope_tools._textscan", ["memvelope_tools/_textscan.c"], optional=True)])
