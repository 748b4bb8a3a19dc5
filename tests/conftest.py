from __future__ import annotations

import json
import sys
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
