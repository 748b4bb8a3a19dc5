"""Seeded generator of realistic ChatGPT and Claude exports of a requested size, for benchmarks and tests.

The output mimics what the providers' "export my data" downloads hold: ChatGPT ``mapping`` trees with
hidden system nodes, regenerated replies and edited prompts (branches), tool calls and their outputs,
reasoning nodes and the per-message metadata real exports carry; Claude ``chat_messages`` with text,
thinking, tool_use and tool_result blocks, attachments and ``parent_message_uuid`` links. Texts are long,
multi-paragraph, with code blocks and non-ASCII prose. About once per 10 MB a string carries a lone
surrogate escape (``\\ud83d`` alone), which real exports can hold and fast JSON parsers refuse.

Files are written one conversation at a time, so any size (1 MB .. several GB) needs little memory.
The same seed, provider, size and sharding always give the same bytes.

Example: python benchmarks/generate.py chatgpt 200MB /tmp/chatgpt-200 --shards 4
"""

from __future__ import annotations

import argparse
import json
import os
import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

LONE_SURROGATE_EVERY: Final = 10 * 1024 * 1024  # bytes of output between two lone surrogates
_PARAGRAPHS: Final = 1500
_VOCABULARY: Final = (
    "the of and to in is that for it as with was on be by this are or at from have an but not which "
    "data model export memory conversation analysis function result value system design question "
    "answer people research project team plan budget roadmap timeline review draft summary context "
    "python pandas parquet schema timestamp conversion envelope archive branch regenerate prompt "
    "café naïve résumé Zürich façade coöperate jalapeño São Paulo Kraków Ελληνικά Москва 東京 "
    "中文 한국어 العربية עברית हिन्दी emoji 😀 🚀 ✨ 👍🏽 🇫🇷 — – … « » “quoted” ‘single’ · ±½ ∑ √ ∞"
)
_WORDS: Final = tuple(_VOCABULARY.split())
_SPACES: Final = ("\u00a0", "\u2009", "\u3000", "\u200b", "\t")
_LANGS: Final = ("python", "javascript", "sql", "bash", "rust", "")


def _paragraph(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(1, 7)):
        words = rng.choices(_WORDS, k=rng.randint(5, 28))
        sentences.append(" ".join(words).capitalize() + rng.choice(".!?."))
    text = " ".join(sentences)
    if rng.random() < 0.05:
        text = rng.choice(_SPACES) + text + rng.choice(_SPACES)
    return text


def _code_block(rng: random.Random) -> str:
    lang = rng.choice(_LANGS)
    lines = []
    for i in range(rng.randint(3, 30)):
        indent = "    " * rng.randint(0, 3)
        name = rng.choice(_WORDS[:60])
        lines.append(f'{indent}{name}_{i} = compute("{name}", {rng.randint(0, 999)})  # {rng.choice(_WORDS)}')
    body = "\n".join(lines).replace("\\", "")
    return f"```{lang}\n{body}\n```"


