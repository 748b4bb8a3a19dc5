"""Property tests: arbitrary export-shaped input never escapes as an unexpected exception.

``convert`` either returns an envelope that passes the bundled schema and the invariants below, or
raises ConversionError. The reader (``read``) returns a document or raises FormatError; the frames
(which convert an export first) return a frame or raise FormatError or ConversionError.
The timestamp renderer agrees with an independent oracle built on ``datetime``.

Example counts scale with ``MEMVELOPE_FUZZ_EXAMPLES`` (total over this file, default 2500; ``make fuzz``
sets 20000). Runs are derandomized so CI is reproducible; ``MEMVELOPE_FUZZ_RANDOM=1`` explores anew.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import inspect
import itertools
import json
import math
import os
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from memvelope_tools import read
from memvelope_tools._convert import ConversionError, convert, convert_stream, dumps_canonical
from memvelope_tools._convert.prose import js_trim
from memvelope_tools._convert.timestamps import render_timestamp
from memvelope_tools._validate import validate
from memvelope_tools.errors import FormatError

TOTAL_EXAMPLES = int(os.environ.get("MEMVELOPE_FUZZ_EXAMPLES", "2500"))
# Share of the total per property; the slow frames property gets a small share.
WEIGHTS = {"export": 0.26, "json": 0.12, "timestamp": 0.40, "read": 0.14, "frames": 0.08}
assert abs(sum(WEIGHTS.values()) - 1) < 1e-9


def budget(name: str) -> settings:
    return settings(
        max_examples=max(10, int(TOTAL_EXAMPLES * WEIGHTS[name])),
        deadline=None,
        derandomize=os.environ.get("MEMVELOPE_FUZZ_RANDOM") != "1",
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.large_base_example,
        ],
    )


TIMESTAMP_OUT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")

# ---- strategies: strings and JSON values ---------------------------------------------------------

# Characters the spec cares about: JS whitespace that str.strip() disagrees on, BOM, lone surrogates
# (JSON may spell them as escapes), NUL and other controls, LS/PS, astral characters.
TRICKY_CHARS = [
    "\ud800",
    "\udbff",
    "\udc00",
    "\udfff",
    "\ud83d",
    "\ude00",
    "\ufeff",
    "\u2028",
    "\u2029",
    " ",
    "\t",
    "\n",
    "\u00a0",
    "\u0085",
    "\u200b",
    "\u3000",
    "\x00",
    "\x1c",
    "\x1f",
    "\x7f",
    "é",
    "😀",
    "\\",
    '"',
    "/",
]
chars = st.one_of(st.characters(), st.sampled_from(TRICKY_CHARS))
text = st.text(chars, max_size=12)

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), text)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)),
    max_leaves=12,
)
# Cheaper junk for the many fields of an export: mostly scalars, sometimes a small container.
junk = st.one_of(
    json_leaf,
    json_leaf,
    st.recursive(
        json_leaf,
        lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(text, inner, max_size=2)),
        max_leaves=3,
    ),
)


def pick(*weighted: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, chosen with the given weights (``one_of`` would weigh them equally)."""
    return st.sampled_from([s for weight, s in weighted for _ in range(weight)]).flatmap(lambda s: s)


def maybe(value: st.SearchStrategy[Any], good: int = 4) -> st.SearchStrategy[Any]:
    """Usually ``value`` (``good`` times in ``good + 1``), sometimes a JSON value of any type."""
    return pick((good, value), (1, junk))


words = pick(
    (2, text),
    (
        3,
        st.sampled_from(
            [
                "",
                " ",
                "hello",
                "  padded  ",
                "\ufeffbom",
                "\u0085nel",
                "a\ud800b",
                "\u200b",
                "not supported on your current device",
            ]
        ),
    ),
)


