"""Tests for transcripts.core.redaction: exfiltration URLs (reference §4.4) and the
presigned-S3 exemption.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.transcripts.redaction_rule_samples import (
    ALNUM,
    AWS_KEY_ID,
    CRED,
    HEX,
    SAMPLES,
    rand,
)
from transcripts.core.redaction import patterns as P
from transcripts.core.redaction import (
    redact_exfiltration_urls,
    redact_text,
)

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