class _Texts:
    """A seeded pool of paragraphs and code blocks; messages are drawn from it quickly."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.paragraphs = [_paragraph(rng) for _ in range(_PARAGRAPHS)]
        self.code = [_code_block(rng) for _ in range(_PARAGRAPHS // 5)]

    def message(self, long: bool) -> str:
        rng = self.rng
        count = rng.randint(2, 12) if long else rng.randint(1, 3)
        blocks = []
        for _ in range(count):
            blocks.append(rng.choice(self.code) if rng.random() < 0.15 else rng.choice(self.paragraphs))
        return "\n\n".join(blocks)

    def title(self) -> str:
        return " ".join(self.rng.choices(_WORDS, k=self.rng.randint(2, 7))).capitalize()


#: The themes of ``generate(themes=True)``: a conversation draws a few words of one into each message.
_THEMES: Final = (
    "garlic onion simmer oven recipe butter roast pasta sauce flour dough spice",
    "marathon pace stretch knee tempo sprint hydration stride trail recovery interval mileage",
    "invoice mortgage budget savings pension tax deposit interest loan insurance expense broker",
    "guitar chord melody rhythm scale riff amplifier strings drummer lyrics studio chorus",
    "garden compost tomato seedling soil pruning mulch watering basil orchard weeds greenhouse",
    "kubernetes container cluster deployment ingress helm pod namespace autoscaler terraform rollout registry",
    "telescope galaxy nebula orbit planet comet asteroid eclipse lunar stellar cosmic observatory",
    "toddler bedtime nursery diaper stroller tantrum lullaby playground preschool babysitter pacifier crib",
)


class _Themes:
    """One theme per conversation, a sentence of its words added to each of its messages; drawn from a
    generator of their own, so an export with themes holds the same conversations otherwise."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words: list[str] = []

    def next(self) -> None:
        self.words = self.rng.choice(_THEMES).split()

    def sentence(self) -> str:
        return " ".join(self.rng.choices(self.words, k=self.rng.randint(3, 8))).capitalize() + "."


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class _Surrogates:
    """Decides when the next generated text gets a lone surrogate, by bytes written so far."""

    def __init__(self, rng: random.Random, every: int) -> None:
        self.rng = rng
        self.every = every
        self.next_at = every // 2

    def maybe(self, written: int, text: str) -> str:
        if written < self.next_at:
            return text
        self.next_at += self.every
        lone = self.rng.choice(("\ud83d", "\udca9", "\ud800", "\udfff"))
        cut = self.rng.randint(0, len(text))
        return text[:cut] + lone + text[cut:]


# ---- ChatGPT ----------------------------------------------------------------------------------------

_MODELS: Final = ("gpt-4o", "gpt-4", "o1-preview", "gpt-4o-mini", "o3")


def _gpt_message(
    rng: random.Random,
    role: str,
    content: dict[str, Any],
    t: float,
    model: str,
    parent: str,
    *,
    hidden: bool = False,
    recipient: str = "all",
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "citations": [],
        "content_references": [],
        "message_type": None,
        "model_slug": model,
        "default_model_slug": model,
        "parent_id": parent,
        "request_id": f"{rng.getrandbits(64):016x}-IAD",
        "timestamp_": "absolute",
        "message_source": None,
        "serialization_metadata": {"custom_symbol_offsets": []},
    }
    if role == "assistant":
        metadata["finish_details"] = {"type": "stop", "stop_tokens": [200002, 199999]}
        metadata["is_complete"] = True
    if hidden:
        metadata = {"is_visually_hidden_from_conversation": True}
    return {
        "id": _uuid(rng),
        "author": {"role": role, "name": "python" if role == "tool" else None, "metadata": {}},
        "create_time": None if hidden else t,
        "update_time": None,
        "content": content,
        "status": "finished_successfully",
        "end_turn": role == "assistant" or None,
        "weight": 0.0 if hidden else 1.0,
        "metadata": metadata,
        "recipient": recipient,
        "channel": None,
    }


def _memory_snapshot(mem: random.Random, t: float) -> str:
    """A ``model_set_context`` as ChatGPT writes one: numbered entries, each with the day it was saved."""
    entries = []
    for i in range(1, mem.randint(2, 12)):
        day = datetime.fromtimestamp(t - mem.uniform(0, 3e7), UTC).date().isoformat()
        entries.append(f"{i}. [{day}]. User " + " ".join(mem.choices(_WORDS, k=mem.randint(5, 20))) + ".")
    return "\n\n".join(entries)


