"""``memvelope distill``: an envelope to a Facts IR document (structured rules or an LLM)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from .._plural import count
from .._progress import progress_bar
from .._read import layer_of
from .._sources import Input
from ..errors import FormatError
from .common import check_inputs, check_output_file, load_input


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "distill",
        help="distil an envelope into a Facts IR (memvelope-ir-v0) document",
        description=(
            "Read an envelope-v0 document and write the facts it states as a memvelope-ir-v0 document. "
            "--mode structured uses deterministic rules and no model; --mode llm asks a model through "
            "any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, llama.cpp, vLLM), taken "
            "from --base-url/--model or MEMVELOPE_LLM_BASE_URL, MEMVELOPE_LLM_MODEL and "
            "MEMVELOPE_LLM_API_KEY. Model replies are cached, so a re-run is cheap and an interrupted "
            "run resumes. Given an export, the facts its provider remembered about you (saved memories, "
            "memory snapshots, custom instructions, Claude's memories) are added, each once; --no-memory "
            "leaves them out.\n\n"
            "Examples:\n  memvelope distill history.mve.json -o facts.mv.json --mode structured\n"
            "  memvelope distill history.mve.json -o facts.mv.json --mode llm \\\n"
            "      --base-url http://localhost:11434/v1 --model llama3.1:8b"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "envelope",
        metavar="ENVELOPE",
        help="an envelope-v0 document (.mve.json), or an export (converted in memory; its provider memory is added)",
    )
    p.add_argument(
        "-o", "--output", metavar="FACTS", help="where to write the Facts IR (default: ENVELOPE with .mv.json)"
    )
    p.add_argument(
        "--mode", choices=("structured", "llm"), default="structured", help="how to find facts (default: %(default)s)"
    )
    p.add_argument("--base-url", metavar="URL", help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1")
    p.add_argument("--model", metavar="NAME", help="model name the endpoint knows")
    p.add_argument(
        "--chunk-chars",
        type=int,
        default=None,
        metavar="N",
        help="characters of conversation per request (default: the LLM distiller's default)",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=1,
        metavar="N",
        help="model requests in flight at once; the facts are the same whatever N (default: %(default)s)",
    )
    p.add_argument(
        "--cache-dir", metavar="DIR", help="where model replies are cached (default: $XDG_CACHE_HOME/memvelope/llm)"
    )
    p.add_argument(
        "--no-memory",
        dest="memory",
        action="store_false",
        help="leave out what the provider remembered (read from an export) and keep only the facts distilled",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary on stderr")
    p.set_defaults(func=run)


def default_output(envelope: str) -> str:
    """``history.mve.json`` -> ``history.mv.json``, ``export.zip`` -> ``export.mv.json``; any other name
    gets ``.mv.json`` appended."""
    path = Path(envelope)
    name = path.name
    for suffix in (".mve.json", ".json", ".zip"):
        if name.endswith(suffix):
            return str(path.with_name(name[: -len(suffix)] + ".mv.json"))
    return str(path.with_name(name + ".mv.json"))


def _cache_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "memvelope" / "llm"


def _read_envelope(found: Input, quiet: bool) -> dict[str, Any]:
    from .._validate import validate

    doc = load_input(found, quiet=quiet)
    path = found.name
    if layer_of(doc) != "envelope":
        raise FormatError("not an envelope: distill reads envelope-v0 documents", reason="not-envelope", source=path)
    violations = validate(doc)
    if violations:
        raise FormatError(
            f"not a valid envelope: {violations[0]}"
            + (f" (+{len(violations) - 1} more)" if len(violations) > 1 else ""),
            reason="invalid-envelope",
            source=path,
        )
    return doc


def run(args: argparse.Namespace) -> int:
    output = args.output or default_output(args.envelope)
    check_output_file(output)
    [found] = check_inputs([args.envelope])
    from .._ir.facts import DistillStats
    from .._ir.llm import distill_llm
    from .._ir.structured import structured_facts
    from .._ir.write import write_ir
    from .._memory_ir import add_memory, export_memory

    envelope = _read_envelope(found, args.quiet)
    remembered = export_memory(found, progress=False if args.quiet else None) if args.memory else None
    stats = DistillStats()
    if args.mode == "structured":
        doc = structured_facts(envelope, stats=stats)
    else:
        from .._ir.llm import DEFAULT_CHUNK_CHARS

        show = False if args.quiet else None
        with progress_bar(None, desc="distilling", unit="chunk", enabled=show) as bar:
            state = {"done": 0}

            def progress(done: int, total: int) -> None:
                if bar.total != total:
                    bar.total = total
                    bar.refresh()
                bar.update(done - state["done"])
                state["done"] = done

            doc = distill_llm(
                envelope,
                base_url=args.base_url,
                model=args.model,
                chunk_chars=DEFAULT_CHUNK_CHARS if args.chunk_chars is None else args.chunk_chars,
                cache_dir=_cache_dir(args.cache_dir),
                concurrency=args.concurrency,
                progress=progress,
                stats=stats,
            )
    if remembered is not None:
        doc = add_memory(doc, remembered, envelope, stats=stats)
    write_ir(doc, output)
    if not args.quiet:
        err = sys.stderr
        if not output.endswith(".mv.json"):
            print("memvelope: note: Facts IR files are conventionally named *.mv.json", file=err)
        line = (
            f"memvelope: wrote {output}: {count(stats.facts, 'fact')} from "
            f"{count(stats.conversations, 'conversation')} ({doc['meta']['mode']}; "
            f"{count(stats.duplicates, 'duplicate')} merged"
        )
        if args.mode == "llm":
            line += (
                f"; {count(stats.chunks, 'chunk')}, {stats.cache_hits:,} cached, {count(stats.requests, 'request')}, "
                f"{count(stats.invalid_facts, 'invalid fact')} dropped, {count(stats.dates_nulled, 'unsourced date')} "
                "nulled"
            )
        if remembered is not None:
            line += (
                f"; {stats.memory_facts:,} from the provider's memory, {stats.memory_known:,} of its facts already "
                "found in the conversations"
            )
        print(line + ")", file=err)
        if remembered is not None:
            for note in remembered.notes:
                print(f"memvelope: note: {note}", file=err)
        elif args.memory and found.kind != "export":
            print(
                "memvelope: note: an envelope does not hold what the provider remembered about you; give the "
                "export itself to add it",
                file=err,
            )
    return 0
