"""Commands import only what they use: `--help`, `convert`, `doctor` and `validate` of a small file
load no pandas, pyarrow, numpy or matplotlib (and only validate loads jsonschema); importing the
package loads none of its implementation, and `--help` or a missing input none of the conversion pipeline.

Each case runs in a fresh interpreter and reads ``sys.modules`` at its end; how long a start takes
is measured by benchmarks/startup.py, not here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from small_exports import CHATGPT_CONV

HEAVY = ("pandas", "pyarrow", "numpy", "matplotlib", "jsonschema")

_PROBE = """
import json, sys
argv = sys.argv[1:]
try:
    if argv:
        from memvelope_tools.cli import main
        code = main(argv)
    else:
        import memvelope_tools
        code = 0
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def imported(*argv: str) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["code"], set(result["modules"]) & set(HEAVY)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("small")
    part = folder / "conversations.json"
    part.write_text(json.dumps([CHATGPT_CONV]), encoding="utf-8")
    envelope = folder / "small.mve.json"
    subprocess.run([sys.executable, "-m", "memvelope_tools", "convert", str(part), "-o", str(envelope)], check=True)
    return part, envelope


def test_import_loads_nothing_heavy() -> None:
    assert imported() == (0, set())


def test_help_loads_nothing_heavy() -> None:
    assert imported("--help") == (0, set())
    assert imported("parquet", "--help") == (0, set())


def test_convert_and_doctor_load_nothing_heavy(small: tuple[Path, Path], tmp_path: Path) -> None:
    part, _ = small
    assert imported("convert", str(part), "-o", str(tmp_path / "out.mve.json")) == (0, set())
    assert imported("doctor", str(part)) == (0, set())


def test_validate_loads_only_jsonschema(small: tuple[Path, Path]) -> None:
    _, envelope = small
    assert imported("validate", str(envelope)) == (0, {"jsonschema"})


# ---- a wrong input is said before anything heavy is imported ----------------------------------------

_EVERY_HEAVY = {*HEAVY, "sklearn", "scipy", "tantivy"}


def _wrong_input(*argv: str) -> tuple[int, set[str], str]:
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["code"], set(result["modules"]) & _EVERY_HEAVY, done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ("report", "{}", "-o", "{out}/r.html"),
        ("parquet", "{}", "-o", "{out}/pq"),
        ("search", "{}", "hello"),
        ("topics", "{}"),
        ("distill", "{}"),
        ("convert", "{}"),
        ("doctor", "{}"),
        ("info", "{}"),
    ],
)
def test_missing_input_is_said_before_heavy_imports(argv: tuple[str, ...], tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.json")
    args = [a.format(missing, out=tmp_path) for a in argv]
    code, heavy, err = _wrong_input(*args)
    assert (code, heavy) == (1, set())
    assert err == f"memvelope: error: no such file or folder (in {missing})\n"


@pytest.mark.parametrize("command", [("report", "-o", "r.html"), ("topics",), ("search", "x"), ("parquet", "-o", "pq")])
def test_not_json_is_said_before_heavy_imports(command: tuple[str, ...], tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello", encoding="utf-8")
    binary = tmp_path / "image.dat"
    binary.write_bytes(b"\x00\x01\x02\xff binary")
    name, *rest = command
    for path, said in ((text, "not valid JSON"), (binary, "a binary file, not JSON")):
        code, heavy, err = _wrong_input(
            name, str(path), *[str(tmp_path / r) if "." in r or r == "pq" else r for r in rest]
        )
        assert (code, heavy) == (1, set()), err
        assert err.startswith(f"memvelope: error: {said}") and err.endswith(f"(in {path})\n")


# ---- the package and the parser import none of the pipeline --------------------------------------

_PIPELINE = ("memvelope_tools._convert.pipeline", "memvelope_tools._doctor", "memvelope_tools._validate")

_MODULES_AFTER = """
import json, sys
argv = sys.argv[1:]
try:
    if argv:
        from memvelope_tools.cli import main
        main(argv)
    else:
        import memvelope_tools
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


def modules_after(*argv: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", _MODULES_AFTER, *argv], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_import_loads_no_third_party_package_and_no_implementation_module() -> None:
    modules = modules_after()
    assert {m.split(".")[0] for m in modules} & {*_EVERY_HEAVY, "orjson"} == set()
    assert {m for m in modules if m.startswith("memvelope_tools")} == {"memvelope_tools", "memvelope_tools.errors"}


def test_the_api_names_load_on_first_use() -> None:
    probe = (
        "import sys, memvelope_tools as mv\n"
        "loaded = lambda: 'memvelope_tools._convert.pipeline' in sys.modules\n"
        "print(loaded(), callable(mv.convert), loaded(), "
        "all(callable(getattr(mv, n)) for n in ('validate', 'doctor', 'read', 'sniff', 'load', 'write_envelope')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "True", "True"]


@pytest.mark.parametrize(
    "argv",
    [("--help",), ("report", "{}", "-o", "{out}/r.html"), ("topics", "{}"), ("search", "{}", "x")],
)
def test_help_and_a_missing_input_load_no_conversion_pipeline(argv: tuple[str, ...], tmp_path: Path) -> None:
    modules = modules_after(*[a.format(str(tmp_path / "nope.json"), out=tmp_path) for a in argv])
    assert [m for m in _PIPELINE if m in modules] == []
