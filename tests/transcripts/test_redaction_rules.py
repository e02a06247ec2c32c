"""Tests for transcripts.core.redaction: the rule table, each rule's samples, the original
behaviours, and passes 2 (base64-encoded credentials) and 3 (bare AWS secret keys).

The samples live in ``redaction_rule_samples``.
"""

from __future__ import annotations

import base64
import hashlib

import pytest

from tests.transcripts.redaction_rule_samples import (
    ALNUM,
    AWS_EXAMPLE_SECRET,
    CRED,
    ENCODED,
    FOOTER,
    HEADER,
    HEX,
    PEM_BODY,
    SAMPLES,
    URLSAFE,
    rand,
)
from transcripts.core.redaction import patterns as P
from transcripts.core.redaction import (
    redact_credentials,
    redact_text,
)

# ── The rule table ───────────────────────────────────────────────────────────


def test_every_rule_has_a_positive_and_a_near_miss_sample():
    assert set(SAMPLES) == {r.kind for r in P.RULES}


def test_rule_kinds_are_unique_and_patterns_have_no_capturing_groups():
    kinds = [r.kind for r in P.RULES]
    assert len(kinds) == len(set(kinds))
    assert all(r.pattern.groups == 0 for r in P.RULES)


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_positive_sample_is_redacted_with_its_kind(kind):
    token, _ = SAMPLES[kind]
    text = f"log line before {token} and after"
    out, report = redact_credentials(text)
    assert report.get(kind) == 1, report
    assert CRED in out
    assert token not in out
    assert out.startswith("log line before ")
    assert out.endswith(" and after")


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_positive_sample_alone_is_redacted(kind):
    token, _ = SAMPLES[kind]
    out, report = redact_credentials(token)
    assert report.get(kind) == 1
    assert token not in out


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_near_miss_is_left_alone(kind):
    _, near_miss = SAMPLES[kind]
    text = f"note: {near_miss} (not a secret)"
    assert redact_credentials(text) == (text, {})
    assert redact_text(text) == (text, {})


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_positive_sample_contains_a_rule_anchor_and_obeys_its_group(kind):
    """The engine skips a rule whose anchors are absent, so anchors must be necessary."""
    index = next(i for i, r in enumerate(P.RULES) if r.kind == kind)
    rule = P.RULES[index]
    token, _ = SAMPLES[kind]
    m = rule.pattern.search(token)
    if rule.finder == "pem":
        m = P.PEM_HEADER_RE.search(token)
    assert m is not None
    matched = m.group()
    if rule.anchor_lower:
        assert any(a in matched.lower() for a in rule.anchors)
    elif rule.anchors or not rule.windowed:  # unanchored windowed rules always run
        assert any(a in matched for a in rule.anchors)
    if rule.windowed:
        assert len(matched) >= P.WINDOW_MIN_RUN
        assert set(matched) <= set(P.WINDOW_CHARS)


def test_fast_path_anchors_cover_every_full_text_anchor():
    """Each full-text anchor contains a fast-path anchor or is itself a window run."""
    for i in P.FULL_TEXT_RULES:
        rule = P.RULES[i]
        for anchor in rule.anchors:
            fast = P.FAST_PATH_LOWER_ANCHORS if rule.anchor_lower else P.FAST_PATH_ANCHORS
            is_window = len(anchor) >= P.WINDOW_MIN_RUN and set(anchor) <= set(P.WINDOW_CHARS)
            assert is_window or any(f in anchor for f in fast), (rule.kind, anchor)


