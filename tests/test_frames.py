"""memvelope_tools._frames: declared dtypes, values checked by hand, several documents, dedupe, tz."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvelope_tools._frames import ARCHETYPE_COLUMNS, CONVERSATION_COLUMNS, FACT_COLUMNS, MESSAGE_COLUMNS, word_counts
from memvelope_tools._frames.columns import pandas_dtypes
from memvelope_tools._frames.envelopes import conversations_frame, messages_frame
from memvelope_tools._frames.facts import archetype_frame, facts_frame
from memvelope_tools.errors import FormatError

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
HAND = Path(__file__).resolve().parent / "data" / "hand.mve.json"
ENVELOPES = [*sorted((FIXTURES / "envelope").glob("*/expected.mve.json")), FIXTURES / "sample.mve.json"]
IR_VALID = sorted((FIXTURES / "ir" / "valid").glob("*.mv.json"))
assert len(ENVELOPES) > 10 and IR_VALID, "fixtures not found"


def T(s: str) -> pd.Timestamp:
    return pd.Timestamp(s).tz_convert("UTC")


def _fffd(s: str) -> str:
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _hand() -> dict[str, Any]:
    return json.loads(HAND.read_bytes())


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UnicodeWarning")
def test_dtypes_are_exactly_the_declared_ones_on_every_fixture() -> None:
    convs, msgs = conversations_frame(ENVELOPES), messages_frame(ENVELOPES)
    assert convs.dtypes.to_dict() == pandas_dtypes(CONVERSATION_COLUMNS)
    assert msgs.dtypes.to_dict() == pandas_dtypes(MESSAGE_COLUMNS)
    assert list(msgs["role"].cat.categories) == ["user", "assistant"]
    assert str(msgs["ts"].dtype) == "datetime64[ms, UTC]"
    assert isinstance(msgs["text"].dtype, pd.StringDtype)
    facts = facts_frame(IR_VALID)
    assert facts.dtypes.to_dict() == pandas_dtypes(FACT_COLUMNS)
    assert list(facts["subject_type"].cat.categories) == ["self", "person", "company", "project", "other"]
    assert list(facts["category"].cat.categories) == [
        "identity",
        "career",
        "projects",
        "preferences",
        "instructions",
        "relationship",
    ]
    assert archetype_frame(IR_VALID).dtypes.to_dict() == pandas_dtypes(ARCHETYPE_COLUMNS)


@pytest.mark.filterwarnings("ignore::UnicodeWarning")
def test_messages_frame_holds_every_message_of_every_fixture_in_order() -> None:
    # Reference rows built the slow, obvious way, straight from the JSON.
    frame = messages_frame(ENVELOPES)
    rows = []
    for path in ENVELOPES:
        doc = json.loads(path.read_bytes())
        for i, conv in enumerate(doc["conversations"]):
            for j, m in enumerate(conv["messages"]):
                rows.append((path.name, i, conv["id"], m["id"], j, m["role"], m["ts"], m["text"]))
    assert len(frame) == len(rows)
    got = list(
        zip(
            frame["conv_index"],
            frame["conversation_id"],
            frame["message_id"],
            frame["position"],
            frame["role"],
            frame["text"],
            strict=True,
        )
    )
    # Unpaired surrogates (some fixtures have them) cannot be UTF-8: the frame shows U+FFFD instead.
    assert got == [(r[1], pd.NA if r[2] is None else _fffd(r[2]), r[3], r[4], r[5], _fffd(r[7])) for r in rows]
    stamps = [pd.NaT if r[6] is None else T(r[6]) for r in rows]
    assert frame["ts"].isna().tolist() == [s is pd.NaT for s in stamps]
    assert [t for t in frame["ts"] if t is not pd.NaT] == [s for s in stamps if s is not pd.NaT]


def test_hand_built_envelope_values() -> None:
    msgs = messages_frame(HAND)
    assert msgs["source"].tolist() == ["hand.mve.json"] * 5
    assert msgs["conv_index"].tolist() == [0, 0, 0, 1, 2]
    assert msgs["conversation_id"].isna().tolist() == [False, False, False, True, False]
    assert msgs["conversation_id"].dropna().tolist() == ["c1", "c1", "c1", "c1"]  # duplicates survive
    assert msgs["message_id"].tolist() == ["m1", "m2", "m3", "m1", "m1"]
    assert msgs["position"].tolist() == [0, 1, 2, 0, 0]
    assert msgs["role"].tolist() == ["user", "assistant", "user", "assistant", "user"]
    assert msgs["ts"].iloc[1] == T("2024-01-01T09:59:00.123Z")
    assert msgs["ts"].isna().tolist() == [False, False, True, True, False]
    assert msgs["text"].iloc[1] == "Olá — tudo bem?\n\nSim"
    assert msgs["chars"].tolist() == [11, 20, 2, 4, 5]  # counted by hand: code points, 😀 is one
    assert msgs["words"].tolist() == [2, 5, 1, 2, 1]

    convs = conversations_frame(HAND)
    assert convs["conv_index"].tolist() == [0, 1, 2]
    assert convs["conversation_id"].isna().tolist() == [False, True, False]
    assert convs["title"].tolist() == ["First", "", "First, exported again"]
    assert convs["n_messages"].tolist() == [3, 1, 1]
    assert convs["n_user"].tolist() == [2, 0, 1]
    assert convs["n_assistant"].tolist() == [1, 1, 0]
    assert convs["chars"].tolist() == [33, 4, 5]
    # Message order is not time order: first_ts/last_ts are the earliest and latest, nulls skipped.
    assert convs["first_ts"].iloc[0] == T("2024-01-01T09:59:00.123Z")
    assert convs["last_ts"].iloc[0] == T("2024-01-01T10:00:05Z")
    assert convs["first_ts"].isna().tolist() == [False, True, False]
    assert convs["created_at"].isna().tolist() == [False, True, False]
    assert convs["updated_at"].iloc[2] == T("2024-03-01T00:00:00Z")


def test_tz_is_for_display_only() -> None:
    utc = conversations_frame(HAND)
    berlin = conversations_frame(HAND, tz="Europe/Berlin")
    assert str(berlin["created_at"].dtype) == "datetime64[ms, Europe/Berlin]"
    assert berlin["created_at"].iloc[0].hour == 11  # 10:00Z is 11:00 in Berlin in January
    assert (berlin["created_at"].dropna() == utc["created_at"].dropna()).all()  # same instants
    msgs = messages_frame(HAND, tz="America/New_York")
    assert str(msgs["ts"].dtype) == "datetime64[ms, America/New_York]"
    assert msgs["ts"].iloc[0] == T("2024-01-01T10:00:05Z")


def test_several_documents_sources_from_paths_positions_or_labels(tmp_path: Path) -> None:
    a = tmp_path / "2024.mve.json"
    shutil.copy(HAND, a)
    sample = FIXTURES / "sample.mve.json"
    msgs = messages_frame([a, sample])
    n_sample = sum(len(c["messages"]) for c in json.loads(sample.read_bytes())["conversations"])
    assert msgs["source"].value_counts().to_dict() == {"2024.mve.json": 5, "sample.mve.json": n_sample}
    assert msgs["source"].tolist()[:5] == ["2024.mve.json"] * 5  # document order is kept
    assert conversations_frame([_hand(), _hand()])["source"].tolist() == ["doc0"] * 3 + ["doc1"] * 3
    labelled = conversations_frame([_hand(), a], sources=["old", "new"])
    assert labelled["source"].tolist() == ["old"] * 3 + ["new"] * 3
    with pytest.raises(ValueError, match="2 labels for 1 document"):
        conversations_frame([a], sources=["x", "y"])


def test_two_files_with_the_same_name_are_told_apart_by_their_paths(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shutil.copy(HAND, tmp_path / "a" / "e.json")
    shutil.copy(HAND, tmp_path / "b" / "e.json")
    convs = conversations_frame([tmp_path / "a" / "e.json", tmp_path / "b" / "e.json"])
    assert convs["source"].unique().tolist() == [str(tmp_path / "a" / "e.json"), str(tmp_path / "b" / "e.json")]


def test_no_dedupe_by_default_and_dedupe_keeps_latest_updated_at() -> None:
    old, new = _hand(), _hand()
    new["conversations"][2]["updated_at"] = None  # in the later export, the copy has no updated_at
    both = conversations_frame([old, new])
    assert len(both) == 6
    kept = conversations_frame([old, new], dedupe=True)
    # id c1 occurs 4 times; the latest updated_at is old's conversation 2 (2024-03-01); null ids stay.
    assert kept[["source", "conv_index"]].values.tolist() == [["doc0", 1], ["doc0", 2], ["doc1", 1]]
    assert kept["conversation_id"].isna().tolist() == [True, False, True]
    msgs = messages_frame([old, new], dedupe=True)
    assert msgs[["source", "conv_index", "text"]].values.tolist() == [
        ["doc0", 1, "😀 hi"],
        ["doc0", 2, "again"],
        ["doc1", 1, "😀 hi"],
    ]


def test_dedupe_tie_goes_to_the_later_input() -> None:
    first, second = _hand(), _hand()
    second["conversations"][2]["title"] = "from the second export"
    kept = conversations_frame([first, second], dedupe=True)
    assert kept.loc[kept["conversation_id"] == "c1", "title"].tolist() == ["from the second export"]


def test_empty_input_gives_empty_typed_frames() -> None:
    env = _hand()
    env["conversations"] = []
    for frame, columns in (
        (messages_frame(env), MESSAGE_COLUMNS),
        (conversations_frame([]), CONVERSATION_COLUMNS),
        (facts_frame([]), FACT_COLUMNS),
    ):
        assert len(frame) == 0 and frame.dtypes.to_dict() == pandas_dtypes(columns)


def test_wrong_layer_and_bad_timestamps_are_format_errors() -> None:
    with pytest.raises(FormatError) as info:
        messages_frame(IR_VALID[0])
    assert info.value.reason == "wrong-layer" and "Facts IR" in str(info.value)
    with pytest.raises(FormatError) as info:
        facts_frame(HAND)
    assert info.value.reason == "wrong-layer"
    env = _hand()
    env["conversations"][2]["messages"][0]["ts"] = "yesterday"
    with pytest.raises(FormatError) as info:
        messages_frame(env)
    assert info.value.reason == "bad-timestamp" and info.value.path == "$.conversations[2].messages[0].ts"
    env = _hand()
    env["conversations"][1]["updated_at"] = "2024-13-01T00:00:00.000Z"
    with pytest.raises(FormatError) as info:
        conversations_frame(env)
    assert info.value.path == "$.conversations[1].updated_at"


def test_shape_errors_in_messages_carry_their_path_from_frames_too() -> None:
    env = _hand()
    del env["conversations"][2]["messages"][0]["text"]
    with pytest.raises(FormatError) as info:
        messages_frame(env)
    assert info.value.reason == "bad-shape" and info.value.path == "$.conversations[2].messages[0]"


def test_unpaired_surrogates_become_replacement_characters_with_a_warning() -> None:
    env = _hand()
    env["conversations"][0]["messages"][2]["text"] = "o\ud800k"
    with pytest.warns(UnicodeWarning, match="1 text value"):
        msgs = messages_frame(env)
    assert msgs["text"].iloc[2] == "o\ufffdk" and msgs["chars"].iloc[2] == 3


def test_unpaired_surrogates_in_the_provider_and_the_source_label_too() -> None:
    env = _hand()
    env["meta"]["source_provider"] = "\ud800"
    for make in (conversations_frame, messages_frame):
        with pytest.warns(UnicodeWarning) as caught:
            frame = make(env, sources=["a\udcffb"])
        warned = sorted(str(w.message).split(" contain")[0] for w in caught)
        assert warned == ["1 source provider value", "1 source value"]
        assert set(frame["provider"]) == {"\ufffd"} and set(frame["source"]) == {"a\ufffdb"}


def test_facts_frame_on_the_fixtures() -> None:
    path = FIXTURES / "ir" / "valid" / "offset-and-unknown-fields.mv.json"
    facts = facts_frame(path)
    doc = json.loads(path.read_bytes())
    assert len(facts) == len(doc["facts"]) == 5
    assert facts["fact_index"].tolist() == [0, 1, 2, 3, 4]
    assert facts["subject"].tolist() == [f["subject"] for f in doc["facts"]]
    assert facts["category"].tolist() == ["career", "preferences", "identity", "career", "relationship"]
    assert facts["effective_date"].tolist() == ["2019", "2026-06-02", "2026-05", "2026-05-14", "2026-05-20"]
    assert facts["in_text_date"].isna().tolist() == [False, True, True, False, True]
    assert facts["convo_id"].isna().tolist() == [False, False, False, False, True]
    nulls = facts_frame(FIXTURES / "ir" / "valid" / "producer-lacks-subjects.mv.json")
    raw = json.loads((FIXTURES / "ir" / "valid" / "producer-lacks-subjects.mv.json").read_bytes())
    assert nulls["subject_type"].isna().tolist() == [f["subject_type"] is None for f in raw["facts"]]


def test_archetype_frame_meta_and_generated_at_in_utc() -> None:
    arch = archetype_frame(
        [
            FIXTURES / "ir" / "valid" / "offset-and-unknown-fields.mv.json",
            FIXTURES / "ir" / "valid" / "edge-values.mv.json",
        ]
    )
    assert arch["provider"].tolist() == ["claude", "claude"]
    assert arch["generated_at"].tolist() == [T("2026-06-30T17:28:47Z"), T("2026-06-30T17:28:47.559955Z")]
    assert arch["style"].iloc[0] == "reflective (deep self-knowledge)"
    assert arch["self_ratio"].iloc[0] == 0.6 and arch["distinct_entities"].iloc[0] == 2
    assert arch["categories"].iloc[0] == {"identity": 1, "career": 2, "preferences": 1, "relationship": 1}
    naive = json.loads((FIXTURES / "ir" / "invalid" / "naive-generated-at.mv.json").read_bytes())
    assert archetype_frame(naive)["generated_at"].isna().all()  # no offset: not guessed as UTC


def test_the_non_ascii_whitespace_list_is_complete() -> None:
    spaces = [c for c in map(chr, range(0x80, 0x110000)) if c.isspace()]
    text = pa.array([f"a{c}b" for c in spaces] + [f"a{chr(c)}b" for c in range(0x80, 0x3100)])
    expected = [2] * len(spaces) + [len(f"a{chr(c)}b".split()) for c in range(0x80, 0x3100)]
    assert word_counts(text).tolist() == expected


@pytest.mark.slow
@given(
    st.lists(
        st.text(
            alphabet=st.sampled_from(
                [
                    "a",
                    "é",
                    "😀",
                    " ",
                    "\n",
                    "\t",
                    "\x1c",
                    "\x1f",
                    "\x00",
                    "\x85",
                    "\xa0",
                    "\u1680",
                    "\u2000",
                    "\u200a",
                    "\u200b",
                    "\u2028",
                    "\u202f",
                    "\u205f",
                    "\u3000",
                    "\ufeff",
                    "\u0800",
                    "\u2080",
                ]
            ),
            max_size=12,
        ),
        max_size=40,
    ),
    st.integers(0, 5),
)
def test_word_counts_equal_str_split(texts: list[str], cut: int) -> None:
    arr = pa.array(texts, pa.string()).slice(min(cut, len(texts)))
    assert word_counts(arr).tolist() == [len(t.split()) for t in texts[min(cut, len(texts)) :]]


def test_large_text_crosses_word_count_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    words_module = importlib.import_module("memvelope_tools._frames.words")
    monkeypatch.setattr(words_module, "_WORD_CHUNK", 7)
    texts = ["one two", " three\u3000four ", "", "five", "six seven eight nine"]
    assert word_counts(pa.array(texts)).tolist() == [2, 2, 0, 1, 4]


def test_bit_count_without_numpy_2_counts_as_numpy_2_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """NumPy 1.x has no ``np.bitwise_count``: the byte-table count gives the same bits, and the same words."""
    import importlib

    words_module = importlib.import_module("memvelope_tools._frames.words")
    edges = np.array([0, 1, 1 << 63, (1 << 64) - 1, 0x0123456789ABCDEF], dtype=np.uint64)
    values = np.concatenate([edges, np.random.default_rng(0).integers(0, 1 << 64, 2000, dtype=np.uint64)])
    for sample in (values, values[::3], values[:0]):
        assert words_module._bytewise_bit_count(sample).tolist() == [int(v).bit_count() for v in sample]
    monkeypatch.setattr(words_module, "_bit_count", words_module._bytewise_bit_count)
    monkeypatch.setattr(words_module, "_WORD_CHUNK", 7)
    texts = ["one two", " three\u3000four ", "", "five", "six seven eight nine", "x " * 100, "\xa0y\u2028z"]
    assert word_counts(pa.array(texts)).tolist() == [len(t.split()) for t in texts]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UnicodeWarning")
def test_batches_do_not_change_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    frames_module = importlib.import_module("memvelope_tools._frames.flatten")
    whole = messages_frame(ENVELOPES)
    convs = conversations_frame(ENVELOPES)
    monkeypatch.setattr(frames_module, "_BATCH", 2)
    pd.testing.assert_frame_equal(messages_frame(ENVELOPES), whole)
    pd.testing.assert_frame_equal(conversations_frame(ENVELOPES), convs)


def test_a_dict_input_is_not_modified_and_path_input_equals_dict_input() -> None:
    env = _hand()
    before = copy.deepcopy(env)
    from_dict = messages_frame(env, sources=["hand.mve.json"])
    assert env == before
    pd.testing.assert_frame_equal(messages_frame(HAND), from_dict)
    assert np.array_equal(conversations_frame(HAND)["chars"].to_numpy(), [33, 4, 5])


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UnicodeWarning")
@pytest.mark.parametrize("chunk", [1, 7, 4 << 20])
def test_files_are_flattened_while_parsed_with_the_same_result(
    tmp_path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    walker = importlib.import_module("memvelope_tools._json.walker")
    windows = importlib.import_module("memvelope_tools._stable").Windows
    monkeypatch.setattr("memvelope_tools._stable.WINDOW", chunk)
    for path in [*ENVELOPES, HAND]:
        doc = json.loads(path.read_bytes())
        kinds = [kind for kind, _ in walker.stream_envelope(windows.of_pieces([path.read_bytes()]))]
        assert kinds[-1] == "members" and "spans" in kinds  # read a window at a time, no fallback
        pd.testing.assert_frame_equal(messages_frame(path, sources=["x"]), messages_frame(doc, sources=["x"]))
        pd.testing.assert_frame_equal(conversations_frame(path, sources=["x"]), conversations_frame(doc, sources=["x"]))


@pytest.mark.parametrize(
    "text",
    [
        # conversations before the tag, a repeated key, a trailing comma: the file is read whole instead
        lambda d: json.dumps({"conversations": d["conversations"], "memvelope": "envelope-v0", "meta": d["meta"]}),
        lambda d: json.dumps(d)[:-1] + ', "meta": ' + json.dumps(d["meta"]) + "}",
        lambda d: "\ufeff" + json.dumps(d, indent=1),
    ],
)
def test_unusual_files_give_the_same_frames(tmp_path: Path, text: Any) -> None:
    path = tmp_path / "e.json"
    path.write_text(text(_hand()), encoding="utf-8")
    pd.testing.assert_frame_equal(messages_frame(path), messages_frame(_hand(), sources=["e.json"]))


def test_errors_from_files_read_while_flattening(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text(json.dumps(_hand())[:-40], encoding="utf-8")
    with pytest.raises(FormatError) as info:
        messages_frame(path)
    assert info.value.reason == "invalid-json" and str(path) in str(info.value)
    doc = _hand()
    doc["meta"]["source_provider"] = 7  # meta comes first, but is checked once the file is read
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(FormatError) as info:
        messages_frame(path)
    assert info.value.path == "$.meta.source_provider"
    doc = _hand()
    doc["conversations"][2]["messages"][0]["ts"] = 5
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(FormatError) as info:
        conversations_frame(path)
    assert info.value.path == "$.conversations[2].messages[0].ts"
    doc = _hand()
    doc["memvelope"] = "envelope-v1"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(FormatError) as info:
        messages_frame(path)
    assert info.value.reason == "unsupported-tag"


def test_a_huge_integer_in_an_unknown_field_of_a_file(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    doc = _hand()
    path.write_text(json.dumps(doc)[:-1] + ', "x-big": ' + "7" * 5000 + "}", encoding="utf-8")
    with pytest.raises(FormatError) as info:  # the whole-file read says why, as read() does
        messages_frame(path)
    assert info.value.reason == "invalid-json" and "4300 digits" in str(info.value)
