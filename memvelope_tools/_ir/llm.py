"""The LLM distiller: a model reads each conversation in chunks and proposes facts.

Talks to any OpenAI-compatible ``/v1/chat/completions`` endpoint (OpenAI, a local Ollama, llama.cpp
or vLLM server) with the standard library only. What it guarantees whatever the model answers:

* every fact is checked against the ``memvelope-ir-v0`` fact schema; invalid ones are dropped and
  counted (:class:`~.facts.DistillStats`);
* ``convo_id`` and ``provenance`` are filled from the envelope, never by the model;
* a fact is kept only when one user message of its chunk states it: the message holds at least half of
  the fact's content words (:func:`grounding`), so facts the model copies from the prompt, takes from
  the assistant or makes up are dropped;
* an ``in_text_date`` or ``effective_date`` that the chunk's text does not state (the rule of
  :mod:`.dates`) and, for ``effective_date``, that is no prefix of the conversation's timestamps, is
  nulled; a null ``effective_date`` then falls back to the in-text date, else the conversation's day;
* replies are cached on disk under ``sha256(model, prompt, chunk)``, so a re-run makes no requests
  and an interrupted run resumes where it stopped; transient failures (connection errors, timeouts,
  HTTP 408/425/429/5xx) are retried with exponential backoff;
* requests ask for JSON mode (``response_format`` ``json_object``), which OpenAI, Ollama, llama.cpp and
  vLLM honour; an endpoint that refuses it (HTTP 400 or 422) is asked without it for the rest of the run;
* a reply that is not the JSON asked for is asked again, telling the model so; when that fails too
  the chunk is skipped with a warning (on every run: that last reply is cached too);
* up to ``concurrency`` requests run at once, and the facts come out in the same order whatever
  the concurrency;
* without an endpoint, or when it cannot be reached, it stops with a clear error before any work.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import queue
import re
import threading
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from jsonschema import Draft7Validator

from .._atomic import atomic_write
from .._plural import count
from .._tags import IR_TAG
from ..errors import LLMError
from ..schema import load_schema
from .dates import is_timestamp_prefix, stated_dates
from .facts import DistillStats, conversation_month, dedup, fallback_date, provenance
from .write import Clock, build_ir

ENV_BASE_URL: Final = "MEMVELOPE_LLM_BASE_URL"
ENV_MODEL: Final = "MEMVELOPE_LLM_MODEL"
ENV_API_KEY: Final = "MEMVELOPE_LLM_API_KEY"
DEFAULT_CHUNK_CHARS: Final = 12_000

PROMPT_VERSION: Final = "memvelope-llm-v2"
SYSTEM_PROMPT: Final = """\
You read part of a chat between a user and an AI assistant and extract durable facts the USER states \
about themself and the people, companies and projects in their life: identity (name, place, age, \
languages), career, projects, preferences, relationships, and standing instructions ("always ...", \
"never ..."). Ignore one-off tasks, questions, hypotheticals and anything only the assistant says.

Answer with JSON only, no prose, in exactly this shape:
{"facts": [{"subject": "self or the entity's name",
            "subject_type": "self | person | company | project | other",
            "category": "identity | career | projects | preferences | instructions | relationship",
            "content": "the fact, one concise sentence, at most 400 characters",
            "in_text_date": "YYYY, YYYY-MM or YYYY-MM-DD, or null",
            "effective_date": "YYYY, YYYY-MM or YYYY-MM-DD, or null"}]}

