"""A file truncated, replaced or rewritten while it is read gives its content as it was or a clean error.

The readers copy a file into their own memory and check afterwards that it did not change, so the
parsers (the C helpers among them) never see bytes another process can still write.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import memvelope_tools as mv
from memvelope_tools import _stable
from memvelope_tools._convert.assemble import rules
from memvelope_tools._convert.sources import Part
from memvelope_tools._frames import text
from memvelope_tools._json.elements import JS, PartElements, Reader
from memvelope_tools.errors import ConversionError, FormatError

ROOT = Path(__file__).resolve().parent.parent
OLD_TIME = 1_600_000_000  # a modification time long past, so a rewrite now always changes it


def _export(n: int) -> list[dict[str, object]]:
    """A Claude export of ``n`` one-message conversations."""
    return [
        {
            "uuid": f"c{i}",
            "name": f"chat {i}",
            "chat_messages": [{"sender": "human", "text": f"hello number {i} é", "created_at": 1_700_000_000 + i}],
        }
        for i in range(n)
    ]


def _write_envelope(path: Path, n: int) -> None:
    source = path.with_suffix(".export.json")
    source.write_text(json.dumps(_export(n)), encoding="utf-8")
    path.write_bytes(mv.dumps_canonical(mv.convert(source, progress=False)))


def _open_with(path: Path, truncate_after_first_read: bool):
    """A reader over ``path`` whose first chunk read triggers a change of the file."""

    def change(_n: int) -> None:
        if change.done:  # type: ignore[attr-defined]
            return
        change.done = True  # type: ignore[attr-defined]
        if truncate_after_first_read:
            with open(path, "r+b") as fh:
                fh.truncate(10)
        else:  # the same size, other bytes
            size = path.stat().st_size
            path.write_bytes(b" " * size)

    change.done = False  # type: ignore[attr-defined]
    return change


@pytest.mark.parametrize("truncate", [True, False], ids=["truncated", "rewritten at the same size"])
def test_a_file_changed_while_copied_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, truncate: bool):
    path = tmp_path / "doc.json"
    path.write_bytes(b"[" + b"1," * 50_000 + b"1]")
    os.utime(path, (OLD_TIME, OLD_TIME))
    monkeypatch.setattr(_stable, "_CHUNK", 4096)
    with open(path, "rb") as fh, pytest.raises(_stable.Changed):
        _stable.read_whole(fh, _open_with(path, truncate))


def test_an_unchanged_file_is_copied_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "doc.json"
    data = bytes(range(256)) * 400
    path.write_bytes(data)
    monkeypatch.setattr(_stable, "_CHUNK", 4096)
    with open(path, "rb") as fh:
        buf = _stable.read_whole(fh)
    assert buf is not None and bytes(buf) == data


def test_read_names_the_change_as_a_format_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "doc.mve.json"
    path.write_bytes((ROOT / "fixtures" / "sample.mve.json").read_bytes())
    os.utime(path, (OLD_TIME, OLD_TIME))
    real = _stable.read_whole

    def read_then_change(fh, on_bytes=None):
        return real(fh, _open_with(path, True))

    monkeypatch.setattr(_stable, "_CHUNK", 64)
    monkeypatch.setattr("memvelope_tools._json.elements.read_whole", read_then_change)
    with pytest.raises(FormatError) as info:
        mv.read(path)
    assert info.value.reason == "changed"
    assert "changed while it was read" in str(info.value)


@pytest.mark.parametrize("truncate", [True, False], ids=["truncated", "rewritten at the same size"])
def test_an_export_part_changed_while_scanned_is_refused(tmp_path: Path, truncate: bool):
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(_export(40)), encoding="utf-8")
    os.utime(path, (OLD_TIME, OLD_TIME))
    part = Part("conversations.json", functools.partial(open, path, "rb"), path.stat().st_size, os.fspath(path))
    elements = PartElements(part, Reader(JS), chunk=256, on_bytes=_open_with(path, truncate))
    with pytest.raises(ConversionError) as info:
        for _ in elements.ranges():
            pass
    assert info.value.reason == "changed"
    assert info.value.source == "conversations.json"


@pytest.mark.parametrize("how", ["truncated", "rewritten at the same size", "replaced by another envelope"])
@pytest.mark.parametrize("when", ["while it is read", "once it was read"])
def test_the_frames_parse_the_bytes_as_they_were_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, when: str
):
    """The frames read a file a window at a time into their own memory: a change while it is read is
    refused, and whatever happens to the file once it was read, the frame is that of the content read."""
    assert text._textscan is not None or os.environ.get("MEMVELOPE_REQUIRE_NATIVE") != "1"
    path, other = tmp_path / "a.mve.json", tmp_path / "b.mve.json"
    _write_envelope(path, 30)
    _write_envelope(other, 7)
    os.utime(path, (OLD_TIME, OLD_TIME))
    expected = mv.messages_frame(path)
    assert len(expected) == 30
    monkeypatch.setattr(_stable, "WINDOW", 512)  # several windows
    assert path.stat().st_size > 4 * 512

    def change() -> None:
        size = path.stat().st_size
        if how == "truncated":
            with open(path, "r+b") as fh:
                fh.truncate(size // 3)
        elif how == "rewritten at the same size":
            path.write_bytes(b"\x00" * size)
        else:
            path.write_bytes(other.read_bytes())

    if when == "while it is read":
        real_advance = _stable.Windows.advance

        def advance_then_change(self: _stable.Windows, keep: int) -> memoryview:
            view = real_advance(self, keep)
            if self.start == 0:  # the first window was read
                change()
            return view

        monkeypatch.setattr(_stable.Windows, "advance", advance_then_change)
        with pytest.raises(FormatError) as info:
            mv.messages_frame(path)
        assert info.value.reason == "changed"
        assert info.value.source == os.fspath(path)
    else:
        real_finish = _stable.Windows.finish

        def finish_then_change(self: _stable.Windows) -> None:
            real_finish(self)
            change()

        monkeypatch.setattr(_stable.Windows, "finish", finish_then_change)
        got = mv.messages_frame(path)
        assert got.drop(columns="source").equals(expected.drop(columns="source"))


_RACE = textwrap.dedent(
    """
    import json, os, sys, time
    import memvelope_tools as mv
    from memvelope_tools._convert.pipeline import convert_stream
    from memvelope_tools.errors import MemvelopeError

    kind, path, seconds, *sizes = sys.argv[1:]
    sizes = {int(s) for s in sizes}
    deadline = time.monotonic() + float(seconds)
    good = refused = 0
    while time.monotonic() < deadline:
        try:
            if kind == "frames":
                n = len(mv.messages_frame(path))
            else:
                convert_stream(path, path + ".out", progress=False, workers=2)
                with open(path + ".out", "rb") as fh:
                    n = len(json.load(fh)["conversations"])
        except MemvelopeError:
            refused += 1
            continue
        assert n in sizes, (n, sizes)
        good += 1
    print(good, refused)
    """
)

_WRITER = textwrap.dedent(
    """
    import os, sys, time
    path, *sources = sys.argv[1:]
    blobs = [open(s, "rb").read() for s in sources]
    k = 0
    while True:
        k += 1
        blob = blobs[k % len(blobs)]
        if k % 3 == 0:  # rewritten in place at the same size, a byte at a time changed
            with open(path, "r+b") as fh:
                fh.write(blobs[0] if k % 2 else bytes(len(blobs[0])))
        else:  # truncated and written again, as cp or json.dump(open(path, "w")) do
            with open(path, "wb") as fh:
                fh.write(blob[: len(blob) // 2])
                fh.flush()
                fh.write(blob[len(blob) // 2 :])
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["frames", "convert"])
def test_a_writer_racing_the_reader_never_kills_it(tmp_path: Path, kind: str):
    """A writer process rewrites the file in a loop while a reader process reads it over and over: every
    read gives one of the contents written or a MemvelopeError, and the reader exits normally."""
    sources, counts = [], []
    for n in (400, 150):
        source = tmp_path / f"source-{n}.json"
        if kind == "frames":
            _write_envelope(source, n)
        else:
            source.write_text(json.dumps(_export(n)), encoding="utf-8")
        sources.append(os.fspath(source))
        counts.append(str(n))
    target = tmp_path / "target.json"
    target.write_bytes(Path(sources[0]).read_bytes())
    env = {**os.environ, "PYTHONPATH": os.fspath(ROOT)}
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, os.fspath(target), *sources], env=env)
    try:
        reader = subprocess.run(
            [sys.executable, "-c", _RACE, kind, os.fspath(target), "6", *counts],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        writer.kill()
        writer.wait()
    assert reader.returncode == 0, reader.stderr[-2000:]
    good, refused = map(int, reader.stdout.split())
    assert good + refused > 10


def test_a_worker_refuses_a_range_of_a_file_changed_since_the_scan(tmp_path: Path):
    """A worker process reads its batch from the file into its own memory; when the file no longer has
    the stamp the converting process read, the batch is refused rather than parsed from other bytes."""
    from memvelope_tools._convert import parallel

    path = tmp_path / "conversations.json"
    body = json.dumps(_export(3)).encode()
    path.write_bytes(body)
    os.utime(path, (OLD_TIME, OLD_TIME))
    with open(path, "rb") as fh:
        before = _stable.stamp(fh.fileno())
    assert before is not None
    start, end = 1, len(body) - 1
    found = [-1, -1, 0, end - start, 0, 1]  # one element spanning the range: enough to read it
    found[3] = body.index(b"}]}", start) + 3 - start
    piece = parallel.work((os.fspath(path), start, end, before), found, *rules("claude"), True)
    assert piece.conversations == 1
    path.write_bytes(body.replace(b"hello", b"HELLO"))  # the same size, other bytes
    with pytest.raises(_stable.Changed):
        parallel.work((os.fspath(path), start, end, before), found, *rules("claude"), True)


def test_a_lent_window_keeps_its_bytes_until_given_back():
    """Windows reuse their buffers, but never one lent out: the C reader may still be reading it."""
    data = bytes(range(256)) * 64
    pieces = [data[i : i + 1000] for i in range(0, len(data), 1000)]
    windows = _stable.Windows.of_pieces(pieces, len(data), window=1024)
    window = windows.advance(0)
    lent, kept = windows.lend(), bytes(window)
    seen = [kept]
    buffers = set()
    while not windows.eof:
        window = windows.advance(len(window))  # nothing carried: each window holds new bytes
        seen.append(bytes(window))
        buffers.add(id(window.obj))
        assert bytes(lent) == kept
    assert b"".join(seen) == data
    assert id(lent.obj) not in buffers and len(buffers) == 2  # the other two took turns
    windows.give_back(lent)
    window = windows.advance(len(window))
    assert not window and windows.eof


def test_a_window_carries_an_unfinished_element_and_grows_for_a_large_one():
    data = b"a" * 5000 + b"b" * 100
    windows = _stable.Windows.of_pieces([data], window=1024)  # size unknown until the end
    window = windows.advance(0)
    assert bytes(window) == data[:1024]
    window = windows.advance(0)  # keep all of it: room for twice as much
    assert bytes(window) == data[:2048] and windows.start == 0
    window = windows.advance(2000)
    assert windows.start == 2000 and bytes(window) == data[2000 : 2000 + 1024]
    while not windows.eof:
        window = windows.advance(0)
    assert bytes(window) == data[2000:]


def _read_ahead_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "memvelope-read-ahead" and t.is_alive()]


def _preadv_off_main(monkeypatch: pytest.MonkeyPatch, before_read: Callable[[], None]) -> list[str]:
    """Make ``os.preadv`` call ``before_read`` first when it runs on a thread other than the main one;
    returns the names of the threads it ran on, with ``"ended"`` after each such read on another thread."""
    real = os.preadv
    seen: list[str] = []

    def preadv(fd: int, buffers: list[memoryview], offset: int) -> int:
        seen.append(threading.current_thread().name)
        if threading.current_thread() is threading.main_thread():
            return real(fd, buffers, offset)
        before_read()
        try:
            return real(fd, buffers, offset)
        finally:
            seen.append("ended")

    monkeypatch.setattr(os, "preadv", preadv)
    return seen


def _held_read_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, threading.Event, threading.Event, list[str]]:
    """An envelope read in small windows whose copies ahead wait, once begun, until ``go_on`` is set:
    the file, the events ``copying`` and ``go_on``, and the threads :func:`_preadv_off_main` saw."""
    path = tmp_path / "a.mve.json"
    _write_envelope(path, 30)
    monkeypatch.setattr(_stable, "WINDOW", 512)
    copying, go_on = threading.Event(), threading.Event()

    def hold() -> None:
        copying.set()
        go_on.wait(10)

    return path, copying, go_on, _preadv_off_main(monkeypatch, hold)