def shaped(required: dict[str, Any], optional: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """An object with the given fields (optional ones may be missing) plus a few unknown extra fields."""
    return st.builds(
        lambda base, extra: {**extra, **base},
        st.fixed_dictionaries(required, optional=optional),
        st.dictionaries(st.sampled_from(["x", "extra", "__proto__", "id2"]), junk, max_size=1),
    )


# ---- strategies: timestamps ----------------------------------------------------------------------


def _pad(n: int, width: int) -> str:
    return str(n).zfill(width) if n >= 0 else str(n)


def _field(low: int, high: int, widths: list[int]) -> st.SearchStrategy[str]:
    return st.builds(_pad, st.integers(low, high), st.sampled_from(widths))


_DIGITS = st.text(st.sampled_from("0123456789"), max_size=10)
datetime_strings = st.builds(
    lambda date, sep, hm, sec, frac, zone, hh, mm: (
        date
        if sep is None
        else date
        + sep
        + hm
        + ("" if sec is None else ":" + sec + ("" if frac is None else "." + frac))
        + zone.replace("hh", hh).replace("mm", mm)
    ),
    st.builds(
        lambda y, m, d: f"{y}-{m}-{d}",
        _field(0, 10000, [4, 4, 4, 4, 3, 5]),
        _field(0, 13, [2, 2, 2, 1]),
        _field(0, 32, [2]),
    ),
    st.one_of(st.none(), st.sampled_from(["T", "T", " ", "t", "  "])),
    st.builds(lambda h, m: f"{h}:{m}", _field(0, 25, [2]), _field(0, 61, [2])),
    st.one_of(st.none(), _field(0, 61, [2])),
    st.one_of(st.none(), _DIGITS),
    st.sampled_from(["", "Z", "+hh:mm", "-hh:mm", "+hhmm", "-hhmm", "z", "+hh", " Z", "GMT"]),
    _field(0, 25, [2]),
    _field(0, 61, [2]),
)


bare_numbers = st.builds(
    lambda sign, whole, frac: f"{sign}{whole}{frac}",
    st.sampled_from(["", "", "-", "+"]),
    st.one_of(st.integers(0, 10**14).map(str), st.text(st.sampled_from("0123456789"), min_size=1, max_size=20)),
    st.one_of(st.just(""), st.text(st.sampled_from("0123456789"), max_size=8).map(lambda d: "." + d)),
)
numbers = st.one_of(
    st.integers(-(10**13), 10**13),
    st.integers(),
    st.floats(-1e13, 1e13),
    st.floats(allow_nan=False),
    st.sampled_from(
        [
            0,
            -0.0,
            1.005,
            -0.0005,
            -0.0015,
            1e12,
            1e12 - 1,
            253402300799.999,
            253402300800,
            -62135596800,
            -62135596801,
            10**400,
            -(10**400),
            1.7e9,
            1700000000.0005,
        ]
    ),
)
timestamp_values = st.one_of(numbers, bare_numbers, datetime_strings, text, st.none(), st.booleans())


# ---- strategies: export shapes -------------------------------------------------------------------

roles = pick(
    (3, st.sampled_from(["user", "assistant", "USER", "Assistant", "human", "ai", "model"])),
    (1, st.sampled_from(["system", "tool", " user", "", "critic"])),
)
node_keys = st.one_of(
    st.sampled_from(
        [
            "a",
            "b",
            "c",
            "root",
            "0",
            "1",
            "10",
            "007",
            "4294967294",
            "4294967295",
            "__proto__",
            "null",
            "client-created-root",
        ]
    ),
    text,
)
content_types = pick(
    (3, st.sampled_from(["text", "multimodal_text", "", "user_editable_context"])),
    (1, st.sampled_from(["code", "execution_output", "tether_quote", "Text", None, 5])),
)
chatgpt_part = pick((4, words), (1, shaped({}, {"text": maybe(words), "content_type": text})), (1, junk))
chatgpt_content = shaped(
    {"parts": maybe(st.lists(chatgpt_part, max_size=4))},
    {
        "content_type": content_types,
        "user_profile": maybe(words),
        "user_instructions": maybe(words),
        "text": words,
    },
)
chatgpt_message = shaped(
    {
        "author": maybe(shaped({"role": maybe(roles)}, {})),
        "content": maybe(chatgpt_content),
        "create_time": timestamp_values,
    },
    {
        "metadata": maybe(shaped({}, {"is_visually_hidden_from_conversation": st.one_of(st.booleans(), json_value)})),
        "recipient": st.sampled_from(["all", "bio", "dalle.text2im"]),
    },
)


class Link:
    """Placeholder for "one of this conversation's mapping keys", resolved once the keys are known."""

    def __init__(self, index: int) -> None:
        self.index = index


# Strategies are built once: building them inside a composite costs more than running the test.
links = pick((6, st.integers(1, 50).map(Link)), (1, st.just(Link(0))), (1, st.none()), (1, text), (1, junk))
mapping_values = pick(
    (
        8,
        shaped(
            {"message": maybe(chatgpt_message), "parent": links},
            {"id": maybe(st.just(Link(0))), "children": st.lists(links, max_size=3), "create_time": timestamp_values},
        ),
    ),
    (1, junk),
)
MAPPING = object()
chatgpt_fields = shaped(
    {"mapping": pick((12, st.just(MAPPING)), (1, junk)), "current_node": links},
    {
        "title": maybe(words),
        "create_time": timestamp_values,
        "update_time": timestamp_values,
        "conversation_id": maybe(text),
        "id": maybe(text),
    },
)
key_lists = pick((6, st.lists(node_keys, min_size=1, max_size=5, unique=True)), (1, st.just([])))


def _resolve(value: Any, keys: list[str], own: str) -> Any:
    if isinstance(value, Link):
        return (keys[value.index % len(keys)] if value.index else own) if keys else None
    if isinstance(value, dict):
        return {k: _resolve(v, keys, own) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, keys, own) for v in value]
    return value


