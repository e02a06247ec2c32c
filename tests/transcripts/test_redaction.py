"""Tests for transcripts.core.redaction (credential and exfiltration-URL redaction).

Every secret is assembled at runtime (prefix + seeded random or filler), so the
repository holds no literal token for a secret scanner to flag.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import random
import re
import string
from fractions import Fraction
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.transcripts.redaction_samples import COVERAGE_SAMPLES
from transcripts.core.redaction import (
    merge_reports,
    redact_credentials,
    redact_exfiltration_urls,
    redact_payload,
    redact_text,
    redact_value,
)
from transcripts.core.redaction import patterns as P
from transcripts.core.redaction.bare_secret import _contains_bare_secret
from transcripts.core.redaction.finders import _credential_spans, _jwt_finder
from transcripts.core.redaction.views import _might_contain_secret, _View

CRED = "[REDACTED: credential]"
ENCODED = "[REDACTED: encoded credential]"

_rng = random.Random(20250301)
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"


def rand(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


# The AWS documentation's example secret key, split so it is not one literal.
AWS_EXAMPLE_SECRET = "wJalrXUtnFEMI/" + "K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
AWS_KEY_ID = "AKIA" + rand(UPPER_DIGITS, 16)
PEM_BODY = "\n".join(rand(B64, 64) for _ in range(4))
HEADER = "-----BEGIN RSA " + "PRIVATE KEY-----"
FOOTER = "-----END RSA " + "PRIVATE KEY-----"

# kind -> (positive token, near miss that must stay untouched). Positives are realistic
# shapes; near misses share the prefix but fail the format.
SAMPLES: dict[str, tuple[str, str]] = {
    "aws_access_key_id": (AWS_KEY_ID, "AKIA" + "abcdefghijklmnop"),
    "aws_secret_access_key": (
        "aws_secret_access_key" + ' = "' + AWS_EXAMPLE_SECRET,
        "aws_secret_access_key" + " is documented below",
    ),
    "aws_session_token": ("SessionToken" + ": " + rand(B64, 120), "SessionToken" + "Expiry"),
    "aws_access_key_id_assignment": (
        "AccessKeyId" + "=" + AWS_KEY_ID,
        "AccessKeyId" + "s are public identifiers",
    ),
    "private_key": (HEADER + "\n" + PEM_BODY + "\n" + FOOTER, "-----BEGIN PUBLIC KEY-----"),
    "slack_token": ("xoxb-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24), "xoxb-" + "123"),
    "telegram_bot_token": (
        rand(string.digits, 10) + ":" + rand(URLSAFE, 35),
        "12345" + ":" + "a" * 35,
    ),
    "github_token": ("ghp_" + rand(ALNUM, 36), "ghp_" + rand(ALNUM, 20)),
    "github_fine_grained_pat": (
        "github_pat_" + rand(ALNUM, 22) + "_" + rand(ALNUM, 59),
        "github_pat_" + "short",
    ),
    "gitlab_pat": ("glpat-" + rand(URLSAFE, 20), "glpat-" + "short"),
    "stripe_secret_key": ("sk_live_" + rand(ALNUM, 24), "pk_live_" + rand(ALNUM, 24)),
    "sendgrid_api_key": ("SG." + rand(URLSAFE, 22) + "." + rand(URLSAFE, 43), "SG." + "a.b"),
    "openai_project_key": ("sk-proj-" + rand(URLSAFE, 48), "sk-proj-" + "abc"),
    "anthropic_admin_key": ("sk-ant-admin01-" + rand(URLSAFE, 40), "sk-ant-admin01-" + "x"),
    "anthropic_api_key": ("sk-ant-api03-" + rand(URLSAFE, 93), "sk-ant-" + "short"),
    "npm_token": ("npm_" + rand(ALNUM, 36), "npm_" + "install"),
    "pypi_token": ("pypi-" + "AgEIcHlwaS5vcmc" + rand(URLSAFE, 50), "pypi-" + "short"),
    "digitalocean_token": ("dop_v1_" + rand(HEX, 64), "dop_v1_" + "abc"),
    "google_oauth_client_secret": ("GOCSPX-" + rand(URLSAFE, 28), "GOCSPX-" + "short"),
    "db_uri_credentials": (
        "postgres://app:" + rand(ALNUM, 16) + "@",
        "postgres://db.example.com:5432/app",
    ),
    "jwt": (
        "eyJ" + rand(URLSAFE, 30) + "." + "eyJ" + rand(URLSAFE, 60) + "." + rand(URLSAFE, 43),
        "keyJson.get(raw)",
    ),
    "link_token": (
        "eyJ" + rand(URLSAFE, 150) + "." + rand(URLSAFE, 43),
        "eyJsonSerializerConfigurationFactoryBuilder.deserializeFromStringValue",
    ),
    "bearer_header": ("Authorization: Bearer " + rand(ALNUM, 40), "Authorization: Basic x"),
    "openai_service_account_key": ("sk-svcacct-" + rand(URLSAFE, 60), "sk-svcacct-" + "abc"),
    "openai_admin_key": ("sk-admin-" + rand(URLSAFE, 60), "sk-admin-" + "panel"),
    "openai_legacy_key": (
        "sk-" + rand(ALNUM, 20) + "T3Blbk" + "FJ" + rand(ALNUM, 20),
        "sk-" + "a" * 20 + "T3BlbkFX" + "a" * 20,
    ),
    "google_api_key": ("AIza" + rand(URLSAFE, 35), "AIza" + rand(URLSAFE, 20)),
    "google_oauth_access_token": ("ya29." + rand(URLSAFE, 100), "ya29." + "short"),
    "gitlab_deploy_token": ("gldt-" + rand(URLSAFE, 20), "gldt-" + "x"),
    "gitlab_runner_token": ("glrt-" + rand(URLSAFE, 24), "glrt-" + "x"),
    "gitlab_pipeline_trigger_token": ("glptt-" + rand(HEX, 40), "glptt-" + "x"),
    "gitlab_oauth_app_secret": ("gloas-" + rand(HEX, 64), "gloas-" + "x"),
    "huggingface_token": (
        "hf_" + rand(string.ascii_letters, 34),
        "hf_" + rand(string.ascii_letters, 35),
    ),
    "huggingface_org_token": ("api_org_" + rand(string.ascii_letters, 34), "api_org_" + "x"),
    "groq_api_key": ("gsk_" + rand(ALNUM, 52), "gsk_" + rand(ALNUM, 10)),
    "xai_api_key": ("xai-" + rand(ALNUM, 80), "xai-" + rand(ALNUM, 10)),
    "replicate_api_token": ("r8_" + rand(ALNUM, 37), "var8_" + rand(ALNUM, 37)),
    "perplexity_api_key": ("pplx-" + rand(ALNUM, 48), "pplx-" + rand(ALNUM, 10)),
    "slack_app_token": (
        "xapp-1-" + rand(UPPER_DIGITS, 11) + "-" + rand(string.digits, 13) + "-" + rand(HEX, 64),
        "xapp-1-" + "short",
    ),
    "slack_config_token": ("xoxe.xoxp-1-" + rand(ALNUM, 100), "xoxe.xoxp-1-" + "short"),
    "slack_refresh_token": ("xoxe-1-" + rand(ALNUM, 100), "xoxe-1-" + "short"),
    "slack_webhook_url": (
        "https://hooks.slack.com/services/T"
        + rand(UPPER_DIGITS, 8)
        + "/B"
        + rand(UPPER_DIGITS, 8)
        + "/"
        + rand(ALNUM, 24),
        "https://hooks.slack.com/services/",
    ),
    "stripe_webhook_secret": ("whsec_" + rand(ALNUM, 32), "whsec_" + "short"),
    "twilio_api_key": ("SK" + rand(HEX, 32), "TASK" + rand(HEX, 32)),
    "shopify_token": ("shpat_" + rand(HEX, 32), "shpat_" + "xyz"),
    "databricks_token": ("dapi" + rand(HEX, 32), "dapi" + "ghijklmnopqrstuvwxyzghijklmnopqr"),
    "azure_storage_account_key": (
        "AccountKey=" + rand(B64, 86) + "==",
        "AccountKey=" + "short;",
    ),
    "atlassian_api_token": ("ATATT3xFfGF0" + rand(URLSAFE, 180), "ATATT3" + "short"),
    "linear_api_key": ("lin_api_" + rand(ALNUM, 40), "lin_api_" + rand(ALNUM, 10)),
    "notion_token": ("ntn_" + rand(string.digits, 11) + rand(ALNUM, 35), "ntn_" + "abc"),
    "hashicorp_vault_token": ("hvs." + rand(URLSAFE, 90), "hvs." + "short"),
    "tailscale_key": ("tskey-auth-" + rand(ALNUM, 12) + "-" + rand(ALNUM, 30), "tskey-" + "x"),
    "supabase_token": ("sbp_" + rand(HEX, 40), "sbp_" + "xyz"),
    "sentry_token": ("sntrys_" + "eyJ" + rand(B64, 80) + "_" + rand(B64, 43), "sntrys_" + "x"),
    "grafana_token": ("glsa_" + rand(ALNUM, 32) + "_" + rand(HEX, 8), "glsa_" + "short"),
    "postman_api_key": ("PMAK-" + rand(HEX, 24) + "-" + rand(HEX, 34), "PMAK-" + "short"),
    "age_secret_key": ("AGE-SECRET-KEY-1" + rand(UPPER_DIGITS, 58), "AGE-SECRET-KEY-1" + "QQ"),
    "onepassword_service_account_token": ("ops_eyJ" + rand(B64, 200), "ops_eyJ" + "short"),
    "url_credentials": (
        "https://deploy:" + rand(ALNUM, 16) + "@",
        "https://example.com:8443/path@v2",
    ),
    "npmrc_auth_token": (
        "//registry.npmjs.org/:_authToken=" + rand(HEX, 8) + "-" + rand(HEX, 4),
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
    ),
    **COVERAGE_SAMPLES,
}

ALL_KINDS = {r.kind for r in P.RULES} | {P.ENCODED_KIND, P.BARE_AWS_KIND, P.EXFIL_KIND}


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


# ── Exfiltration URLs (reference §4.4) ───────────────────────────────────────


def _pct(s: str) -> str:
    return "".join(f"%{ord(c):02X}" for c in s)


def test_credential_in_query_flags_the_whole_url():
    text = f"see https://evil.example.com/c?k={AWS_KEY_ID}&x=1 now"
    out, report = redact_exfiltration_urls(text)
    assert out == "see [REDACTED: suspicious URL to evil.example.com] now"
    assert report == {"exfil_url": 1}


def test_credential_in_path_without_query_is_flagged():
    out, _ = redact_exfiltration_urls(f"https://evil.example.com/{AWS_KEY_ID}/x")
    assert out == "[REDACTED: suspicious URL to evil.example.com]"


def test_provider_token_anywhere_in_url_is_flagged():
    out, report = redact_exfiltration_urls(
        "https://cdn.example.org/a/" + SAMPLES["github_token"][0]
    )
    assert report == {"exfil_url": 1}
    assert out == "[REDACTED: suspicious URL to cdn.example.org]"


def test_three_times_percent_encoded_credential_in_path_is_flagged():
    encoded = quote(quote(_pct(AWS_KEY_ID), safe=""), safe="")
    assert "%2525" in encoded
    text = f"https://evil.example.com/{encoded}"
    assert redact_exfiltration_urls(text)[1] == {"exfil_url": 1}


def test_still_decodable_after_three_rounds_is_flagged():
    encoded = quote(quote(quote("%41"), safe=""), safe="")  # four layers of "A"
    assert redact_exfiltration_urls(f"https://example.com/{encoded}")[1] == {"exfil_url": 1}


def test_long_query_of_200_chars_is_flagged_199_is_not():
    base = "https://example.com/search?"
    long_q = ("q=word&" * 40)[:200]
    assert redact_exfiltration_urls(base + long_q)[1] == {"exfil_url": 1}
    short = base + long_q[:199]
    assert redact_exfiltration_urls(short) == (short, {})


def test_21_percent_octets_are_flagged_20_are_not():
    flagged = "https://example.com/p/" + "%20" * 21
    assert redact_exfiltration_urls(flagged)[1] == {"exfil_url": 1}
    kept = "https://example.com/p/" + "%20" * 20
    assert redact_exfiltration_urls(kept) == (kept, {})


def test_base64_run_in_query_is_flagged():
    # "=" belongs to the query's base64-like class, so "d=" counts toward the 40.
    text = "https://example.com/?d=" + "QUJD" * 9 + "QU"  # a 40-char run
    assert redact_exfiltration_urls(text)[1] == {"exfil_url": 1}
    kept = "https://example.com/?d=" + "QUJD" * 9 + "Q"  # 39
    assert redact_exfiltration_urls(kept) == (kept, {})


def test_query_attached_to_host_without_path_is_scanned():
    out, _ = redact_exfiltration_urls(f"https://evil.example.com?leak={AWS_KEY_ID}")
    assert out == "[REDACTED: suspicious URL to evil.example.com]"


def test_raw_ipv4_and_ipv6_hosts_are_scanned():
    out4, _ = redact_exfiltration_urls(f"http://169.254.169.254/latest/{AWS_KEY_ID}")
    assert out4 == "[REDACTED: suspicious URL to 169.254.169.254]"
    out6, _ = redact_exfiltration_urls(f"http://[fd00::1]:8080/x?k={AWS_KEY_ID}")
    assert out6 == "[REDACTED: suspicious URL to [fd00::1]]"


@pytest.mark.parametrize(
    "url",
    [
        "https://docs.python.org/3/library/re.html#re.search",
        "https://docs.djangoproject.com/en/5.2/topics/http/middleware/",
        "https://example.com/search?q=redaction+benchmark&page=2",
        "https://github.com/django/channels/issues/1234",
    ],
)
def test_plain_documentation_urls_are_untouched(url):
    text = f"See ({url}) for details."
    assert redact_text(text) == (text, {})


def _presigned(extra: str = "", signature: str | None = None) -> str:
    sig = signature if signature is not None else rand(HEX, 64)
    return (
        "https://bucket.s3.eu-west-1.amazonaws.com/reports/q1.pdf"
        "?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        f"&X-Amz-Credential={AWS_KEY_ID}%2F20250301%2Feu-west-1%2Fs3%2Faws4_request"
        "&X-Amz-Date=20250301T120000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"
        f"&X-Amz-Signature={sig}{extra}"
    )


def test_valid_s3_presigned_url_is_untouched_by_the_url_pass():
    text = f"Download: {_presigned()}"
    assert redact_exfiltration_urls(text) == (text, {})


def test_presigned_url_survives_redact_text_but_its_key_id_is_redacted():
    # As in the original, the exemption covers the exfil check only. The credential
    # pass that follows still replaces the AKIA id inside X-Amz-Credential.
    url = _presigned()
    out, report = redact_text(url)
    assert report == {"aws_access_key_id": 1}
    assert out == url.replace(AWS_KEY_ID, CRED)


def test_presigned_url_with_an_extra_parameter_is_flagged():
    out, report = redact_exfiltration_urls(_presigned(extra="&leak=" + rand(ALNUM, 12)))
    assert report == {"exfil_url": 1}
    assert out.startswith("[REDACTED: suspicious URL to bucket.s3.")


def test_presigned_url_with_a_malformed_signature_is_flagged():
    assert redact_exfiltration_urls(_presigned(signature="Z" * 64))[1] == {"exfil_url": 1}


def test_presigned_shape_on_other_domain_is_flagged():
    url = _presigned().replace(".amazonaws.com", ".amazonaws.example")
    assert redact_exfiltration_urls(url)[1] == {"exfil_url": 1}


def test_exempt_host_skips_only_the_query_heuristics(monkeypatch):
    monkeypatch.setattr(P, "EXEMPT_EXACT_HOSTS", frozenset({"tenant.example.com"}))
    long_url = "https://Tenant.example.com/doc?" + "a=b&" * 60
    assert redact_exfiltration_urls(long_url) == (long_url, {})
    leaked = f"https://tenant.example.com/doc?k={AWS_KEY_ID}"
    assert redact_exfiltration_urls(leaked)[1] == {"exfil_url": 1}


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
    assert not _might_contain_secret(_View(text))


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


# ── Faithfulness of the linear-time finders (against the original regexes) ──


# Rules whose language is their pattern: the alternation emulation is checked on them.
# The validated and structured rules (value spans, cookie lists, any scheme, PGP) have
# their own tests in test_redaction_coverage.py.
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
    got = [(s, e, k) for s, e, k, _ in _credential_spans(_View(text), among=_REF_RULES)]
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
    assert _contains_bare_secret(run) == naive


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