@pytest.mark.parametrize("how", ["truncated", "rewritten at the same size"])
def test_a_change_while_the_next_window_is_read_ahead_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
):
    """The frames copy a file's next window on another thread while they read the current one: a change
    that this copy sees (a short read, other bytes) is refused as any other change is."""
    path = tmp_path / "a.mve.json"
    _write_envelope(path, 30)
    os.utime(path, (OLD_TIME, OLD_TIME))
    monkeypatch.setattr(_stable, "WINDOW", 512)
    size = path.stat().st_size

    def change() -> None:
        if how == "truncated":
            with open(path, "r+b") as fh:
                fh.truncate(size // 2)
        else:
            path.write_bytes(b"\x00" * size)

    seen = _preadv_off_main(monkeypatch, functools.cache(change))
    with pytest.raises(FormatError) as info:
        mv.messages_frame(path)
    assert info.value.reason == "changed"
    assert "memvelope-read-ahead" in seen
    assert not _read_ahead_threads()


def test_a_stop_while_a_window_is_read_ahead_leaves_no_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Ctrl-C (KeyboardInterrupt) while the next window is being copied stops the frames at once, as
    KeyboardInterrupt, once that copy ended: no reading thread outlives the call (nor the open file)."""
    path, copying, go_on, seen = _held_read_ahead(tmp_path, monkeypatch)
    real_advance = _stable.Windows.advance
    calls = []

    def advance_then_stop(self: _stable.Windows, keep: int) -> memoryview:
        calls.append(keep)
        if len(calls) > 1:  # the first window is in use, its successor being copied
            assert copying.wait(10)
            assert _read_ahead_threads()
            threading.Timer(0.2, go_on.set).start()
            raise KeyboardInterrupt
        return real_advance(self, keep)

    monkeypatch.setattr(_stable.Windows, "advance", advance_then_stop)
    with pytest.raises(KeyboardInterrupt):
        mv.messages_frame(path)
    assert go_on.is_set()  # the call waited for the copy to end
    assert not _read_ahead_threads()
    assert "memvelope-read-ahead" in seen


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="sends SIGINT to the main thread")
def test_ctrl_c_while_waiting_for_the_window_read_ahead_leaves_no_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Ctrl-C (SIGINT) that arrives while the frames wait for the next window to be copied stops them as
    KeyboardInterrupt, once that copy ended: no reading thread outlives the call."""
    path, copying, go_on, seen = _held_read_ahead(tmp_path, monkeypatch)

    def press_ctrl_c() -> None:
        assert copying.wait(10)
        time.sleep(0.2)  # the main thread now waits for the copy
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        time.sleep(0.3)
        go_on.set()

    presser = threading.Thread(target=press_ctrl_c)
    presser.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            mv.messages_frame(path)
        assert go_on.is_set()  # the call waited for the copy to end
        assert seen.count("ended") == seen.count("memvelope-read-ahead") > 0
        assert not _read_ahead_threads()
    finally:
        go_on.set()
        presser.join()


def test_windows_read_ahead_give_the_bytes_in_order_whatever_is_carried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Read ahead or not, each window is the bytes carried from the one before, then the next ones; a
    carried element longer than the room kept for it grows the window as without reading ahead."""
    path = tmp_path / "data.bin"
    data = os.urandom(200_000)
    path.write_bytes(data)
    seen = _preadv_off_main(monkeypatch, lambda: None)
    with open(path, "rb") as fh:
        windows = _stable.file_windows(fh, window=4096)
        assert windows is not None
        with windows.reading_ahead():
            window = windows.advance(0)
            assert bytes(window) == data[:4096]
            window = windows.advance(100)  # a small element carried
            assert windows.start == 100 and bytes(window) == data[100 : 4096 + 4096]
            for _ in range(4):  # one element that goes on and on: each window at least doubles
                before = len(window)
                window = windows.advance(0)
                assert windows.start == 100 and bytes(window) == data[100 : 100 + len(window)]
                assert len(window) >= 2 * before
            while not windows.eof:
                start, end = windows.start + len(window) // 2, windows.start + len(window)
                window = windows.advance(len(window) // 2)
                assert windows.start == start and bytes(window[: end - start]) == data[start:end]
            assert bytes(window) == data[windows.start :]
        windows.finish()
    assert not _read_ahead_threads()
    assert seen.count("memvelope-read-ahead") >= 3
