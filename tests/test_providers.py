"""Other providers' exports are named, not mistaken: DeepSeek, Grok, Gemini (Takeout), Perplexity,
Microsoft Copilot and Mistral Le Chat, given as a file, a zip or a folder, are refused at every door with
one line naming the provider (reason ``unsupported-provider``) and nothing written; ChatGPT and Claude
are detected as before; and the providers are written down once, in the registry, which every door asks."""

from __future__ import annotations

import ast
import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import memvelope_tools as mv
from memvelope_tools._convert.assemble import NORMALISERS, detect_provider
from memvelope_tools._doctor import ANALYSERS
from memvelope_tools._providers import registry
from memvelope_tools._sources import Found, identify, wrong_file
from memvelope_tools.cli import main
from memvelope_tools.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "memvelope_tools"
FIX = ROOT / "fixtures" / "providers"
SPEC_ONLY = "Memvelope spec v0.2.0 defines ChatGPT and Claude exports only"
GEMINI_JSON = FIX / "gemini" / "Takeout" / "My Activity" / "Gemini Apps" / "MyActivity.json"
MISTRAL_JSON = FIX / "mistral" / "chat-8e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b.json"


def _zip(path: Path, members: dict[str, Path | bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content.read_bytes() if isinstance(content, Path) else content)
    return path


def _folder(path: Path, files: dict[str, Path]) -> Path:
    path.mkdir()
    for name, source in files.items():
        shutil.copyfile(source, path / name)
    return path


def _alone(path: Path) -> Path:
    """One DeepSeek conversation, not inside an array."""
    conversations = json.loads((FIX / "deepseek" / "conversations.json").read_text(encoding="utf-8"))
    path.write_text(json.dumps(conversations[0]), encoding="utf-8")
    return path


CHROME_ACTIVITY = json.dumps(
    [{"header": "Chrome", "title": "Visited a page", "time": "2025-04-01T10:00:00.000Z", "products": ["Chrome"]}] * 6
).encode()
GROK_USER = "0f9e8d7c-6b5a-4a3b-9c2d-1e0f9a8b7c6d"

#: case -> (provider id, how to make the input under a folder). Each provider as its download comes
#: (a file, a zip) and as it is unpacked (a folder), where that is how people have it.
CASES: dict[str, tuple[str, Callable[[Path], Path]]] = {
    "deepseek file": ("deepseek", lambda tmp: FIX / "deepseek" / "conversations.json"),
    "deepseek folder": ("deepseek", lambda tmp: FIX / "deepseek"),
    "deepseek zip": (
        "deepseek",
        lambda tmp: _zip(
            tmp / "deepseek_data-2025-03-30.zip",
            {
                "conversations.json": FIX / "deepseek" / "conversations.json",
                "user.json": FIX / "deepseek" / "user.json",
            },
        ),
    ),
    "deepseek older file": ("deepseek", lambda tmp: FIX / "deepseek-older" / "conversations.json"),
    "deepseek conversation on its own": ("deepseek", lambda tmp: _alone(tmp / "conversation.json")),
    "grok file": ("grok", lambda tmp: FIX / "grok" / "prod-grok-backend.json"),
    "grok folder": ("grok", lambda tmp: FIX / "grok"),
    "grok zip": (
        "grok",
        lambda tmp: _zip(
            tmp / "grok-export.zip",
            {
                f"ttl/30d/export_data/{GROK_USER}/prod-grok-backend.json": FIX / "grok" / "prod-grok-backend.json",
                f"ttl/30d/export_data/{GROK_USER}/prod-mc-asset-server/8d7c6b5a/content": b"\x89PNG\r\n\x1a\n",
            },
        ),
    ),
    "gemini file": ("gemini", lambda tmp: GEMINI_JSON),
    "gemini folder": ("gemini", lambda tmp: GEMINI_JSON.parent),
    # Chrome's activity sorts first: its records fill the first five elements, so only the names tell.
    "gemini takeout zip": (
        "gemini",
        lambda tmp: _zip(
            tmp / "takeout-20250402T091531Z-001.zip",
            {
                "Takeout/My Activity/Chrome/MyActivity.json": CHROME_ACTIVITY,
                "Takeout/My Activity/Gemini Apps/MyActivity.json": GEMINI_JSON,
                "Takeout/archive_browser.html": b"<html></html>",
            },
        ),
    ),
    "gemini takeout zip in HTML": (
        "gemini",
        lambda tmp: _zip(
            tmp / "takeout-html.zip",
            {"Takeout/My Activity/Gemini Apps/MyActivity.html": b"<html><body>Prompted hello</body></html>"},
        ),
    ),
    "perplexity file": ("perplexity", lambda tmp: FIX / "perplexity" / "thread.json"),
    "perplexity folder": ("perplexity", lambda tmp: FIX / "perplexity"),
    "perplexity zip": (
        "perplexity",
        lambda tmp: _zip(tmp / "threads.zip", {"thread.json": FIX / "perplexity" / "thread.json"}),
    ),
    "perplexity exporter file": ("perplexity", lambda tmp: FIX / "perplexity-exporter" / "thread.json"),
    "copilot file": ("copilot", lambda tmp: FIX / "copilot" / "Copilot Activity History.csv"),
    "mistral file": ("mistral", lambda tmp: MISTRAL_JSON),
    "mistral folder": ("mistral", lambda tmp: _folder(tmp / "le-chat", {MISTRAL_JSON.name: MISTRAL_JSON})),
    "mistral zip": ("mistral", lambda tmp: _zip(tmp / "le-chat-export.zip", {MISTRAL_JSON.name: MISTRAL_JSON})),
}
NAMES = {
    "deepseek": "DeepSeek",
    "grok": "Grok",
    "gemini": "Gemini",
    "perplexity": "Perplexity",
    "copilot": "Microsoft Copilot",
    "mistral": "Mistral Le Chat",
}


def _line(provider: str) -> str:
    return f"this is a {NAMES[provider]} export; {SPEC_ONLY}"


def _check(error: InputError, provider: str, path: Path) -> None:
    """The one refusal: its class, reason and line, naming the input (or the part inside it)."""
    assert type(error) is InputError
    assert (error.reason, error.msg) == ("unsupported-provider", _line(provider))
    assert error.source is not None and error.source.startswith(str(path))
    assert str(error) == f"{_line(provider)} (in {error.source})"


@pytest.fixture
def out(tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def test_every_unsupported_provider_of_the_registry_has_cases() -> None:
    unsupported = {p.id for p in registry.PROVIDERS if not p.supported}
    assert unsupported == set(NAMES) == {provider for provider, _ in CASES.values()}
    assert {p: registry.name(p) for p in unsupported} == NAMES


FUNCTIONS: dict[str, Callable[[Path, Path], Any]] = {
    "convert": lambda path, out: mv.convert(path),
    "load": lambda path, out: mv.load(path),
    "messages_frame": lambda path, out: mv.messages_frame(path),
    "doctor": lambda path, out: mv.doctor(path),
    "memory_frame": lambda path, out: mv.memory_frame(path),
    "to_parquet": lambda path, out: mv.to_parquet(path, out / "pq"),
}


@pytest.mark.parametrize("function", list(FUNCTIONS))
@pytest.mark.parametrize("case", list(CASES))
def test_every_function_refuses_it_by_name(case: str, function: str, tmp_path: Path, out: Path) -> None:
    provider, make = CASES[case]
    path = make(tmp_path)
    with pytest.raises(InputError) as info:
        FUNCTIONS[function](path, out)
    _check(info.value, provider, path)
    assert list(out.iterdir()) == []


COMMANDS: dict[str, list[str]] = {
    "convert": ["convert", "PATH", "-o", "OUT/history.mve.json"],
    "info": ["info", "PATH"],
    "doctor": ["doctor", "PATH"],
    "memory": ["memory", "PATH", "-o", "OUT/memories.mv.json"],
    "parquet": ["parquet", "PATH", "-o", "OUT/pq"],
    "diff": ["diff", "PATH", str(mv.sample_path("chatgpt"))],
    "history add": ["history", "add", "PATH", "--to", "OUT/history"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("case", list(CASES))
def test_every_command_refuses_it_in_one_line(
    case: str, command: str, tmp_path: Path, out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    provider, make = CASES[case]
    path = make(tmp_path)
    argv = [str(path) if a == "PATH" else a.replace("OUT", str(out)) for a in COMMANDS[command]]
    code = main(argv)
    captured = capsys.readouterr()
    assert (code, captured.out) == (1, "")
    assert captured.err.startswith(f"memvelope: error: {_line(provider)} (in {path}")
    assert captured.err.endswith(")\n") and captured.err.count("\n") == 1
    assert list(out.iterdir()) == []  # nothing written, not even half


def test_convert_without_output_writes_nothing_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["convert", str(FIX / "deepseek")])
    captured = capsys.readouterr()
    assert (code, captured.out) == (1, "")
    assert captured.err == f"memvelope: error: {_line('deepseek')} (in {FIX / 'deepseek' / 'conversations.json'})\n"


def test_the_same_bytes_are_refused_the_same_way() -> None:
    """Bytes and a binary file object get the line a path gets, without a path to name."""
    for provider, path in [
        ("deepseek", FIX / "deepseek-older" / "conversations.json"),
        ("grok", FIX / "grok" / "prod-grok-backend.json"),
    ]:
        with pytest.raises(InputError) as from_bytes:
            mv.load(path.read_bytes())
        assert (from_bytes.value.reason, from_bytes.value.msg) == ("unsupported-provider", _line(provider))
        with open(path, "rb") as fh, pytest.raises(InputError) as from_file:
            mv.messages_frame(fh)
        assert (from_file.value.reason, from_file.value.msg) == ("unsupported-provider", _line(provider))


def test_sniff_names_the_provider(tmp_path: Path) -> None:
    assert mv.sniff(FIX / "grok").provider == "grok"
    assert mv.sniff(FIX / "copilot" / "Copilot Activity History.csv").kind == "unsupported"
    assert mv.sniff(CASES["gemini takeout zip"][1](tmp_path)) == Found("unsupported", "gemini")


# ---- what each shape is, and what it is not ------------------------------------------------------

DEEPSEEK = json.loads((FIX / "deepseek" / "conversations.json").read_text(encoding="utf-8"))[0]
CHATGPT = {
    "conversation_id": "c1",
    "title": "t",
    "create_time": 1700000000.0,
    "current_node": "a",
    "mapping": {
        "a": {
            "id": "a",
            "parent": None,
            "children": [],
            "message": {"author": {"role": "user"}, "content": {"content_type": "text", "parts": ["hi"]}},
        }
    },
}


def test_a_deepseek_mapping_is_not_taken_for_chatgpt() -> None:
    assert registry.provider_of(DEEPSEEK) == "deepseek"
    assert registry.provider_of(CHATGPT) == "chatgpt"
    # A mapping whose messages carry fragments but no date at the top is DeepSeek's too; one with an
    # author is ChatGPT's, whatever else it holds.
    undated = {k: v for k, v in DEEPSEEK.items() if k != "inserted_at"}
    assert registry.provider_of(undated) == "deepseek"
    authored = json.loads(json.dumps(DEEPSEEK))
    authored["mapping"]["1"]["message"]["author"] = {"role": "user"}
    assert registry.provider_of(authored) == "chatgpt"
    assert registry.provider_of({"mapping": {}}) == "chatgpt"  # the spec's rule, for an empty mapping


def test_chatgpt_and_claude_win_over_another_providers_conversation() -> None:
    """Detection is the spec's whenever a ChatGPT or Claude conversation is among the first five."""
    claude = {"uuid": "u", "chat_messages": []}
    assert detect_provider([DEEPSEEK, CHATGPT]) == "chatgpt"
    assert detect_provider([DEEPSEEK, DEEPSEEK, claude]) == "claude"
    with pytest.raises(InputError) as info:
        detect_provider([DEEPSEEK] * 5 + [CHATGPT], "x.json")  # a sixth element does not count (conformance C16)
    assert (info.value.reason, info.value.source) == ("unsupported-provider", "x.json")


def test_a_chatgpt_export_with_a_deepseek_element_converts_as_chatgpt(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([DEEPSEEK, CHATGPT]), encoding="utf-8")
    envelope = mv.convert(path)
    assert envelope["meta"]["source_provider"] == "chatgpt"
    assert [c["id"] for c in envelope["conversations"]] == ["c1"]


def test_another_providers_part_beside_an_export_contributes_nothing(tmp_path: Path) -> None:
    """As any part whose top level is an object: the ChatGPT export is converted, the Grok file left out."""
    chatgpt = tmp_path / "conversations.json"
    chatgpt.write_text(json.dumps([CHATGPT]), encoding="utf-8")
    envelope = mv.convert(chatgpt, FIX / "grok" / "prod-grok-backend.json")
    assert (envelope["meta"]["source_provider"], envelope["meta"]["conversation_count"]) == ("chatgpt", 1)


def test_a_takeout_of_other_products_is_no_gemini_export(tmp_path: Path) -> None:
    path = _zip(tmp_path / "takeout.zip", {"Takeout/My Activity/Chrome/MyActivity.json": CHROME_ACTIVITY})
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(path)
    assert info.value.reason == "no-provider"


@pytest.mark.parametrize(
    "header",
    [b"Conversation,Time,Author,Message\n", b'\xef\xbb\xbf"Conversation","Time","Author","Message"\r\n'],
)
def test_copilot_header(header: bytes) -> None:
    assert registry.head_provider(header + b"x,2025-01-01T00:00:00Z,Human,hi\n") == "copilot"


def test_a_csv_of_something_else_is_not_copilot() -> None:
    assert registry.head_provider(b"Conversation,Time,Message\n") is None
    assert registry.head_provider(b"[1, 2]") is None


# ---- written once --------------------------------------------------------------------------------


def test_the_doors_derive_their_providers_from_the_registry() -> None:
    assert registry.SUPPORTED == ("claude", "chatgpt")  # detection order: Claude wins
    assert set(NORMALISERS) == set(ANALYSERS) == set(registry.SUPPORTED)
    for provider in registry.PROVIDERS:
        if not provider.supported:
            said = wrong_file(Found("unsupported", provider.id), "export")
            assert said == (registry.refusal_line(provider.id), "unsupported-provider")


def _written_outside_the_registry(package: Path, names: set[str]) -> list[str]:
    """Where a module outside ``_providers`` spells one of ``names`` as a whole string, or defines a
    shape test of its own (``looks_like``)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if "_providers" in path.relative_to(package).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(package).as_posix()}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{where} {node.value!r}")
            if isinstance(node, ast.FunctionDef) and node.name == "looks_like":
                found.append(f"{where} def looks_like")
    return found


def test_provider_names_and_shape_tests_are_written_only_in_the_registry() -> None:
    assert _written_outside_the_registry(PACKAGE, {p.name for p in registry.PROVIDERS}) == []


def test_the_check_finds_a_name_and_a_shape_test_outside_the_registry(tmp_path: Path) -> None:
    (tmp_path / "_providers").mkdir()
    (tmp_path / "_providers" / "registry.py").write_text('NAME = "ChatGPT"\n')
    (tmp_path / "cli.py").write_text('NAMES = {"chatgpt": "ChatGPT"}\nTEXT = "a ChatGPT export"\n')
    (tmp_path / "core.py").write_text("def looks_like(x):\n    return 'mapping' in x\n")
    assert _written_outside_the_registry(tmp_path, {"ChatGPT"}) == ["cli.py:1 'ChatGPT'", "core.py:1 def looks_like"]


def test_a_grok_folder_is_told_by_its_files_name() -> None:
    assert identify(FIX / "grok") == Found("unsupported", "grok")
    assert registry.member_provider(["a/conversations.json", "a/prod-grok-backend.json"]) == "grok"