@st.composite
def chatgpt_conversations(draw: st.DrawFn) -> dict[str, Any]:
    """A ChatGPT conversation: a mapping whose parent links are random (cycles, dangling, junk)."""
    keys = draw(key_lists)
    mapping = {key: _resolve(draw(mapping_values), keys, key) for key in keys}
    fields = draw(chatgpt_fields)
    return {k: mapping if v is MAPPING else _resolve(v, keys, "") for k, v in fields.items()}


claude_block = shaped(
    {},
    {
        "type": st.sampled_from(["text", "tool_use", "tool_result", "image", "Text"]),
        "text": maybe(words),
        "input": json_value,
    },
)
claude_message = shaped(
    {"sender": maybe(roles), "text": maybe(words), "created_at": timestamp_values},
    {
        "content": maybe(st.lists(pick((4, claude_block), (1, junk)), max_size=3)),
        "uuid": text,
        "parent_message_uuid": text,
    },
)
claude_conversation = shaped(
    {"chat_messages": maybe(st.lists(maybe(claude_message, 8), min_size=1, max_size=5), 8), "uuid": maybe(text, 8)},
    {
        "name": maybe(words),
        "summary": maybe(words),
        "created_at": timestamp_values,
        "updated_at": timestamp_values,
    },
)
# An export is usually all one provider's shape; sometimes mixed, sometimes with garbage elements.
elements = pick(
    (1, st.lists(pick((3, chatgpt_conversations()), (3, claude_conversation), (1, json_value)), max_size=5)),
    (3, st.lists(pick((8, chatgpt_conversations()), (1, junk)), max_size=4)),
    (3, st.lists(pick((8, claude_conversation), (1, junk)), max_size=4)),
)


_SERIALISATION = st.tuples(st.booleans(), st.sampled_from([None, 2]), st.integers(0, 9))


@st.composite
def serialised(draw: st.DrawFn, value: Any) -> bytes:
    """``value`` as a part file: ASCII escapes or raw UTF-8, sometimes a BOM, sometimes broken UTF-8."""
    ascii_only, indent, bom = draw(_SERIALISATION)
    out = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    # A lone surrogate in raw output cannot be UTF-8: surrogatepass writes invalid bytes (NOTES A17).
    data = out.encode("utf-8", "surrogatepass")
    return b"\xef\xbb\xbf" + data if bom == 0 else data


