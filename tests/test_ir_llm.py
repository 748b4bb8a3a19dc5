"""The LLM distiller against a stub OpenAI-compatible server on 127.0.0.1 (no network)."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memvelope_tools._ir import DistillStats, distill_llm
from memvelope_tools._ir.llm import chunk_conversation, parse_reply
from memvelope_tools._validate import check_ir_against_envelope, validate
from memvelope_tools.cli import main
from memvelope_tools.errors import LLMError

ENVELOPE = {
    "memvelope": "envelope-v0",
    "meta": {"source_provider": "claude", "conversation_count": 2, "message_count": 3},
    "conversations": [
        {
            "id": "c1",
            "title": "Moving",
            "created_at": "2024-11-03T21:15:00.000Z",
            "updated_at": None,
            "messages": [
                {
                    "id": "m1",
                    "role": "user",
                    "ts": "2024-11-03T21:15:00.000Z",
                    "text": "I moved to Lisbon in March 2019 and I work at Acme.",
                },
                {"id": "m2", "role": "assistant", "ts": None, "text": "Lisbon is lovely."},
            ],
        },
        {
            "id": "c2",
            "title": "Tea",
            "created_at": "2025-01-05T10:00:00.000Z",
            "updated_at": None,
            "messages": [{"id": "m1", "role": "user", "ts": None, "text": "I prefer green tea."}],
        },
    ],
}

GOOD = {
    "subject": "self",
    "subject_type": "self",
    "category": "identity",
    "content": "Lives in Lisbon",
    "in_text_date": "2019-03",
    "effective_date": "2019-03",
}


class Stub:
    """A chat-completions stub: replies are produced by ``answer(chunk_text, n)`` per request."""

    def __init__(self, answer: Callable[[str, int], tuple[int, str]], refuse_json_mode: bool = False) -> None:
        self.answer = answer
        self.refuse_json_mode = refuse_json_mode
        self.models_delay = 0.0
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.gets = 0

    def handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_GET(self) -> None:  # /v1/models
                stub.gets += 1
                time.sleep(stub.models_delay)
                self._send(200, json.dumps({"data": [{"id": "stub"}]}))

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                assert self.path == "/v1/chat/completions"
                stub.requests.append(body)
                stub.headers.append(dict(self.headers))
                if stub.refuse_json_mode and "response_format" in body:
                    self._send(400, '{"error": "unknown field response_format"}')
                    return
                status, content = stub.answer(body["messages"][1]["content"], len(stub.requests))
                reply = {"choices": [{"message": {"role": "assistant", "content": content}}]}
                self._send(status, json.dumps(reply) if status == 200 else "oops")

            def _send(self, status: int, text: str) -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


@pytest.fixture
def serve() -> Iterator[Callable[[Stub], str]]:
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(stub: Stub) -> str:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), stub.handler())
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _facts(*facts: object) -> str:
    return json.dumps({"facts": list(facts)})


def by_chunk(chunk: str, n: int) -> tuple[int, str]:
    if "Lisbon" in chunk:
        bad = dict(GOOD, category="hobby")  # invalid: dropped
        long = dict(GOOD, content="x" * 401)  # invalid: dropped
        made_up = dict(
            GOOD, content="Works at Acme", category="career", in_text_date="2015", effective_date="2015-06"
        )  # dates not in the source: nulled
        return 200, "```json\n" + _facts(GOOD, bad, long, made_up, "not a fact") + "\n```"
    return 200, "Here you go: " + _facts(
        {
            "subject": "User",
            "subject_type": "Self",
            "category": "Preferences",
            "content": "Prefers green tea",
            "in_text_date": "",
            "effective_date": None,
        },
        dict(GOOD),
    )


def test_distills_validates_and_fills_provenance(serve: Callable[[Stub], str], tmp_path: Path) -> None:
    stub = Stub(by_chunk)
    stats = DistillStats()
    seen: list[tuple[int, int]] = []
    doc = distill_llm(
        ENVELOPE,
        base_url=serve(stub),
        model="stub-1",
        api_key="sekret",
        cache_dir=tmp_path / "cache",
        clock=lambda: 0,
        stats=stats,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert doc["facts"] == [
        {
            "subject": "self",
            "subject_type": "self",
            "category": "identity",
            "content": "Lives in Lisbon",
            "effective_date": "2019-03",
            "in_text_date": "2019-03",
            "provenance": "imported:claude-export:2024-11",
            "convo_id": "c1",
        },
        {
            "subject": "self",
            "subject_type": "self",
            "category": "career",
            "content": "Works at Acme",
            "effective_date": "2024-11-03",
            "in_text_date": None,
            "provenance": "imported:claude-export:2024-11",
            "convo_id": "c1",
        },
        {
            "subject": "self",
            "subject_type": "self",
            "category": "preferences",
            "content": "Prefers green tea",
            "effective_date": "2025-01-05",
            "in_text_date": None,
            "provenance": "imported:claude-export:2025-01",
            "convo_id": "c2",
        },
        # GOOD again in c2: no user message of c2 states it -> dropped
    ]
    assert doc["meta"]["mode"] == "llm (stub-1)"
    assert validate(doc) == [] and check_ir_against_envelope(doc, ENVELOPE) == []
    assert (stats.chunks, stats.requests, stats.cache_hits) == (2, 2, 0)
    assert stats.invalid_facts == 4 and stats.dates_nulled == 4 and stats.duplicates == 0
    assert stats.invalid_reasons == {
        "category:enum": 1,
        "content:maxLength": 1,
        "not-an-object": 1,
        "not-in-user-text": 1,
    }
    assert seen == [(0, 2), (1, 2), (2, 2)]
    assert stub.headers[0]["Authorization"] == "Bearer sekret"
    assert stub.requests[0]["model"] == "stub-1" and stub.requests[0]["temperature"] == 0.0
    assert "JSON only" in stub.requests[0]["messages"][0]["content"]
    assert all(r["response_format"] == {"type": "json_object"} for r in stub.requests)

    # a re-run is answered from the cache: not one request, not even the reachability probe
    stub2 = Stub(lambda c, n: pytest.fail("the cache should have answered"))
    again = distill_llm(ENVELOPE, base_url=serve(stub2), model="stub-1", cache_dir=tmp_path / "cache", clock=lambda: 0)
    assert again == doc and stub2.requests == [] and stub2.gets == 0


def test_only_facts_a_user_message_states_are_kept(serve: Callable[[Stub], str]) -> None:
    said = dict(GOOD, content="Works at Acme", category="career", in_text_date=None)
    paraphrased = dict(said, content="The user moved to Lisbon")
    from_assistant = dict(said, content="Porto has the best pastries", category="preferences")
    from_the_prompt = dict(said, content="the fact, one concise sentence, at most 400 characters")
    made_up = dict(said, content="Has two cats", category="relationship")
    stub = Stub(lambda c, n: (200, _facts(said, paraphrased, from_assistant, from_the_prompt, made_up)))
    stats = DistillStats()
    conv = ENVELOPE["conversations"][0]
    reply = {"id": "m3", "role": "assistant", "ts": None, "text": "Porto has the best pastries."}
    env = dict(ENVELOPE, conversations=[dict(conv, messages=[*conv["messages"], reply])])
    doc = distill_llm(env, base_url=serve(stub), model="m", stats=stats)
    assert [f["content"] for f in doc["facts"]] == ["Works at Acme", "The user moved to Lisbon"]
    assert stats.invalid_reasons == {"not-in-user-text": 3}


def test_grounding_names_the_first_message_holding_half_the_words() -> None:
    from memvelope_tools._ir.llm import grounding

    texts = ["Lisbon is lovely.", "I moved to Lisbon and I work at Acme.", "I work at Acme."]
    assert grounding("Works at Acme", texts) == 1
    assert grounding("Lives in Lisbon", texts) == 0  # one of two words: half
    assert grounding("Lives in sunny Lisbon", texts) is None  # one of three
    assert grounding("is a", texts) is None  # no content words
    assert grounding("Works at Acme", []) is None


@pytest.mark.parametrize("concurrency", [1, 2])
def test_an_endpoint_refusing_json_mode_is_asked_without_it(serve: Callable[[Stub], str], concurrency: int) -> None:
    stub = Stub(by_chunk, refuse_json_mode=True)
    stats = DistillStats()
    with pytest.warns(UserWarning, match=r"refused JSON mode .*HTTP 400 .*unknown field response_format"):
        doc = distill_llm(ENVELOPE, base_url=serve(stub), model="m", stats=stats, concurrency=concurrency)
    assert len(doc["facts"]) == 3
    refused = [r for r in stub.requests if "response_format" in r]
    assert 1 <= len(refused) <= concurrency and "response_format" not in stub.requests[-1]
    assert stats.requests == len(stub.requests) == 2 + len(refused)


def test_json_mode_can_be_left_out(serve: Callable[[Stub], str]) -> None:
    from memvelope_tools._ir.llm import LLMConfig

    stub = Stub(by_chunk)
    distill_llm(ENVELOPE, config=LLMConfig.resolve(serve(stub), "m", json_mode=False))
    assert stub.requests and not any("response_format" in r for r in stub.requests)


def test_retries_with_backoff_then_succeeds(serve: Callable[[Stub], str]) -> None:
    stub = Stub(lambda c, n: (500, "") if n <= 2 else (200, _facts(GOOD)))
    sleeps: list[float] = []
    stats = DistillStats()
    env = dict(ENVELOPE, conversations=ENVELOPE["conversations"][:1])
    doc = distill_llm(env, base_url=serve(stub), model="m", stats=stats, sleep=sleeps.append)
    assert [f["content"] for f in doc["facts"]] == ["Lives in Lisbon"]
    assert sleeps == [1.0, 2.0] and stats.retries == 2 and len(stub.requests) == 3


def test_gives_up_after_max_retries(serve: Callable[[Stub], str]) -> None:
    stub = Stub(lambda c, n: (503, ""))
    from memvelope_tools._ir.llm import LLMConfig

    cfg = LLMConfig.resolve(serve(stub), "m", max_retries=2)
    with pytest.raises(LLMError) as info:
        distill_llm(ENVELOPE, config=cfg, sleep=lambda s: None)
    assert info.value.reason == "llm-failed" and "HTTP 503" in str(info.value)
    assert len(stub.requests) == 3


def test_client_error_is_not_retried(serve: Callable[[Stub], str]) -> None:
    stub = Stub(lambda c, n: (401, ""))
    with pytest.raises(LLMError) as info:
        distill_llm(ENVELOPE, base_url=serve(stub), model="m", sleep=lambda s: pytest.fail("no retry"))
    assert info.value.reason == "llm-http" and "401" in str(info.value) and len(stub.requests) == 1


def test_unparseable_reply_is_asked_again_then_skipped_with_a_warning(
    serve: Callable[[Stub], str], tmp_path: Path
) -> None:
    stub = Stub(lambda c, n: (200, "I cannot do that."))
    stats = DistillStats()
    with pytest.warns(UserWarning) as caught:
        doc = distill_llm(ENVELOPE, base_url=serve(stub), model="m", cache_dir=tmp_path, stats=stats)
    assert doc["facts"] == [] and stats.unparseable_replies == 2 and stats.reasked == 2
    assert len(stub.requests) == 4  # each chunk asked, then asked again once
    notes = [
        "conversation 0 ('Moving'): the model's reply is not the JSON asked for ('I cannot do that.'); skipped",
        "conversation 1 ('Tea'): the model's reply is not the JSON asked for ('I cannot do that.'); skipped",
    ]
    assert [str(w.message) for w in caught] == notes
    # the same question gets the same answer: a re-run asks nothing and says the same
    stub2 = Stub(lambda c, n: pytest.fail("the cache should have answered"))
    stats2 = DistillStats()
    with pytest.warns(UserWarning) as again:
        distill_llm(ENVELOPE, base_url=serve(stub2), model="m", cache_dir=tmp_path, stats=stats2)
    assert [str(w.message) for w in again] == notes
    assert (stats2.cache_hits, stats2.requests, stats2.unparseable_replies) == (2, 0, 2)


def test_reply_breaking_the_shape_is_asked_again_with_the_reply_shown(
    serve: Callable[[Stub], str], tmp_path: Path
) -> None:
    # the first answer per chunk is JSON of the wrong shape, the second the facts
    def answer(chunk: str, n: int) -> tuple[int, str]:
        return 200, '{"fact": "Lives in Lisbon"}' if n % 2 else _facts(GOOD)

    stub = Stub(answer)
    stats = DistillStats()
    env = dict(ENVELOPE, conversations=ENVELOPE["conversations"][:1])
    doc = distill_llm(env, base_url=serve(stub), model="m", cache_dir=tmp_path, stats=stats)
    assert [f["content"] for f in doc["facts"]] == ["Lives in Lisbon"]
    assert (stats.requests, stats.reasked, stats.unparseable_replies) == (2, 1, 0)
    again = stub.requests[1]["messages"]
    assert [m["role"] for m in again] == ["system", "user", "assistant", "user"]
    assert again[2]["content"] == '{"fact": "Lives in Lisbon"}' and "JSON only" in again[3]["content"]
    assert again[:2] == stub.requests[0]["messages"]
    # the good reply is what is cached: a re-run asks nothing
    stub2 = Stub(lambda c, n: pytest.fail("the cache should have answered"))
    assert distill_llm(env, base_url=serve(stub2), model="m", cache_dir=tmp_path)["facts"] == doc["facts"]


MANY = {
    "memvelope": "envelope-v0",
    "meta": {"source_provider": "chatgpt", "conversation_count": 8, "message_count": 8},
    "conversations": [
        {
            "id": f"c{i}",
            "title": f"T{i}",
            "created_at": f"2024-0{i + 1}-02T10:00:00.000Z",
            "updated_at": None,
            "messages": [{"id": "m1", "role": "user", "ts": None, "text": f"I like tea number {i}."}],
        }
        for i in range(8)
    ],
}


class Slow(Stub):
    """Answers the first conversations last, and records how many requests were in flight at once; the
    first ``together`` requests wait for each other, so that many are in flight when the client allows it."""

    def __init__(self, together: int = 1) -> None:
        self.together = threading.Barrier(together, timeout=10)
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most = 0
        super().__init__(self.reply)

    def reply(self, chunk: str, n: int) -> tuple[int, str]:
        import re

        i = int(re.search(r"tea number (\d)", chunk).group(1))  # type: ignore[union-attr]
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        if n <= self.together.parties:
            self.together.wait()
        time.sleep(0.03 * (8 - i))
        with self.lock:
            self.in_flight -= 1
        if i == 5:
            return 200, "not json"
        fact = dict(GOOD, category="preferences", content=f"Likes tea number {i}", in_text_date=None)
        return 200, _facts(fact, dict(fact, content=f"Tea {i} is a favourite"))


def test_concurrency_gives_the_same_document_and_respects_the_limit(serve: Callable[[Stub], str]) -> None:
    def run(concurrency: int) -> tuple[dict[str, Any], int, list[tuple[int, int]]]:
        stub = Slow(together=concurrency)
        stats = DistillStats()
        calls: list[tuple[int, int]] = []
        with pytest.warns(UserWarning, match=r"conversation 5 \('T5'\).*skipped"):
            doc = distill_llm(
                MANY,
                base_url=serve(stub),
                model="m",
                concurrency=concurrency,
                clock=lambda: 0,
                stats=stats,
                progress=lambda d, t: calls.append((d, t)),
            )
        assert stats.requests == 9 and stats.unparseable_replies == 1  # 8 chunks, one asked twice
        return doc, stub.most, calls

    doc1, most1, seen1 = run(1)
    doc4, most4, seen4 = run(4)
    assert doc1 == doc4
    assert [f["content"] for f in doc4["facts"]] == [
        text for i in range(8) if i != 5 for text in (f"Likes tea number {i}", f"Tea {i} is a favourite")
    ]
    assert (most1, most4) == (1, 4)
    assert seen1 == seen4 == [(d, 8) for d in range(9)]


def test_concurrency_below_one_is_refused() -> None:
    with pytest.raises(LLMError) as info:
        distill_llm(ENVELOPE, base_url="http://127.0.0.1:9/v1", model="m", concurrency=0)
    assert info.value.reason == "llm-not-configured" and "concurrency" in str(info.value)


@pytest.mark.parametrize("concurrency", [1, 3])
def test_interrupted_run_resumes(serve: Callable[[Stub], str], tmp_path: Path, concurrency: int) -> None:
    def answer(chunk: str, n: int) -> tuple[int, str]:
        if "Moving" in chunk:
            return 200, _facts(GOOD)
        time.sleep(0.2)  # the other chunk's reply is in the cache before this one fails
        return 400, ""

    stub = Stub(answer)
    with pytest.raises(LLMError):
        distill_llm(ENVELOPE, base_url=serve(stub), model="m", cache_dir=tmp_path, concurrency=concurrency)
    stub2 = Stub(lambda c, n: (200, _facts()))
    distill_llm(ENVELOPE, base_url=serve(stub2), model="m", cache_dir=tmp_path, concurrency=concurrency)
    assert len(stub2.requests) == 1 and "Tea" in stub2.requests[0]["messages"][1]["content"]


def test_no_endpoint_is_a_clear_error_before_any_work(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("MEMVELOPE_LLM_BASE_URL", "MEMVELOPE_LLM_MODEL", "MEMVELOPE_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(LLMError) as info:
        distill_llm(ENVELOPE)
    assert info.value.reason == "llm-not-configured" and "MEMVELOPE_LLM_BASE_URL" in str(info.value)


def test_unreachable_endpoint(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(LLMError) as info:
        distill_llm(ENVELOPE, base_url=f"http://127.0.0.1:{port}", model="m", cache_dir=tmp_path)
    assert info.value.reason == "llm-unreachable"
    assert not any(tmp_path.iterdir())


def test_a_server_slow_to_answer_the_probe_is_reachable(serve: Callable[[Stub], str]) -> None:
    from memvelope_tools._ir.llm import LLMConfig

    stub = Stub(lambda c, n: (200, _facts()))
    stub.models_delay = 1.0  # busy with another client's request
    distill_llm(ENVELOPE, config=LLMConfig.resolve(serve(stub), "m", timeout=0.3))
    assert stub.gets == 1 and len(stub.requests) == 2


def test_environment_configures_endpoint(serve: Callable[[Stub], str], monkeypatch: pytest.MonkeyPatch) -> None:
    stub = Stub(lambda c, n: (200, _facts()))
    monkeypatch.setenv("MEMVELOPE_LLM_BASE_URL", serve(stub).removesuffix("/v1"))  # /v1 is added
    monkeypatch.setenv("MEMVELOPE_LLM_MODEL", "env-model")
    monkeypatch.setenv("MEMVELOPE_LLM_API_KEY", "k")
    distill_llm(ENVELOPE)
    assert stub.requests[0]["model"] == "env-model" and stub.headers[0]["Authorization"] == "Bearer k"


def test_chunking_respects_size_and_message_boundaries() -> None:
    conv = {
        "title": "t",
        "messages": [{"role": "user", "text": "a" * 150} for _ in range(5)]
        + [{"role": "assistant", "text": "word " * 200}],
    }
    chunks = chunk_conversation(0, conv, 400)
    assert all(len(c.text) - len("Conversation title: t\n---\n") <= 400 for c in chunks)
    assert sum(p.count("a") for c in chunks for p in c.prose if p.startswith("a")) == 750
    assert "".join(p for c in chunks for p in c.prose if p.startswith("word")).replace(" ", "") == "word" * 200


@pytest.mark.parametrize(
    ("reply", "facts"),
    [
        ('{"facts": [1]}', [1]),
        ("[1, 2]", [1, 2]),
        ('```json\n{"facts": []}\n```', []),
        ('Sure! {"facts": [{"a": 1}]} Hope that helps.', [{"a": 1}]),
        ("no json", None),
        ('{"other": 1}', None),
    ],
)
def test_parse_reply(reply: str, facts: list | None) -> None:
    assert parse_reply(reply) == facts


def test_cli_distill_llm(serve: Callable[[Stub], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stub = Stub(by_chunk)
    env_path = tmp_path / "h.mve.json"
    env_path.write_text(json.dumps(ENVELOPE), encoding="utf-8")
    out = tmp_path / "f.mv.json"
    args = [
        "distill",
        str(env_path),
        "-o",
        str(out),
        "--mode",
        "llm",
        "--base-url",
        serve(stub),
        "--model",
        "stub-1",
        "--cache-dir",
        str(tmp_path / "c"),
        "--chunk-chars",
        "500",
    ]
    assert main(args) == 0
    assert len(json.loads(out.read_text())["facts"]) == 3
    assert "2 chunks, 0 cached, 2 requests, 4 invalid facts dropped" in capsys.readouterr().err
    assert main(args) == 0
    assert "2 chunks, 2 cached, 0 requests" in capsys.readouterr().err


def test_cli_distill_llm_without_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMVELOPE_LLM_BASE_URL", raising=False)
    env_path = tmp_path / "h.mve.json"
    env_path.write_text(json.dumps(ENVELOPE), encoding="utf-8")
    assert main(["distill", str(env_path), "--mode", "llm", "--model", "x"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("memvelope: error: no LLM endpoint configured") and err.count("\n") == 1
    assert not (tmp_path / "h.mv.json").exists()


@pytest.mark.parametrize("shown", [True, False])
def test_cli_distill_llm_progress_bar_learns_the_chunk_count(
    serve: Callable[[Stub], str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    shown: bool,
) -> None:
    import memvelope_tools._progress as progress

    monkeypatch.setattr(progress, "wanted", lambda enabled: shown)
    env_path = tmp_path / "h.mve.json"
    env_path.write_text(json.dumps(ENVELOPE), encoding="utf-8")
    args = ["distill", str(env_path), "-o", str(tmp_path / "f.mv.json"), "--mode", "llm", "--model", "stub-1"]
    assert main([*args, "--base-url", serve(Stub(by_chunk)), "--chunk-chars", "500"]) == 0
    err = capsys.readouterr().err
    assert "2 chunks" in err
    assert ("distilling" in err and "0/2" in err) is shown


def test_cli_distill_llm_concurrency(
    serve: Callable[[Stub], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env_path = tmp_path / "many.mve.json"
    env_path.write_text(json.dumps(MANY), encoding="utf-8")
    facts = {}
    for n in ("1", "4"):
        stub = Slow(together=int(n))
        out = tmp_path / f"f{n}.mv.json"
        args = ["distill", str(env_path), "-o", str(out), "--mode", "llm", "--model", "m", "--concurrency", n]
        assert main([*args, "--base-url", serve(stub), "--cache-dir", str(tmp_path / f"c{n}")]) == 0
        facts[n] = json.loads(out.read_text())["facts"]
        assert stub.most == int(n)
        err = capsys.readouterr().err
        assert "memvelope: note: conversation 5 ('T5'): the model's reply is not the JSON asked for" in err
        assert "8 chunks, 0 cached, 9 requests" in err
    assert facts["1"] == facts["4"] and len(facts["1"]) == 14
    assert main([*args[:-1], "0", "--base-url", "http://127.0.0.1:9/v1"]) == 1
    assert capsys.readouterr().err == "memvelope: error: concurrency must be at least 1\n"
