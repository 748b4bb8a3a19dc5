"""``mv.to_markdown`` and ``memvelope markdown``: one note per conversation, written again only when it
changes, edited notes left alone, names safe on every system, YAML front matter read back as written."""

from __future__ import annotations

import json
import os
import re
import unicodedata
import warnings
from pathlib import Path
from typing import Any

import pytest

import memvelope_tools as mv
from memvelope_tools._vault.front_matter import quoted
from memvelope_tools._vault.names import base_name, folded, safe_stem, title_part
from memvelope_tools._vault.vault import MANIFEST
from memvelope_tools.cli import main
from memvelope_tools.errors import FormatError, InputError

LONG_AGO = 1_000_000_000  # seconds: every file is set to this time, so a rewrite shows in its mtime


def snapshot(vault: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of ``vault`` (the manifest included): its bytes and its mtime in ns."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(vault.iterdir()) if p.is_file()}


def age(vault: Path) -> None:
    for path in vault.iterdir():
        os.utime(path, (LONG_AGO, LONG_AGO), follow_symlinks=False)


def front(path: Path) -> dict[str, str]:
    """The front matter of a note as raw ``key: value`` text (no YAML library needed)."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    block = text[4 : text.index("\n---\n")]
    return dict(line.split(": ", 1) for line in block.splitlines())


def by_id(vault: Path) -> dict[str, str]:
    """Each note's conversation id (as its front matter quotes it, unquoted here) -> the note's name."""
    return {json.loads(front(p)["id"]): p.name for p in vault.glob("*.md")}


def counts(done: dict[str, list[Path]]) -> dict[str, int]:
    return {k: len(v) for k, v in done.items()}


# ---- incremental ---------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["chatgpt", "claude"])
def test_a_vault_written_twice_writes_no_file_the_second_time(provider: str, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    export = mv.sample_path(provider)
    first = mv.to_markdown(export, vault)
    n = len(mv.conversations_frame(export))
    assert counts(first) == {"new": n, "updated": 0, "unchanged": 0, "edited": 0}
    assert len(list(vault.glob("*.md"))) == n and (vault / MANIFEST).is_file()
    age(vault)
    before = snapshot(vault)
    again = mv.to_markdown(export, vault)
    assert counts(again) == {"new": 0, "updated": 0, "unchanged": n, "edited": 0}
    assert snapshot(vault) == before  # content and mtime of every note and of the manifest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vault"]  # nothing beside the vault


def test_a_note_holds_its_conversation(tmp_path: Path) -> None:
    export = mv.sample_path("chatgpt")
    mv.to_markdown(export, tmp_path)
    convs = mv.conversations_frame(export)
    msgs = mv.messages_frame(export)
    conv = convs.iloc[0]
    note = tmp_path / by_id(tmp_path)[conv["conversation_id"]]
    head = front(note)
    assert json.loads(head["title"]) == conv["title"]
    assert head["provider"] == "chatgpt" and int(head["messages"]) == conv["n_messages"]
    assert head["created"] == conv["created_at"].strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    assert "status" not in head and "first_seen" not in head  # an export's conversations are all current
    assert note.name == f"{conv['created_at']:%Y-%m-%d} {conv['title']}.md"
    body = note.read_text(encoding="utf-8").split("\n---\n", 1)[1]
    headings = re.findall(r"^## (.*)$", body, flags=re.MULTILINE)
    mine = msgs[msgs["conversation_id"] == conv["conversation_id"]]
    assert headings == [f"{r.role.capitalize()} · {r.ts:%Y-%m-%d %H:%M:%S} UTC" for r in mine.itertuples()]
    for text in mine["text"]:
        assert text.strip() in body


def _history(tmp_path: Path) -> tuple[Path, Path, Path]:
    older, newer = mv.history_samples()
    folder = tmp_path / "history"
    mv.add_to_history(older, folder)
    mv.add_to_history(newer, folder)
    return older, newer, folder


def test_from_a_history_folder_only_the_changed_and_deleted_notes_change(tmp_path: Path) -> None:
    older, newer, history = _history(tmp_path)
    vault = tmp_path / "vault"
    mv.to_markdown(older, vault)
    mv.to_markdown(older, vault)
    names = by_id(vault)
    age(vault)
    before = snapshot(vault)
    changes = mv.diff(older, newer)
    status = dict(zip(changes["id"], changes["status"], strict=True))
    assert sorted(status.values()).count("grown") == 3 and list(status.values()).count("edited") == 2

    done = mv.to_markdown(history, vault)

    after = snapshot(vault)
    changed = {name for name in before if name != MANIFEST and after[name] != before[name]}
    assert changed == {names[i] for i, s in status.items() if s in ("grown", "edited", "missing")}
    added = set(after) - set(before)
    assert {json.loads(front(vault / n)["id"]) for n in added} == {i for i, s in status.items() if s == "new"}
    assert counts(done) == {"new": 6, "updated": 7, "unchanged": 27, "edited": 0}
    for i, s in status.items():
        head = front(vault / by_id(vault)[i])
        if s == "missing":  # deleted upstream: kept, marked, with the dates of the exports that held it
            assert head["status"] == "deleted-upstream"
            assert (head["first_seen"], head["last_seen"]) == ("2026-05-01T08:30:00Z", "2026-05-01T08:30:00Z")
        else:
            assert "status" not in head and "last_seen" not in head
    edited = [i for i, s in status.items() if s == "edited"]
    assert all("· edited away, last seen 2026-05-01" in (vault / names[i]).read_text("utf-8") for i in edited)
    age(vault)
    settled = snapshot(vault)
    assert counts(mv.to_markdown(history, vault))["unchanged"] == 40
    assert snapshot(vault) == settled


def test_a_later_export_rewrites_only_what_grew_or_was_edited_and_keeps_the_missing(tmp_path: Path) -> None:
    older, newer = mv.history_samples()
    changes = mv.diff(older, newer)
    status = dict(zip(changes["id"], changes["status"], strict=True))
    vault = tmp_path / "vault"
    mv.to_markdown(older, vault)
    names = by_id(vault)
    age(vault)
    before = snapshot(vault)
    done = mv.to_markdown(newer, vault)
    after = snapshot(vault)
    changed = {name for name in before if name != MANIFEST and after[name] != before[name]}
    assert changed == {names[i] for i, s in status.items() if s in ("grown", "edited")}
    missing = [names[i] for i, s in status.items() if s == "missing"]
    assert missing and all(after[name] == before[name] for name in missing)  # kept as they were
    assert counts(done) == {"new": 6, "updated": 5, "unchanged": 27, "edited": 0}


# ---- edited notes ----------------------------------------------------------------------------------


def test_an_edited_note_is_left_alone_and_said_unless_forced(tmp_path: Path, capsys: Any) -> None:
    older, _, history = _history(tmp_path)
    vault = tmp_path / "vault"
    mv.to_markdown(older, vault)
    changes = mv.diff(*mv.history_samples())
    grown = changes.loc[changes["status"] == "grown", "id"].iloc[0]
    note = vault / by_id(vault)[grown]
    mine = note.read_text(encoding="utf-8") + "\nMy own thoughts on this.\n"
    note.write_text(mine, encoding="utf-8")

    assert main(["markdown", str(history), "-o", str(vault)]) == 0
    err = capsys.readouterr().err
    assert note.read_text(encoding="utf-8") == mine
    assert f"memvelope: note: {note} was edited since memvelope wrote it: left as it is\n" in err
    assert "1 note edited since written left alone (--force replaces it)" in err.splitlines()[-1]

    with pytest.warns(UserWarning, match="edited since memvelope wrote it"):
        again = mv.to_markdown(history, vault)
    assert again["edited"] == [note] and note.read_text(encoding="utf-8") == mine

    fresh = tmp_path / "fresh"
    mv.to_markdown(history, fresh)
    forced = mv.to_markdown(history, vault, force=True)
    assert forced["edited"] == [] and note in forced["updated"]
    assert note.read_bytes() == (fresh / note.name).read_bytes()


def test_a_file_the_command_did_not_write_is_never_touched(tmp_path: Path) -> None:
    export = mv.sample_path("claude")
    convs = mv.conversations_frame(export)
    first = convs.iloc[0]
    taken = f"{first['created_at']:%Y-%m-%d} {first['title']}.md"
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / taken.upper()).write_text("a note of my own\n", encoding="utf-8")  # the same name but for case
    outside = tmp_path / "outside.md"
    outside.write_text("outside\n", encoding="utf-8")
    mv.to_markdown(export, vault)
    assert (vault / taken.upper()).read_text(encoding="utf-8") == "a note of my own\n"
    name = by_id(vault)[first["conversation_id"]]
    assert re.fullmatch(re.escape(taken[:-3]) + r" \([0-9a-f]{8}\)\.md", name)
    # a note replaced by a link to a file outside: the file outside is never written, even with force
    (vault / name).unlink()
    (vault / name).symlink_to(outside)
    with pytest.warns(UserWarning):
        assert mv.to_markdown(export, vault)["edited"] == [vault / name]
    mv.to_markdown(export, vault, force=True)
    assert outside.read_text(encoding="utf-8") == "outside\n" and not (vault / name).is_symlink()


def test_a_manifest_pointing_outside_the_vault_or_damaged_is_refused(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    mv.to_markdown(mv.sample_path("claude"), vault)
    manifest = json.loads((vault / MANIFEST).read_bytes())
    manifest["notes"]["../escape.md"] = {"conversation": "claude:id:x", "sha256": "0" * 64}
    (vault / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    age(vault)
    before = snapshot(vault)
    with pytest.raises(FormatError) as caught:
        mv.to_markdown(mv.sample_path("claude"), vault)
    assert caught.value.reason == "bad-vault" and "'../escape.md'" in str(caught.value)
    (vault / MANIFEST).write_text("{", encoding="utf-8")
    os.utime(vault / MANIFEST, (LONG_AGO, LONG_AGO))
    before[MANIFEST] = ((vault / MANIFEST).read_bytes(), LONG_AGO * 10**9)
    with pytest.raises(FormatError, match="cannot be read as JSON"):
        mv.to_markdown(mv.sample_path("claude"), vault)
    assert snapshot(vault) == before and not (tmp_path / "escape.md").exists()


# ---- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda d: d / "missing.zip", "not-found"),
        (lambda d: mv.sample_path("facts-chatgpt"), "wrong-layer"),
        (lambda d: (d / "broken.json").write_text("[{", encoding="utf-8") and d / "broken.json", "invalid-json"),
    ],
    ids=["missing", "facts-ir", "broken"],
)
def test_bad_input_is_one_line_and_writes_nothing(tmp_path: Path, make: Any, reason: str, capsys: Any) -> None:
    source = make(tmp_path)
    vault = tmp_path / "vault"
    assert main(["markdown", str(source), "-o", str(vault)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("memvelope: error: ") and err.count("\n") == 1
    assert not vault.exists()
    with pytest.raises(InputError if reason != "wrong-layer" else FormatError) as caught:
        mv.to_markdown(source, vault)
    assert caught.value.reason == reason and not vault.exists()


def test_an_output_that_is_a_file_is_one_line(tmp_path: Path, capsys: Any) -> None:
    target = tmp_path / "vault"
    target.write_text("x", encoding="utf-8")
    assert main(["markdown", str(mv.sample_path("claude")), "-o", str(target)]) == 1
    assert capsys.readouterr().err == f"memvelope: error: output path is not a folder (in {target})\n"
    assert target.read_text(encoding="utf-8") == "x"


# ---- names -------------------------------------------------------------------------------------------

UNSAFE_TITLES = [
    "CON",
    "nul.txt",
    'a/b\\c:d*e?f"g<h>i|j',
    "#tag [[link]] ^block",
    "",
    "\u00a0\u3000",  # only spaces: untitled too
    "..",
    " . . ",
    "   spaced   out   ",
    "line\nbreak\r\ttab",
    "\u202egpj.exe",
    "zero\u200bwidth \x00\x1b[31mred",
    "x" * 400,
    "日本語のタイトル" * 40,
    "한국어" * 80,
    "Résumé",
    "RÉSUMÉ",
    "re\u0301sume\u0301",  # NFD of the one above, as macOS might give it
    "résumé",
    "👩\u200d👩\u200d👧 family",
]
FORBIDDEN = re.compile(r'[<>:"/\\|?*#^\[\]\x00-\x1f\x7f]')


def _envelope(titles: list[str], created: str = "2025-03-04T05:06:07Z") -> dict[str, Any]:
    convs = [
        {
            "id": f"conv-{i}",
            "title": title,
            "created_at": created,
            "updated_at": None,
            "messages": [{"id": "m1", "role": "user", "ts": None, "text": f"message {i}"}],
        }
        for i, title in enumerate(titles)
    ]
    meta = {"source_provider": "claude", "conversation_count": len(convs), "message_count": len(convs)}
    return {"memvelope": "envelope-v0", "meta": meta, "conversations": convs}


def _safe(name: str) -> bool:
    stem = name.removesuffix(".md")
    return (
        name.endswith(".md")
        and not FORBIDDEN.search(name)
        and not any(unicodedata.category(c) in ("Cc", "Cf") and c != "\u200d" for c in name)
        and stem == stem.strip(" .")
        and not name.startswith(".")
        and safe_stem(stem) == stem
        and max(len(unicodedata.normalize(f, name).encode("utf-8")) for f in ("NFC", "NFD")) <= 200
    )


def test_unsafe_titles_give_safe_unique_stable_names(tmp_path: Path) -> None:
    doc = _envelope(UNSAFE_TITLES)
    mv.to_markdown(doc, tmp_path / "a")
    names = by_id(tmp_path / "a")
    assert len(names) == len(UNSAFE_TITLES)
    assert all(_safe(n) for n in names.values()), [n for n in names.values() if not _safe(n)]
    assert len({folded(n) for n in names.values()}) == len(names)  # unique without case, in any normal form
    assert names["conv-0"] == "2025-03-04 CON.md" and names["conv-4"] == "2025-03-04 Untitled.md"
    assert re.fullmatch(r"2025-03-04 Untitled \([0-9a-f]{8}\)\.md", names["conv-5"])
    assert names["conv-2"] == "2025-03-04 a b c d e f g h i j.md"
    assert names["conv-10"] == "2025-03-04 gpj.exe.md"
    # the earliest created (then the lowest key) keeps the plain name; the others a suffix of their own key
    assert names["conv-15"] == "2025-03-04 Résumé.md"
    assert all(re.search(r" \([0-9a-f]{8}\)\.md$", names[f"conv-{i}"]) for i in (16, 17, 18))
    # the same conversations in another order get the same names
    doc["conversations"].reverse()
    mv.to_markdown(doc, tmp_path / "b")
    assert by_id(tmp_path / "b") == names


def test_a_conversation_keeps_its_name_when_its_title_changes(tmp_path: Path) -> None:
    mv.to_markdown(_envelope(["First title"]), tmp_path)
    renamed = mv.to_markdown(_envelope(["Second title"]), tmp_path)
    assert [p.name for p in renamed["updated"]] == ["2025-03-04 First title.md"]
    assert json.loads(front(tmp_path / "2025-03-04 First title.md")["title"]) == "Second title"


def test_the_name_parts() -> None:
    assert [safe_stem(s) for s in ("CON", "com1", "Lpt9.tar", "NUL .x", "CONSOLE", "aux")] == [
        "CON_",
        "com1_",
        "Lpt9_.tar",
        "NUL_.x",
        "CONSOLE",
        "aux_",
    ]
    assert base_name(None, "CON") == "undated CON.md"
    assert title_part("  ..hidden. ") == "hidden"
    assert title_part("é" * 200).startswith("é") and len(title_part("é" * 200).encode()) <= 120


# ---- YAML front matter ---------------------------------------------------------------------------

TRICKY = [
    "Re: the plan",
    'She said "no"',
    "it's",
    "- a leading dash",
    "--- three dashes",
    "first line\nsecond line",
    "yes",
    "null",
    "~",
    "123",
    "0x1F",
    "1e3",
    "#not a comment",
    "[a, b]",
    "{a: b}",
    "&anchor *alias !tag %d @at `tick`",
    "trailing space ",
    " leading space",
    "tab\there",
    "back\\slash",
    "naïve café 日本 🎉 עברית",
    "nul\x00 esc\x1b del\x7f nel\x85 ls\u2028 ps\u2029 bom\ufeff rlo\u202e",
    "",
]


def test_quoted_gives_the_escapes_yaml_reads() -> None:
    assert quoted('Re: "x"\n') == '"Re: \\"x\\"\\n"'
    assert quoted("a\x85b\u2028c\u202ed") == '"a\\x85b\\u2028c\\u202Ed"'
    assert quoted("lone \ud800") == '"lone \\uFFFD"'
    assert quoted("🎉 ü") == '"🎉 ü"'


@pytest.mark.parametrize("title", TRICKY)
def test_a_title_reads_back_from_the_front_matter_as_it_was(title: str, tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    mv.to_markdown(_envelope([title]), tmp_path)
    [note] = tmp_path.glob("*.md")
    text = note.read_text(encoding="utf-8")
    head = yaml.safe_load(text[4 : text.index("\n---\n") + 1])
    assert head["title"] == title and head["id"] == "conv-0" and head["messages"] == 1
    assert head["provider"] == "claude" and head["updated"] is None
    assert head["created"].isoformat() in ("2025-03-04T05:06:07+00:00", "2025-03-04T05:06:07")
    assert text.count("\n---\n") == 1  # the front matter ends once, whatever the title holds


def test_the_api_warns_nothing_when_nothing_was_edited(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mv.to_markdown(mv.sample_path("claude"), tmp_path)
        mv.to_markdown(mv.sample_path("claude"), tmp_path)


def test_a_note_renamed_in_the_vault_is_followed_not_written_again(tmp_path: Path) -> None:
    older, newer, history = _history(tmp_path)
    vault = tmp_path / "vault"
    mv.to_markdown(older, vault)
    changes = mv.diff(*mv.history_samples())
    grown = changes.loc[changes["status"] == "grown", "id"].iloc[0]
    convs = mv.conversations_frame(newer).set_index("conversation_id")
    note = vault / by_id(vault)[grown]
    renamed = vault / "Renamed by me.md"
    note.rename(renamed)
    done = mv.to_markdown(history, vault)
    assert not note.exists() and renamed in done["updated"]
    assert json.loads(front(renamed)["id"]) == grown
    assert int(front(renamed)["messages"]) == convs.loc[grown, "n_messages"]
    manifest = json.loads((vault / MANIFEST).read_bytes())["notes"]
    assert manifest["Renamed by me.md"]["conversation"] == f"chatgpt:id:{grown}" and note.name not in manifest
