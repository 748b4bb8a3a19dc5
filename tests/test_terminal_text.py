"""Text taken from an export reaches the terminal with nothing in it a terminal would obey: a title, a message,
a memory, an id or a file name holding a carriage return, escape sequences or a bidirectional override prints
them as visible escapes, on one line; JSON output carries the value as the export holds it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from conftest import FIXTURES, fresh

from memvelope_tools._printable import printable
from memvelope_tools._search.cache import clear_cache
from memvelope_tools.cli import main

# A carriage return (forges a line), an OSC retitling the terminal, a CSI clearing the screen, a right-to-left override.
HOSTILE = "\r\x1b]0;pwned\x07\x1b[2J\u202e"
SHOWN = "\\r\\x1b]0;pwned\\x07\\x1b[2J\\u202e"
TITLE = f"Dinner{HOSTILE}ideas\tand\nmore"
TITLE_SHOWN = f"Dinner{SHOWN}ideas\\tand\\nmore"
CONV_ID = f"c-a{HOSTILE}"
RAW = ("\r", "\x1b", "\x07", "\u202e")
# Written the same way in one line (str.split's whitespace becomes a space first: a snippet, a memory).
SHOWN_IN_TEXT = "\\x1b]0;pwned\\x07\\x1b[2J\\u202e"


def _clean(text: str) -> None:
    for char in RAW:
        assert char not in text, f"raw {char!r} reached the terminal"


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """An older and a newer ChatGPT export of one conversation whose title, id, messages and saved memory are
    hostile; the newer one has one message more (grown). Each in a folder whose name is hostile too."""
    base = json.loads((FIXTURES / "memory" / "chatgpt-memory.json").read_text(encoding="utf-8"))[0]
    conv = copy.deepcopy(base)
    conv["title"] = TITLE
    conv["id"] = conv["conversation_id"] = CONV_ID
    nodes = conv["mapping"]
    nodes["a2"]["message"]["content"]["parts"] = [f"I'm vegetarian {HOSTILE} any dinner ideas?"]
    assert nodes["a3"]["message"]["recipient"] == "bio"  # a saved memory
    nodes["a3"]["message"]["content"]["parts"] = [f"User is vegetarian {HOSTILE} truly."]
    nodes["a5"]["message"]["content"]["parts"] = [f"Try a chickpea curry {HOSTILE} or risotto."]
    grown = copy.deepcopy(conv)
    extra = copy.deepcopy(grown["mapping"]["a2"])
    extra.update(id="a6", parent="a5", children=[])
    extra["message"].update(id="a6", create_time=1709640100.0)
    grown["mapping"]["a5"]["children"] = ["a6"]
    grown["mapping"]["a6"] = extra
    grown["current_node"] = "a6"
    grown["update_time"] = 1709640200.0
    root = tmp_path_factory.mktemp("hostile")
    paths = []
    for name, value in (("old", conv), ("new", grown)):
        folder = root / f"{name}\x1b]0;pwned\x07"
        folder.mkdir()
        (folder / "conversations.json").write_text(json.dumps([value]), encoding="utf-8")
        paths.append(folder)
    return paths[0], paths[1]


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    clear_cache()


def test_printable_escapes_controls_separators_and_bidi_only() -> None:
    assert printable("a\tb\nc\rd\x00e\x7ff\x85g\x9bh") == "a\\tb\\nc\\rd\\x00e\\x7ff\\x85g\\x9bh"
    for char in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u2028\u2029":
        assert printable(f"x{char}y") == f"x\\u{ord(char):04x}y"
    assert printable("lone \ud800 half") == "lone \ufffd half"  # legal in JSON, not in UTF-8
    kept = "café 東京\u3000ｶﾅ \u00a0 👩\u200d💻 \\x1b already text"
    assert printable(kept) == kept


def test_diff_prints_a_hostile_title_and_id_escaped_on_one_line(
    exports: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = exports
    assert main(["diff", str(old), str(new), "-q"]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)
    [line] = [line for line in out.splitlines() if line.lstrip().startswith("grown")]
    assert f"{TITLE_SHOWN} [c-a{SHOWN}]" in line


def test_diff_in_a_fresh_process_escapes_too(exports: tuple[Path, Path]) -> None:
    old, new = exports
    run = fresh("diff", str(old), str(new), "-q")
    assert run.returncode == 0, run.stderr
    _clean(run.stdout + run.stderr)
    assert TITLE_SHOWN in run.stdout


def test_diff_json_carries_the_raw_title(exports: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    old, new = exports
    assert main(["diff", str(old), str(new), "--json"]) == 0
    out = capsys.readouterr().out
    [row] = json.loads(out)["conversations"]
    assert (row["title"], row["id"]) == (TITLE, CONV_ID)


def test_search_prints_hostile_titles_and_snippets_escaped(
    exports: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # no snippet cut short
    assert main(["search", str(exports[1]), "vegetarian"]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)
    rows = out.splitlines()[1:]
    assert len(rows) == 3  # a user message twice (the old and the added one) and the saved memory's write
    assert all("Dinner \\x1b]0;pwned" in row for row in rows)  # the title: its \r split away as whitespace
    assert all(SHOWN_IN_TEXT in row.split("⟧", 1)[1] for row in rows)


def test_search_json_carries_the_raw_text(exports: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(exports[1]), "vegetarian", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert {hit["title"] for hit in hits} == {TITLE}
    assert all("\x1b]0;pwned\x07\x1b[2J\u202e" in hit["snippet"] for hit in hits)


def test_memory_prints_hostile_texts_titles_and_ids_escaped(
    exports: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["memory", str(exports[1]), "-q"]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)
    assert f"saved memory: User is vegetarian {SHOWN_IN_TEXT} truly." in out
    assert f'in "{TITLE_SHOWN}" (c-a{SHOWN})' in out
    assert f"after you wrote: I'm vegetarian {SHOWN_IN_TEXT} any dinner ideas?" in out


def test_history_add_and_show_print_a_hostile_source_escaped(
    exports: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "history"
    for export in exports:
        assert main(["history", "add", str(export), "--to", str(folder), "--date", "2024-03-06"]) == 0
        out, err = capsys.readouterr()
        _clean(out + err)
        assert "\\x1b]0;pwned\\x07" in out
    assert main(["history", "show", str(folder)]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)
    assert out.count("\\x1b]0;pwned\\x07:") == 2  # each snapshot's source


def test_doctor_prints_hostile_ids_escaped(exports: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", str(exports[1]), "--show-text"]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)
    assert f"e.g. c-a{SHOWN} " in out  # the example of a dropped message names its conversation
    assert "\\x1b]0;pwned\\x07/conversations.json" in out  # the part read


def test_doctor_json_carries_the_raw_id(exports: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", str(exports[1]), "--json"]) == 0
    assert CONV_ID in capsys.readouterr().out.encode("ascii", "backslashreplace").decode("unicode_escape")


def test_info_prints_a_hostile_provider_escaped(
    exports: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    envelope = tmp_path / "e.mve.json"
    assert main(["convert", str(exports[0]), "-o", str(envelope), "-q"]) == 0
    doc = json.loads(envelope.read_text(encoding="utf-8"))
    doc["meta"]["source_provider"] = "chatgpt\x1b[2J\u202e"
    envelope.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["info", str(envelope)]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)
    assert "provider: chatgpt\\x1b[2J\\u202e" in out


def test_convert_notes_print_hostile_part_names_escaped(
    exports: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "conversations-\x1b[2J\r.json").write_bytes((exports[0] / "conversations.json").read_bytes())
    assert main(["convert", str(folder), "-v", "-o", str(tmp_path / "out.mve.json")]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)
    assert "conversations-\\x1b[2J\\r.json" in err


def test_topics_print_no_raw_control_character(exports: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["topics", str(exports[1]), "-n", "1"]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)
    assert "vegetarian" in out


def test_an_error_naming_a_hostile_value_is_one_escaped_line(exports: tuple[Path, Path], tmp_path: Path) -> None:
    envelope = tmp_path / "e.mve.json"
    assert main(["convert", str(exports[0]), "-o", str(envelope), "-q"]) == 0
    doc = json.loads(envelope.read_text(encoding="utf-8"))
    doc["conversations"][0]["title"] = 7  # not a string: the error names the file, whose name is hostile
    hostile = tmp_path / "e\x1b[2J\r.mve.json"
    hostile.write_text(json.dumps(doc), encoding="utf-8")
    run = fresh("info", str(hostile))
    assert run.returncode == 1
    _clean(run.stdout + run.stderr)
    assert run.stderr.count("\n") == 1 and "e\\x1b[2J\\r.mve.json" in run.stderr
