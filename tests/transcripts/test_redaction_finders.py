"""Tests for transcripts.core.redaction: the linear-time finders are faithful to the
original regexes they replace, and adversarial inputs complete (no catastrophic
backtracking; the per-test timeout is the bound, not a speed assertion).
"""

from __future__ import annotations

import base64
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.transcripts.redaction_rule_samples import (
    AWS_KEY_ID,
    B64,
    CRED,
    FOOTER,
    HEADER,
    SAMPLES,
    rand,
)
from transcripts.core.redaction import patterns as P
from transcripts.core.redaction import (
    redact_text,
)
from transcripts.core.redaction.credentials import contains_bare_secret
from transcripts.core.redaction.finders import _jwt_finder, credential_spans
from transcripts.core.redaction.views import View

# ── Faithfulness of the linear-time finders (against the original regexes) ──


# Rules whose language is their pattern: the alternation emulation is checked on them.
# The validated and structured rules (value spans, cookie lists, any scheme, PGP) have
# their own tests in test_redaction_headers_and_assignments.py and
# test_redaction_vendor_families.py.
_REF_RULES = tuple(
    i
    for i, r in enumerate(P.RULES)
    if r.validate is None and r.finder in ("regex", "pem", "jwt", "scheme")
)


def _reference_alternation() -> re.Pattern[str]:
    """The original's single alternation over every plain rule, in rule order."""
    parts = []
    for i in _REF_RULES:
        rule = P.RULES[i]
        pattern = rule.pattern.pattern
        if rule.finder == "pem":
            pattern = (
                P.PEM_HEADER_RE.pattern
                + r"(?:[\s\S]*?"
                + P.PEM_END_RE.pattern
                + "|"
                + P.PEM_TRUNCATED_TAIL_RE.pattern
                + ")"
            )
        parts.append(f"(?P<r{i}>{pattern})")
    return re.compile("|".join(parts))


_REFERENCE = _reference_alternation()
_pass1_texts = st.lists(
    st.sampled_from(
        [
            *(token for token, _ in SAMPLES.values()),
            "eyJ",
            "eyJa",
            ".",
            "..",
            "a",
            "AKIA",
            "A" * 16,
            "7" * 6,
            ":",
            "_",
            "-",
            " ",
            "\n",
            "\n\n",
            "postgres",
            "https",
            "://",
            "u:p@",
            HEADER,
            FOOTER,
            "MIIB",
            "Proc-Type: 4",
            "aws_session_token",
            "=",
            '"',
            "Authorization: Bearer ",
        ]
    ),
    max_size=14,
).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pass1_texts)
def test_pass1_matches_the_reference_alternation(text):
    expected = [
        (m.start(), m.end(), P.RULES[int(str(m.lastgroup)[1:])].kind)
        for m in _REFERENCE.finditer(text)
    ]
    got = [(s, e, k) for s, e, k, _ in credential_spans(View(text), among=_REF_RULES)]
    assert got == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="eyJab.-_ x", max_size=40))
def test_jwt_finder_matches_the_literal_pattern(text):
    literal = P.RULES[next(i for i, r in enumerate(P.RULES) if r.kind == "jwt")].pattern
    find = _jwt_finder(text)
    for pos in range(len(text) + 1):
        m = literal.search(text, pos)
        assert find(pos) == (None if m is None else m.span())


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123:ab_-xy", max_size=50))
def test_rewritten_look_behinds_match_the_leading_look_behind_forms(text):
    pairs = {
        "telegram_bot_token": r"(?<![0-9])[0-9]{6,}:[A-Za-z0-9_-]{30,}",
    }
    for kind, original in pairs.items():
        rule = next(r for r in P.RULES if r.kind == kind)
        assert [m.span() for m in rule.pattern.finditer(text)] == [
            m.span() for m in re.finditer(original, text)
        ]


@pytest.mark.parametrize(
    ("kind", "original", "alphabet"),
    [
        ("telegram_bot_token", r"(?<![0-9])[0-9]{6,}:[A-Za-z0-9_-]{30,}", "01:a-"),
        ("replicate_api_token", r"(?<![A-Za-z0-9_])r8_[A-Za-z0-9]{30,}", "r8_a1 "),
        ("twilio_api_key", r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![0-9a-fA-F])", "SKa1g "),
        (
            "link_token",
            r"(?<![A-Za-z0-9_.-])eyJ[A-Za-z0-9_-]{96,}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])",
            "eyJa.-",
        ),
    ],
)
def test_rewritten_look_behind_is_the_same_language(kind, original, alphabet):
    rule = next(r for r in P.RULES if r.kind == kind)
    rng = random.Random(kind)
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        text = text.replace("a", "a" * rng.randint(1, 60))  # long runs reach the floors
        assert [m.span() for m in rule.pattern.finditer(text)] == [
            m.span() for m in re.finditer(original, text)
        ]


