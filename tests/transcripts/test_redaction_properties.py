"""Tests for transcripts.core.redaction: pass order, idempotence, the report, and
redact_value / redact_payload over nested values (example and property-based).
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.transcripts.redaction_rule_samples import (
    ALL_KINDS,
    AWS_EXAMPLE_SECRET,
    AWS_KEY_ID,
    B64,
    CRED,
    FOOTER,
    HEADER,
    SAMPLES,
    UPPER_DIGITS,
)
from transcripts.core.redaction import (
    merge_reports,
    redact_payload,
    redact_text,
    redact_value,
)
from transcripts.core.redaction.views import View, might_contain_secret

# ── Order, idempotence and the report ────────────────────────────────────────


def test_write_boundary_order_is_urls_then_credentials():
    token = SAMPLES["github_token"][0]
    url = f"https://example.org/p/{token}"
    assert redact_text(url) == ("[REDACTED: suspicious URL to example.org]", {"exfil_url": 1})
    # The summaries order redacts the token first, so the URL no longer carries it.
    assert redact_payload(url) == ("https://example.org/p/" + CRED, {"github_token": 1})


def test_redacted_output_is_stable():
    text = " ".join(token for token, _ in SAMPLES.values())
    once, report = redact_text(text)
    assert sum(report.values()) >= len(SAMPLES) - 2
    assert redact_text(once) == (once, {})


def test_plain_prose_takes_the_fast_path():
    text = "The rotation keeps the last archive and folds revisions into the row. " * 50
    out, report = redact_text(text)
    assert out is text
    assert report == {}
    assert not might_contain_secret(View(text))


@pytest.mark.parametrize(
    "prefix",
    ["héllo wörld ", "emoji \U0001f600\U0001f680 ", "lone surrogate \ud800 ", "中文字符 "],
)
def test_offsets_survive_non_ascii_text(prefix):
    token = SAMPLES["github_token"][0]
    text = f"{prefix}{token} {prefix}{AWS_EXAMPLE_SECRET} https://e.example.com/?k={AWS_KEY_ID} end"
    out, report = redact_text(text)
    assert out == f"{prefix}{CRED} {prefix}{CRED} [REDACTED: suspicious URL to e.example.com] end"
    assert report == {"github_token": 1, "aws_secret_access_key_bare": 1, "exfil_url": 1}


def test_empty_text():
    assert redact_text("") == ("", {})
    assert redact_value("") == ("", {})


def test_merge_reports_sums_counts_and_returns_a_new_dict():
    a = {"jwt": 1}
    merged = merge_reports(a, {"jwt": 2, "exfil_url": 1}, {})
    assert merged == {"jwt": 3, "exfil_url": 1}
    assert merged is not a
    assert merge_reports() == {}


def test_report_contains_only_known_kinds_and_positive_counts():
    text = (
        "\n".join(token for token, _ in SAMPLES.values())
        + f"\nhttps://e.example.com/?k={AWS_KEY_ID}"
    )
    _, report = redact_text(text)
    assert set(report) <= ALL_KINDS
    assert all(isinstance(v, int) and v > 0 for v in report.values())


# Fragments that make matches, near misses and boundary interplay likely.
_FRAGMENTS = [
    *(token for token, _ in SAMPLES.values()),
    *(miss for _, miss in SAMPLES.values()),
    AWS_EXAMPLE_SECRET,
    "https://example.com/",
    "https://evil.example.com/?q=",
    "%41",
    "%25",
    "eyJ",
    "AKIA",
    "123456",
    ":",
    "=",
    "/",
    ".",
    "-",
    "_",
    "[",
    "]",
    '"',
    " ",
    "\n",
    HEADER,
    FOOTER,
]
_texts = st.lists(
    st.one_of(st.sampled_from(_FRAGMENTS), st.text(alphabet=B64 + "._-:= \n", max_size=12)),
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_texts)
def test_redact_text_is_idempotent(text):
    once, _ = redact_text(text)
    twice, report = redact_text(once)
    assert twice == once
    assert report == {}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_texts)
def test_redact_payload_is_idempotent(text):
    once = redact_payload(text)[0]
    assert redact_payload(once) == (once, {})


_secret_values = st.text(alphabet=UPPER_DIGITS, min_size=8, max_size=60)
_prefixes = st.sampled_from(
    ["ghp_", "xoxb-", "sk-proj-", "glpat-", "aws_secret_access_key=", "Authorization: Bearer ", ""]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_prefixes, _secret_values), min_size=1, max_size=5), _texts)
def test_report_never_contains_secret_text(pairs, filler):
    text = filler + " ".join(prefix + value for prefix, value in pairs)
    _, report = redact_text(text)
    shown = repr(report)
    for _, value in pairs:
        for i in range(len(value) - 7):
            assert value[i : i + 8] not in shown
    assert set(report) <= ALL_KINDS


# ── redact_value / redact_payload ────────────────────────────────────────────


def test_redact_value_recurses_into_keys_but_not_non_strings():
    token = SAMPLES["github_token"][0]
    leaf = Fraction(1, 3)  # an arbitrary non-JSON leaf, compared by value
    value: dict[str, Any] = {
        "content": f"token {token}",
        token: "a key is redacted like a value",
        "meta": {"n": 3, "ok": True, "x": None, "f": 1.5, "b": b"raw " + token.encode(), "o": leaf},
        "variants": [{"content": AWS_KEY_ID}, ("tuple", AWS_KEY_ID), 7],
    }
    before = copy.deepcopy(value)
    out, report = redact_value(value)
    assert value == before  # input not mutated
    assert out["content"] == f"token {CRED}"
    assert token not in out
    assert out[CRED] == "a key is redacted like a value"
    assert out["meta"]["b"] is value["meta"]["b"]
    assert out["meta"]["o"] is leaf
    assert out["meta"]["n"] == 3
    assert out["meta"]["ok"] is True
    assert out["meta"]["x"] is None
    assert out["variants"][0] == {"content": CRED}
    assert out["variants"][1] == ("tuple", CRED)
    assert out["variants"][2] == 7
    assert out is not value
    assert out["meta"] is not value["meta"]
    assert out["variants"] is not value["variants"]
    assert report == {"github_token": 2, "aws_access_key_id": 2}  # the key counts too


def test_redact_payload_uses_the_summaries_order():
    token = SAMPLES["github_token"][0]
    out, report = redact_payload({"intents": [{"title": f"https://example.org/{token}"}]})
    assert out == {"intents": [{"title": "https://example.org/" + CRED}]}
    assert report == {"github_token": 1}


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _texts,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


def _shape(value):
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return "str" if isinstance(value, str) else value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json_values)
def test_redact_value_preserves_shape_and_never_mutates(value):
    before = copy.deepcopy(value)
    out, _ = redact_value(value)
    assert value == before
    assert _shape(out) == _shape(value)


def test_redact_value_keeps_both_keys_that_redact_alike_and_any_depth():
    other = "ghp_" + "B" * 36
    out, report = redact_value({SAMPLES["github_token"][0]: 1, other: 2})
    assert sorted(out.values()) == [1, 2]
    assert set(out) == {CRED, f"{CRED} (2)"}
    assert sum(report.values()) == 2
    deep: Any = SAMPLES["github_token"][0]
    for _ in range(5000):  # far past the interpreter's stack: the walk is iterative
        deep = [deep]
    out, _ = redact_value({"k": deep})
    node = out["k"]
    for _ in range(5000):
        node = node[0]
    assert node == CRED
