"""``make demo``: convert the bundled sample exports into ``out/`` and summarise what came out."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .convert import convert, write_envelope
from .errors import MemvelopeError
from .samples import SAMPLES, sample_path


def summarise(envelope: dict) -> str:  # type: ignore[type-arg]
    """One line: provider, conversations, messages, first and last message timestamp."""
    meta = envelope["meta"]
    stamps = [m["ts"] for c in envelope["conversations"] for m in c["messages"] if m["ts"] is not None]
    first = min(stamps) if stamps else "-"
    last = max(stamps) if stamps else "-"
    return (f"{meta['source_provider']:8} {meta['conversation_count']:4} conversations "
            f"{meta['message_count']:6} messages   first {first}   last {last}")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "out")
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    try:
        for name in SAMPLES:
            source = sample_path(name)
            envelope = convert(source)
            target = out / f"{name}.mve.json"
            write_envelope(envelope, target)
            print(f"{source.name} -> {target}")
            print(f"  {summarise(envelope)}")
    except MemvelopeError as exc:
        print(f"memvelope: error: {exc}", file=sys.stderr)
        return 1
    print(f"done in {time.perf_counter() - started:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
