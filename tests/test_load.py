"""load(): every kind of source a user has, and the one line a wrong file gets (API side).

The envelopes expected from exports are what convert() gives for the same export, compared as
canonical bytes; the wrong-file messages are written out here in full.
"""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from small_exports import CHATGPT_CONV, CLAUDE_CONV

import memvelope_tools as mv
from memvelope_tools._convert import ConversionLog
from memvelope_tools._load import sniff
from memvelope_tools._sources import Found as Sniffed
from memvelope_tools._sources import wrong_file
from memvelope_tools.errors import ConversionError, FormatError, MemvelopeError

SAMPLE = mv.sample_path("chatgpt")
IR = Path(mv.__file__).parent / "samples" / "facts-chatgpt.mv.json"

ENVELOPE_TO_CONVERT = "already a Memvelope envelope, not an export: use info, parquet or report"
IR_TO_CONVERT = "already a Memvelope Facts IR document, not an export: use info, parquet or report"
PARQUET = (
    "a Parquet file, not JSON: give the folder that holds it (written by memvelope parquet) to search or topics, "
    "or read it with mv.read_parquet()"
)
PNG = (
    "a PNG image, not JSON: expected an export (its zip as downloaded, its folder or a conversations*.json file), "
    "an envelope or a Facts IR document"
)
CHATGPT_OBJECT = (
    "a single ChatGPT conversation, not an export: an export is an array of conversations; "
    "put it inside [ ] to convert it"
)
CLAUDE_OBJECT = (
    "a single Claude conversation, not an export: an export is an array of conversations; "
    "put it inside [ ] to convert it"
)
MANIFEST = "an export manifest (a list of the export's files): give the export's zip or folder instead"
ZIP_AS_DOCUMENT = (
    "an export zip, not a Memvelope document: convert it first (memvelope convert), "
    "or give it to info, parquet or report, which convert it"
)


def canonical(doc: dict) -> bytes:
    return mv.dumps_canonical(doc)


@pytest.fixture(scope="module")
def expected() -> bytes:
    return canonical(mv.convert(SAMPLE))


@pytest.fixture
def unzipped(tmp_path: Path) -> Path:
    folder = tmp_path / "export"
    with zipfile.ZipFile(SAMPLE) as archive:
        archive.extractall(folder)
    return folder


def parts_of(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("conversations*.json"))


# ---- every source kind ---------------------------------------------------------------------------


def test_zip_gives_convert_bytes(expected: bytes) -> None:
    assert canonical(mv.load(SAMPLE)) == expected
    assert canonical(mv.load(str(SAMPLE))) == expected


def test_folder_gives_convert_bytes(unzipped: Path, expected: bytes) -> None:
    assert canonical(mv.load(unzipped)) == expected


def test_list_of_parts_is_one_export(unzipped: Path, expected: bytes) -> None:
    parts = parts_of(unzipped)
    assert len(parts) == 2
    assert canonical(mv.load(parts)) == expected
    assert canonical(mv.load([str(p) for p in parts])) == canonical(mv.convert(*parts))


def test_one_part_file_gives_convert_bytes(unzipped: Path) -> None:
    part = parts_of(unzipped)[0]
    assert canonical(mv.load(part)) == canonical(mv.convert(part))


def test_part_bytes_and_file_object_give_convert_bytes(unzipped: Path) -> None:
    part = parts_of(unzipped)[0]
    want = canonical(mv.convert(part))
    assert canonical(mv.load(part.read_bytes())) == want
    with open(part, "rb") as fh:
        assert canonical(mv.load(fh)) == want


def test_zip_bytes_and_file_object_give_convert_bytes(expected: bytes) -> None:
    assert canonical(mv.load(SAMPLE.read_bytes())) == expected
    assert canonical(mv.load(io.BytesIO(SAMPLE.read_bytes()))) == expected
    with open(SAMPLE, "rb") as fh:
        assert canonical(mv.load(fh)) == expected


def test_envelope_file_bytes_dict_and_file_object(tmp_path: Path, expected: bytes) -> None:
    path = tmp_path / "history.mve.json"
    path.write_bytes(expected)
    assert canonical(mv.load(path)) == expected
    assert canonical(mv.load(expected)) == expected
    assert canonical(mv.load(io.BytesIO(expected))) == expected
    doc = json.loads(expected)
    assert mv.load(doc) is doc