def _chatgpt_conversation(
    rng: random.Random,
    texts: _Texts,
    sur: _Surrogates,
    written: int,
    turns: int,
    mem: random.Random | None = None,
    theme: _Themes | None = None,
) -> dict[str, Any]:
    model = rng.choice(_MODELS)
    t = rng.uniform(1.60e9, 1.78e9)
    created = t
    mapping: dict[str, Any] = {}

    def add(message: dict[str, Any] | None, parent: str | None) -> str:
        key = message["id"] if message else _uuid(rng)
        mapping[key] = {"id": key, "message": message, "parent": parent, "children": []}
        if parent is not None:
            mapping[parent]["children"].append(key)
        return key

    def text(long: bool) -> str:
        body = texts.message(long)
        return sur.maybe(written, body if theme is None else f"{body}\n\n{theme.sentence()}")

    root = add(None, None)
    head = add(_gpt_message(rng, "system", {"content_type": "text", "parts": [""]}, t, model, root, hidden=True), root)
    if rng.random() < 0.2:
        ctx = {
            "content_type": "user_editable_context",
            "user_profile": texts.message(False),
            "user_instructions": texts.message(False),
        }
        head = add(_gpt_message(rng, "user", ctx, t, model, head, hidden=True), head)
    if mem is not None and mem.random() < 0.5:  # the memory the model was shown (its own generator)
        snapshot = {"content_type": "model_editable_context", "model_set_context": _memory_snapshot(mem, t)}
        head = add(_gpt_message(mem, "assistant", snapshot, t, model, head), head)
    for _ in range(turns):
        t += rng.uniform(5, 600)
        user = {"content_type": "text", "parts": [text(rng.random() < 0.3)]}
        if rng.random() < 0.05:
            user = {
                "content_type": "multimodal_text",
                "parts": [
                    {
                        "content_type": "image_asset_pointer",
                        "asset_pointer": f"file-service://file-{_uuid(rng)}",
                        "size_bytes": rng.randint(10_000, 900_000),
                        "width": 1024,
                        "height": 768,
                        "fovea": None,
                        "metadata": {"dalle": None, "sanitized": True},
                    },
                    text(False),
                ],
            }
        if rng.random() < 0.04 and head != root:  # an edited prompt: the old one stays as a dead branch
            old = add(_gpt_message(rng, "user", {"content_type": "text", "parts": [text(False)]}, t, model, head), head)
            add(_gpt_message(rng, "assistant", {"content_type": "text", "parts": [text(True)]}, t + 9, model, old), old)
        head = add(_gpt_message(rng, "user", user, t, model, head), head)
        if mem is not None and mem.random() < 0.08:  # ChatGPT saves a memory, and the bio tool answers
            saved = "User " + " ".join(mem.choices(_WORDS, k=mem.randint(5, 25))) + "."
            write = {"content_type": "text", "parts": [saved]}
            head = add(_gpt_message(mem, "assistant", write, t + 1, model, head, recipient="bio"), head)
            notice = {"content_type": "text", "parts": ["Model set context updated."]}
            head = add(_gpt_message(mem, "tool", notice, t + 1.5, model, head, recipient="assistant"), head)
        roll = rng.random()
        if roll < 0.12:  # a tool call and its output
            code = {
                "content_type": "code",
                "language": "unknown",
                "response_format_name": None,
                "text": rng.choice(texts.code),
            }
            head = add(_gpt_message(rng, "assistant", code, t + 3, model, head, recipient="python"), head)
            out = {"content_type": "execution_output", "text": texts.message(False)}
            head = add(_gpt_message(rng, "tool", out, t + 5, model, head), head)
        elif roll < 0.2:  # a reasoning model's thoughts
            thoughts = {
                "content_type": "thoughts",
                "thoughts": [
                    {"summary": texts.title(), "content": texts.message(False)} for _ in range(rng.randint(1, 3))
                ],
                "source_analysis_msg_id": _uuid(rng),
            }
            head = add(_gpt_message(rng, "assistant", thoughts, t + 2, model, head), head)
            recap = {"content_type": "reasoning_recap", "content": f"Thought for {rng.randint(2, 90)} seconds"}
            head = add(_gpt_message(rng, "assistant", recap, t + 3, model, head), head)
        if rng.random() < 0.06:  # a regenerated reply: the first answer is abandoned
            add(
                _gpt_message(rng, "assistant", {"content_type": "text", "parts": [text(True)]}, t + 8, model, head),
                head,
            )
        t += rng.uniform(2, 60)
        head = add(
            _gpt_message(rng, "assistant", {"content_type": "text", "parts": [text(True)]}, t, model, head), head
        )
    conv_id = _uuid(rng)
    return {
        "title": texts.title(),
        "create_time": created,
        "update_time": t,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": head,
        "plugin_ids": None,
        "conversation_id": conv_id,
        "conversation_template_id": None,
        "gizmo_id": None,
        "gizmo_type": None,
        "is_archived": False,
        "is_starred": None,
        "safe_urls": [],
        "blocked_urls": [],
        "default_model_slug": model,
        "conversation_origin": None,
        "voice": None,
        "async_status": None,
        "disabled_tool_ids": [],
        "is_do_not_remember": False,
        "memory_scope": "global_enabled",
        "sugar_item_id": None,
        "id": conv_id,
    }


