"""How the commands word their counts: "1 conversation" not "1 conversations", "1,234" not "1234",
and where they print what they wrote."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memvelope_tools.cli import COMMAND_MODULES, main
from memvelope_tools.samples import sample_path

# A count of one with a plural noun, and a "(s)" left for the reader to resolve.
ONE_PLURAL = re.compile(
    r"\b1 (?:conversations|messages|facts|duplicates|items|files|parts|rows|topics|times|values|exports|snapshots"
    r"|chunks|requests|problems|sequences|remembered items|invalid facts|unsourced dates)\b"
)
MAYBE_PLURAL = re.compile(r"\w\(s\)")
# Four or more digits on their own, not part of a date, a time, an id, a path or a version. A year alone
# (as in "effective dates: 2021 .. 2026-05-04") is left out; the large export's counts are not years.
BARE_NUMBER = re.compile(r"(?<![\w.,:/+#-])(\d{4,})(?![\w.,:/-]|,\d)")


def _not_a_year(number: str) -> bool:
    return not (len(number) == 4 and 1900 <= int(number) <= 2100)


def _claude_export(folder: Path, texts: list[str]) -> Path:
    """A Claude export folder of one conversation per text: the user's message and a short reply."""
    folder.mkdir()
    convs: list[dict[str, Any]] = []
    for i, text in enumerate(texts):
        stamp = f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00Z"
        messages = [{"uuid": f"u-{i}", "sender": "human", "text": text, "created_at": stamp}]
        if len(texts) > 1:
            messages.append({"uuid": f"a-{i}", "sender": "assistant", "text": "Noted: " + text, "created_at": stamp})
        convs.append(
            {
                "uuid": f"k-{i}",
                "name": f"About {_WORDS[i % 10]}" if len(texts) > 1 else "Me",
                "created_at": stamp,
                "updated_at": stamp,
                "chat_messages": messages,
            }
        )
    (folder / "conversations.json").write_text(json.dumps(convs), encoding="utf-8")
    return folder


_WORDS = ["porto", "running", "python", "garden", "kyoto", "bread", "violin", "tax", "bicycle", "knee"]


def _export(kind: str, tmp_path: Path) -> tuple[Path, str]:
    """The export a wording run reads, and a word to search it for."""
    if kind == "one":  # one conversation of one message, from which one fact is distilled
        return _claude_export(tmp_path / "one", ["My name is Inês."]), "name"
    if kind == "many":  # 1,234 conversations, 2,468 messages
        texts = [f"Tell me about {_WORDS[i % 10]} and {_WORDS[(i * 3 + 1) % 10]} please." for i in range(1234)]
        return _claude_export(tmp_path / "many", texts), "python"
    return sample_path(kind), "python"


