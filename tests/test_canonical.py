"""The canonical serialisation profile (JSON.stringify(value, null, 2))."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from memvelope_tools._convert.canonical import canonical_fragment, dumps_canonical


@pytest.mark.parametrize(
    ("text", "encoded"),
    [
        ('"', b'"\\""'),
        ("\\", b'"\\\\"'),
        ("\b\t\n\f\r", b'"\\b\\t\\n\\f\\r"'),
        ("\x00\x01\x0b\x1f", b'"\\u0000\\u0001\\u000b\\u001f"'),  # lowercase hex
        ("\x7f", b'"\x7f"'),  # DEL is raw
        ("\u2028\u2029", '"\u2028\u2029"'.encode()),  # raw, unlike some serialisers
        ("/", b'"/"'),
        ("é中😀", '"é中😀"'.encode()),
        ("\ud800", b'"\\ud800"'),  # lone surrogates: lowercase \udxxx
        ("a\udfffb", b'"a\\udfffb"'),
        ("\udbff", b'"\\udbff"'),
        ("\ud83d\ude00", '"😀"'.encode()),  # a pair held as two code units is one code point
        ("\ude00\ud83d", b'"\\ude00\\ud83d"'),  # reversed: two lone ones
    ],
)
def test_string_escapes(text: str, encoded: bytes) -> None:
    assert dumps_canonical(text) == encoded


def test_layout_no_trailing_newline() -> None:
    doc = {"a": [1, {"b": None, "c": []}], "d": {}, "e": "x"}
    assert dumps_canonical(doc) == (
        b'{\n  "a": [\n    1,\n    {\n      "b": null,\n      "c": []\n    }\n  ],\n  "d": {},\n  "e": "x"\n}'
    )


def test_key_order_is_insertion_order() -> None:
    assert dumps_canonical({"z": 1, "a": 2}) == b'{\n  "z": 1,\n  "a": 2\n}'


def test_fragment_matches_whole_document() -> None:
    inner = {"id": "x", "messages": [{"text": "a\nb"}]}
    whole = dumps_canonical({"k": [inner]})
    assert canonical_fragment(inner, 2) in whole


def _random_string(rng: random.Random) -> str:
    pools = [
        lambda: chr(rng.randrange(0, 0x20)),
        lambda: rng.choice('"\\/\x7f\u2028\u2029\ufeff'),
        lambda: chr(rng.randrange(0x20, 0x7F)),
        lambda: chr(rng.randrange(0xA0, 0xD800)),
        lambda: chr(rng.randrange(0xD800, 0xE000)),
        lambda: chr(rng.randrange(0xE000, 0x110000)),
    ]
    return "".join(rng.choice(pools)() for _ in range(rng.randrange(0, 12)))


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed on this machine")
def test_matches_node_json_stringify() -> None:
    """Cross-check with the reference profile itself on 2,000 random strings, lone surrogates included."""
    rng = random.Random(20261130)
    doc = {"items": [{"id": f"m{i}", "text": _random_string(rng)} for i in range(2000)]}
    # Hand the value to Node as ASCII-only JSON (\u escapes survive lone surrogates), let it stringify.
    script = (
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>"
        "process.stdout.write(JSON.stringify(JSON.parse(s),null,2)))"
    )
    out = subprocess.run(
        ["node", "-e", script], input=json.dumps(doc).encode("ascii"), capture_output=True, check=True
    ).stdout
    assert dumps_canonical(doc) == out
