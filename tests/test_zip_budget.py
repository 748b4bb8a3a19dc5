"""Zips are bounded as a whole: a total inflation budget across members, nested zips never held whole
in memory, repeated member names reported, member names printed without control characters."""

from __future__ import annotations

import io
import json
import os
import tracemalloc
import zipfile
from pathlib import Path

import pytest

import memvelope_tools as mv
from memvelope_tools._convert import sources
from memvelope_tools._convert.sources import ZipLimits, expand
from memvelope_tools._printable import printable
from memvelope_tools.cli import main
from memvelope_tools.errors import ConversionError

CONV = {"uuid": "c0", "name": "t", "chat_messages": [{"sender": "human", "text": "hello", "created_at": 1}]}


def _zip(path: Path, members: list[tuple[str, bytes]], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members:
            zf.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), data, compress_type=compression)
    return path


def _padded_part(size: int) -> bytes:
    """A valid Claude part of about ``size`` bytes that compresses extremely well (whitespace)."""
    body = json.dumps([CONV]).encode()
    return body[:-1] + b" " * max(0, size - len(body)) + b"]"


def test_members_each_under_the_floor_are_refused_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Forty members, each too small for the per-member ratio check, inflate a tiny zip past the ratio in
    all: refused with the total named, long before everything is inflated."""
    members = [(f"conversations-{i:03d}.json", _padded_part(600_000)) for i in range(40)]
    archive = _zip(tmp_path / "bomb.zip", members)
    assert archive.stat().st_size < 60_000
    limits = ZipLimits(ratio_floor_bytes=1_000_000, max_ratio=50)
    inflated = []
    real = sources._Budget.add

    def counting(self, member: str, count: int) -> None:
        real(self, member, count)
        inflated.append(self.total)

    monkeypatch.setattr(sources._Budget, "add", counting)
    with pytest.raises(ConversionError, match="together inflate more than 50 times its size") as info:
        mv.convert(archive, zip_limits=limits, progress=False)
    assert info.value.reason == "zip-limit" and "--zip-max-ratio" in str(info.value)
    assert info.value.source == os.fspath(archive)
    assert max(inflated, default=0) < 50 * archive.stat().st_size + (1 << 20) < 40 * 600_000  # stopped at the budget


def test_the_declared_total_is_refused_before_anything_is_inflated(tmp_path: Path):
    archive = _zip(tmp_path / "big.zip", [(f"conversations-{i}.json", _padded_part(5_000)) for i in range(3)])
    with pytest.raises(ConversionError, match="inflate past 12,000 bytes in all") as info:
        expand([archive], ZipLimits(max_total_bytes=12_000))
    assert "--zip-max-total-bytes" in str(info.value) and info.value.reason == "zip-limit"


def test_the_inflated_total_is_counted_when_sizes_are_understated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    archive = _zip(tmp_path / "big.zip", [(f"conversations-{i}.json", _padded_part(5_000)) for i in range(3)])
    monkeypatch.setattr(sources._Budget, "check", _checks_only_after_reading(sources._Budget.check))
    with pytest.raises(ConversionError, match="inflate past 12,000 bytes in all"):
        mv.convert(archive, zip_limits=ZipLimits(max_total_bytes=12_000), progress=False)


def _checks_only_after_reading(real):
    """The declared sizes say nothing (a zip can lie about them): only bytes actually inflated count."""

    def check(self, total: int) -> None:
        if total == self.total:
            real(self, total)

    return check


def test_within_the_budget_a_zip_converts_as_before(tmp_path: Path):
    archive = _zip(tmp_path / "ok.zip", [("conversations.json", json.dumps([CONV]).encode())])
    env = mv.convert(archive, zip_limits=ZipLimits(max_total_bytes=10_000), progress=False)
    assert env["meta"]["conversation_count"] == 1


def test_the_cli_takes_the_total_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    archive = _zip(tmp_path / "big.zip", [(f"conversations-{i}.json", _padded_part(5_000)) for i in range(3)])
    assert main(["convert", str(archive), "-o", str(tmp_path / "o.json"), "--zip-max-total-bytes", "12000"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--zip-max-total-bytes" in err
    assert not (tmp_path / "o.json").exists()


def test_a_nested_zip_is_not_held_whole_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    inner = io.BytesIO()
    noise = os.urandom(5_000_000).hex()  # text that compresses only to half: the inner zip is about 5.5 MB
    conv = {**CONV, "chat_messages": [{**CONV["chat_messages"][0], "text": noise}]}
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", json.dumps([conv]))
    outer = _zip(tmp_path / "export.zip", [("conversations.zip", inner.getvalue())], zipfile.ZIP_STORED)
    monkeypatch.setattr(sources, "_NESTED_IN_MEMORY", 1 << 20)
    tracemalloc.start()
    try:
        expansion = expand([outer])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [p.name for p in expansion.parts] == [f"{outer}!conversations.zip!conversations.json"]
    assert peak < len(inner.getvalue()) / 2
    env = mv.convert(outer, progress=False)
    assert env["conversations"][0]["messages"][0]["text"] == noise


def test_a_nested_zip_counts_against_the_total(tmp_path: Path):
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(3):
            zf.writestr(f"conversations-{i}.json", _padded_part(5_000))
    outer = _zip(tmp_path / "export.zip", [("conversations.zip", inner.getvalue())])
    with pytest.raises(ConversionError, match="in all"):
        mv.convert(outer, zip_limits=ZipLimits(max_total_bytes=12_000), progress=False)


def test_two_members_with_one_name_are_reported(tmp_path: Path):
    import warnings

    path = tmp_path / "dup.zip"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns of the duplicate name it writes
        _zip(path, [("conversations.json", b"[]"), ("conversations.json", json.dumps([CONV]).encode())])
    with pytest.raises(ConversionError, match=r"two or more members named 'conversations\.json'") as info:
        mv.convert(path, progress=False)
    assert info.value.reason == "bad-zip"

    other = tmp_path / "dup-other.zip"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _zip(other, [("conversations.json", json.dumps([CONV]).encode()), ("notes.txt", b"a"), ("notes.txt", b"b")])
    expansion = expand([other])
    assert (f"{other}!notes.txt", "a second member with this name") in expansion.ignored


def test_printable_escapes_what_a_terminal_would_obey():
    assert printable("conversations.json") == "conversations.json"
    assert printable("a\x1b[2Jb\rforged\u202e.json") == "a\\x1b[2Jb\\rforged\\u202e.json"
    assert printable("café 東京.json") == "café 東京.json"


def test_member_names_reach_messages_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    archive = _zip(tmp_path / "evil.zip", [("x\x1b[2J\rmemvelope: all good.json", b"[not json")])
    assert main(["convert", str(archive), "-o", str(tmp_path / "o.json")]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\r" not in err
    assert "x\\x1b[2J\\rmemvelope: all good.json" in err
