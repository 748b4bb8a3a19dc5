"""memvelope_tools._history: diff of two exports, merged history of many, and ``memvelope diff``.

The expectations below were worked out from the fixtures under ``fixtures/history/`` (see their
README): an older and a newer export of one ChatGPT and one Claude account.
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvelope_tools._history.dates import date_from_name
from memvelope_tools._history.diff import diff, status_counts
from memvelope_tools._history.history import history
from memvelope_tools.cli import main
from memvelope_tools.errors import FormatError

HISTORY = Path(__file__).resolve().parent.parent / "fixtures" / "history"
GPT_OLD = HISTORY / "chatgpt-old" / "conversations.json"
GPT_NEW = HISTORY / "chatgpt-new" / "conversations.json"
CLAUDE_OLD = HISTORY / "claude-old" / "conversations.json"
CLAUDE_NEW = HISTORY / "claude-new" / "conversations.json"
NA = None


def rows(frame: pd.DataFrame, columns: list[str]) -> list[tuple[Any, ...]]:
    return [tuple(None if pd.isna(v) else v for v in row) for row in frame[columns].itertuples(index=False)]


# ---- diff ----------------------------------------------------------------------------------------


def test_chatgpt_diff_gives_every_status_with_where_they_first_differ() -> None:
    changes = diff(GPT_OLD, GPT_NEW)
    assert rows(
        changes, ["id", "title", "status", "messages_before", "messages_after", "first_difference", "matched_by"]
    ) == [
        ("g-fresh", "Brand new", "new", NA, 2, NA, NA),
        ("g-same", "Unchanged", "unchanged", 2, 2, NA, "id"),
        ("g-grow", "Growing", "grown", 2, 4, 2, "id"),
        ("g-edit", "Edited prompt", "edited", 2, 2, 0, "id"),  # the first prompt was edited
        ("g-regen", "Regenerated reply", "edited", 2, 2, 1, "id"),  # the reply was regenerated
        (NA, "No id", "grown", 2, 4, 2, "created_at+title"),
        # no id, and its title changed: matched by its first message, which begins no other
        (NA, "Draft (renamed)", "unchanged", 1, 1, NA, "first message"),
        ("g-gone", "Deleted upstream", "missing", 2, NA, NA, NA),
    ]
    assert set(changes["provider"]) == {"chatgpt"}
    assert status_counts(changes) == {
        "new": 1,
        "missing": 1,
        "unchanged": 2,
        "grown": 2,
        "edited": 2,
        "unmatched": 0,
    }


def test_claude_diff_grown_missing_new() -> None:
    changes = diff(CLAUDE_OLD, CLAUDE_NEW)
    assert rows(changes, ["provider", "id", "status", "messages_before", "messages_after", "first_difference"]) == [
        ("claude", "k-same", "unchanged", 2, 2, NA),
        ("claude", "k-grow", "grown", 2, 4, 2),
        ("claude", "k-new", "new", NA, 2, NA),
        ("claude", "k-gone", "missing", 2, NA, NA),
    ]


def test_diff_columns_and_dtypes() -> None:
    changes = diff(CLAUDE_OLD, CLAUDE_NEW)
    assert list(changes.columns)[:7] == [
        "provider",
        "id",
        "title",
        "status",
        "messages_before",
        "messages_after",
        "first_difference",
    ]
    assert str(changes["messages_before"].dtype) == "Int64"
    assert str(changes["updated_at"].dtype) == "datetime64[ms, UTC]"
    # the newer export's updated_at for a conversation in both, the older one's for a missing one
    grow = changes.set_index("id").loc["k-grow"]
    assert grow["updated_at"] == pd.Timestamp("2025-03-01T09:00:00Z")
    assert changes.set_index("id").loc["k-gone", "updated_at"] == pd.Timestamp("2025-01-03T10:05:00Z")


def _envelope(convs: list[dict[str, Any]], provider: str = "chatgpt") -> dict[str, Any]:
    return {
        "memvelope": "envelope-v0",
        "meta": {
            "source_provider": provider,
            "conversation_count": len(convs),
            "message_count": sum(len(c["messages"]) for c in convs),
        },
        "conversations": convs,
    }


def _conv(cid: str | None, title: str, created: str | None, texts: list[str]) -> dict[str, Any]:
    return {
        "id": cid,
        "title": title,
        "created_at": created,
        "updated_at": None,
        "messages": [
            {"id": f"m{i + 1}", "role": "user" if i % 2 == 0 else "assistant", "ts": None, "text": t}
            for i, t in enumerate(texts)
        ],
    }


def test_messages_compare_by_content_not_positional_ids() -> None:
    old = _envelope([_conv("a", "A", None, ["one", "two"])])
    # the same texts, but the first message gone: positional ids shift and nothing lines up
    new = _envelope([_conv("a", "A", None, ["two"])])
    (row,) = diff(old, new).to_dict("records")
    assert (row["status"], row["first_difference"]) == ("edited", 0)


def test_a_repeated_id_matches_an_identical_conversation_then_one_that_begins_alike() -> None:
    old = _envelope([_conv("d", "X", None, ["same"]), _conv("d", "X", None, ["other"])])
    new = _envelope([_conv("d", "X", None, ["same"]), _conv("d", "X", None, ["other", "more"])])
    changes = diff(old, new)
    assert rows(changes, ["status", "messages_before", "messages_after", "matched_by"]) == [
        ("unchanged", 1, 1, "content"),
        ("grown", 1, 2, "first message"),  # continued: its first message begins no other
    ]


def test_an_id_repeated_on_one_side_only_is_unmatched_not_new() -> None:
    old = _envelope([_conv("d", "X", None, ["a"]), _conv("d", "X", None, ["b"])])
    new = _envelope([_conv("d", "X", None, ["a", "c"])])
    # the one that begins as the new one does is its older version; the other has no counterpart
    assert list(diff(old, new)["status"]) == ["grown", "unmatched"]


def test_conversations_that_begin_with_the_same_message_stay_unmatched() -> None:
    old = _envelope([_conv(None, "A", None, ["hi"]), _conv(None, "B", None, ["hi"])])
    new = _envelope([_conv(None, "A2", None, ["hi", "x"]), _conv(None, "B2", None, ["hi", "y"])])
    assert list(diff(old, new)["status"]) == ["unmatched"] * 4


def test_diff_history_and_a_history_folder_match_renamed_and_continued_conversations_alike(tmp_path: Path) -> None:
    from memvelope_tools._history_folder import add_to_history

    created = "2025-01-01T09:00:00Z"
    old = _envelope(
        [
            _conv(None, "Trip", created, ["plan a trip", "where to?"]),  # no id
            _conv("d", "X", None, ["alpha"]),  # an id given twice
            _conv("d", "X", None, ["beta"]),
        ]
    )
    new = _envelope(
        [
            _conv(None, "Trip to Rome", created, ["plan a trip", "where to?"]),  # renamed
            _conv("d", "X", None, ["alpha"]),
            _conv("d", "X", None, ["beta", "more"]),  # continued
        ]
    )
    changes = diff(old, new)
    assert rows(changes, ["title", "status", "matched_by"]) == [
        ("Trip to Rome", "unchanged", "first message"),
        ("X", "unchanged", "content"),
        ("X", "grown", "first message"),
    ]
    h = history([old, new], dates=["2025-01-01", "2025-02-01"])
    assert list(h["conversations"]["status"]) == ["current"] * 3
    assert len(h["messages"]) == 2 + 1 + 2  # each message stored once
    folder = tmp_path / "h"
    add_to_history(old, folder, date="2025-01-01")
    row = add_to_history(new, folder, date="2025-02-01")
    counts = status_counts(changes)
    assert {k: row[k] for k in ("new", "grown", "edited", "unchanged", "missing")} == {
        k: counts[k] for k in ("new", "grown", "edited", "unchanged", "missing")
    }
    assert (row["new"], row["grown"], row["unchanged"], row["missing"]) == (0, 1, 2, 0)
    from memvelope_tools._history.folder import read_history

    stored = read_history(folder)
    assert len(stored["messages"]) == 5 and set(stored["conversations"]["status"]) == {"current"}


def test_a_history_folder_matches_an_id_no_longer_repeated_as_diff_does(tmp_path: Path) -> None:
    from memvelope_tools._history.folder import read_history
    from memvelope_tools._history_folder import add_to_history

    old = _envelope([_conv("d", "X", None, ["alpha"]), _conv("d", "X", None, ["beta"])])
    new = _envelope([_conv("d", "X", None, ["alpha", "more"])])  # every id its own again, one continued
    assert rows(diff(old, new), ["status", "matched_by"]) == [("grown", "first message"), ("unmatched", NA)]
    folder = tmp_path / "h"
    add_to_history(old, folder, date="2025-01-01")
    row = add_to_history(new, folder, date="2025-02-01")
    assert (row["new"], row["grown"]) == (0, 1)
    stored = read_history(folder)["messages"]
    assert sorted(stored["text"]) == ["alpha", "beta", "more"]  # each message once


def test_diff_of_a_conversation_that_shrank_is_edited() -> None:
    old = _envelope([_conv("a", "A", None, ["q", "r", "s"])])
    new = _envelope([_conv("a", "A", None, ["q"])])
    (row,) = diff(old, new).to_dict("records")
    assert (row["status"], row["first_difference"]) == ("edited", 1)


def test_diff_leaves_the_inputs_as_they_were() -> None:
    old = _envelope([_conv("a", "A", None, ["q"])])
    new = _envelope([_conv("a", "A", None, ["q", "r"])])
    before = json.dumps([old, new])
    diff(old, new)
    assert json.dumps([old, new]) == before
    assert GPT_OLD.read_bytes() == GPT_OLD.read_bytes()


# ---- history -------------------------------------------------------------------------------------


def test_history_keeps_edited_away_and_deleted_messages() -> None:
    h = history([GPT_NEW, GPT_OLD], dates=["2025-03-01", "2025-01-01"])  # merged oldest first, whatever the order
    jan, mar = pd.Timestamp("2025-01-01", tz="UTC"), pd.Timestamp("2025-03-01", tz="UTC")
    convs = h["conversations"]
    assert rows(convs, ["conversation_id", "title", "first_seen", "last_seen", "status"]) == [
        ("g-fresh", "Brand new", mar, mar, "current"),
        ("g-same", "Unchanged", jan, mar, "current"),
        ("g-grow", "Growing", jan, mar, "current"),
        ("g-edit", "Edited prompt", jan, mar, "current"),
        ("g-regen", "Regenerated reply", jan, mar, "current"),
        (NA, "No id", jan, mar, "current"),
        (NA, "Draft (renamed)", jan, mar, "current"),  # renamed: matched by its first message, as diff matches it
        ("g-gone", "Deleted upstream", jan, jan, "deleted-upstream"),
    ]
    msgs = h["messages"]
    edit = msgs[msgs["conversation_id"] == "g-edit"]
    assert rows(edit, ["position", "text", "first_seen", "last_seen", "status"]) == [
        (0, "Write a haiku about cats", jan, jan, "edited-away"),
        (0, "Write a haiku about dogs", mar, mar, "current"),
        (1, "Soft paws on the sill", jan, jan, "edited-away"),
        (1, "Wet nose at the door", mar, mar, "current"),
    ]
    regen = msgs[msgs["conversation_id"] == "g-regen"]
    assert rows(regen, ["position", "text", "last_seen", "status"]) == [
        (0, "What is 2+2?", mar, "current"),
        (1, "It is 5.", jan, "edited-away"),
        (1, "It is 4.", mar, "current"),
    ]
    gone = msgs[msgs["conversation_id"] == "g-gone"]
    assert list(gone["status"]) == ["deleted-upstream", "deleted-upstream"]
    grow = msgs[msgs["conversation_id"] == "g-grow"]
    assert list(grow["first_seen"]) == [jan, jan, mar, mar]
    # the old one's 13, then fresh 2, grown 2, edited 2, regenerated 1, grown without an id 2
    assert len(msgs) == 13 + 2 + 2 + 2 + 1 + 2


def test_history_snapshots_say_where_the_date_came_from_and_what_changed() -> None:
    h = history([CLAUDE_OLD, CLAUDE_NEW], dates=["2025-01-15T12:00:00+01:00", None])
    snaps = h["snapshots"]
    assert list(snaps["date_source"]) == ["given", "newest timestamp"]
    assert list(snaps["date"]) == [pd.Timestamp("2025-01-15T11:00:00Z"), pd.Timestamp("2025-03-02T10:05:00Z")]
    assert rows(snaps, ["conversations", "messages", "new", "grown", "edited", "unchanged", "missing"]) == [
        (3, 6, 3, 0, 0, 0, 0),
        (3, 8, 1, 1, 0, 1, 1),
    ]


def test_history_has_the_usual_columns_plus_the_history_ones() -> None:
    from memvelope_tools._frames import CONVERSATION_COLUMNS, MESSAGE_COLUMNS

    h = history([CLAUDE_OLD], dates=["2025-01-15"])
    extra = ["conversation_key", "first_seen", "last_seen", "status"]
    assert list(h["conversations"].columns) == [*CONVERSATION_COLUMNS, *extra]
    assert list(h["messages"].columns) == [*MESSAGE_COLUMNS, *extra]
    assert h["messages"]["source"].iloc[0] == "conversations.json"


def test_a_message_back_on_the_path_is_current_again_with_its_first_date() -> None:
    a = _envelope([_conv("c", "C", None, ["q", "first answer"])])
    b = _envelope([_conv("c", "C", None, ["q", "second answer"])])
    h = history([a, b, a], dates=["2025-01-01", "2025-02-01", "2025-03-01"])
    assert rows(h["messages"], ["text", "first_seen", "last_seen", "status"]) == [
        ("q", pd.Timestamp("2025-01-01", tz="UTC"), pd.Timestamp("2025-03-01", tz="UTC"), "current"),
        ("first answer", pd.Timestamp("2025-01-01", tz="UTC"), pd.Timestamp("2025-03-01", tz="UTC"), "current"),
        ("second answer", pd.Timestamp("2025-02-01", tz="UTC"), pd.Timestamp("2025-02-01", tz="UTC"), "edited-away"),
    ]


def test_edited_then_deleted_keeps_both_reasons() -> None:
    a = _envelope([_conv("c", "C", None, ["q", "one"]), _conv("k", "K", None, ["keep"])])
    b = _envelope([_conv("c", "C", None, ["q", "two"]), _conv("k", "K", None, ["keep"])])
    c = _envelope([_conv("k", "K", None, ["keep"])])
    h = history([a, b, c], dates=["2025-01-01", "2025-02-01", "2025-03-01"])
    msgs = h["messages"].set_index("text")
    assert msgs.loc["one", "status"] == "edited-away"
    assert msgs.loc["two", "status"] == "deleted-upstream"
    assert msgs.loc["q", "status"] == "deleted-upstream"
    assert msgs.loc["keep", "status"] == "current"


def test_date_from_the_download_names() -> None:
    gpt = "3f2a" * 16 + "-2025-02-03-04-05-06.zip"
    assert date_from_name(gpt) == pd.Timestamp("2025-02-03T04:05:06Z")
    assert date_from_name("data-2025-01-31-08-15-00-batch-0000.zip") == pd.Timestamp("2025-01-31T08:15:00Z")
    assert date_from_name("data-2025-01-31-08-15-00.zip") == pd.Timestamp("2025-01-31T08:15:00Z")
    assert date_from_name("data-2025-01-31-08-15-00-batch-0000 (1).zip") == pd.Timestamp("2025-01-31T08:15:00Z")
    assert date_from_name(Path("data-2025-01-31-08-15-00") / "conversations.json") == pd.Timestamp(
        "2025-01-31T08:15:00Z"
    )
    assert date_from_name("export-2025-01-31-08-15-00.zip") is None
    assert date_from_name("data-2025-02-31-08-15-00.zip") is None  # no such day
    assert date_from_name("conversations.json") is None


def test_history_reads_the_date_from_the_file_name(tmp_path: Path) -> None:
    folder = tmp_path / "data-2025-04-01-10-00-00"
    folder.mkdir()
    (folder / "conversations.json").write_bytes(CLAUDE_OLD.read_bytes())
    snaps = history([folder / "conversations.json"])["snapshots"]
    assert (snaps["date"].iloc[0], snaps["date_source"].iloc[0]) == (
        pd.Timestamp("2025-04-01T10:00:00Z"),
        "file name",
    )


def test_history_refuses_a_bad_date_and_a_wrong_count_of_dates() -> None:
    with pytest.raises(FormatError, match="not a date"):
        history([CLAUDE_OLD], dates=["someday"])
    with pytest.raises(ValueError, match="2 entries for 1 exports"):
        history([CLAUDE_OLD], dates=["2025-01-01", "2025-01-02"])


# ---- properties ----------------------------------------------------------------------------------

_TEXT = st.text(alphabet="abc xyz", min_size=1, max_size=6).map(str.strip).filter(bool)
_TS = st.sampled_from([None, "2025-01-01T00:00:00.000Z", "2025-01-02T00:00:00.000Z"])
_MESSAGE = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "ts": _TS, "text": _TEXT})


def _numbered(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": f"m{i + 1}", **m} for i, m in enumerate(messages)]


@st.composite
def _conversations(draw: st.DrawFn, unique_ids: bool) -> list[dict[str, Any]]:
    n = draw(st.integers(1, 5))
    ids = (
        [f"c{i}" for i in range(n)]
        if unique_ids
        else draw(st.lists(st.sampled_from([None, "c0", "c1", "c2"]), min_size=n, max_size=n))
    )
    out = []
    for cid in ids:
        out.append(
            {
                "id": cid,
                "title": draw(st.sampled_from(["", "t", "u"])),
                "created_at": draw(_TS),
                "updated_at": None,
                "messages": _numbered(draw(st.lists(_MESSAGE, min_size=1, max_size=4))),
            }
        )
    return out


PROPERTY = settings(
    max_examples=int(os.environ.get("MEMVELOPE_HISTORY_EXAMPLES", "25")),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@PROPERTY
@given(_conversations(unique_ids=False))
def test_diff_of_an_export_with_itself_is_all_unchanged(convs: list[dict[str, Any]]) -> None:
    changes = diff(_envelope(convs), _envelope(convs))
    assert list(changes["status"]) == ["unchanged"] * len(convs)
    assert changes["first_difference"].isna().all()


@PROPERTY
@given(_conversations(unique_ids=False))
def test_history_of_the_same_export_twice_is_its_history(convs: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "export.mve.json"
        path.write_text(json.dumps(_envelope(convs)), encoding="utf-8")
        once = history([path], dates=["2025-05-01"])
        twice = history([path, path], dates=["2025-05-01", "2025-05-01"])
    for name in ("conversations", "messages"):
        pd.testing.assert_frame_equal(once[name], twice[name])


@PROPERTY
@given(_conversations(unique_ids=True), st.data())
def test_an_export_that_only_adds_gives_only_new_grown_unchanged(
    convs: list[dict[str, Any]], data: st.DataObject
) -> None:
    newer = []
    for conv in convs:
        more = data.draw(st.lists(_MESSAGE, max_size=3))
        newer.append({**conv, "messages": _numbered([*conv["messages"], *more])})
    added = data.draw(st.integers(0, 2))
    newer += [{**convs[0], "id": f"n{i}"} for i in range(added)]
    changes = diff(_envelope(convs), _envelope(newer))
    assert set(changes["status"]) <= {"new", "grown", "unchanged"}
    assert (changes["status"] == "new").sum() == added
    h = history([_envelope(convs), _envelope(newer)], dates=["2025-01-01", "2025-02-01"])
    assert set(h["messages"]["status"]) == {"current"}


# ---- the command ---------------------------------------------------------------------------------


def test_cli_diff_summary_lists_the_changed_conversations_newest_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(CLAUDE_OLD), str(CLAUDE_NEW)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "4 conversations: new 1, missing 1, unchanged 1, grown 1",
        "changed, newest first:",
        "  new        2025-03-02  Fresh [k-new] (2 messages)",
        "  grown      2025-03-01  Grows [k-grow] (2 -> 4 messages, differ from message 3)",
        "  missing    2025-01-03  Deleted [k-gone] (2 messages)",
    ]


def test_cli_diff_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(GPT_OLD), str(GPT_NEW), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["counts"] == {"new": 1, "missing": 1, "unchanged": 2, "grown": 2, "edited": 2, "unmatched": 0}
    assert len(out["conversations"]) == 6  # every conversation but the unchanged ones
    regen = next(c for c in out["conversations"] if c["id"] == "g-regen")
    assert regen == {
        "provider": "chatgpt",
        "id": "g-regen",
        "title": "Regenerated reply",
        "status": "edited",
        "messages_before": 2,
        "messages_after": 2,
        "first_difference": 1,
        "matched_by": "id",
        "created_at": "2024-12-24T00:31:40.000Z",
        "updated_at": "2024-12-24T03:00:00.000Z",
        "last_ts": "2024-12-24T03:00:01.000Z",
    }


def test_cli_diff_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(tmp_path / "absent.zip"), str(CLAUDE_NEW)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("memvelope: error:")


def test_each_provider_is_current_against_its_own_newest_export() -> None:
    h = history([GPT_OLD, CLAUDE_OLD, CLAUDE_NEW], dates=["2025-01-01", "2025-01-01", "2025-03-01"])
    convs = h["conversations"]
    chatgpt = convs[convs["provider"] == "chatgpt"]
    assert set(chatgpt["status"]) == {"current"}  # its only export is its newest, though older than Claude's
    claude = convs[convs["provider"] == "claude"].set_index("conversation_id")["status"]
    assert claude.to_dict() == {
        "k-same": "current",
        "k-grow": "current",
        "k-new": "current",
        "k-gone": "deleted-upstream",
    }
    assert list(h["snapshots"]["missing"]) == [0, 0, 1]  # Claude's second export against its first only


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.one_of(st.none(), st.text(max_size=5)), max_size=30),
    cuts=st.lists(st.integers(min_value=0, max_value=30), max_size=5),
    picks=st.lists(st.integers(min_value=0, max_value=10_000), max_size=40),
)
def test_messages_compared_from_a_chunked_text_column_give_the_texts_taken_whole(
    texts: list[str | None], cuts: list[int], picks: list[int]
) -> None:
    import numpy as np
    import pyarrow as pa

    from memvelope_tools._history.paths import Comparable

    bounds = sorted({0, len(texts), *(min(c, len(texts)) for c in cuts)})
    column = pa.chunked_array(
        [pa.array(texts[lo:hi], pa.string()) for lo, hi in itertools.pairwise(bounds)] + [pa.array([], pa.string())],
        type=pa.string(),
    )
    table = pa.table(
        {
            "role": pa.array(["user"] * len(texts)).dictionary_encode(),
            "ts": pa.array([None] * len(texts), pa.timestamp("ms", tz="UTC")),
            "text": column,
        }
    )
    rows = np.array([p % len(texts) for p in picks] if texts else [], dtype=np.int64)
    taken = Comparable(table).texts(rows)
    assert taken.to_pylist() == [texts[r] for r in rows]


# ---- an export holding no conversation -----------------------------------------------------------


def _through_a_folder(exports: list[Any], dates: list[str], folder: Path) -> dict[str, pd.DataFrame]:
    from memvelope_tools._history.folder import read_history
    from memvelope_tools._history_folder import add_to_history

    for export, date in zip(exports, dates, strict=True):
        add_to_history(export, folder, date=date)
    return read_history(folder)


def _statuses(h: dict[str, pd.DataFrame]) -> dict[str, Any]:
    convs = h["conversations"].sort_values(["provider", "conversation_key"])
    messages = h["messages"].sort_values(["conversation_key", "position", "first_seen"])
    return {
        "snapshots": rows(h["snapshots"], ["provider", "conversations", "messages", "new", "missing"]),
        "conversations": rows(convs, ["conversation_key", "status"]),
        "messages": rows(messages, ["conversation_key", "position", "status"]),
    }


@pytest.mark.parametrize("provider", ["chatgpt", "claude"])
@pytest.mark.parametrize("as_file", [True, False], ids=["file", "document"])
def test_an_export_of_no_conversation_leaves_every_earlier_one_deleted_upstream_in_memory_and_in_a_folder(
    provider: str, as_file: bool, tmp_path: Path
) -> None:
    earlier = _envelope([_conv("c1", "t", None, ["hello", "world"]), _conv("c2", "u", None, ["again"])], provider)
    empty = _envelope([], provider)
    exports: list[Any] = [earlier, empty]
    if as_file:
        exports = []
        for name, doc in (("earlier", earlier), ("empty", empty)):
            path = tmp_path / f"{name}.mve.json"
            path.write_text(json.dumps(doc), encoding="utf-8")
            exports.append(path)
    dates = ["2025-01-01", "2025-02-01"]
    merged = _statuses(history(exports, dates=dates))
    stored = _statuses(_through_a_folder(exports, dates, tmp_path / "h"))
    assert merged == stored
    # The empty export is the provider's newest: neither conversation is in it (the README's rule for status).
    assert merged["snapshots"] == [(provider, 2, 3, 2, 0), (provider, 0, 0, 0, 2)]
    assert [status for _, status in merged["conversations"]] == ["deleted-upstream"] * 2
    assert {status for _, _, status in merged["messages"]} == {"deleted-upstream"}


@pytest.mark.slow
@PROPERTY
@given(st.lists(st.one_of(st.just([]), _conversations(unique_ids=False)), min_size=2, max_size=4))
def test_a_folder_and_history_agree_on_any_sequence_of_exports(exports: list[list[dict[str, Any]]]) -> None:
    dates = [f"2025-0{i + 1}-01" for i in range(len(exports))]
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, convs in enumerate(exports):
            path = Path(tmp) / f"export-{i}.mve.json"
            path.write_text(json.dumps(_envelope(convs)), encoding="utf-8")
            paths.append(path)
        merged = _statuses(history(paths, dates=dates))
        stored = _statuses(_through_a_folder(paths, dates, Path(tmp) / "h"))
    assert merged == stored
