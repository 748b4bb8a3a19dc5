"""The HTML report: self-contained, every piece of chat text escaped, and it renders in a real browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.image as mpimg
import matplotlib.pyplot as plt
import numpy as np
import pytest

import memvelope_tools as mv
from memvelope_tools._ir import build_ir
from memvelope_tools._report import CSP, build_report, write_report
from memvelope_tools.cli import main

EVIL_TITLE = "<script>document.title='PWNED-title'</script>Plans & \"quotes\""
EVIL_TEXT = "<img src=x onerror=\"document.title='PWNED-img'\"><script>document.title='PWNED-msg'</script>"
HEADINGS = ["Memvelope report", "Documents", "Activity", "Top 3 conversations by length", "Facts", "Archetypes"]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _msgs(n: int, day: int) -> list[dict]:
    return [
        {
            "id": f"m{i + 1}",
            "role": "user" if i % 2 == 0 else "assistant",
            "ts": f"2024-03-{day:02d}T{8 + i:02d}:15:00.000Z",
            "text": f"message {i + 1}",
        }
        for i in range(n)
    ]


def make_envelope() -> dict:
    convs = [
        {
            "id": "short",
            "title": "Short one",
            "created_at": "2024-03-01T08:15:00.000Z",
            "updated_at": None,
            "messages": _msgs(2, 1),
        },
        {
            "id": "evil",
            "title": EVIL_TITLE,
            "created_at": "2024-03-02T08:15:00.000Z",
            "updated_at": None,
            "messages": [
                {"id": "m1", "role": "user", "ts": "2024-03-02T08:15:00.000Z", "text": EVIL_TEXT},
                *_msgs(5, 2)[1:],
            ],
        },
        {
            "id": "long",
            "title": "",
            "created_at": "2024-04-03T08:15:00.000Z",
            "updated_at": None,
            "messages": _msgs(9, 3),
        },
        {
            "id": "mid",
            "title": "Middle",
            "created_at": "2024-05-04T08:15:00.000Z",
            "updated_at": None,
            "messages": _msgs(3, 4),
        },
    ]
    for c in convs:
        for i, m in enumerate(c["messages"]):
            m["id"] = f"m{i + 1}"
    return {
        "memvelope": "envelope-v0",
        "meta": {
            "source_provider": "chatgpt",
            "conversation_count": len(convs),
            "message_count": sum(len(c["messages"]) for c in convs),
        },
        "conversations": convs,
    }


def make_ir() -> dict:
    facts = [
        {
            "subject": "self",
            "subject_type": "self",
            "category": cat,
            "content": "<script>x</script>",
            "effective_date": date,
            "in_text_date": None,
            "provenance": "imported:chatgpt-export:2024-03",
            "convo_id": "evil",
        }
        for cat, date in (("identity", "2023"), ("career", "2024-03"), ("preferences", "2024-03-02"))
    ]
    return build_ir("chatgpt", "structured (zero-LLM)", facts)


@pytest.fixture
def docs(tmp_path: Path) -> list[Path]:
    env, ir = tmp_path / "history.mve.json", tmp_path / "facts.mv.json"
    env.write_text(json.dumps(make_envelope()), encoding="utf-8")
    ir.write_text(json.dumps(make_ir()), encoding="utf-8")
    return [env, ir]


def test_chat_text_is_escaped_and_the_page_has_no_script(docs):
    page = build_report(docs, top=3)
    assert "<script" not in page.lower()
    assert "<img src=x" not in page  # only as escaped text
    assert "&lt;script&gt;document.title=&#x27;PWNED-title&#x27;&lt;/script&gt;Plans &amp; &quot;quotes&quot;" in page
    assert "&lt;img src=x onerror=&quot;document.title=&#x27;PWNED-img&#x27;&quot;&gt;" in page
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in page
    assert "script-src 'none'" in CSP and "default-src 'none'" in CSP


def test_labels_are_escaped_too(docs):
    page = build_report(docs, labels=["<b>mine</b>", "facts"])
    assert "<b>mine</b>" not in page and "&lt;b&gt;mine&lt;/b&gt;" in page


def test_page_is_self_contained(docs):
    page = build_report(docs)
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?!data:)[a-z]+:""", page, re.I)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    images = re.findall(r'<img alt="[^"]*" src="data:image/png;base64,[A-Za-z0-9+/=]+">', page)
    assert len(images) == 8  # three activity charts, two topic charts (topics over time, top terms), three fact charts


