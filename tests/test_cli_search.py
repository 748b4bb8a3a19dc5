"""``memvelope search`` and ``memvelope topics``: readable tables, JSON, one-line errors."""

from __future__ import annotations

import json

import pytest

import memvelope_tools as mv
from memvelope_tools._search.cache import clear_cache
from memvelope_tools.cli import main


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    path = folder / "gpt.mve.json"
    mv.write_envelope(mv.convert(mv.sample_path("chatgpt")), path)
    return path


@pytest.fixture(autouse=True)
def fresh_cache():
    clear_cache()


def test_search_prints_a_table_best_first(history, capsys):
    assert main(["search", str(history), "kafka", "--limit", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["#", "score", "sent", "(UTC)", "role", "conversation", "snippet"]
    assert out[1].lstrip().startswith("1 ") and "Kafka consumer lag keeps growing" in out[1]
    assert "⟦Kafka⟧" in out[1]
    assert out[-1] == "(the best 2; --limit N for more)"
    scores = [float(line.split()[1]) for line in out[1:3]]
    assert scores == sorted(scores, reverse=True)


def test_search_json_filters_and_a_parquet_folder(history, tmp_path, capsys):
    folder = tmp_path / "pq"
    mv.to_parquet(history, folder)
    assert main(["search", str(folder), "kafka", "--role", "user", "--since", "2025-01-01", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(r["role"] == "user" and r["ts"] >= "2025-01-01" for r in rows)
    assert {"source", "conversation_id", "title", "ts", "position", "snippet", "score"} <= set(rows[0])
    assert (folder / "search-index" / "rows.arrow").is_file()
    assert main(["search", str(folder), "zzzunfindable", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["search", str(folder), "zzzunfindable"]) == 0
    assert capsys.readouterr().out == "no message matches 'zzzunfindable'\n"


def test_search_an_export_zip_directly(capsys):
    assert main(["search", str(mv.sample_path("claude")), "ana", "--limit", "1"]) == 0
    assert "⟦Ana⟧" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["kafka OR"], "cannot search for 'kafka OR': OR needs a term on each side"),
        (['"open'], "a quote is not closed"),
        (["kafka", "--since", "someday"], "since='someday' is not a date or time"),
        (["\udcffkafka"], "cannot search for '\\udcffkafka': '\\udcff' is a lone surrogate, not a character"),
    ],
)
def test_search_errors_are_one_line_without_a_traceback(history, capsys, argv, message):
    assert main(["search", str(history), *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("memvelope: error: ") and message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_topics_prints_one_line_per_topic(history, capsys):
    assert main(["topics", str(history), "-n", "4", "--terms", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "4 topics in 40 conversations"
    assert len(out) == 5
    sizes = [int(line.split()[1]) for line in out[1:]]
    assert sum(sizes) == 40 and sizes == sorted(sizes, reverse=True)
    assert all(len(line.split("%  ")[1].split(", ")) == 3 for line in out[1:])


def test_topics_json_and_a_note_when_lowered(tmp_path, capsys):
    env = {
        "memvelope": "envelope-v0",
        "meta": {"source_provider": "claude", "conversation_count": 1, "message_count": 1},
        "conversations": [
            {
                "id": "a",
                "title": "Bread",
                "created_at": None,
                "updated_at": None,
                "messages": [{"id": "m1", "role": "user", "ts": None, "text": "sourdough starter hydration"}],
            }
        ],
    }
    path = tmp_path / "one.mve.json"
    mv.write_envelope(env, path)
    assert main(["topics", str(path), "--json", "-n", "3"]) == 0  # more topics asked than the history holds
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["units"] == 1 and len(data["topics"]) == 1 and data["topics"][0]["size"] == 1
    assert captured.err.startswith("memvelope: note: only 1 conversation with words")


def test_search_labels_exports_by_their_file_name_as_mv_search_does(capsys):
    claude = mv.sample_path("claude")
    assert main(["search", str(claude), "ana", "--limit", "1", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["source"] == claude.name == mv.search(claude, "ana", limit=1)["source"][0]


def test_search_of_several_exports_names_the_conversation_by_its_title(tmp_path, capsys):
    names = ["a" * 64 + "-2025-01-01-00-00-00.mve.json", "b" * 64 + "-2025-02-01-00-00-00.mve.json"]
    for name, word in zip(names, ["first", "second"], strict=True):
        mv.write_envelope(
            {
                "memvelope": "envelope-v0",
                "meta": {"source_provider": "claude", "conversation_count": 1, "message_count": 1},
                "conversations": [
                    {
                        "id": word,
                        "title": f"The {word} talk",
                        "created_at": None,
                        "updated_at": None,
                        "messages": [{"id": "m1", "role": "user", "ts": None, "text": f"otters, the {word} time"}],
                    }
                ],
            },
            tmp_path / name,
        )
    assert main(["search", *(str(tmp_path / n) for n in names), "otters"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert len(rows) == 2
    assert {title for title in ("The first talk", "The second talk") if any(title in r for r in rows)} == {
        "The first talk",
        "The second talk",
    }
    assert not any("aaaa" in r or "bbbb" in r for r in rows)


def test_search_shows_a_title_match_with_a_marker(tmp_path, capsys):
    path = tmp_path / "t.mve.json"
    mv.write_envelope(
        {
            "memvelope": "envelope-v0",
            "meta": {"source_provider": "claude", "conversation_count": 1, "message_count": 1},
            "conversations": [
                {
                    "id": "c",
                    "title": "Sourdough schedule",
                    "created_at": None,
                    "updated_at": None,
                    "messages": [{"id": "m1", "role": "user", "ts": None, "text": "when to feed it"}],
                }
            ],
        },
        path,
    )
    assert main(["search", str(path), "sourdough"]) == 0
    [row] = capsys.readouterr().out.splitlines()[1:]
    assert "Sourdough schedule" in row and row.endswith("[title] when to feed it")