_CUTS = st.lists(st.integers(0, 20), max_size=2)
_SPOIL = st.tuples(st.integers(0, 9), st.integers(0, 2), junk)


@st.composite
def exports(draw: st.DrawFn) -> list[bytes]:
    """One export as 1-3 part files; a part is usually an array of conversations, sometimes not."""
    merged = draw(elements)
    cuts = sorted(c % (len(merged) + 1) for c in draw(_CUTS))
    bounds = [0, *cuts, len(merged)]
    parts: list[Any] = [merged[a:b] for a, b in itertools.pairwise(bounds)]
    spoil, which, value = draw(_SPOIL)
    if spoil == 0:  # a part whose top level is not an array
        parts[which % len(parts)] = value
    return [draw(serialised(p)) for p in parts]


# ---- the conversion property ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def part_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("conversion") / "parts"


def write_parts(folder: Path, parts: list[bytes]) -> list[Path]:
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    paths = []
    for i, data in enumerate(parts):
        path = folder / f"conversations-{i}.json"
        path.write_bytes(data)
        paths.append(path)
    return paths


def check_envelope(env: dict[str, Any]) -> None:
    """The invariants of a converted envelope: schema-valid, counts that match, ids in order, trimmed text."""
    assert validate(env) == []
    meta, convs = env["meta"], env["conversations"]
    assert list(env) == ["memvelope", "meta", "conversations"]
    assert meta["source_provider"] in ("chatgpt", "claude")
    assert convs, "an envelope with zero conversations must be a ConversionError instead"
    assert meta["conversation_count"] == len(convs)
    assert meta["message_count"] == sum(len(c["messages"]) for c in convs)
    for conv in convs:
        assert conv["messages"], "a conversation without messages must be omitted"
        assert [m["id"] for m in conv["messages"]] == [f"m{i}" for i in range(1, len(conv["messages"]) + 1)]
        assert conv["title"] == js_trim(conv["title"])
        assert conv["id"] is None or (type(conv["id"]) is str and conv["id"])
        for key in ("created_at", "updated_at"):
            assert conv[key] is None or TIMESTAMP_OUT.fullmatch(conv[key])
        if conv["created_at"] is None:
            assert conv["messages"][0]["ts"] is None  # the fallback would have used it
        for msg in conv["messages"]:
            assert msg["role"] in ("user", "assistant")
            assert msg["text"] and msg["text"] == js_trim(msg["text"])
            assert msg["ts"] is None or TIMESTAMP_OUT.fullmatch(msg["ts"])


def convert_or_error(paths: list[Path], **options: Any) -> bytes | str:
    """Canonical bytes of the conversion, or the ConversionError's reason; anything else propagates."""
    try:
        env = convert(*paths, **options)
    except ConversionError as exc:
        assert str(exc) and "\n" not in str(exc) and exc.reason
        return f"ConversionError {exc.reason}"
    check_envelope(env)
    data = dumps_canonical(env)
    assert dumps_canonical(read(data)) == data  # reading back and serialising again is lossless
    return data


def stream_or_error(paths: list[Path], out: Path) -> bytes | str:
    """What ``convert_stream`` writes, or the ConversionError's reason (and then no file)."""
    try:
        convert_stream(paths, out, progress=False)
    except ConversionError as exc:
        assert not out.exists()
        return f"ConversionError {exc.reason}"
    data = out.read_bytes()
    out.unlink()
    return data


OPTIONS = set(inspect.signature(convert).parameters)
HAS_ORJSON = importlib.util.find_spec("orjson") is not None