def test_facts_ir_file_and_dict() -> None:
    doc = mv.load(IR)
    assert doc == json.loads(IR.read_bytes())
    assert doc["meta"]["format"] == "memvelope-ir-v0"
    assert mv.load(doc) is doc


def test_tilde_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expected: bytes) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    shutil.copy(SAMPLE, tmp_path / "chatgpt-export.zip")
    assert canonical(mv.load("~/chatgpt-export.zip")) == expected


def test_a_document_is_still_checked_strictly(tmp_path: Path) -> None:
    path = tmp_path / "bad.mve.json"
    path.write_text(json.dumps({"memvelope": "envelope-v0", "meta": {}, "conversations": []}))
    with pytest.raises(FormatError) as info:
        mv.load(path)
    assert info.value.msg == "missing field 'source_provider'" and info.value.path == "$.meta"


def test_report_counts_elements_of_the_other_provider(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    # Detection looks at the first five elements (Claude would win there): the Claude ones come after.
    path.write_text(json.dumps([CHATGPT_CONV] * 5 + [CLAUDE_CONV, CLAUDE_CONV]))
    report = ConversionLog()
    doc = mv.load(path, report=report)
    assert doc["meta"]["source_provider"] == "chatgpt" and doc["meta"]["conversation_count"] == 5
    assert report.foreign == 2
    alone = ConversionLog()
    mv.convert(SAMPLE, report=alone)
    assert alone.foreign == 0


# ---- wrong files ---------------------------------------------------------------------------------


def test_parquet_file(tmp_path: Path) -> None:
    folder = tmp_path / "pq"
    mv.to_parquet(SAMPLE, folder)
    path = folder / "messages.parquet"
    assert sniff(path) == Sniffed("parquet")
    with pytest.raises(FormatError) as info:
        mv.load(path)
    assert str(info.value) == f"{PARQUET} (in {path})"
    with pytest.raises(ConversionError) as converting:
        mv.convert(path)
    assert str(converting.value) == f"{PARQUET} (in {path})" and converting.value.reason == "invalid-json"


def test_other_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "photo.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
    with pytest.raises(FormatError) as info:
        mv.load(path)
    assert str(info.value) == f"{PNG} (in {path})"
    with pytest.raises(ConversionError) as converting:
        mv.convert(path)
    assert str(converting.value) == f"{PNG} (in {path})"


@pytest.mark.parametrize(("conversation", "message"), [(CHATGPT_CONV, CHATGPT_OBJECT), (CLAUDE_CONV, CLAUDE_OBJECT)])
def test_single_conversation_object(tmp_path: Path, conversation: dict, message: str) -> None:
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps(conversation))
    with pytest.raises(ConversionError) as info:
        mv.load(path)
    assert str(info.value) == f"{message} (in {path})"
    with pytest.raises(ConversionError) as converting:
        mv.convert(path)
    assert str(converting.value) == f"{message} (in {path})" and converting.value.reason == "no-provider"
    with pytest.raises(MemvelopeError) as parsed:
        mv.load(conversation)
    assert str(parsed.value) == message
    # inside [ ] it converts
    path.write_text(json.dumps([conversation]))
    assert mv.load(path)["meta"]["conversation_count"] == 1


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("manifest.json", {"version": 1, "files": ["conversations-000.zip", "users-000.zip"]}),
        ("export_manifest.json", {"version": 1, "export_files": [{"path": "conversations-000.json"}]}),
    ],
)
def test_export_manifest(tmp_path: Path, name: str, value: dict) -> None:
    path = tmp_path / name
    path.write_text(json.dumps(value))
    assert sniff(path) == Sniffed("manifest")
    with pytest.raises(ConversionError) as info:
        mv.load(path)
    assert str(info.value) == f"{MANIFEST} (in {path})"
    with pytest.raises(ConversionError) as converting:
        mv.convert(path)
    assert str(converting.value) == f"{MANIFEST} (in {path})"


def test_envelope_and_ir_given_to_convert(tmp_path: Path, expected: bytes) -> None:
    path = tmp_path / "history.mve.json"
    path.write_bytes(expected)
    with pytest.raises(ConversionError) as info:
        mv.convert(path)
    assert str(info.value) == f"{ENVELOPE_TO_CONVERT} (in {path})" and info.value.reason == "no-provider"
    with pytest.raises(ConversionError) as ir:
        mv.convert(IR)
    assert str(ir.value) == f"{IR_TO_CONVERT} (in {IR})"