Rules: use null where the text does not say (never guess). in_text_date only for a date written in the \
text itself; never a date you know or infer. If there are no facts, answer {"facts": []}."""
REASK_PROMPT: Final = """\
That answer is not the JSON asked for. Answer again with JSON only, no prose, in exactly this shape: \
{"facts": [...]} with one object per fact as described; {"facts": []} if there are none."""

ProgressCallback = Callable[[int, int], None]
Sleep = Callable[[float], None]

_RETRY_CODES: Final = frozenset({408, 409, 425, 429})
_FACT_FIELDS: Final = ("subject", "subject_type", "category", "content", "in_text_date", "effective_date")
_SELF_WORDS: Final = frozenset({"self", "user", "the user", "me", "i", "myself"})


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to ask the model. :meth:`resolve` fills gaps from the environment."""

    base_url: str
    model: str
    api_key: str | None = None
    chunk_chars: int = DEFAULT_CHUNK_CHARS
    timeout: float = 120.0
    max_retries: int = 4
    backoff: float = 1.0  #: seconds; attempt ``n`` waits ``backoff * 2**n``
    cache_dir: Path | None = None
    temperature: float = 0.0
    concurrency: int = 1  #: requests in flight at once
    json_mode: bool = True  #: ask for ``response_format: {"type": "json_object"}``
    reply_retries: int = 1  #: times a reply that is not the JSON asked for is asked again

    @classmethod
    def resolve(
        cls, base_url: str | None = None, model: str | None = None, api_key: str | None = None, **options: Any
    ) -> LLMConfig:
        """Arguments first, then ``MEMVELOPE_LLM_BASE_URL`` / ``_MODEL`` / ``_API_KEY``; raises
        :class:`LLMError` (``llm-not-configured``) when no endpoint or model is given."""
        base_url = base_url or os.environ.get(ENV_BASE_URL) or None
        model = model or os.environ.get(ENV_MODEL) or None
        api_key = api_key or os.environ.get(ENV_API_KEY) or None
        if not base_url or not model:
            missing = " and ".join(n for n, v in (("a base URL", base_url), ("a model", model)) if not v)
            raise LLMError(
                f"no LLM endpoint configured: {missing} missing; pass --base-url/--model "
                f"or set {ENV_BASE_URL} and {ENV_MODEL} (e.g. http://localhost:11434/v1 "
                "for Ollama)",
                reason="llm-not-configured",
            )
        if not re.match(r"^https?://[^/\s]+", base_url):
            raise LLMError(
                f"LLM base URL must start with http:// or https://: {base_url!r}", reason="llm-not-configured"
            )
        if options.get("cache_dir") is not None:
            options["cache_dir"] = Path(options["cache_dir"])
        if int(options.get("chunk_chars", DEFAULT_CHUNK_CHARS)) < 200:
            raise LLMError("chunk size must be at least 200 characters", reason="llm-not-configured")
        if int(options.get("concurrency", 1)) < 1:
            raise LLMError("concurrency must be at least 1", reason="llm-not-configured")
        return cls(base_url=base_url, model=model, api_key=api_key, **options)

    def url(self, endpoint: str) -> str:
        """The URL of ``chat/completions`` or ``models`` under the base URL (``/v1`` added if absent)."""
        base = self.base_url.rstrip("/")
        base = base.removesuffix("/chat/completions")
        if not base.endswith("/v1"):
            base += "/v1"
        return f"{base}/{endpoint}"


@dataclass(frozen=True)
class Chunk:
    """One request's worth of a conversation: the text sent, and the prose it quotes with each piece's role."""

    conversation: int
    text: str
    prose: tuple[str, ...]
    roles: tuple[str, ...]

    def user_prose(self) -> list[str]:
        """The pieces of the chunk that the user wrote."""
        return [p for p, r in zip(self.prose, self.roles, strict=True) if r == "user"]


def chunk_conversation(index: int, conv: Mapping[str, Any], chunk_chars: int) -> list[Chunk]:
    """Split a conversation into chunks of at most ``chunk_chars`` characters of message text,
    at message boundaries where possible (a longer message is cut at whitespace)."""
    header = f"Conversation title: {conv.get('title') or '(untitled)'}\n---\n"
    pieces: list[tuple[str, str, str]] = []
    for msg in conv.get("messages") or []:
        text = msg.get("text") if isinstance(msg, dict) else None
        if not isinstance(text, str) or not text:
            continue
        role = str(msg.get("role", "?"))
        for part in _split(text, chunk_chars):
            pieces.append((f"[{role}] {part}\n\n", part, role))
    chunks: list[Chunk] = []
    body: list[str] = []
    prose: list[str] = []
    roles: list[str] = []
    size = 0
    for rendered, part, role in pieces:
        if body and size + len(rendered) > chunk_chars:
            chunks.append(Chunk(index, header + "".join(body).rstrip(), tuple(prose), tuple(roles)))
            body, prose, roles, size = [], [], [], 0
        body.append(rendered)
        prose.append(part)
        roles.append(role)
        size += len(rendered)
    if body:
        chunks.append(Chunk(index, header + "".join(body).rstrip(), tuple(prose), tuple(roles)))
    return chunks