def _outputs(export: Path, word: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """What each command prints (stdout and stderr) for ``export``, by command line."""
    env, out = str(tmp_path / "x.mve.json"), tmp_path / "out"
    out.mkdir()
    runs = [
        ["convert", "-v", str(export), "-o", env],
        ["info", str(export), env],
        ["doctor", str(export)],
        ["distill", env, "-o", str(out / "facts.mv.json")],
        ["distill", str(export), "-o", str(out / "facts-memory.mv.json")],
        ["info", str(out / "facts.mv.json")],
        ["validate", env, str(out / "facts.mv.json")],
        ["report", env, "-o", str(out / "report.html")],
        ["parquet", env, "-o", str(out / "pq")],
        ["search", env, word],
        ["topics", env],
        ["topics", env, "-n", "40"],
        ["memory", str(export)],
        ["inventory", str(export)],
        ["memory", str(export), "-o", str(out / "memory.mv.json")],
        ["convert-many", str(export), "-o", str(out / "many")],
        ["history", "add", str(export), "--to", str(out / "history")],
        ["history", "show", str(out / "history")],
        ["history", "check", str(out / "history")],
        ["diff", str(export), env],
    ]
    said: dict[str, str] = {}
    capsys.readouterr()
    for argv in runs:
        main(argv)
        got = capsys.readouterr()
        said[" ".join(argv)] = got.out + got.err
    return said


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["one", "many", "chatgpt", "claude"])
def test_counts_are_words_with_separators(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export, word = _export(kind, tmp_path)
    said = _outputs(export, word, tmp_path, capsys)
    wrong = [
        f"{command}: {line.strip()}"
        for command, text in said.items()
        for line in text.splitlines()
        if ONE_PLURAL.search(line)
        or MAYBE_PLURAL.search(line)
        or any(_not_a_year(m) for m in BARE_NUMBER.findall(line))
    ]
    assert not wrong, "\n".join(wrong)
    if kind == "one":  # the run did meet the counts of one it checks
        assert "claude, 1 conversation, 1 message" in said[f"convert -v {export} -o {tmp_path / 'x.mve.json'}"]
    if kind == "many":
        assert "1,234 conversations, 2,468 messages" in said[f"convert -v {export} -o {tmp_path / 'x.mve.json'}"]


def test_plural_and_count() -> None:
    from memvelope_tools._plural import count, plural

    assert [plural(1, "value"), plural(0, "value"), plural(2.5, "message"), plural(3, "open branch")] == [
        "value",
        "values",
        "messages",
        "open branches",
    ]
    assert [count(1, "part"), count(1234, "conversation"), count(0, "duplicate")] == [
        "1 part",
        "1,234 conversations",
        "0 duplicates",
    ]


def test_convert_says_one_part_one_conversation_one_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = _claude_export(tmp_path / "one", ["My name is Inês."])
    assert main(["convert", "-v", str(export), "-o", str(tmp_path / "x.mve.json")]) == 0
    err = capsys.readouterr().err
    assert f"memvelope: read 1 part: {export / 'conversations.json'}\n" in err
    assert err.endswith("claude, 1 conversation, 1 message\n")


def test_doctor_counts_of_one_and_of_thousands(tmp_path: Path) -> None:
    from memvelope_tools._doctor import doctor
    from memvelope_tools._doctor.text import render

    one = render(doctor(_claude_export(tmp_path / "one", ["hello"])))
    assert "claude export, 1 part; converts" in one
    assert re.search(r"\n    message created_at +1 value, 0 null, 0 unparseable\n", one)
    many = render(doctor(_claude_export(tmp_path / "many", [f"hello {i}" for i in range(1234)])))
    assert "array of 1,234)" in many
    assert "Conversations: 1,234 in the export, 1,234 kept, 0 dropped" in many
    assert "Messages: 2,468 in the export, 2,468 kept, 0 dropped" in many
    assert re.search(r"\n    message created_at +2,468 values, 0 null, 0 unparseable\n", many)


def _stats_of_one(stats: Any) -> None:
    for name in ("facts", "conversations", "duplicates", "chunks", "cache_hits", "requests", "invalid_facts"):
        setattr(stats, name, 1)
    stats.dates_nulled = 1234


@pytest.mark.parametrize("mode", ["structured", "llm"])
def test_distill_summary_counts(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memvelope_tools._ir import llm, structured

    real = structured.structured_facts

    def counted(envelope: Any, *args: Any, stats: Any = None, **kwargs: Any) -> Any:
        doc = real(envelope, stats=stats)
        _stats_of_one(stats)
        return doc

    monkeypatch.setattr(structured, "structured_facts", counted)
    monkeypatch.setattr(llm, "distill_llm", counted)
    env = tmp_path / "x.mve.json"
    assert main(["convert", "-q", str(_claude_export(tmp_path / "one", ["My name is Inês."])), "-o", str(env)]) == 0
    out = tmp_path / "f.mv.json"
    assert main(["distill", str(env), "-o", str(out), "--mode", mode, "--no-memory"]) == 0
    line = capsys.readouterr().err.splitlines()[0]
    assert line.startswith(f"memvelope: wrote {out}: 1 fact from 1 conversation (")
    assert "; 1 duplicate merged" in line
    if mode == "llm":
        assert line.endswith("; 1 chunk, 1 cached, 1 request, 1 invalid fact dropped, 1,234 unsourced dates nulled)")


def test_topics_rows_name_one_conversation_in_the_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = _claude_export(tmp_path / "one", ["Sourdough bread needs a starter, flour and patience."])
    assert main(["topics", str(export)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 topic in 1 conversation\n")
    assert "  0  1 conversation  100%  " in out


def _claude_conv(uid: str, turns: list[tuple[str, str]], title: str = "") -> dict[str, Any]:
    stamp = "2024-01-01T10:00:00Z"
    messages = [
        {"uuid": f"{uid}-{i}", "sender": who, "text": text, "created_at": stamp} for i, (who, text) in enumerate(turns)
    ]
    return {"uuid": uid, "name": title, "created_at": stamp, "updated_at": stamp, "chat_messages": messages}


def test_history_section_of_one_message_edited_away_and_one_deleted_upstream(tmp_path: Path) -> None:
    import memvelope_tools as mv
    from memvelope_tools._report import build_report

    old, new = tmp_path / "old.json", tmp_path / "new.json"
    kept = [("human", "hi")]
    old.write_text(
        json.dumps([_claude_conv("a", [*kept, ("assistant", "hello")]), _claude_conv("b", [("human", "bye")])]),
        encoding="utf-8",
    )
    new.write_text(json.dumps([_claude_conv("a", [*kept, ("assistant", "hello again")])]), encoding="utf-8")
    folder = tmp_path / "history"
    mv.add_to_history(str(old), folder, date="2024-01-02")
    page = build_report([str(folder)])
    assert "<h2>History across 1 export</h2>" in page
    mv.add_to_history(str(new), folder, date="2024-02-02")
    page = build_report([str(folder)])
    assert "<h2>History across 2 exports</h2>" in page
    assert "1 message was edited away and 1 is in 1 conversation deleted upstream: " in page


def test_parquet_says_what_it_wrote_on_stderr_as_every_command_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pq"
    assert main(["parquet", str(_claude_export(tmp_path / "one", ["hello"])), "-o", str(out)]) == 0
    got = capsys.readouterr()
    assert got.out == ""
    wrote = [line for line in got.err.splitlines() if "wrote" in line]
    assert wrote[:2] == [
        f"memvelope: wrote {out / 'conversations.parquet'} (1 row)",
        f"memvelope: wrote {out / 'messages.parquet'} (1 row)",
    ]


def test_help_lists_what_a_user_needs_first_and_the_developer_commands_last(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = re.findall(r"^    ([a-z-]+)", capsys.readouterr().out, re.M)
    assert listed[:3] == ["convert", "doctor", "info"]
    assert listed[-2:] == ["validate", "conformance"] and len(listed) == len(set(listed)) == len(COMMAND_MODULES)


def test_the_readme_lists_the_commands_in_the_order_help_does(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = re.findall(r"^    ([a-z-]+)", capsys.readouterr().out, re.M)
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Commands", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\| `memvelope ([a-z-]+)`? ", table, re.M) == [*listed, "--version"]


def test_plot_namespace_is_its_charts_only() -> None:
    import memvelope_tools as mv

    names = dir(mv.plot)
    assert names == sorted(mv.plot.__all__)
    assert not {"Any", "TYPE_CHECKING", "annotations", "np", "pd", "_charts"} & set(names)
    for name in names:
        value = getattr(mv.plot, name)
        assert callable(value) or name.isupper(), name  # the charts and their colour tables


def test_top_table_of_one_document_and_a_conversation_without_a_user_message(tmp_path: Path) -> None:
    from memvelope_tools._report import build_report

    export = tmp_path / "conversations.json"
    convs = [
        _claude_conv("a", [("human", "How do I proof dough?"), ("assistant", "Let it rise.")], "Bread"),
        _claude_conv("b", [("assistant", "Here is the summary you asked for.")]),  # no message from the user
    ]
    export.write_text(json.dumps(convs), encoding="utf-8")
    page = build_report([str(export)])
    assert "<h2>Top 2 conversations by length</h2>" in page
    table = page.split("by length</h2>")[1].split("</table>")[0]
    assert "<th>document</th>" not in table and "conversations.json" not in table
    rows = re.findall(r"<tr>(.*?)</tr>", table)[1:]
    assert re.findall(r'<td class="snip">(.*?)</td>', rows[0]) == ["How do I proof dough?"]
    assert re.findall(r"<td>(.*?)</td>", rows[1])[0] == "(untitled)"
    assert re.findall(r'<td class="snip">(.*?)</td>', rows[1]) == ["(no user message)"]
    one = build_report([str(export)], top=1)
    assert "<h2>Top 1 conversation by length</h2>" in one
    other = tmp_path / "other.json"
    other.write_text(json.dumps([_claude_conv("c", [("human", "hi")], "Hi")]), encoding="utf-8")
    both = build_report([str(export), str(other)]).split("by length</h2>")[1].split("</table>")[0]
    assert "<th>document</th>" in both and '<td class="d">other.json</td>' in both


def test_the_demo_summary_counts_in_words(tmp_path: Path) -> None:
    import memvelope_tools as mv
    from memvelope_tools.demo import summarise

    one = summarise(mv.convert(_claude_export(tmp_path / "one", ["hello"])))
    assert one.startswith("claude       1 conversation       1 message   first 2024-01-01T10:00:00.000Z")
    many = summarise(mv.convert(_claude_export(tmp_path / "many", [f"hello {i}" for i in range(1234)])))
    assert many.startswith("claude   1,234 conversations  2,468 messages   first ")


def test_validation_topics_and_argument_errors_count_in_words(tmp_path: Path) -> None:
    import memvelope_tools as mv

    env = mv.convert(_claude_export(tmp_path / "one", ["hello"]))
    env["meta"]["conversation_count"], env["meta"]["message_count"] = 3, 1234
    said = {v.rule: v.message for v in mv.validate(env)}
    assert said["conversation-count-mismatch"] == "is 3 but conversations has 1 entry"
    assert said["message-count-mismatch"] == "is 1234 but the conversations hold 1 message"
    found = mv.topics(_claude_export(tmp_path / "bread", ["Sourdough bread needs a starter."]), n_topics=1)
    assert repr(found).startswith("<Topics: 1 topic over 1 conversation: ")
    with pytest.raises(ValueError, match=r"^sources= has 1 label for 2 documents$"):
        mv.messages_frame([env, env], sources=["one"])
