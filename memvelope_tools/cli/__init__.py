"""The ``memvelope`` command: a thin shell over the Python API.

Each subcommand lives in its own module here, exposing ``register(subparsers)`` which adds its parser
and sets ``func`` to a callable ``(args) -> int``. A subcommand module imports only the standard
library and light parts of the package at the top; its heavy dependencies (pandas, pyarrow,
matplotlib, jsonschema) are imported inside its ``run``, so ``--help`` and the commands that do not
need them start fast. Library errors become one line on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

from .. import __version__, _native
from .._atomic import written_count, written_since
from .._malloc import arrow_jemalloc, one_arena
from .._no_pandas import without_pandas
from .._plural import count
from .._printable import printable
from .._signals import TERMINATED_STATUS, Terminated, terminate_as_interrupt
from ..errors import MemvelopeError, MixedProvidersWarning, OutputError

# One entry per subcommand module, in the order `--help` lists them: what a user does first (convert an
# export, see what it holds), then the analyses, then the tools for checking files and the converter.
COMMAND_MODULES: tuple[str, ...] = (
    "convert",
    "doctor",
    "info",
    "report",
    "parquet",
    "sqlite",
    "markdown",
    "search",
    "topics",
    # what the provider remembered about the user
    "memory",
    # what the export holds beyond the prose
    "inventory",
    "diff",
    "history",
    "mcp",  # the history served to an AI assistant
    "distill",
    "convert_many",
    "sample",
    "validate",
    "conformance",
)

# Packages that only an extra installs: the extra to name when one is missing.
EXTRAS: dict[str, str] = {
    "distributed": "dask",
    "dask": "dask",
    "jupyterlab": "notebooks",
    "sqlite_utils": "sqlite",
    "mcp": "mcp",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memvelope",
        description="Convert AI chat exports to Memvelope envelopes and analyse them.",
    )
    parser.add_argument("--version", action="version", version=f"memvelope {__version__} ({_helpers()})")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(sub)
    return parser


def _helpers() -> str:
    """Whether the C helpers are in use, as ``--version`` says it."""
    if _native.in_use():
        return "C helpers in use"
    return "C helpers not built: same results, slower"


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found = action.choices.get(command)
            if isinstance(found, argparse.ArgumentParser):
                return found
    return parser


def _unrecognised(parser: argparse.ArgumentParser, extra: list[str]) -> NoReturn:
    """Stop with the usage of the command given and, for a mistyped flag, the flag meant."""
    options = [s for action in parser._actions for s in action.option_strings if s.startswith("--")]
    hint = ""
    for arg in extra:
        flag = arg.split("=", 1)[0]
        if flag.startswith("-"):
            close = difflib.get_close_matches(flag, options, n=1, cutoff=0.6)
            if close:
                hint = f"; did you mean {close[0]}?"
                break
    parser.error(f"unrecognized arguments: {' '.join(extra)}{hint}")


def missing_package(exc: ModuleNotFoundError, command: str | None) -> str:
    """The one line for a command whose dependency is not installed, naming what installs it."""
    package = (exc.name or "").split(".")[0]
    extra = EXTRAS.get(package)
    what = f"`memvelope {command}`" if command else "this command"
    if extra:
        return f"{what} needs {package}, which the {extra!r} extra installs: pip install 'memvelope_tools[{extra}]'"
    return f"{what} needs {package}, which is not installed: reinstall memvelope_tools (pip install memvelope_tools)"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (None: this process's own arguments, and then the commands that make no
    frame run without pandas, see :mod:`memvelope_tools._no_pandas`) and return the exit status; never
    raises for bad input."""
    one_arena()
    arrow_jemalloc()
    with warnings.catch_warnings():  # the commands' modules load the package: its note is one line too
        warnings.showwarning = _note
        if "--version" in (sys.argv[1:] if argv is None else argv):
            warnings.simplefilter("ignore", _native.NativeHelpersWarning)  # the version line says it
        parser = build_parser()
        args, extra = parser.parse_known_args(argv)
    if extra:
        _unrecognised(_subparser(parser, args.command), extra)
    stdout, sys.stdout = sys.stdout, _GuardedStdout(sys.stdout)
    first = written_count()
    try:
        with terminate_as_interrupt(), warnings.catch_warnings():
            # Said by the command's own note, from its conversion log.
            warnings.simplefilter("ignore", MixedProvidersWarning)
            warnings.showwarning = _note
            # A command whose parser says it uses no pandas runs, as this process's command, without it.
            lean = argv is None and not getattr(args, "uses_pandas", True)
            with without_pandas() if lean else contextlib.nullcontext():
                status = int(args.func(args))
            sys.stdout.flush()  # a full disk behind stdout shows here, not at exit
            return status
    except MemvelopeError as exc:
        print(f"memvelope: error: {printable(str(exc))}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in ("", "memvelope_tools"):
            raise
        print(f"memvelope: error: {missing_package(exc, args.command)}", file=sys.stderr)
        return 1
    except Terminated:
        print(f"memvelope: terminated{_written_before_stop(written_since(first))}", file=sys.stderr)
        return TERMINATED_STATUS
    except KeyboardInterrupt:
        print(f"memvelope: interrupted{_written_before_stop(written_since(first))}", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    finally:
        sys.stdout = stdout


def _note(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    """A warning raised while a command runs, as the command says it: one note on stderr, no source line."""
    print(f"memvelope: note: {printable(str(message))}", file=sys.stderr)


def _written_before_stop(paths: Sequence[os.PathLike[str]]) -> str:
    """What a stopped command leaves: nothing, or the files it had put in place whole before the stop."""
    if not paths:
        return "; no output was written"
    names = ", ".join(printable(os.fspath(path)) for path in paths)
    what = names if len(paths) == 1 else f"{count(len(paths), 'file')} ({names})"
    return f" after writing {what} whole; nothing else was written"


class _GuardedStdout:
    """Standard output whose write errors (a full disk, an I/O error) are one clear OutputError."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        with self._guard():
            return int(self._stream.write(text))

    def flush(self) -> None:
        with self._guard():
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except BrokenPipeError:
            raise
        except OSError as exc:
            with contextlib.suppress(OSError, ValueError, AttributeError):  # nothing fails again at exit
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, self._stream.fileno())
                os.close(null)
            raise OutputError(f"cannot write to standard output: {exc.strerror or exc}", reason="output") from None


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