def test_top_conversations_longest_first(docs):
    page = build_report(docs, top=3, tz="Europe/Berlin")
    table = page.split("conversations by length</h2>")[1].split("</table>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table)[1:]
    titles = [re.findall(r"<td>(.*?)</td>", r)[0] for r in rows]
    assert titles == ["(untitled)", titles[1], "Middle"] and len(rows) == 3
    assert titles[1].startswith("&lt;script&gt;")
    assert [re.findall(r'<td class="n">(.*?)</td>', r)[1] for r in rows] == ["9", "5", "3"]
    assert "Dates and hours in Europe/Berlin." in page


def test_envelope_only_report_has_no_fact_section(docs):
    page = build_report(docs[:1])
    assert "<h2>Activity</h2>" in page and "<h2>Facts</h2>" not in page
    page = build_report(docs[1:])
    assert "<h2>Activity</h2>" not in page and "<h2>Facts</h2>" in page


def test_write_is_atomic_and_bad_input_leaves_the_old_file(docs, tmp_path):
    out = tmp_path / "report.html"
    write_report(docs, out)
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    out.write_text("old", encoding="utf-8")
    with pytest.raises(mv.MemvelopeError, match="unknown time zone") as info:
        write_report(docs, out, tz="Mars/Olympus")
    assert info.value.reason == "bad-tz"
    assert out.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["facts.mv.json", "history.mve.json", "report.html"]


def test_cli_writes_the_report(docs, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", *map(str, docs), "-o", str(out), "--top", "2", "--title", "My <history>"]) == 0
    page = out.read_text(encoding="utf-8")
    assert "<h1>My &lt;history&gt;</h1>" in page and "Top 2 conversations by length" in page
    assert "history.mve.json" in page
    assert capsys.readouterr().err.startswith(f"memvelope: wrote {out}")


def test_cli_converts_an_export_folder(tmp_path, capsys):
    export = tmp_path / "export"
    export.mkdir()
    (export / "conversations.json").write_text(
        json.dumps(
            [
                {
                    "uuid": "u1",
                    "name": "From Claude",
                    "created_at": "2024-02-01T10:00:00Z",
                    "updated_at": None,
                    "chat_messages": [
                        {"sender": "human", "text": "hello", "created_at": "2024-02-01T10:00:00Z"},
                        {"sender": "assistant", "text": "hi", "created_at": "2024-02-01T10:00:05Z"},
                    ],
                }
            ]
        ),
        encoding="utf-8",
    )
    out = tmp_path / "r.html"
    assert main(["report", str(export), "-o", str(out), "-q"]) == 0
    assert "From Claude" in out.read_text(encoding="utf-8")
    assert capsys.readouterr().err == ""


def test_cli_bad_input_is_one_line(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}', encoding="utf-8")
    out = tmp_path / "r.html"
    assert main(["report", str(bad), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("memvelope: error: ") and err.count("\n") == 1
    assert not out.exists()


# ---- a real browser ------------------------------------------------------------------------------


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


CHROMIUM = _chromium()


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (Debian: apt-get install chromium); the browser rendering test cannot run",
)
def test_report_renders_in_headless_chromium(docs, tmp_path):
    page = tmp_path / "report.html"
    write_report(docs, page, top=3)
    shot = tmp_path / "shot.png"
    flags = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1200,2000",
    ]
    url = page.resolve().as_uri()
    subprocess.run([*flags, f"--screenshot={shot}", url], capture_output=True, timeout=120, check=True)
    dom = subprocess.run([*flags, "--dump-dom", url], capture_output=True, timeout=120, check=True, text=True).stdout

    # The injected scripts did not run: the title is ours, and the DOM holds no script or img handler.
    assert re.search(r"<title>(.*?)</title>", dom).group(1) == "Memvelope report"
    assert "PWNED" not in re.sub(r"&lt;.*?&gt;|&#x27;|'", "", dom.split("<body")[0])
    assert not re.search(r"<script", dom, re.I)
    assert len(re.findall(r"<img[^>]*onerror", dom, re.I)) == 0
    assert "&lt;script&gt;document.title='PWNED-msg'&lt;/script&gt;" in dom  # shown as text instead
    for heading in HEADINGS:
        assert re.search(rf"<h[12]>{re.escape(heading)}</h[12]>", dom), heading

    # The screenshot is a page with charts on it, not a blank or an error page.
    pixels = mpimg.imread(shot)[..., :3]
    assert pixels.shape[:2] == (2000, 1200)
    assert pixels.std() > 0.05
    saturation = pixels.max(axis=2) - pixels.min(axis=2)
    assert np.mean(saturation > 0.3) > 0.01  # coloured bars and heatmap cells: the images were drawn