def _split(text: str, limit: int) -> list[str]:
    limit = max(limit - 20, 100)  # leave room for the role label
    out = []
    while len(text) > limit:
        cut = text.rfind(" ", limit // 2, limit)
        cut = cut if cut > 0 else limit
        out.append(text[:cut])
        text = text[cut:].lstrip()
    if text:
        out.append(text)
    return out


def cache_key(model: str, chunk_text: str) -> str:
    """sha256 over (model, prompt, chunk): a change to any of them asks the model again."""
    blob = json.dumps([model, PROMPT_VERSION, SYSTEM_PROMPT, chunk_text], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def distill_llm(
    envelope: Mapping[str, Any],
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    config: LLMConfig | None = None,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    cache_dir: str | os.PathLike[str] | None = None,
    concurrency: int = 1,
    progress: ProgressCallback | None = None,
    clock: Clock | None = None,
    stats: DistillStats | None = None,
    sleep: Sleep = time.sleep,
) -> dict[str, Any]:
    """Distil ``envelope`` into a Facts IR document by asking a model, chunk by chunk.

    The endpoint comes from ``config`` or from ``base_url``/``model``/``api_key`` and the
    environment (:meth:`LLMConfig.resolve`). Up to ``concurrency`` requests are in flight at once; the
    document is the same whatever the concurrency. A chunk whose replies are not the JSON asked for,
    even once asked again, is skipped with a warning.

    Parameters
    ----------
    envelope
        The envelope to distil.
    base_url, model, api_key
        The OpenAI-compatible endpoint (default: from the environment).
    config
        An :class:`~memvelope_tools._ir.LLMConfig` instead of the three above.
    chunk_chars
        Characters of conversation text per request.
    cache_dir
        A folder where answers are kept, so a run that stops can go on.
    concurrency
        Requests in flight at once (at least 1).
    progress
        Called as ``progress(done, total)`` as each chunk is answered (in this thread).
    clock
        Gives ``meta.generated_at`` (default: now, UTC).
    stats
        A :class:`~memvelope_tools._ir.DistillStats` to learn what was kept and dropped.
    sleep
        Waits between retries.

    Returns
    -------
    dict
        The ``memvelope-ir-v0`` document.

    Raises
    ------
    memvelope_tools.errors.LLMError
        The endpoint is not configured, cannot be reached or gives no usable answer.

    Examples
    --------
    >>> import memvelope_tools as mv
    >>> env = mv.convert(mv.sample_path("claude"))
    >>> ir = mv.distill_llm(env, base_url="http://localhost:11434/v1", model="llama3")  # doctest: +SKIP
    """
    cfg = config or LLMConfig.resolve(
        base_url, model, api_key, chunk_chars=chunk_chars, cache_dir=cache_dir, concurrency=concurrency
    )
    stats = stats if stats is not None else DistillStats()
    provider = str(envelope["meta"]["source_provider"])
    convs = [c for c in envelope.get("conversations") or [] if isinstance(c, dict)]
    chunks = [ch for i, c in enumerate(convs) for ch in chunk_conversation(i, c, cfg.chunk_chars)]
    stats.conversations += len(convs)
    stats.chunks += len(chunks)
    keys = [cache_key(cfg.model, ch.text) for ch in chunks]
    answers: dict[int, _Answer] = {}
    for n, key in enumerate(keys):
        reply = _cached(cfg, key)
        if reply is not None:
            answers[n] = _Answer(reply, parse_reply(reply), DistillStats(cache_hits=1))
    todo = [n for n in range(len(chunks)) if n not in answers]
    if todo:
        _check_reachable(cfg)

    total = len(chunks)
    if progress:
        progress(0, total)
        for done in range(1, len(answers) + 1):
            progress(done, total)

    def arrived(n: int, answer: _Answer) -> None:
        answers[n] = answer
        if progress:
            progress(len(answers), total)

    mode = _JsonMode(cfg.json_mode)
    _in_parallel(todo, lambda n: _answer(cfg, chunks[n].text, keys[n], sleep, mode), cfg.concurrency, arrived)
    if mode.refused is not None:
        warnings.warn(
            f"the LLM endpoint refused JSON mode (response_format), so it was asked without it: {mode.refused}",
            stacklevel=2,
        )

    candidates: list[tuple[tuple[int, ...], dict[str, Any]]] = []
    for n, chunk in enumerate(chunks):
        answer = answers[n]
        for name in ("cache_hits", "requests", "retries", "reasked"):
            setattr(stats, name, getattr(stats, name) + getattr(answer.counts, name))
        conv = convs[chunk.conversation]
        if answer.facts is None:
            stats.unparseable_replies += 1
            warnings.warn(_skipped(chunk, conv, chunks, answer.reply), stacklevel=2)
            continue
        month = conversation_month(conv)
        if month is None:
            stats.conversations_undated += 1
            continue
        for fi, raw in enumerate(answer.facts):
            fact = _fact(raw, chunk, conv, provider, month, stats)
            if fact is not None:
                candidates.append(((n, fi), fact))
    return build_ir(provider, f"llm ({cfg.model})", dedup(candidates, stats), clock=clock)


@dataclass(frozen=True)
class _Answer:
    """One chunk's reply, the facts parsed from it (``None`` when it is not the JSON asked for), and
    what getting it took."""

    reply: str
    facts: list[Any] | None
    counts: DistillStats


class _JsonMode:
    """Whether this run's requests ask for JSON mode: until the endpoint refuses it, with what it said."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.refused: str | None = None


class _Refused(Exception):
    """The endpoint refused a request with a client error (HTTP ``code``): an LLMError once it is not
    the refusal of JSON mode, which the run goes on without."""

    def __init__(self, message: str, code: int, detail: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.detail = detail


def _answer(cfg: LLMConfig, chunk_text: str, key: str, sleep: Sleep, mode: _JsonMode) -> _Answer:
    """Ask for one chunk's facts, once more per ``cfg.reply_retries`` while the reply is not the JSON
    asked for; the last reply goes into the cache. Runs in a worker thread: it touches no shared state
    but its own cache file."""
    counts = DistillStats()
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": chunk_text}]
    reply = _ask(cfg, messages, counts, sleep, mode)
    facts = parse_reply(reply)
    for _ in range(cfg.reply_retries):
        if facts is not None:
            break
        counts.reasked += 1
        again = [*messages, {"role": "assistant", "content": reply}, {"role": "user", "content": REASK_PROMPT}]
        reply = _ask(cfg, again, counts, sleep, mode)
        facts = parse_reply(reply)
    _store(cfg, key, reply)  # the last reply even when it is not JSON: asked again, it would say the same
    return _Answer(reply, facts, counts)


def _in_parallel(
    jobs: list[int], work: Callable[[int], _Answer], concurrency: int, arrived: Callable[[int, _Answer], None]
) -> None:
    """Run ``work`` on every job in at most ``concurrency`` threads, calling ``arrived(job, answer)`` in
    this thread as each finishes. The first error stops the hand-out of jobs and is raised here; the
    threads are daemons, so a stopped command does not wait for the requests still in flight."""
    if not jobs:
        return
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    for job in jobs:
        todo.put(job)
    done: queue.SimpleQueue[tuple[int, _Answer | BaseException]] = queue.SimpleQueue()
    stop = threading.Event()

    def worker() -> None:
        while not stop.is_set():
            try:
                job = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((job, work(job)))
            except BaseException as exc:  # handed to the caller's thread, which raises it
                stop.set()
                done.put((job, exc))

    for i in range(min(concurrency, len(jobs))):
        threading.Thread(target=worker, name=f"memvelope-llm-{i}", daemon=True).start()
    try:
        for _ in jobs:
            job, got = done.get()
            if isinstance(got, BaseException):
                raise got
            arrived(job, got)
    finally:
        stop.set()


def _skipped(chunk: Chunk, conv: Mapping[str, Any], chunks: list[Chunk], reply: str) -> str:
    """The warning for a chunk whose replies were never the JSON asked for."""
    own = [c for c in chunks if c.conversation == chunk.conversation]
    part = f", part {own.index(chunk) + 1} of {len(own)}" if len(own) > 1 else ""
    title = conv.get("title") if isinstance(conv.get("title"), str) else None
    named = f" ({title!r})" if title else ""
    shown = " ".join(reply.split())
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return (
        f"conversation {chunk.conversation}{named}{part}: the model's reply is not the JSON asked for "
        f"({shown!r}); skipped"
    )


# --- the endpoint ----------------------------------------------------------------------------------


def _headers(cfg: LLMConfig) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if cfg.api_key:
        headers["Authorization"] = f"Bearer {cfg.api_key}"
    return headers


def _check_reachable(cfg: LLMConfig) -> None:
    request = urllib.request.Request(cfg.url("models"), headers=_headers(cfg), method="GET")
    try:
        with urllib.request.urlopen(request, timeout=min(cfg.timeout, 10.0)) as resp:
            resp.read(1)
    except urllib.error.HTTPError:
        return  # something answered: the server is there, whatever it thinks of /models
    except TimeoutError:
        return  # it took the connection and is slow to answer (a local server busy with a request)
    except (urllib.error.URLError, OSError) as exc:
        why = getattr(exc, "reason", exc)
        raise LLMError(f"cannot reach the LLM endpoint {cfg.base_url}: {why}", reason="llm-unreachable") from exc


def _ask(cfg: LLMConfig, messages: list[dict[str, str]], stats: DistillStats, sleep: Sleep, mode: _JsonMode) -> str:
    while True:
        json_mode = mode.on
        try:
            return _post(cfg, messages, stats, sleep, json_mode)
        except _Refused as exc:
            if not json_mode or exc.code not in (400, 422):
                raise LLMError(exc.message, reason="llm-http") from exc
            mode.on = False
            mode.refused = f"HTTP {exc.code} {exc.detail}".strip()


def _post(cfg: LLMConfig, messages: list[dict[str, str]], stats: DistillStats, sleep: Sleep, json_mode: bool) -> str:
    payload: dict[str, Any] = {"model": cfg.model, "temperature": cfg.temperature, "messages": messages}
    if json_mode:
        payload["response_format"] = {"type": "json_object"}
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")
    last = ""
    for attempt in range(cfg.max_retries + 1):
        if attempt:
            stats.retries += 1
            sleep(cfg.backoff * 2 ** (attempt - 1))
        stats.requests += 1
        request = urllib.request.Request(cfg.url("chat/completions"), data=data, headers=_headers(cfg), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=cfg.timeout) as resp:
                body = json.loads(resp.read().decode("utf-8", "replace"))
            content = body["choices"][0]["message"]["content"]
            if not isinstance(content, str):
                raise TypeError("message content is not a string")
            return content
        except urllib.error.HTTPError as exc:
            if exc.code not in _RETRY_CODES and exc.code < 500:
                detail = exc.read(300).decode("utf-8", "replace").strip()
                raise _Refused(f"LLM endpoint refused the request: HTTP {exc.code} {detail}", exc.code, detail) from exc
            last = f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError) as exc:
            last = str(getattr(exc, "reason", exc))
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            last = f"malformed response ({exc})"
    raise LLMError(f"LLM endpoint failed after {count(cfg.max_retries + 1, 'attempt')}: {last}", reason="llm-failed")


# --- the cache -------------------------------------------------------------------------------------


def _cache_path(cfg: LLMConfig, key: str) -> Path | None:
    return cfg.cache_dir / key[:2] / f"{key}.json" if cfg.cache_dir is not None else None


def _cached(cfg: LLMConfig, key: str) -> str | None:
    path = _cache_path(cfg, key)
    if path is None or not path.is_file():
        return None
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # a damaged entry is asked again
    reply = entry.get("reply") if isinstance(entry, dict) else None
    return reply if isinstance(reply, str) else None


def _store(cfg: LLMConfig, key: str, reply: str) -> None:
    path = _cache_path(cfg, key)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"model": cfg.model, "prompt": PROMPT_VERSION, "reply": reply}
    atomic_write(path, json.dumps(entry, ensure_ascii=False).encode("utf-8", "surrogatepass"))


# --- the reply -------------------------------------------------------------------------------------


def parse_reply(content: str) -> list[Any] | None:
    """The list of proposed facts in a model reply (``{"facts": [...]}`` or a bare list, possibly in a
    code fence or surrounded by prose); ``None`` when no such JSON can be found."""
    text = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", content.strip())
    candidates = [text]
    for open_, close in (("{", "}"), ("[", "]")):
        start, end = text.find(open_), text.rfind(close)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("facts"), list):
            return list(value["facts"])
        if isinstance(value, list):
            return value
    return None


@functools.cache
def _fact_validator() -> Draft7Validator:
    schema = load_schema(IR_TAG)
    return Draft7Validator({**schema["definitions"]["fact"], "definitions": schema["definitions"]})


def _clean(value: Any, *, lower: bool = False) -> Any:
    if isinstance(value, str):
        value = " ".join(value.split())
        if value == "" or value.lower() in ("null", "none", "n/a", "unknown"):
            return None
        return value.lower() if lower else value
    return value


def _fact(
    raw: Any, chunk: Chunk, conv: Mapping[str, Any], provider: str, month: str, stats: DistillStats
) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        _drop(stats, "not-an-object")
        return None
    fact = {k: _clean(raw.get(k), lower=k in ("subject_type", "category")) for k in _FACT_FIELDS}
    if isinstance(fact["subject"], str) and fact["subject"].lower() in _SELF_WORDS:
        fact["subject"] = "self"
    source_dates: set[str] = set().union(*(stated_dates(p) for p in chunk.prose))
    messages = [m for m in conv.get("messages") or [] if isinstance(m, dict)]
    stamps = [conv.get("created_at"), *(m.get("ts") for m in messages)]
    if fact["in_text_date"] is not None and fact["in_text_date"] not in source_dates:
        fact["in_text_date"] = None
        stats.dates_nulled += 1
    eff = fact["effective_date"]
    sourced = isinstance(eff, str) and (eff in source_dates or is_timestamp_prefix(eff, stamps))
    if eff is not None and not sourced:
        fact["effective_date"] = None
        stats.dates_nulled += 1
    if fact["effective_date"] is None:
        fact["effective_date"] = fact["in_text_date"] or fallback_date(conv)
    ordered = {
        "subject": fact["subject"],
        "subject_type": fact["subject_type"],
        "category": fact["category"],
        "content": fact["content"],
        "effective_date": fact["effective_date"],
        "in_text_date": fact["in_text_date"],
        "provenance": provenance(provider, month),
        "convo_id": conv.get("id") if isinstance(conv.get("id"), str) else None,
    }
    error = next(iter(sorted(_fact_validator().iter_errors(ordered), key=lambda e: list(e.path))), None)
    if error is not None:
        field = next((p for p in reversed(list(error.absolute_path)) if isinstance(p, str)), "fact")
        _drop(stats, f"{field}:{error.validator}")
        return None
    if grounding(ordered["content"], chunk.user_prose()) is None:
        _drop(stats, "not-in-user-text")
        return None
    return ordered


def grounding(content: str, texts: Sequence[str]) -> int | None:
    """The index of the first of ``texts`` that states ``content``: it holds at least half of the
    content words of ``content`` (:func:`memvelope_tools._memory_trace.content_words`), and at least one;
    ``None`` when none does."""
    from .._memory_trace import content_words

    words = content_words(content)
    if not words:
        return None
    need = math.ceil(len(words) / 2)
    return next((i for i, text in enumerate(texts) if len(words & content_words(text)) >= need), None)


def _drop(stats: DistillStats, why: str) -> None:
    stats.invalid_facts += 1
    stats.invalid_reasons[why] = stats.invalid_reasons.get(why, 0) + 1
