"""Coverage of the write-boundary redaction: a false-positive corpus of ordinary prose and
code comes through unchanged, nested values are covered, redaction with the coverage
rules is idempotent, and the engine's key search and gates match the rule table.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.transcripts.redaction_coverage_cases import (
    ALNUM,
    BASIC,
    FAMILIES,
    HEX,
    PASSWORD,
    SID,
    URLSAFE,
    rand,
)
from tests.transcripts.redaction_samples import COVERAGE_SAMPLES, b64
from transcripts.core.redaction import patterns as P
from transcripts.core.redaction import (
    redact_payload,
    redact_text,
    redact_value,
)
from transcripts.core.redaction.finders import _assign_keys
from transcripts.core.redaction.views import View

# ── False-positive corpus: ordinary prose and code come through unchanged ────

_PNG = b"\x89PNG\r\n\x1a\n" + random.Random(7).randbytes(600)
FALSE_POSITIVES = [
    # prose about secrets, without a value
    "Reset your password from the settings page; the password must have 12+ characters.",
    "The API key is stored in the vault, and the secret rotates every 90 days.",
    "Password: required. Token: expires in 3600 seconds. Secret: see the runbook.",
    "Pass the token to the tokenizer; tokens are counted per request.",
    "Set the password= option in the config, or leave password: empty.",
    "password: at least 12 characters",
    "secret: my-app-secret",
    "password: ********",
    "password=<your password>",
    "api_key: YOUR_API_KEY",
    "token=[REDACTED]",
    "OPENAI_API_KEY=sk-...",
    # code that names secrets but holds none
    "password = getpass()",
    "password = getpass.getpass('Password: ')",
    'api_key = os.environ["X"]',
    "api_key = os.environ.get('OPENAI_API_KEY')",
    "secret: ${{ secrets.X }}",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "password: str",
    "api_key: Optional[str] = None",
    "secret_key: SecretStr = Field(...)",
    "self.password = password",
    "user.set_password(raw_password)",
    "login(username=user, password=password)",
    "if password == confirm_password:",
    "password_hash = make_password(password)",
    "PASSWORD_HASHERS = [",
    "AUTH_PASSWORD_VALIDATORS = [",
    "'PASSWORD': os.environ.get('DB_PASSWORD', ''),",
    "SECRET_KEY = env('DJANGO_SECRET_KEY')",
    "const apiKey = process.env.API_KEY;",
    "apiKey: config.apiKey,",
    "password: req.body.password,",
    'password = f"{prefix}{suffix}"',
    "token = tokenizer.encode(text)",
    "max_tokens = 4096",
    'pad_token = "<pad>"',
    'token = "Hello,"',
    "eos_token_id = 2",
    "password: !vault |",
    "PASSWORD=$(openssl rand -hex 16)",
    'password="${DB_PASSWORD:-}"',
    "private_key: /etc/ssl/private/server.key",
    "secret_file = './secrets/app.key'",
    "git push -u origin main",
    "docker run -u 1000:1000 image",
    "npm install --save-dev typescript",
    "hf_hub_download(repo_id='org/model', filename='config.json')",
    "getDefaultPasswordValidatorsForUserModelConfigurationFactory()",
    "pattern.matches(text) and patternMatcherFactory.compile(regex)",
    "Set-Cookie: theme=dark; Path=/",
    "Authorization: Bearer <token>",
    "ssh://git@github.com/org/repo.git",
    # hashes, ids, dates, long identifiers
    "commit " + hashlib.sha1(b"x", usedforsecurity=False).hexdigest(),
    "sha256: " + hashlib.sha256(b"x").hexdigest(),
    "md5 " + hashlib.md5(b"x", usedforsecurity=False).hexdigest(),
    "request id " + str(uuid.UUID(int=random.Random(1).getrandbits(128))),
    "ids: " + ", ".join(str(uuid.UUID(int=random.Random(i).getrandbits(128))) for i in range(5)),
    "2025-03-01T12:00:00.123456+00:00 INFO session.rotate archive=3 took=12ms",
    "ThisIsAVeryLongCamelCaseIdentifierName12 and another_long_snake_case_identifier_name",
    "MyVeryLongClassNameHereX.fields.get_default_field_names_for_model",
    # base64 of images
    '<img src="data:image/png;base64,' + base64.b64encode(_PNG).decode() + '">',
    base64.b64encode(_PNG).decode(),
    "![chart](data:image/jpeg;base64,"
    + base64.b64encode(b"\xff\xd8\xff" + random.Random(8).randbytes(400)).decode()
    + ")",
    # public identifiers, not secrets (Stripe publishable keys, Twilio account SIDs,
    # Mapbox public tokens, Mailgun public keys)
    "pk_live_" + rand(ALNUM, 24),
    "TWILIO_ACCOUNT_SID=AC" + rand(HEX, 32),
    "pk." + b64('{"u":"example","a":"clexample"}').rstrip("=") + "." + rand(URLSAFE, 22),
    "pubkey-" + rand(HEX, 32),
    # documentation URLs
    "https://docs.python.org/3/library/getpass.html#getpass.getpass",
    "https://docs.djangoproject.com/en/5.2/ref/settings/#secret-key",
    "https://example.com/search?q=password+reset&page=2",
    "https://api.example.com/v1?api_key=YOUR_API_KEY",
]


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_ordinary_prose_and_code_are_unchanged(text: str) -> None:
    assert redact_text(text) == (text, {})
    assert redact_payload(text) == (text, {})


def test_false_positive_corpus_as_one_document_is_unchanged() -> None:
    doc = "\n".join(FALSE_POSITIVES)
    assert redact_text(doc) == (doc, {})


def test_nested_values_are_covered() -> None:
    value = {
        "content": "config:\n  password: " + PASSWORD,
        "meta": {"headers": ["Cookie: sid=" + SID, "Authorization: Basic " + BASIC]},
    }
    out, report = redact_value(value)
    flat = json.dumps(out)
    for secret in (PASSWORD, SID, BASIC):
        assert secret not in flat
    assert report == {"password_assignment": 1, "cookie_header": 1, "basic_auth_header": 1}


# ── Idempotence with the new rules mixed in ──────────────────────────────────

_NEW_FRAGMENTS = [
    *(token for token, _ in COVERAGE_SAMPLES.values()),
    *(miss for _, miss in COVERAGE_SAMPLES.values()),
    *FAMILIES.values(),
    PASSWORD,
    "password",
    "PASSWORD=",
    "api_key: ",
    "token=",
    '"secret": "',
    "Cookie: ",
    "Set-Cookie: ",
    "sid=",
    "; ",
    "Authorization: Basic ",
    BASIC,
    "smtp://u:",
    "@",
    "://",
    '"',
    "'",
    "=",
    ":",
    " ",
    "\n",
    "(",
    "[",
    "$",
    ".",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_NEW_FRAGMENTS), max_size=10).map("".join))
def test_redaction_with_the_coverage_rules_is_idempotent(text: str) -> None:
    once, report = redact_text(text)
    assert redact_text(once) == (once, {})
    assert set(report) <= {r.kind for r in P.RULES} | {
        P.ENCODED_KIND,
        P.BARE_AWS_KIND,
        P.EXFIL_KIND,
    }
    payload = redact_payload(text)[0]
    assert redact_payload(payload) == (payload, {})


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                *("pass", "Pass", "PASSWORD", "pwd", "word", "secret", "Api", "_", "-", "key"),
                *("KEY", "token", "by", "x1", '"', "'", "\\", ":", "=", "=>", ":=", " ", "\t", "é"),
            ]
        ),
        max_size=12,
    ).map("".join)
)
def test_assignment_keys_found_on_the_lowercased_text_match_the_rule_pattern(text: str) -> None:
    """The engine's literal-first key search finds exactly the rule pattern's keys."""
    for rule in P.RULES:
        if rule.finder != "assign":
            continue
        expected = {}
        for i in range(len(text)):
            m = rule.pattern.match(text, i)
            if m is not None:
                expected[m.end()] = m.group().endswith(":")
        assert dict(_assign_keys(rule.kind, View(text).lowered())) == expected


def test_every_full_text_anchor_is_reached_by_a_fast_anchor_or_a_window() -> None:
    """The engine gates a full-text rule only through these two routes."""
    from transcripts.core.redaction import views

    for gates in views._FULL_TEXT_GATES.values():
        for _, fast, window in gates:
            assert fast is not None or window is not None