def test_an_envelope_among_export_parts_still_contributes_nothing(tmp_path: Path, expected: bytes) -> None:
    """The spec's rule is unchanged: a part whose top level is an object adds nothing to the export."""
    envelope = tmp_path / "history.mve.json"
    envelope.write_bytes(expected)
    part = tmp_path / "conversations.json"
    part.write_text(json.dumps([CHATGPT_CONV]))
    assert canonical(mv.convert(part, envelope)) == canonical(mv.convert(part))


def test_zip_where_a_document_is_required() -> None:
    assert wrong_file(sniff(SAMPLE), "document") == (ZIP_AS_DOCUMENT, "not-memvelope")
    assert wrong_file(sniff(SAMPLE), "any") is None


def test_sniff_kinds(tmp_path: Path, unzipped: Path, expected: bytes) -> None:
    envelope = tmp_path / "e.json"
    envelope.write_bytes(expected)
    reordered = tmp_path / "r.json"
    doc = json.loads(expected)
    reordered.write_text(
        json.dumps({"conversations": doc["conversations"], "meta": doc["meta"], "memvelope": "envelope-v0"})
    )
    assert sniff(SAMPLE) == Sniffed("zip")
    assert sniff(unzipped) == Sniffed("folder")
    assert sniff(parts_of(unzipped)[0]) == Sniffed("export")
    assert sniff(envelope) == Sniffed("envelope")
    assert sniff(reordered) == Sniffed("envelope")  # tags not first: judged by the parsed value
    assert sniff(IR) == Sniffed("ir")
    assert sniff(tmp_path / "nothing.json") == Sniffed("missing")
    assert sniff(CHATGPT_CONV) == Sniffed("conversation", "chatgpt")
    assert sniff(b"[]") == Sniffed("export")
    assert sniff(b"PAR1\x00\x00") == Sniffed("parquet")
    assert sniff(json.dumps([1]).encode("utf-16")) == Sniffed("utf16")


def test_a_list_is_paths(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        mv.load([CHATGPT_CONV])  # type: ignore[list-item]
    assert info.value.msg == (
        "a list given to load() is the parts of one export, as paths; give each document separately"
    )


# ---- frames, Parquet, plots through load ---------------------------------------------------------


def test_frames_on_a_zip(tmp_path: Path, expected: bytes) -> None:
    envelope = tmp_path / "chatgpt-export.mve.json"
    envelope.write_bytes(expected)
    from_zip = mv.messages_frame(SAMPLE)
    from_envelope = mv.messages_frame(envelope, sources=["chatgpt-export.zip"])
    assert from_zip.equals(from_envelope)
    assert from_zip.shape == (114, 11)
    assert set(from_zip["source"]) == {"chatgpt-export.zip"}
    assert set(from_zip["provider"]) == {"chatgpt"}
    convs = mv.conversations_frame(str(SAMPLE))
    assert len(convs) == 40 and convs["n_messages"].sum() == 114


def test_frames_list_is_several_documents(tmp_path: Path) -> None:
    frame = mv.conversations_frame([SAMPLE, mv.sample_path("claude")])
    assert list(dict.fromkeys(frame["source"])) == ["chatgpt-export.zip", "claude-export.zip"]
    assert list(dict.fromkeys(frame["provider"])) == ["chatgpt", "claude"]


def test_to_parquet_on_a_zip(tmp_path: Path) -> None:
    written = mv.to_parquet(SAMPLE, tmp_path / "out")
    frames = mv.read_parquet(tmp_path / "out")
    assert set(written) == {"conversations", "messages", "nodes", "assets", "projects"}  # an export: its files too
    assert len(frames["messages"]) == 114
    assert frames["nodes"]["message_id"].notna().sum() == 114  # every message is one node
    assert set(frames["messages"]["provider"]) == {"chatgpt"}


@pytest.mark.slow
def test_plot_archetype_chart_takes_a_path() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        assert mv.plot.archetype_chart(str(IR), ax=ax) is ax
    finally:
        plt.close(fig)


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le"], ids=["with-bom", "without-bom"])
def test_utf16_text_is_named(tmp_path: Path, codec: str) -> None:
    path = tmp_path / "history.mve.json"
    path.write_bytes(json.dumps({"memvelope": "envelope-v0"}).encode(codec))
    with pytest.raises(FormatError) as info:
        mv.load(path)
    assert info.value.msg == "UTF-16 text, not UTF-8: save the file as UTF-8 and try again"
    assert info.value.reason == "invalid-json"