def whole_parts_or_error(paths: list[Path]) -> bytes | str:
    """The reference: each part decoded and parsed whole by the stdlib parser, then converted."""
    from reference_json import convert_values, decode, loads_js

    from memvelope_tools._convert import expand

    try:
        parts = expand(paths).parts
        values = [loads_js(decode(p.read()).text, p.name) for p in parts]
        return dumps_canonical(convert_values(values))
    except ConversionError as exc:
        return f"ConversionError {exc.reason}"


def twin_or_error(paths: list[Path]) -> bytes | str:
    """As the default conversion, with the pure-Python twin of the C scanner."""
    from conftest import engine_running

    with engine_running("python"):
        return convert_or_error(paths)


def convert_every_way(folder: Path, parts: list[bytes]) -> None:
    """Twice the same bytes, and the same bytes (or error) from every conversion path there is."""
    paths = write_parts(folder, parts)
    reference = convert_or_error(paths, **({"fast": False} if "fast" in OPTIONS else {}))
    event(reference if isinstance(reference, str) else "envelope")
    results = {"again": convert_or_error(paths, **({"fast": False} if "fast" in OPTIONS else {}))}
    results["whole parts, stdlib parser"] = whole_parts_or_error(paths)
    results["pure-Python scanner"] = twin_or_error(paths)
    if "fast" in OPTIONS and HAS_ORJSON:
        results["fast"] = convert_or_error(paths, fast=True)
    results["convert_stream"] = stream_or_error(paths, folder.parent / "streamed.mve.json")
    for name, got in results.items():
        assert got == reference, f"{name} differs from the plain conversion"


@pytest.mark.slow
@budget("export")
@given(parts=exports())
def test_export_shaped_input_converts_or_fails_cleanly(part_dir: Path, parts: list[bytes]) -> None:
    convert_every_way(part_dir, parts)


@pytest.mark.slow
@budget("json")
@given(
    parts=st.lists(
        st.one_of(
            json_value.flatmap(serialised),
            st.binary(max_size=40),
            st.text(max_size=40).map(lambda s: s.encode("utf-8", "surrogatepass")),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_arbitrary_json_and_bytes_convert_or_fail_cleanly(part_dir: Path, parts: list[bytes]) -> None:
    convert_every_way(part_dir, parts)


# ---- the timestamp renderer against an independent oracle ----------------------------------------

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
ORACLE_SHAPE = re.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})"
    r"(?:[T ](?P<h>[0-9]{2}):(?P<mi>[0-9]{2})(?::(?P<s>[0-9]{2})(?:\.(?P<f>[0-9]+))?)?"
    r"(?P<z>Z|(?P<sign>[+-])(?P<oh>[0-9]{2}):?(?P<om>[0-9]{2}))?)?"
)


def oracle_render(instant: dt.datetime, year_shift: int = 0) -> str | None:
    year = instant.year - year_shift
    if not 1 <= year <= 9999:
        return None
    return (
        f"{year:04d}-{instant.month:02d}-{instant.day:02d}T{instant.hour:02d}:{instant.minute:02d}:"
        f"{instant.second:02d}.{instant.microsecond // 1000:03d}Z"
    )


def oracle_number(value: float) -> str | None:
    if not math.isfinite(value):
        return None
    ms = value * 1000 if value < 1e12 else value  # IEEE double multiplication, as the spec says
    if not math.isfinite(ms):
        return None
    try:
        return oracle_render(EPOCH + dt.timedelta(milliseconds=int(ms)))  # int() truncates toward 0
    except OverflowError:
        return None


