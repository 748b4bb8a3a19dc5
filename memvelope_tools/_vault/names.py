"""The file name of a conversation's note: its date and its title, safe on every system.

A name is ``YYYY-MM-DD Title.md`` (``undated`` when the conversation has no date), with
`` (xxxxxxxx)`` before ``.md`` when another note of the folder already has that name, compared as
Windows and macOS compare names (without case, in one Unicode normal form). The title part keeps
letters, digits, punctuation, scripts and emoji; it loses what Windows forbids in a name
(``< > : " / \\ | ? *``), what breaks a wiki link in Obsidian and Logseq (``# ^ [ ]``), control and
formatting characters (bidirectional overrides among them), and leading and trailing dots and
spaces; it is cut to fit every file system's limit on a name's length.
"""

from __future__ import annotations

import hashlib
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import Final

__all__ = ["NOTE_SUFFIX", "base_name", "day", "folded", "safe_stem", "suffixed", "title_part"]

NOTE_SUFFIX: Final = ".md"
#: The most bytes the title part takes, in UTF-8 as NFC and as NFD (macOS stores names in a form close
#: to NFD): with the date and a suffix the name stays well under the 255 bytes every system allows.
TITLE_BYTES: Final = 120
UNTITLED: Final = "Untitled"
UNDATED: Final = "undated"

_DROPPED: Final = frozenset('<>:"/\\|?*#^[]')
_KEPT_FORMAT: Final = frozenset("\u200c\u200d")  # the joiners: emoji sequences and Persian words need them
_DEVICES: Final = frozenset(
    ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"]
    + [f"{port}{n}" for port in ("COM", "LPT") for n in [*"0123456789", "\u00b9", "\u00b2", "\u00b3"]]
)
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def title_part(title: str | None) -> str:
    """The part of a note's name that ``title`` gives (``Untitled`` when nothing of it is left)."""
    kept = []
    for char in unicodedata.normalize("NFC", title or ""):
        category = unicodedata.category(char)
        if char in _DROPPED or char.isspace() or category[0] == "Z":
            kept.append(" ")
        elif category[0] == "C" and char not in _KEPT_FORMAT:
            continue
        else:
            kept.append(char)
    text = " ".join("".join(kept).split()).strip(" .")
    while _name_bytes(text) > TITLE_BYTES:
        text = text[:-1]
    text = text.rstrip(" .")
    return text or UNTITLED


def _name_bytes(text: str) -> int:
    return max(len(unicodedata.normalize(form, text).encode("utf-8")) for form in ("NFC", "NFD"))


def day(ms: int | None) -> str:
    """The UTC date ``YYYY-MM-DD`` of a timestamp in milliseconds since the epoch (``undated`` for None)."""
    if ms is None:
        return UNDATED
    return (_EPOCH + timedelta(milliseconds=ms)).strftime("%Y-%m-%d")


def safe_stem(stem: str) -> str:
    """``stem`` with ``_`` after its first part when Windows reserves that part for a device (``CON``,
    ``com1``, ``NUL.tar`` -> ``NUL_.tar``)."""
    head, dot, tail = stem.partition(".")
    if head.rstrip(" ").upper() in _DEVICES:
        head = head.rstrip(" ") + "_"
    return head + dot + tail


def base_name(ms: int | None, title: str | None) -> str:
    """A note's name from its conversation's creation time (ms, UTC) and title, before any suffix."""
    return safe_stem(f"{day(ms)} {title_part(title)}") + NOTE_SUFFIX


def suffixed(name: str, key: str, digits: int = 8) -> str:
    """``name`` with `` (xxxxxxxx)`` before its ``.md``: the first ``digits`` hex digits of the sha256
    of ``key``, the conversation's key, so the same conversation always gets the same suffix."""
    tag = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:digits]
    return f"{name.removesuffix(NOTE_SUFFIX)} ({tag}){NOTE_SUFFIX}"


def folded(name: str) -> str:
    """``name`` as a case-insensitive, normalisation-insensitive file system compares it."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())
