"""Without its C helpers (say, Python started in a clone that was never built) the package says so
once, whichever helper it misses first, and works on."""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import importlib.abc, json, sys, warnings

class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in ("memvelope_tools._json._scan", "memvelope_tools._frames._textscan"):
            raise ImportError(f"hidden: {name}")
        return None

sys.meta_path.insert(0, Hide())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import memvelope_tools as mv
    import memvelope_tools._frames.text
    import memvelope_tools._json.elements
    frame = mv.messages_frame(mv.sample_path("chatgpt"))
print(json.dumps({"rows": len(frame), "said": [str(w.message) for w in caught if "C helpers" in str(w.message)]}))
"""


def test_missing_c_helpers_are_said_once() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["rows"] == 114
    assert len(result["said"]) == 1
    assert "are not built" in result["said"][0] and "build_ext --inplace" in result["said"][0]


def test_built_helpers_say_nothing() -> None:
    probe = _PROBE.replace("sys.meta_path.insert(0, Hide())", "")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1])["said"] == []