_S3_ORIGINAL = re.compile(
    r"X-Amz-Algorithm=AWS4-HMAC-SHA256.*X-Amz-Credential=(?:AKIA|ASIA)[A-Z0-9]{16}(?:%2F|/)"
    r".*X-Amz-Expires=\d{1,6}.*X-Amz-Signature=[0-9a-f]{64}",
    re.IGNORECASE,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "X-Amz-Algorithm=AWS4-HMAC-SHA256",
                "X-Amz-Credential=" + AWS_KEY_ID + "/",
                "X-Amz-Credential=" + AWS_KEY_ID + "%2F",
                "X-Amz-Expires=3600",
                "X-Amz-Expires=",
                "X-Amz-Signature=" + "a" * 64,
                "X-Amz-Signature=" + "a" * 63,
                "&",
                "x",
            ]
        ),
        max_size=8,
    ).map("".join)
)
def test_chained_presigned_shape_matches_the_original_regex(query):
    pos, ok = 0, True
    for part in P.S3_PRESIGNED_PARTS:
        m = part.search(query, pos)
        if m is None:
            ok = False
            break
        pos = m.end()
    assert ok == bool(_S3_ORIGINAL.search(query))


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="AbC9+/aeiouxyz", min_size=40, max_size=90)
    | st.text(alphabet=B64, min_size=40, max_size=90)
)
def test_incremental_window_slide_matches_the_naive_slide(run):
    naive = not P.decodes_to_printable_text(run) and any(
        P.looks_like_secret_key(run[i : i + 40]) for i in range(len(run) - 39)
    )
    assert contains_bare_secret(run) == naive


# ── Worst cases: bounded cost, no catastrophic backtracking ──────────────────


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "text",
    [
        pytest.param("A" * 1_000_000, id="1MB-of-A"),
        pytest.param(rand(B64, 1_000_000), id="1MB-random-base64"),
        pytest.param(base64.b64encode(b"lorem ipsum dolor " * 42_000).decode(), id="base64-prose"),
        pytest.param("https://evil.example.com/?q=" + "%41" * 10_000, id="url-10k-%41"),
        pytest.param("https://evil.example.com/" + "%2541" * 10_000, id="url-10k-%2541"),
        pytest.param("eyJ" * 333_333, id="nested-eyJ"),
        pytest.param("eyJa." * 200_000, id="eyJ-dot-chain"),
        pytest.param("7" * 1_000_000, id="1MB-digits"),
        pytest.param("1234567" * 100_000 + ":", id="digits-then-colon"),
        pytest.param(HEADER + "\n" + "A" * 200 + "\n" * 1, id="pem-no-end"),
        pytest.param((HEADER + "\n") * 30_000, id="many-pem-headers-no-end"),
        pytest.param("http://" * 140_000, id="scheme-repeated"),
        pytest.param("redis://a:" * 100_000, id="db-scheme-repeated"),
        pytest.param("aws_secret_access_key " * 45_000, id="kv-keys-repeated"),
        pytest.param("Authorization: Bearer" + " " * 1_000_000, id="bearer-then-spaces"),
        pytest.param(
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            + "&X-Amz-Credential=" * 20_000,
            id="presigned-backtracking",
        ),
        pytest.param(("aeiouAEIOU0123456789bcdBCD+/" * 36_000)[:1_000_000], id="slide-no-pass"),
        pytest.param("SG." * 300_000, id="sendgrid-dots"),
        pytest.param("https://" + "a-" * 400_000 + "x", id="long-host"),
    ],
)
def test_adversarial_input_completes(text):
    out, report = redact_text(text)
    assert isinstance(out, str)
    assert redact_text(out)[0] == out or sum(report.values()) > 0


@pytest.mark.timeout(20)
def test_one_megabyte_of_random_base64_is_one_bare_secret_redaction():
    out, report = redact_text(rand(B64, 1_000_000))
    assert out == CRED
    assert report == {"aws_secret_access_key_bare": 1}
