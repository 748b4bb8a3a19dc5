"""Chart labels in every script draw as text: each script's letters have a glyph in the fonts chosen
(no "Glyph ... missing" warning), right-to-left labels read right to left, and where no font has a
script, one warning names the font package to install."""

from __future__ import annotations

import io
import shutil
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib import font_manager
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ft2font import FT2Font

import memvelope_tools as mv
from memvelope_tools import _charts, plot

SCRIPTS = {
    "Chinese": "数据 分析",
    "Japanese": "データ ひらがな 漢字",
    "Korean": "한국어 데이터",
    "Arabic": "البيانات تحليل",
    "Hebrew": "שלום נתונים",
    "Devanagari": "हिन्दी किताब",
    "Cyrillic": "данные анализ",
}


def _noto_installed() -> bool:
    return shutil.which("fc-match") is not None and _charts.fallback_fonts_installed()


needs_noto = pytest.mark.skipif(
    not _noto_installed(),
    reason="Debian's Noto fonts are not installed (apt-get install fonts-noto-core fonts-noto-cjk)",
)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _draw(labels: list[str]) -> list[warnings.WarningMessage]:
    fig = Figure(figsize=(4, 3))
    ax = fig.add_subplot()
    ax.barh(range(len(labels)), np.arange(1, len(labels) + 1))
    ax.set_yticks(range(len(labels)), labels, fontfamily=plot.text_fonts(labels))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png")
    return list(caught)


@needs_noto
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_each_script_has_its_glyphs_and_draws_without_warnings(script: str) -> None:
    text = SCRIPTS[script]
    families = plot.text_fonts([text])
    paths = [font_manager.findfont(font_manager.FontProperties(family=[f])) for f in families[:1]]
    paths += [_charts._font_file(f) for f in families[1:]]
    covered: set[int] = set()
    for path in paths:
        assert path is not None
        covered |= set(FT2Font(path).get_charmap())
    letters = {ord(c) for c in text if not c.isspace()}
    assert letters <= covered, f"{script}: no glyph for {[chr(c) for c in letters - covered]}"
    caught = _draw([text, "plain words"])
    assert [str(w.message) for w in caught if "missing from font" in str(w.message)] == []


@needs_noto
def test_topic_terms_of_a_mixed_script_history_warns_nothing() -> None:
    convs = [
        {
            "id": f"c{i}",
            "title": "",
            "created_at": None,
            "updated_at": None,
            "messages": [{"id": "m1", "role": "user", "ts": None, "text": f"{text} {text}"}],
        }
        for i, text in enumerate(SCRIPTS.values())
    ]
    env = {
        "memvelope": "envelope-v0",
        "meta": {"source_provider": "claude", "conversation_count": len(convs), "message_count": len(convs)},
        "conversations": convs,
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = mv.topics(env, n_topics=len(SCRIPTS))
        axes = plot.topic_terms(found, fig=Figure(figsize=(12, 6)), n_terms=4)
        axes[0].figure.savefig(io.BytesIO(), format="png")
    assert [str(w.message) for w in caught if "font" in str(w.message).lower()] == []
    shown = {t.get_text() for ax in axes for t in ax.get_yticklabels()}
    assert "данные" in shown and "한국어" in shown


@needs_noto
def test_right_to_left_label_reads_right_to_left() -> None:
    # Lamed (ל) rises above the other letters and qof (ק) goes below the line: written "לק", right to
    # left puts the lamed on the right and the qof on the left.
    fig = Figure(figsize=(3, 2), dpi=100)
    fig.text(0.5, 0.5, "לק", fontsize=60, ha="center", va="center", fontfamily=plot.text_fonts(["לק"]))
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    ink = np.asarray(canvas.buffer_rgba())[:, :, 0] < 128
    rows, cols = np.nonzero(ink)
    top, bottom, middle = rows.min(), rows.max(), (cols.min() + cols.max()) / 2
    height = bottom - top
    ascender = cols[rows < top + height * 0.15]
    descender = cols[rows > bottom - height * 0.15]
    assert ascender.mean() > middle > descender.mean()


def test_one_warning_naming_the_package_when_no_font_has_a_script(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_charts, "FALLBACK_FONTS", ())
    monkeypatch.setattr(_charts, "_warned_packages", set())
    with pytest.warns(UserWarning) as caught:
        families = plot.text_fonts(["数据", "한국어"])
        plot.text_fonts(["漢字"])
    assert len(caught) == 1
    assert "fonts-noto-cjk" in str(caught[0].message) and "fonts-noto-core" not in str(caught[0].message)
    assert families == list(matplotlib.rcParams["font.family"])


def test_latin_text_needs_no_fallback() -> None:
    assert plot.text_fonts(["plain words", "café"]) == list(matplotlib.rcParams["font.family"])


def test_report_command_says_a_missing_font_once_as_a_note(
    monkeypatch: pytest.MonkeyPatch, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memvelope_tools.cli import main

    monkeypatch.setattr(_charts, "FALLBACK_FONTS", ())
    monkeypatch.setattr(_charts, "_warned_packages", set())
    convs = [
        {
            "id": f"c{i}",
            "title": "",
            "created_at": None,
            "updated_at": None,
            "messages": [{"id": "m1", "role": "user", "ts": "2024-01-02T00:00:00.000Z", "text": text}],
        }
        for i, text in enumerate(["数据 分析 数据", "模型 训练 模型", "漢字 東京 漢字"])
    ]
    env = {
        "memvelope": "envelope-v0",
        "meta": {"source_provider": "claude", "conversation_count": 3, "message_count": 3},
        "conversations": convs,
    }
    path = tmp_path / "cjk.mve.json"
    mv.write_envelope(env, path)
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "font" in line]
    assert len(notes) == 1 and notes[0].startswith("memvelope: note: no installed font has some letters")
    assert "fonts-noto-cjk" in notes[0]


def test_without_a_font_for_a_script_only_the_one_warning_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    # As on a machine without the Noto fonts: no fallback font is found.
    monkeypatch.setattr(_charts, "FALLBACK_FONTS", ())
    monkeypatch.setattr(_charts, "_warned_packages", set())
    labels = ["数据 分析", "漢字", "plain words"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = Figure(figsize=(4, 3))
        ax = fig.add_subplot()
        ax.barh(range(3), [1, 2, 3])
        ax.set_yticks(range(3), labels, fontfamily=plot.text_fonts(labels))
        fig.savefig(io.BytesIO(), format="png")  # matplotlib warns here for each letter its fonts lack
    said = [str(w.message) for w in caught]
    assert len(said) == 1 and said[0].startswith(_charts.NO_FONT), said
    assert "fonts-noto-cjk" in said[0]