def oracle(value: object) -> str | None:
    """The spec's Rule 3 (and NOTES A11-A14, A23), computed with ``datetime`` arithmetic."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        try:
            return oracle_number(float(value))
        except OverflowError:
            return None
    if isinstance(value, float):
        return oracle_number(value)
    if not isinstance(value, str):
        return None
    if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", value, re.ASCII):
        return oracle_number(float(value))
    m = ORACLE_SHAPE.fullmatch(value)
    if m is None:
        return None
    # Year 0000 is proleptic-Gregorian like year 0400; datetime has no year 0, so shift by one cycle.
    shift = 400 if int(m["y"]) == 0 else 0
    try:
        instant = dt.datetime(
            int(m["y"]) + shift,
            int(m["mo"]),
            int(m["d"]),
            int(m["h"] or 0),
            int(m["mi"] or 0),
            int(m["s"] or 0),
            int((m["f"] or "")[:3].ljust(3, "0")) * 1000,
            tzinfo=dt.UTC,
        )
    except ValueError:  # no such date or time of day (NOTES A11)
        return None
    if m["sign"]:
        if int(m["oh"]) > 23 or int(m["om"]) > 59:
            return None
        offset = dt.timedelta(hours=int(m["oh"]), minutes=int(m["om"]))
        try:
            instant = instant - offset if m["sign"] == "+" else instant + offset
        except OverflowError:
            return None
    return oracle_render(instant, shift)


def test_oracle_agrees_with_hand_checked_values() -> None:
    # The oracle itself must be right, or the differential test below proves nothing.
    assert oracle(1700000000) == "2023-11-14T22:13:20.000Z"
    assert oracle(1.005) == "1970-01-01T00:00:01.004Z"
    assert oracle(-0.0005) == "1970-01-01T00:00:00.000Z"
    assert oracle("2024-02-29T23:30:00.12345-01:00") == "2024-03-01T00:30:00.123Z"
    assert oracle("2023-02-29") is None
    assert oracle("0000-12-31T23:00:00-02:00") == "0001-01-01T01:00:00.000Z"
    assert oracle("9999-12-31T23:00:00-02:00") is None
    assert oracle("2024-01-01T00:00:00+0530") == "2023-12-31T18:30:00.000Z"
    assert oracle("2024-01-01T00:00:00+05") is None
    assert oracle("2024-01-01T24:00") is None
    assert oracle("1e9") is None


@pytest.mark.slow
@budget("timestamp")
@given(value=timestamp_values)
def test_timestamp_renderer_matches_datetime_oracle(value: object) -> None:
    assert render_timestamp(value) == oracle(value)


# ---- the readers ---------------------------------------------------------------------------------


def rmaybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Like :func:`maybe`, rarer junk: a document has many fields and should often pass the check."""
    return maybe(value, good=30)


good_ts = pick(
    (2, st.none()),
    (4, st.sampled_from(["2024-05-01T10:00:00.123Z", "0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"])),
    (1, text),
)


def either(good: list[Any], bad: list[Any]) -> st.SearchStrategy[Any]:
    """A value from ``good`` usually, from ``bad`` now and then."""
    return pick((6, st.sampled_from(good)), (1, st.sampled_from(bad)))


@st.composite
def dropping_a_key(draw: st.DrawFn, doc: dict[str, Any]) -> dict[str, Any]:
    """Now and then the document loses one (possibly nested) key, to test the presence checks."""
    if draw(st.integers(0, 7)) or not doc:
        return doc
    key = draw(st.sampled_from(sorted(doc)))
    value = doc[key]
    if isinstance(value, dict) and value and draw(st.booleans()):
        return {**doc, key: draw(dropping_a_key(value))}
    return {k: v for k, v in doc.items() if k != key}


