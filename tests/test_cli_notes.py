"""A warning raised while a command runs is said as the command's own note: one line, no source line."""

from __future__ import annotations

from pathlib import Path

from memvelope_tools.cli import main


def test_a_library_warning_is_one_note_line(tmp_path: Path, capsys) -> None:
    export = tmp_path / "conversations.json"
    export.write_text(
        '[{"uuid": "c1", "name": "t", "created_at": "2024-01-01T00:00:00Z", "chat_messages": [{"uuid": "m1", '
        '"sender": "human", "text": "half a pair \\ud83d here", "created_at": "2024-01-01T00:00:00Z"}]}]',
        encoding="utf-8",
    )
    assert main(["parquet", str(export), "-o", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err.splitlines()
    notes = [line for line in err if "surrogate" in line]
    assert notes == ["memvelope: note: 1 text value contains unpaired surrogates; replaced by U+FFFD"]
    assert not any("Warning" in line or ".py:" in line for line in err), err
