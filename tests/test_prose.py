"""ECMAScript TrimString, block joining and role mapping (spec prose extraction, Rule 2, NOTES A24)."""

from __future__ import annotations

import pytest

from memvelope_tools._convert.prose import join_blocks, js_trim, map_role

TRIMMED = "\t\n\v\f\r \u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
NOT_TRIMMED = ["\u0085", "\u001c", "\u001d", "\u001e", "\u001f", "\u200b", "\u180e", "\u2060"]


def test_trims_exactly_the_ecmascript_set() -> None:
    assert js_trim(TRIMMED + "x y" + TRIMMED) == "x y"
    for ch in NOT_TRIMMED:
        assert js_trim(ch + "x" + ch) == ch + "x" + ch


def test_differs_from_python_strip() -> None:
    assert "\ufeffx".strip() == "\ufeffx" and js_trim("\ufeffx") == "x"
    assert "\u001fx".strip() == "x" and js_trim("\u001fx") == "\u001fx"


def test_join_blocks() -> None:
    assert join_blocks([" a ", "", " \n ", "b\n\n c"]) == "a\n\nb\n\n c"  # interior whitespace kept
    assert join_blocks(["  "]) == ""
    assert join_blocks([]) == ""


@pytest.mark.parametrize(
    ("token", "role"),
    [
        ("user", "user"),
        ("Human", "user"),
        ("HUMAN", "user"),
        ("assistant", "assistant"),
        ("AI", "assistant"),
        ("Model", "assistant"),
        ("system", None),
        ("tool", None),
        ("developer", None),
        (" user", None),
        ("user ", None),
        ("", None),
        (None, None),
        (1, None),
        (["user"], None),
        ("critic", None),
    ],
)
def test_role_mapping(token: object, role: str | None) -> None:
    assert map_role(token) == role
