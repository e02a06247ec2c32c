"""Coverage of the write-boundary redaction: vendor token families in every context, and
private key blocks (GCP service-account JSON, PGP).

Each family is checked in several contexts (prose, code, env file, YAML, JSON, shell,
URL): the secret is gone, the report names the kind, and the report holds no
8-character piece of the secret.
"""

from __future__ import annotations

import string

import pytest

from tests.transcripts.redaction_coverage_cases import (
    ALNUM,
    CONTEXTS,
    CRED,
    FAMILIES,
    HEX,
    URLSAFE,
    assert_value_free,
    rand,
)
from tests.transcripts.redaction_samples import COVERAGE_SAMPLES
from transcripts.core.redaction import patterns as P
from transcripts.core.redaction import (
    redact_credentials,
    redact_text,
)


@pytest.mark.parametrize("context", sorted(CONTEXTS))
@pytest.mark.parametrize("kind", sorted(FAMILIES))
def test_vendor_family_is_redacted_in_every_context(kind: str, context: str) -> None:
    token = FAMILIES[kind]
    text = CONTEXTS[context].replace("{t}", token)
    out, report = redact_credentials(text)
    assert token not in out
    assert report.get(kind) == 1, report
    assert_value_free(report, token)
    # The write boundary (URLs first) removes it too; in a URL the whole URL may go.
    out, report = redact_text(text)
    assert token not in out
    assert report
    assert_value_free(report, token)
    assert redact_text(out) == (out, {})


def test_every_family_kind_is_a_rule() -> None:
    kinds = {r.kind for r in P.RULES}
    assert set(FAMILIES) <= kinds


@pytest.mark.parametrize(
    ("kind", "token"),
    [
        ("github_token", "Ghp_" + rand(ALNUM, 36)),
        ("anthropic_api_key", "Sk-ant-api03-" + rand(URLSAFE, 93)),
        ("openai_project_key", "Sk-proj-" + rand(URLSAFE, 48)),
        ("slack_token", "Xoxb-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24)),
        ("npm_token", "Npm_" + rand(ALNUM, 36)),
        ("jwt", "EyJ" + rand(URLSAFE, 30) + ".eyJ" + rand(URLSAFE, 60) + "." + rand(URLSAFE, 43)),
        ("uri_credentials", "Postgres://app:" + rand(ALNUM, 16) + "@"),
        ("gitlab_pat", "Glpat-" + rand(URLSAFE, 20)),
    ],
)
def test_a_capitalised_first_letter_is_still_the_token(kind: str, token: str) -> None:
    out, report = redact_credentials(f"- {token} was in the summary")
    assert token not in out
    assert report == {kind: 1}


def test_a_capitalised_middle_is_not_a_token() -> None:
    """Only the first letter folds: vendors' other letters keep their exact case."""
    text = "GHP_" + rand(ALNUM, 36)
    assert redact_credentials(text)[1].get("github_token") is None


# ── Private key blocks ──────────────────────────────────────────────────────


def _pem_body() -> str:
    return "\n".join(rand(ALNUM + "+/", 64) for _ in range(4))


def test_gcp_service_account_json_private_key_is_redacted() -> None:
    body = _pem_body().replace("\n", "\\n")
    key = "-----BEGIN " + "PRIVATE KEY-----\\n" + body + "\\n-----END PRIVATE KEY-----\\n"
    doc = (
        '{"type": "service_account", "project_id": "demo-123", '
        f'"private_key_id": "{rand(HEX, 40)}", "private_key": "{key}", '
        '"client_email": "svc@demo-123.iam.gserviceaccount.com"}'
    )
    out, report = redact_text(doc)
    assert body not in out
    assert report.get("private_key") == 1
    assert '"client_email": "svc@demo-123.iam.gserviceaccount.com"' in out


def test_pgp_private_key_block_is_redacted_whole() -> None:
    block = COVERAGE_SAMPLES["pgp_private_key"][0]
    out, report = redact_text("key:\n" + block + "\nthanks")
    assert out == "key:\n" + CRED + "\nthanks"
    assert report == {"pgp_private_key": 1}


def test_truncated_pgp_block_keeps_the_prose_after_it() -> None:
    header = COVERAGE_SAMPLES["pgp_private_key"][0].split("\n", 1)[0]
    text = header + "\nVersion: GnuPG\n\n" + _pem_body() + "\n\n\nThe rest stays."
    assert redact_text(text) == (CRED + "\n\n\nThe rest stays.", {"pgp_private_key": 1})
