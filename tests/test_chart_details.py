"""The smaller things a first look at the charts, the report and the commands finds: option ranges,
counts in the singular, no legend without facts, undated histories, date ticks, the reason for n/a."""

from __future__ import annotations

import copy
import io
import json
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from small_exports import CHATGPT_CONV

import memvelope_tools as mv
from memvelope_tools import plot
from memvelope_tools.cli import main

SAMPLES = Path(mv.__file__).parent / "samples"


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


# ---- the command line ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "x.json", "-o", "r.html", "--top", "-2"],
        ["report", "x.json", "-o", "r.html", "--top", "0"],
        ["topics", "x.json", "-n", "0"],
        ["topics", "x.json", "--terms", "-1"],
        ["search", "x.json", "q", "--limit", "0"],
    ],
)
def test_option_below_its_range_is_a_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "must be at least 1, got" in capsys.readouterr().err


def test_topics_of_one_conversation_says_one_topic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conv = copy.deepcopy(CHATGPT_CONV)
    conv["mapping"]["a"]["message"]["content"]["parts"] = ["garden tomato compost seedling"]
    part = tmp_path / "conversations.json"
    part.write_text(json.dumps([conv]), encoding="utf-8")
    assert main(["topics", str(part), "-n", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "1 topic in 1 conversation"


def test_parquet_says_one_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    part = tmp_path / "conversations.json"
    part.write_text(json.dumps([CHATGPT_CONV]), encoding="utf-8")
    assert main(["parquet", str(part), "-o", str(tmp_path / "pq")]) == 0
    err = capsys.readouterr().err
    assert f"memvelope: wrote {tmp_path / 'pq' / 'conversations.parquet'} (1 row)\n" in err
    assert f"memvelope: wrote {tmp_path / 'pq' / 'messages.parquet'} (2 rows)\n" in err


def test_load_of_a_wrong_type_names_the_type() -> None:
    with pytest.raises(mv.FormatError, match=r"^cannot read a value of type int: expected"):
        mv.load(3)


# ---- the report ----------------------------------------------------------------------------------


def test_report_with_no_facts_warns_nothing() -> None:
    from memvelope_tools._report import build_report

    ir = json.loads((SAMPLES / "facts-chatgpt.mv.json").read_text(encoding="utf-8"))
    ir["facts"] = []
    ir["meta"]["facts"] = 0
    ir["archetype"] = {**ir["archetype"], "facts": 0, "self_ratio": None, "distinct_entities": 0}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        html = build_report([ir], labels=["empty"])
    assert [str(w.message) for w in caught] == []
    assert "0 facts" in html


# ---- charts --------------------------------------------------------------------------------------


def _messages(*stamps: str | None) -> pd.DataFrame:
    ts = pd.to_datetime(pd.Series(stamps, dtype="object"), utc=True)
    return pd.DataFrame({"ts": ts, "role": "user", "conversation_id": [str(i) for i in range(len(stamps))]})


def _ticks(ax) -> tuple[list[pd.Timestamp], list[str]]:
    FigureCanvasAgg(ax.figure).draw()
    lo, hi = ax.get_xlim()
    shown = [t for t in ax.xaxis.get_major_ticks() if lo <= t.get_loc() <= hi]
    days = [pd.Timestamp(matplotlib.dates.num2date(t.get_loc())).tz_localize(None) for t in shown]
    return days, [t.label1.get_text() for t in shown]


def test_undated_history_says_how_many_messages_have_no_date() -> None:
    ax = plot.activity_timeline(_messages(*[None] * 10), ax=Figure().add_subplot())
    assert [t.get_text() for t in ax.texts] == ["no dated messages: 10 messages have no date"]
    assert list(ax.get_xticks()) == [] and list(ax.get_yticks()) == []
    heat = plot.activity_heatmap(_messages(None, None), ax=Figure().add_subplot())
    assert [t.get_text() for t in heat.texts] == ["no dated messages: 2 messages have no date"]


@pytest.mark.parametrize(
    ("stamps", "months"),
    [
        (("2024-09-15T01:00Z", "2024-09-15T20:00Z"), {9, 10}),  # a day
        (("2024-09-01T01:00Z", "2024-09-29T20:00Z"), {9, 10}),  # a month
        (("2024-09-10T01:00Z", "2024-10-20T20:00Z"), {9, 10, 11}),  # two months
    ],
)
def test_month_axis_ticks_month_starts_labelled_as_months(stamps: tuple[str, ...], months: set[int]) -> None:
    days, labels = _ticks(plot.activity_timeline(_messages(*stamps), ax=Figure().add_subplot()))
    assert all(d.day == 1 for d in days) and {d.month for d in days} == months
    assert labels[0] == days[0].strftime("%b %Y")  # the first tick says the year
    assert all(label[:3] in ("Sep", "Oct", "Nov") for label in labels)


def test_two_years_of_months_tick_quarter_starts() -> None:
    stamps = pd.date_range("2022-02-01", "2024-01-31", freq="9D").strftime("%Y-%m-%dT00:00Z")
    days, labels = _ticks(plot.activity_timeline(_messages(*stamps), ax=Figure().add_subplot()))
    assert {d.month for d in days} <= {1, 4, 7, 10} and all(d.day == 1 for d in days)
    assert "Jan 2023" in labels and "Apr" in labels


def test_quarterly_topic_shares_tick_january_april_july_october() -> None:
    convs = [
        {
            "id": f"c{i}",
            "title": "",
            "created_at": None,
            "updated_at": None,
            "messages": [
                {
                    "id": "m",
                    "role": "user",
                    "ts": f"{2021 + i // 12}-{1 + i % 12:02d}-03T00:00:00.000Z",
                    "text": "garden tomato compost" if i % 2 else "mortgage pension dividend",
                }
            ],
        }
        for i in range(30)
    ]
    env = {"memvelope": "envelope-v0", "meta": {"source_provider": "claude", "conversation_count": 30,
           "message_count": 30}, "conversations": convs}  # fmt: skip
    found = mv.topics(env, n_topics=2)
    days, _ = _ticks(plot.topics_over_time(found, ax=Figure().add_subplot(), freq="quarter"))
    assert days and {d.month for d in days} <= {1, 4, 7, 10}


def test_years_tick_years() -> None:
    stamps = pd.date_range("2012-02-01", "2024-01-31", freq="60D").strftime("%Y-%m-%dT00:00Z")
    days, labels = _ticks(plot.activity_timeline(_messages(*stamps), ax=Figure().add_subplot()))
    assert all((d.month, d.day) == (1, 1) for d in days) and labels == [str(d.year) for d in days]


def test_archetype_chart_says_why_a_figure_is_not_available() -> None:
    ir = json.loads((SAMPLES / "facts-chatgpt.mv.json").read_text(encoding="utf-8"))
    ax = plot.archetype_chart(ir, ax=Figure().add_subplot())
    said = ax.get_xlabel()
    assert "n/a: the document leaves style, belief_ratio, categories null" in said
    assert "its mode, structured (zero-LLM), does not work them out" in said
    none = copy.deepcopy(ir)
    none["archetype"]["facts"] = 0
    none["facts"] = []
    ax = plot.archetype_chart(none, ax=Figure().add_subplot())
    assert [t.get_text().startswith("No facts were found.") for t in ax.texts] == [True]  # no empty bars
    assert not ax.patches
    full = copy.deepcopy(ir)
    full["archetype"].update(belief_ratio=0.5, categories={"identity": 15})
    assert plot.archetype_chart(full, ax=Figure().add_subplot()).get_xlabel() == "share of facts"
    buf = io.BytesIO()
    ax.figure.savefig(buf, format="png")


# ---- an export is called an export ---------------------------------------------------------------


def test_report_calls_an_export_an_export(tmp_path: Path) -> None:
    from memvelope_tools._report import build_report

    zipped = SAMPLES / "chatgpt-export.zip"
    envelope = tmp_path / "history.mve.json"
    mv.write_envelope(mv.convert(zipped), envelope)
    html = build_report([zipped, envelope], labels=["zip", "file"])
    table = html[html.index("<h2>Documents</h2>") : html.index("</table>")]
    rows = table.split("<tr>")[2:]
    assert "<td>zip</td><td>export (converted)</td>" in rows[0]
    assert "<td>file</td><td>envelope</td>" in rows[1]


def test_report_command_calls_an_export_an_export(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(SAMPLES / "chatgpt-export.zip"), "-o", str(out), "-q"]) == 0
    assert "<td>chatgpt-export.zip</td><td>export (converted)</td>" in out.read_text(encoding="utf-8")


# ---- a folder of export folders ------------------------------------------------------------------


def test_folder_without_parts_names_what_its_subfolders_hold(tmp_path: Path) -> None:
    for name, files in (("alice", ["conversations.json"]), ("bob", ["conversations.json", "users.json"])):
        (tmp_path / name).mkdir()
        for file in files:
            (tmp_path / name / file).write_text("[]", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(tmp_path)
    assert info.value.reason == "no-parts"
    assert info.value.msg == (
        "a folder without conversations.json: it holds no file; expected an export as downloaded "
        "(a ChatGPT or Claude export holds conversations.json); "
        "2 subfolders hold some: alice/ (1 .json file), bob/ (2 .json files): "
        "give one subfolder per export, or all to convert-many"
    )


def test_folder_without_parts_or_subfolders_says_just_that(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(mv.ConversionError) as info:
        mv.convert(tmp_path)
    assert info.value.msg == (
        "a folder without conversations.json: it holds notes.txt; expected an export as downloaded "
        "(a ChatGPT or Claude export holds conversations.json)"
    )