def test_windowed_patterns_use_only_window_characters():
    """A windowed rule must never need a character outside the window class."""
    outside = "".join(chr(c) for c in range(32, 127) if chr(c) not in P.WINDOW_CHARS)
    for i in P.WINDOWED_RULES:
        rule = P.RULES[i]
        token = SAMPLES[rule.kind][0]
        for ch in outside:
            # A non-window character in the middle of the token breaks every match.
            broken = token[: len(token) // 2] + ch + token[len(token) // 2 :]
            for m in rule.pattern.finditer(broken):
                assert ch not in m.group(), (rule.kind, ch)


def test_stripe_publishable_key_is_public_and_kept():
    text = "pk_live_" + rand(ALNUM, 24)
    assert redact_text(text) == (text, {})


def test_anthropic_admin_key_reports_its_own_kind_not_the_generic_one():
    _, report = redact_credentials(SAMPLES["anthropic_admin_key"][0])
    assert report == {"anthropic_admin_key": 1}


def test_openssh_private_key_is_covered_by_the_pem_rule():
    key = (
        "-----BEGIN OPENSSH "
        + "PRIVATE KEY-----\n"
        + PEM_BODY
        + "\n-----END OPENSSH PRIVATE KEY-----"
    )
    out, report = redact_credentials("key:\n" + key + "\ndone")
    assert out == "key:\n" + CRED + "\ndone"
    assert report == {"private_key": 1}


# ── Original behaviours (reference §4.3) ─────────────────────────────────────


def test_aws_key_value_in_compact_json_keeps_neighbouring_fields():
    text = '{"aws_secret_access_key":"' + AWS_EXAMPLE_SECRET + '","region":"eu-west-1"}'
    out, report = redact_credentials(text)
    assert out == '{"' + CRED + '","region":"eu-west-1"}'
    assert report == {"aws_secret_access_key": 1}


def test_pem_block_is_redacted_whole_including_body():
    text = "before\n" + HEADER + "\n" + PEM_BODY + "\n" + FOOTER + "\nafter"
    assert redact_credentials(text) == ("before\n" + CRED + "\nafter", {"private_key": 1})


def test_truncated_pem_redacts_following_body_lines_only():
    text = HEADER + "\n" + PEM_BODY + "\n\n\nThe rest of the message stays."
    out, report = redact_credentials(text)
    assert out == CRED + "\n\n\nThe rest of the message stays."
    assert report == {"private_key": 1}


def test_pem_header_mentioned_inline_in_prose_keeps_the_rest_of_the_text():
    text = "Never paste a " + HEADER + " block here.\nSecond line stays."
    out, _ = redact_credentials(text)
    assert out == "Never paste a " + CRED + " block here.\nSecond line stays."


def test_encrypted_truncated_pem_crosses_the_single_blank_line():
    text = (
        HEADER
        + "\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,"
        + rand(HEX, 32).upper()
        + "\n\n"
        + PEM_BODY
        + "\n\n\ntrailing prose"
    )
    out, _ = redact_credentials(text)
    assert out == CRED + "\n\n\ntrailing prose"


def test_db_uri_with_empty_user_redacts_the_password():
    text = "mongodb+srv://:" + rand(ALNUM, 20) + "@cluster0.example.net/db"
    out, report = redact_credentials(text)
    assert out == CRED + "cluster0.example.net/db"
    assert report == {"db_uri_credentials": 1}


def test_jwe_with_empty_key_segment_is_one_token():
    jwe = (
        "eyJ"
        + rand(URLSAFE, 20)
        + ".."
        + rand(URLSAFE, 16)
        + "."
        + rand(URLSAFE, 40)
        + "."
        + rand(URLSAFE, 22)
    )
    assert redact_credentials(f"t={jwe};") == (f"t={CRED};", {"jwt": 1})


def test_bearer_header_is_case_insensitive_and_json_aware():
    token = rand(ALNUM, 32)
    assert redact_credentials("authorization: bearer " + token)[1] == {"bearer_header": 1}
    out, report = redact_credentials('{"Authorization": "Bearer ' + token + '"}')
    assert token not in out
    assert report == {"bearer_header": 1}


def test_bearer_header_case_folding_is_ascii_only():
    """A dotless i (U+0131) is not an HTTP header name; the ASCII gate stays sound."""
    text = "Author" + "\u0131" + "zation: Bearer " + rand(ALNUM, 20)
    assert redact_credentials(text) == (text, {})


def test_telegram_token_after_a_redacted_key_is_caught_by_the_second_round():
    # The AWS id ends mid-digit-run; the token's digits continue it. Round 2 sees "]".
    text = "AKIA" + "ABCDEFGHIJ" + "123456" + "789012:" + rand(URLSAFE, 35)
    out, report = redact_credentials(text)
    assert out == CRED + CRED
    assert report == {"aws_access_key_id": 1, "telegram_bot_token": 1}


# ── Pass 2: base64-encoded credentials ───────────────────────────────────────


def test_base64_encoded_credential_is_redacted():
    blob = base64.b64encode(("aws_secret_access_key=" + AWS_EXAMPLE_SECRET).encode()).decode()
    out, report = redact_credentials(f"payload: {blob} end")
    assert out == f"payload: {ENCODED} end"
    assert report == {"encoded_credential": 1}


def test_base64_encoded_github_token_is_redacted():
    blob = base64.b64encode(("token " + SAMPLES["github_token"][0] + " ok").encode()).decode()
    assert redact_credentials(blob) == (ENCODED, {"encoded_credential": 1})


def test_base64_of_prose_is_not_redacted():
    blob = base64.b64encode(b"The quick brown fox jumps over the lazy dog, twice over.").decode()
    text = f"data: {blob}"
    assert redact_text(text) == (text, {})


# ── Pass 3: bare AWS secret access key ───────────────────────────────────────


def test_bare_aws_secret_is_redacted():
    text = f"secret is {AWS_EXAMPLE_SECRET} ok"
    assert redact_credentials(text) == (f"secret is {CRED} ok", {"aws_secret_access_key_bare": 1})


def test_bare_aws_secret_glued_to_other_base64_chars_is_still_caught():
    out, report = redact_credentials("X" + AWS_EXAMPLE_SECRET + "ABC")
    assert out == CRED
    assert report == {"aws_secret_access_key_bare": 1}


@pytest.mark.parametrize(
    "text",
    [
        "ThisIsAVeryLongCamelCaseIdentifierName12",  # English 40-char word run
        "src/main/java/com/Example/FooBarBazClas1",  # mixed-case path
        "0123456789abcdef0123456789abcdef01234567",  # git SHA-1 (hex)
        hashlib.sha256(b"").hexdigest(),  # sha256 (64 hex)
        base64.b64encode(b"plain english prose, nothing secret.").decode(),
        "A" * 40,
    ],
)
def test_bare_secret_heuristic_leaves_benign_40_char_runs(text):
    assert len(text) >= 40
    assert redact_credentials(text) == (text, {})


def test_looks_like_secret_key_thresholds_match_the_original():
    assert P.looks_like_secret_key(AWS_EXAMPLE_SECRET)
    assert P.shannon_entropy(AWS_EXAMPLE_SECRET) >= 4.3
    assert not P.looks_like_secret_key(AWS_EXAMPLE_SECRET[:39])  # exactly 40 only
    assert P.longest_lowercase_run("abcdeF") == 5
    assert P.vowel_ratio("AEbc") == 0.5
    assert P.vowel_ratio("1234") == 0.0