message_docs = shaped(
    {
        "id": rmaybe(either(["m1", "m2"], ["", "m\ud800"])),
        "role": either(["user", "assistant"], ["system", "User"]),
        "ts": rmaybe(good_ts),
        "text": rmaybe(words),
    },
    {},
)
conversation_docs = shaped(
    {
        "id": rmaybe(st.one_of(st.none(), text)),
        "title": rmaybe(words),
        "created_at": rmaybe(good_ts),
        "updated_at": rmaybe(good_ts),
        "messages": rmaybe(st.lists(rmaybe(message_docs), max_size=3)),
    },
    {},
)
envelope_docs = shaped(
    {
        "memvelope": either(["envelope-v0"], ["memory-v0", "envelope-v1", "memvelope-ir-v0", 0]),
        "meta": rmaybe(
            shaped(
                {"source_provider": rmaybe(words)},
                {"conversation_count": rmaybe(st.integers(0, 5)), "message_count": rmaybe(st.integers(0, 9))},
            )
        ),
        "conversations": rmaybe(st.lists(rmaybe(conversation_docs), max_size=3)),
    },
    {},
).flatmap(dropping_a_key)
fact_docs = shaped(
    {
        "subject": rmaybe(st.one_of(st.none(), words)),
        "subject_type": either([None, "self", "person", "company", "project", "other"], ["pet", "Self"]),
        "category": either([None, "identity", "career", "projects", "preferences"], ["hobbies"]),
        "content": rmaybe(words),
        "effective_date": rmaybe(st.one_of(st.none(), st.just("2024-05"), text)),
        "in_text_date": rmaybe(st.one_of(st.none(), text)),
        "provenance": rmaybe(st.just("imported:claude-export:2024-05")),
        "convo_id": rmaybe(st.one_of(st.none(), text)),
    },
    {},
)
ir_docs = shaped(
    {
        "meta": rmaybe(
            shaped(
                {
                    "format": either(["memvelope-ir-v0"], ["memvelope-ir-v1", "envelope-v0"]),
                    "provider": rmaybe(words),
                    "mode": either(["structured", "llm"], ["other"]),
                    "facts": rmaybe(pick((6, st.integers(0, 3)), (1, st.integers()))),
                    "generated_at": rmaybe(
                        either(
                            ["2026-06-30T17:28:47.559123Z", "2026-06-30T17:28:47+05:30"],
                            ["2026-06-30T17:28:47", "now", "", "99999-01-01T00:00:00Z", "2026-13-01T00:00:00Z"],
                        )
                    ),
                },
                {},
            )
        ),
        "archetype": rmaybe(
            shaped(
                {
                    "style": rmaybe(st.one_of(st.none(), words)),
                    "facts": rmaybe(st.integers(0, 3)),
                    "self_ratio": rmaybe(st.one_of(st.none(), st.floats(0, 1))),
                    "distinct_entities": rmaybe(st.one_of(st.none(), st.integers(0, 5), st.integers())),
                    "categories": rmaybe(st.one_of(st.none(), st.dictionaries(words, st.integers(0, 3), max_size=2))),
                    "belief_ratio": rmaybe(st.one_of(st.none(), st.floats(0, 1))),
                },
                {},
            )
        ),
        "facts": rmaybe(st.lists(rmaybe(fact_docs), max_size=3)),
    },
    {},
).flatmap(dropping_a_key)
reader_inputs = pick((3, envelope_docs), (3, ir_docs), (1, json_value)).flatmap(serialised)
reader_bytes = pick((8, reader_inputs), (1, st.binary(max_size=30)))


def read_or_error(data: bytes) -> dict[str, Any] | None:
    try:
        doc = read(data)
    except FormatError as exc:
        assert str(exc) and "\n" not in str(exc)
        event(f"FormatError {exc.reason}")
        return None
    event("document")
    assert isinstance(doc, dict)
    return doc


@pytest.mark.slow
@budget("read")
@given(data=reader_bytes)
def test_read_returns_a_document_or_format_error(data: bytes) -> None:
    first = read_or_error(data)
    assert read_or_error(data) == first


@pytest.mark.slow
@budget("frames")
@given(data=reader_bytes)
def test_frames_return_a_frame_or_format_error(data: bytes) -> None:
    import memvelope_tools as frames  # the frame functions, as users reach them

    for make in (frames.messages_frame, frames.conversations_frame, frames.facts_frame, frames.archetype_frame):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnicodeWarning)  # lone surrogates are replaced, with a warning
            try:
                frame = make(data)
            except (FormatError, ConversionError) as exc:  # bytes of an export are converted first
                assert str(exc) and "\n" not in str(exc)
                continue
        event(f"frame from {make.__name__}")
        assert frame is not None and frame.index.is_unique
