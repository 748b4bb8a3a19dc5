"""``make demo``: the whole pipeline on the bundled sample exports, into ``out/``.

Converts each sample to an envelope, says what the conversion kept and dropped (doctor), distils Facts IR
with the zero-LLM structured distiller, writes a Parquet dataset and a self-contained HTML report.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from ._convert.pipeline import convert, write_envelope
from ._plural import count
from ._printable import printable
from .errors import MemvelopeError
from .samples import SAMPLES, sample_path


def summarise(envelope: dict[str, Any]) -> str:
    """One line: provider, conversations, messages, first and last message timestamp."""
    meta = envelope["meta"]
    stamps = [m["ts"] for c in envelope["conversations"] for m in c["messages"] if m["ts"] is not None]
    first = min(stamps) if stamps else "-"
    last = max(stamps) if stamps else "-"
    conversations = count(meta["conversation_count"], "conversation")
    messages = count(meta["message_count"], "message")
    return f"{meta['source_provider']:8} {conversations:>18} {messages:>15}   first {first}   last {last}"


def _dropped(found: dict[str, Any]) -> str:
    reasons = sorted(found["messages_dropped"].items(), key=lambda kv: -kv[1])
    listed = ", ".join(f"{n:,} {why}" for why, n in reasons[:4]) or "none"
    return f"kept {found['messages_kept']:,} of {count(found['messages_total'], 'message')}; dropped: {listed}"


def run(out: Path) -> None:
    """Run the demo pipeline into ``out``; raises MemvelopeError on failure."""
    from ._doctor import doctor
    from ._ir.structured import structured_facts
    from ._ir.write import write_ir
    from ._report import write_report
    from ._tables import to_parquet

    out.mkdir(parents=True, exist_ok=True)
    envelopes: list[Path] = []
    facts: list[Path] = []
    for name in SAMPLES:
        source = sample_path(name)
        envelope = convert(source)
        target = out / f"{name}.mve.json"
        write_envelope(envelope, target)
        envelopes.append(target)
        print(f"{source.name} -> {target}")
        print(f"  {summarise(envelope)}")
        print(f"  doctor: {_dropped(doctor(source).to_json())}")
        distilled = structured_facts(envelope)
        fact_path = out / f"{name}.mv.json"
        write_ir(distilled, fact_path)
        facts.append(fact_path)
        style = distilled["archetype"]["style"] or "n/a (a fact lacks subject or category)"
        print(f"  facts: {distilled['meta']['facts']} -> {fact_path} (archetype: {style})")
    to_parquet([*envelopes, *facts], out / "parquet")
    print(f"Parquet dataset -> {out / 'parquet'}")
    write_report([*envelopes, *facts], out / "report.html")
    print(f"HTML report -> {out / 'report.html'} (open it in a browser)")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    started = time.perf_counter()
    try:
        run(Path(args[0] if args else "out"))
    except MemvelopeError as exc:
        print(f"memvelope: error: {printable(str(exc))}", file=sys.stderr)
        return 1
    print(f"done in {time.perf_counter() - started:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
