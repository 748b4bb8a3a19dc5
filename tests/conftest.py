from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The seeded export generator is a benchmark tool, not part of the package: tests import it from there.
sys.path.append(str(ROOT / "benchmarks"))
FIXTURES = ROOT / "fixtures"
REAL_EXPORTS = ROOT.parent / "shared" / "real-exports"


@pytest.fixture
def write_parts(tmp_path: Path):
    """Write each value (JSON-dumped, or raw bytes/str as given) to its own input file; return paths."""

    def _write(*values: object, names: list[str] | None = None) -> list[Path]:
        paths = []
        for i, value in enumerate(values):
            path = tmp_path / (names[i] if names else f"part-{i:03d}.json")
            if isinstance(value, bytes):
                path.write_bytes(value)
            elif isinstance(value, str):
                path.write_bytes(value.encode("utf-8", "surrogatepass"))
            else:
                path.write_text(json.dumps(value), encoding="utf-8")
            paths.append(path)
        return paths

    return _write


@contextlib.contextmanager
def engine_running(name: str, work: str = "scan") -> Iterator[None]:
    """Run the block with the engine ``name``, then assert that ``work`` ran there and never with the other.

    With ``name="c"`` where the compiled helpers are not built, the test is skipped (``make test``,
    which sets MEMVELOPE_REQUIRE_NATIVE, fails instead).
    """
    from memvelope_tools import _engine

    if name == "c" and not _built(work):
        if os.environ.get("MEMVELOPE_REQUIRE_NATIVE"):
            pytest.fail("the C helpers were not built (pip install printed why)")
        pytest.skip("the C helpers are not built here (no C compiler at install)")
    other = "python" if name == "c" else "c"
    before = _engine.ran()
    with _engine.engine(name):  # type: ignore[arg-type]
        yield
    after = _engine.ran()
    assert after.get((work, name), 0) > before.get((work, name), 0), f"{work} never ran with the {name} engine"
    assert after.get((work, other), 0) == before.get((work, other), 0), f"{work} ran with the {other} engine"


def _built(work: str) -> bool:
    if work == "scan":
        from memvelope_tools._json import elements

        return elements._native is not None
    from memvelope_tools._frames import text

    return text._textscan is not None


ENGINES = ("c", "python")
