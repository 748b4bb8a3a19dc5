#!/usr/bin/env python3
"""Draw the README's chart images (docs/*.png) from the bundled samples, and a screenshot of the report.

Usage:
    python docs/make_screenshots.py

One PNG per chart of ``memvelope_tools.plot`` at 100 dpi, plus ``docs/report.png``: the HTML report of
both samples as headless Chromium shows it (skipped, with a message, when chromium is not installed).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from importlib.resources import files
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from PIL import Image

import memvelope_tools as mv

HERE = Path(__file__).resolve().parent
DPI = 100
NAMES = ("chatgpt", "claude")


def main() -> int:
    envelopes = [mv.convert(mv.sample_path(name)) for name in NAMES]
    msgs = mv.messages_frame(envelopes, sources=list(NAMES))
    convs = mv.conversations_frame(envelopes, sources=list(NAMES))
    samples = files("memvelope_tools.samples")
    fact_paths = [samples / f"facts-{name}.mv.json" for name in NAMES]
    facts_docs = {name: mv.read(path) for name, path in zip(NAMES, fact_paths, strict=True)}
    facts = mv.facts_frame(list(facts_docs.values()), sources=list(NAMES))

    charts = {
        "activity-timeline": ((8, 3.8), lambda ax: mv.plot.activity_timeline(msgs, ax=ax)),
        "activity-heatmap": ((8, 3.6), lambda ax: mv.plot.activity_heatmap(msgs, ax=ax, tz="Europe/Lisbon")),
        "conversation-lengths": ((7, 3.6), lambda ax: mv.plot.conversation_lengths(convs, ax=ax)),
        "fact-categories": ((7, 3.8), lambda ax: mv.plot.fact_categories(facts, ax=ax, hue="subject_type")),
        "facts-over-time": ((7, 3.8), lambda ax: mv.plot.facts_over_time(facts, ax=ax)),
        "archetype": ((8, 4.6), lambda ax: mv.plot.archetype_chart(facts_docs, ax=ax)),
    }
    for name, (size, draw) in charts.items():
        fig, ax = plt.subplots(figsize=size, layout="constrained")
        draw(ax)
        path = HERE / f"{name}.png"
        fig.savefig(path, dpi=DPI, metadata={"Software": None})
        plt.close(fig)
        print(f"wrote {path.relative_to(HERE.parent)} ({path.stat().st_size // 1024} KiB)")
    return report_screenshot([*envelopes, *fact_paths])


def report_screenshot(sources: list) -> int:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("chromium not found: docs/report.png not updated", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        page, shot = Path(tmp) / "report.html", Path(tmp) / "shot.png"
        labels = [f"{n}-export.zip" for n in NAMES] + [f"facts-{n}.mv.json" for n in NAMES]
        mv_report = __import__("memvelope_tools._report", fromlist=["write_report"])
        mv_report.write_report(sources, page, top=8, labels=labels)
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={Path(tmp) / 'profile'}",
                "--hide-scrollbars",
                f"--screenshot={shot}",
                "--window-size=1200,1500",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        image = Image.open(shot).convert("RGB")
        image = image.resize((900, round(image.height * 900 / image.width)), Image.LANCZOS)
        out = HERE / "report.png"
        image.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)
    print(f"wrote {out.relative_to(HERE.parent)} ({out.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
