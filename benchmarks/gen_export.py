"""Write a seeded, realistic ChatGPT or Claude export of a given size (see memvelope_tools._gen).

Example: python benchmarks/gen_export.py chatgpt 200MB /tmp/chatgpt-200 --shards 4
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memvelope_tools._gen import generate

_UNITS = {"KB": 10**3, "MB": 10**6, "GB": 10**9, "B": 1}


def parse_size(text: str) -> int:
    """``200MB`` / ``2GB`` / ``1500000`` to bytes (decimal units)."""
    for unit, factor in _UNITS.items():
        if text.upper().endswith(unit):
            return int(float(text[: -len(unit)]) * factor)
    return int(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("provider", choices=("chatgpt", "claude"))
    parser.add_argument("size", help="e.g. 1MB, 200MB, 2GB")
    parser.add_argument("folder")
    parser.add_argument("--shards", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for path in generate(args.folder, args.provider, parse_size(args.size), seed=args.seed, shards=args.shards):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
