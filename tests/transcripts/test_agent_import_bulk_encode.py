"""The bulk worker's encoding of a new session writes what the store's checks would.

``prepare.encode_session`` builds the converters' row shapes (role + content + meta, or
role + content) in the store's key order at once and asks the content rule only of their
few values; every other shape takes ``row_order`` and ``_plainly_valid``; meta is judged a
file at a time with a flat walk. Against the plain reference (``check_content``,
``row_order``, the stamp, ``redact_row``, ``encode_record``, row by row): the same bytes,
or a refusal where the reference refuses, for any mix of shapes, secrets and bad values.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.transcripts.redaction_rule_samples import AWS_KEY_ID
from tests.transcripts.redaction_samples import COVERAGE_SAMPLES
from transcripts.core.agents.prepare import _plain_meta, _stamps, encode_session
from transcripts.core.codec import METADATA, encode_record
from transcripts.core.content import check_content
from transcripts.core.errors import RecordRejected
from transcripts.core.store import redact_row, row_order

NOW = datetime(2026, 3, 27, 11, 11, 15, 533_000, tzinfo=UTC)
MAX_LINE = 64 * 1024
STAMP = "2026-03-27T11:11:15.533Z"
CALL_ID = "toolu_01QwqlIntmpxf0rfWCfPKPv8"
SECRETS = [positive for positive, _ in COVERAGE_SAMPLES.values()] + [AWS_KEY_ID]


def reference(rows: list[dict[str, Any]], metadata: dict[str, Any]) -> bytes:
    """What ``append_rows`` checks and writes for a new session, row by row."""
    local = NOW.astimezone()
    line0 = {"_type": METADATA, "created_at": local.isoformat(), "last_consolidated": 0}
    parts = [encode_record(line0 | metadata, max_line=MAX_LINE)]
    stamps = _stamps(local, len(rows))
    for number, row in enumerate(rows):
        if not isinstance(row.get("role"), str) or "_type" in row:
            raise RecordRejected("not a row")
        check_content(row, what="row")
        ordered = row_order(row)
        ordered["ts"] = stamps[number]
        ordered, _ = redact_row(ordered)
        parts.append(encode_record(ordered, max_line=MAX_LINE))
    return b"".join(parts)


def assert_same(rows: list[dict[str, Any]]) -> None:
    metadata = {"key": "claude:k", "title": "t"}
    try:
        expected: bytes | None = reference(rows, metadata)
    except RecordRejected:
        expected = None
    try:
        got: bytes | None = encode_session(rows, metadata, NOW, MAX_LINE)[0]
    except RecordRejected:
        got = None
    assert got == expected


def _tool_row(content: str, **meta: Any) -> dict[str, Any]:
    return {"role": "tool_result", "content": content, "meta": {"tool": "Bash", **meta}}


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("where", ["content", "meta", "meta key", "nested meta", "variants"])
def test_a_secret_anywhere_is_redacted_as_row_by_row(secret: str, where: str) -> None:
    clean = _tool_row("ok", call_id=CALL_ID, source_ts=STAMP)
    row: dict[str, Any] = {
        "content": _tool_row(f"out {secret} end", source_ts=STAMP),
        "meta": _tool_row("ok", call_id=f"toolu_01{secret}", source_ts=STAMP),
        "meta key": _tool_row("ok", **{secret: 1}),
        "nested meta": _tool_row("ok", extra={"deep": [secret]}),
        "variants": {"role": "assistant", "content": "a", "variants": [{"text": secret}]},
    }[where]
    assert_same([clean] * 40 + [row] + [clean] * 40)
    assert_same([{"role": "user", "content": secret, "meta": {"k": secret}}, row])


@pytest.mark.parametrize(
    "row",
    [
        {"role": "assistant", "content": "a\x00b"},
        {"role": "assistant", "content": "a", "meta": {"k": "v\x00"}},
        {"role": "assistant", "content": "a", "meta": {"k\x00": "v"}},
        {"role": "assistant", "content": "a", "meta": {"code": 2**64}},
        {"role": "assistant", "content": "a", "meta": {"x": float("nan")}},
        {"role": "assistant", "content": "a", "meta": {"x": 1.5}},
        {"role": "assistant", "content": "a", "meta": [1, "b"]},
        {"role": "assistant", "content": "a", "meta": None},
        {"role": "assistant", "content": "a", "meta": "plain"},
        {"role": "a\x00", "content": "a"},
        {"role": 3, "content": "a"},
        {"role": "assistant", "content": None, "meta": {"k": "v"}},
        {"role": "assistant", "content": ["a"]},
        {"meta": {"k": "v"}, "content": "late", "role": "assistant"},
        {"role": "assistant", "content": "a", "cls": "x", "meta": {"k": "v"}},
        {"role": "assistant", "content": "a", "ts": "given", "meta": {"k": "v"}},
        {"role": "assistant", "content": "a", "_type": "x"},
        {"role": "assistant", "content": "x" * (MAX_LINE + 1)},
    ],
)
def test_each_shape_off_the_fast_path_answers_as_the_reference(row: dict[str, Any]) -> None:
    assert_same([_tool_row("ok", source_ts=STAMP), row, _tool_row("ok", call_id=CALL_ID)])


SCALARS = st.one_of(
    st.sampled_from(["", "a\x00", STAMP, CALL_ID, "Bash", *SECRETS]),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True),
)
META = st.one_of(
    st.dictionaries(st.sampled_from(["tool", "call_id", "source_ts", "k\x00", "exit"]), SCALARS),
    st.dictionaries(st.sampled_from(["a", "b"]), st.lists(SCALARS, max_size=2), max_size=2),
    SCALARS,
)
ROWS = st.fixed_dictionaries(
    {
        "role": st.one_of(st.sampled_from(["user", "assistant", "tool_result"]), SCALARS),
        "content": st.one_of(st.sampled_from(["ok", "a\x00b", "out 5 passed", *SECRETS]), SCALARS),
    },
    optional={"meta": META, "cls": st.just("x"), "variants": st.lists(SCALARS, max_size=2)},
)


@settings(max_examples=300, deadline=None)
@given(st.lists(ROWS, max_size=6))
def test_random_rows_encode_as_the_reference(rows: list[dict[str, Any]]) -> None:
    assert_same(rows)


@settings(max_examples=300, deadline=None)
@given(META)
def test_the_meta_check_never_passes_what_the_rule_refuses(meta: Any) -> None:
    if _plain_meta(meta):
        check_content({"role": "r", "content": "c", "meta": meta})  # raises when refused