# ---- Claude -----------------------------------------------------------------------------------------


def _iso(t: float) -> str:
    whole = int(t)
    stamp = datetime.fromtimestamp(whole, UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S") + f".{int((t - whole) * 1e6):06d}Z"


def _claude_conversation(
    rng: random.Random, texts: _Texts, sur: _Surrogates, written: int, turns: int
) -> dict[str, Any]:
    t = rng.uniform(1.68e9, 1.78e9)
    created = t
    messages: list[dict[str, Any]] = []
    parent = "00000000-0000-4000-8000-000000000000"

    def message(sender: str, long: bool) -> dict[str, Any]:
        nonlocal t, parent
        t += rng.uniform(3, 400)
        body = sur.maybe(written, texts.message(long))
        blocks: list[dict[str, Any]] = []
        if sender == "assistant" and rng.random() < 0.25:
            blocks.append(
                {
                    "start_timestamp": _iso(t),
                    "stop_timestamp": _iso(t + 4),
                    "type": "thinking",
                    "thinking": texts.message(False),
                    "summaries": [{"summary": texts.title()}],
                    "cut_off": False,
                }
            )
        if sender == "assistant" and rng.random() < 0.1:
            blocks.append(
                {
                    "start_timestamp": _iso(t),
                    "stop_timestamp": _iso(t + 1),
                    "type": "tool_use",
                    "name": "artifacts",
                    "input": {
                        "id": _uuid(rng),
                        "type": "application/vnd.ant.code",
                        "title": texts.title(),
                        "command": "create",
                        "content": rng.choice(texts.code),
                    },
                    "message": None,
                    "integration_name": None,
                    "display_content": None,
                }
            )
            blocks.append(
                {
                    "start_timestamp": _iso(t + 1),
                    "stop_timestamp": _iso(t + 1),
                    "type": "tool_result",
                    "name": "artifacts",
                    "content": [{"type": "text", "text": "OK", "uuid": _uuid(rng)}],
                    "is_error": False,
                    "message": None,
                    "display_content": None,
                }
            )
        blocks.append(
            {"start_timestamp": _iso(t), "stop_timestamp": _iso(t + 7), "type": "text", "text": body, "citations": []}
        )
        attachments = []
        if sender == "human" and rng.random() < 0.05:
            attachments.append(
                {
                    "file_name": f"{texts.title()}.txt",
                    "file_size": rng.randint(100, 90000),
                    "file_type": "text/plain",
                    "extracted_content": texts.message(True),
                }
            )
        uid = _uuid(rng)
        msg = {
            "uuid": uid,
            "text": body,
            "content": blocks,
            "sender": sender,
            "created_at": _iso(t),
            "updated_at": _iso(t),
            "attachments": attachments,
            "files": [],
            "parent_message_uuid": parent,
        }
        parent = uid
        return msg

    for _ in range(turns):
        messages.append(message("human", rng.random() < 0.3))
        if rng.random() < 0.05:  # a retried reply: both stay in chat_messages (NOTES A28)
            keep = parent
            messages.append(message("assistant", True))
            parent = keep
        messages.append(message("assistant", True))
    return {
        "uuid": _uuid(rng),
        "name": texts.title(),
        "summary": "" if rng.random() < 0.7 else texts.title(),
        "created_at": _iso(created),
        "updated_at": _iso(t),
        "account": {"uuid": "0d1f4e37-5d5f-4c5b-9b4d-6d7c3f0c1a11"},
        "chat_messages": messages,
    }


# ---- writing ----------------------------------------------------------------------------------------


def _turns(rng: random.Random) -> int:
    """Heavy-tailed: most conversations are short, a few run to hundreds of turns."""
    return min(400, max(1, int(rng.paretovariate(1.3))))


def _conversations(
    provider: str, seed: int, every: int, memory: bool = False, themes: bool = False
) -> Iterator[tuple[dict[str, Any], _Surrogates]]:
    rng = random.Random(seed)
    texts = _Texts(rng)
    sur = _Surrogates(rng, every)
    # Memory nodes draw from their own generator, so an export with them holds the same conversations.
    mem = random.Random(seed + 1) if memory and provider == "chatgpt" else None
    theme = _Themes(seed + 2) if themes and provider == "chatgpt" else None
    written = 0
    while True:
        if provider == "chatgpt":
            if theme is not None:
                theme.next()
            conv = _chatgpt_conversation(rng, texts, sur, written, _turns(rng), mem, theme)
        else:
            conv = _claude_conversation(rng, texts, sur, written, _turns(rng))
        written = yield conv, sur  # type: ignore[misc]


def generate(
    folder: str | os.PathLike[str],
    provider: str,
    size: int,
    *,
    seed: int = 0,
    shards: int = 1,
    lone_surrogate_every: int = LONE_SURROGATE_EVERY,
    memory: bool = False,
    themes: bool = False,
) -> list[Path]:
    """Write an export of about ``size`` bytes into ``folder``; return the part files in order.

    One part is ``conversations.json``; several are ``conversations-000.json``, ... of about equal size
    (today's sharded layout). ChatGPT parts escape non-ASCII (``\\uXXXX``) as OpenAI's files do; Claude
    parts hold raw UTF-8. A lone surrogate appears about every ``lone_surrogate_every`` bytes. With
    ``memory`` (ChatGPT only), about one turn in 12 saves a memory (an assistant message to the ``bio``
    tool and the tool's notice) and half the conversations open with a memory snapshot
    (``model_editable_context``); they come from a generator of their own, so the rest is unchanged.
    With ``themes`` (ChatGPT only), each conversation has one of a few themes and each of its messages
    ends with a sentence of the theme's words (what topics find), from a generator of their own too.
    """
    if provider not in ("chatgpt", "claude"):
        raise ValueError(f"provider must be 'chatgpt' or 'claude', not {provider!r}")
    if size < 1 or shards < 1:
        raise ValueError("size and shards must be positive")
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    ascii_only = provider == "chatgpt"
    names = ["conversations.json"] if shards == 1 else [f"conversations-{i:03d}.json" for i in range(shards)]
    per_shard = size / shards
    stream = _conversations(provider, seed, lone_surrogate_every, memory, themes)
    conv, _ = next(stream)
    total = 0
    paths = []
    for index, name in enumerate(names):
        path = out / name
        paths.append(path)
        limit = per_shard * (index + 1)
        with open(path, "wb") as fh:
            fh.write(b"[")
            first = True
            while first or total < limit:
                data = json.dumps(conv, ensure_ascii=ascii_only, separators=(",", ":"))
                # A lone surrogate cannot be UTF-8: write it as the escape a JSON exporter would.
                blob = data.encode("utf-8", "backslashreplace")
                if not first:
                    fh.write(b",")
                fh.write(blob)
                total += len(blob) + 1
                first = False
                conv, _ = stream.send(total)
            fh.write(b"]")
            total += 2
    return paths


_UNITS: Final = {"KB": 10**3, "MB": 10**6, "GB": 10**9, "B": 1}


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
    parser.add_argument("--memory", action="store_true", help="ChatGPT: add memory writes and snapshots")
    parser.add_argument("--themes", action="store_true", help="ChatGPT: a theme per conversation, for topics")
    args = parser.parse_args()
    size = parse_size(args.size)
    found = generate(
        args.folder, args.provider, size, seed=args.seed, shards=args.shards, memory=args.memory, themes=args.themes
    )
    for path in found:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
