"""Coverage of the write-boundary redaction: vendor tokens, HTTP auth and cookie headers,
key = value assignments, URI userinfo for any scheme, and a false-positive corpus.

Every secret is assembled at runtime (prefix + seeded random), so the repository holds
no literal token. Each family is checked in several contexts (prose, code, env file,
YAML, JSON, shell, URL): the secret is gone, the report names the kind, and the report
holds no 8-character piece of the secret.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.transcripts.redaction_samples import COVERAGE_SAMPLES, b64, discord_bot_token
from transcripts.core.redaction import patterns as P
from transcripts.core.redaction import (
    redact_credentials,
    redact_payload,
    redact_text,
    redact_value,
)
from transcripts.core.redaction.finders import _credential_spans
from transcripts.core.redaction.structured import _assign_keys
from transcripts.core.redaction.views import _View

CRED = "[REDACTED: credential]"
_rng = random.Random(4242)
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits


def rand(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def assert_value_free(report: dict[str, int], secret: str) -> None:
    shown = repr(report)
    for i in range(max(1, len(secret) - 7)):
        assert secret[i : i + 8] not in shown


# ── Vendor families ──────────────────────────────────────────────────────────
# family kind -> a realistic fake token (a single line, no spaces).
FAMILIES: dict[str, str] = {
    "github_token": "ghp_" + rand(ALNUM, 36),
    "github_fine_grained_pat": "github_pat_" + rand(ALNUM, 22) + "_" + rand(ALNUM, 59),
    "gitlab_pat": "glpat-" + rand(URLSAFE, 20),
    "gitlab_deploy_token": "gldt-" + rand(URLSAFE, 20),
    "gitlab_other_token": "glcbt-" + rand(URLSAFE, 24),
    "slack_token": "xoxb-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24),
    "slack_app_token": "xapp-1-" + rand(UPPER_DIGITS, 11) + "-" + rand(HEX, 64),
    "slack_legacy_token": "xoxr-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24),
    "stripe_secret_key": "sk_live_" + rand(ALNUM, 24),
    "aws_access_key_id": "AKIA" + rand(UPPER_DIGITS, 16),
    "google_api_key": "AIza" + rand(URLSAFE, 35),
    "openai_project_key": "sk-proj-" + rand(URLSAFE, 48),
    "anthropic_api_key": "sk-ant-api03-" + rand(URLSAFE, 93),
    "huggingface_token": "hf_" + rand(string.ascii_letters, 34),
    "npm_token": "npm_" + rand(ALNUM, 36),
    "pypi_token": "pypi-" + "AgEIcHlwaS5vcmc" + rand(URLSAFE, 50),
    "twilio_api_key": "SK" + rand(HEX, 32),
    "sendgrid_api_key": "SG." + rand(URLSAFE, 22) + "." + rand(URLSAFE, 43),
    "mailgun_api_key": rand(HEX, 32) + "-" + rand(HEX, 8) + "-" + rand(HEX, 8),
    "shopify_token": "shpat_" + rand(HEX, 32),
    "digitalocean_token": "dop_v1_" + rand(HEX, 64),
    "databricks_token": "dapi" + rand(HEX, 32),
    "doppler_token": "dp.pt." + rand(ALNUM, 43),
    "discord_bot_token": discord_bot_token(),
    "telegram_bot_token": rand(string.digits, 10) + ":" + rand(URLSAFE, 35),
    "atlassian_api_token": "ATATT3xFfGF0" + rand(URLSAFE, 180),
    "heroku_api_key_v2": "HRKU-AA" + rand(URLSAFE, 58),
    "linear_api_key": "lin_api_" + rand(ALNUM, 40),
    "postman_api_key": "PMAK-" + rand(HEX, 24) + "-" + rand(HEX, 34),
    "grafana_token": "glsa_" + rand(ALNUM, 32) + "_" + rand(HEX, 8),
    "sentry_token": "sntrys_" + "eyJ" + rand(ALNUM, 80) + "_" + rand(ALNUM, 43),
    "pulumi_access_token": "pul-" + rand(HEX, 40),
    "hashicorp_vault_token": "hvs." + rand(URLSAFE, 90),
    "onepassword_service_account_token": "ops_eyJ" + rand(ALNUM, 200),
    "age_secret_key": "AGE-SECRET-KEY-1" + rand(UPPER_DIGITS, 58),
    "azure_storage_account_key": "AccountKey=" + rand(ALNUM, 86) + "==",
    "azure_ad_client_secret": rand(ALNUM, 3) + "8Q~" + rand(URLSAFE, 34),
    "jwt": "eyJ" + rand(URLSAFE, 30) + "." + "eyJ" + rand(URLSAFE, 60) + "." + rand(URLSAFE, 43),
    "new_relic_key": "NRAK-" + rand(UPPER_DIGITS, 27),
}

# context name -> template with {t} for the token. The token is assigned to a key the
# assignment rules do not know (``SERVICE_CREDENTIAL``, ``value``), except in "code" and
# "shell", where it sits under a keyword and the vendor rule must still name the kind.
CONTEXTS: dict[str, str] = {
    "prose": "I pasted {t} into the chat by mistake, please rotate it.",
    "code": 'client = Client(api_token="{t}", timeout=30)\n',
    "env": "# .env\nSERVICE_CREDENTIAL={t}\nDEBUG=false\n",
    "yaml": "service:\n  credential: {t}\n  region: eu-west-1\n",
    "json": json.dumps({"name": "deploy", "value": "{t}", "n": 3}),
    "shell": "curl -s -H 'X-Api-Key: {t}' https://api.example.com/v1/items",
    "url": "https://api.example.com/v1/items?credential={t}&page=2",
}


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


# ── Authorization: Basic ──────────────────────────────────────────────────────

BASIC = b64("deploy:" + rand(ALNUM, 18))


@pytest.mark.parametrize(
    "template",
    [
        "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {v}\r\n\r\n",
        "curl -H 'Authorization: Basic {v}' https://api.example.com",
        'headers = {{"Authorization": "Basic {v}"}}',
        "proxy-authorization: basic {v}",
        '{{"headers": {{"authorization": "Basic {v}"}}}}',
    ],
)
def test_basic_auth_header_is_redacted(template: str) -> None:
    text = template.format(v=BASIC)
    out, report = redact_text(text)
    assert BASIC not in out
    assert report == {"basic_auth_header": 1}
    assert_value_free(report, BASIC)
    assert redact_text(out) == (out, {})


@pytest.mark.parametrize(
    "text",
    [
        "Send Authorization: Basic followed by the base64 of user:password.",
        "Authorization: Basic <credentials>",
        'Authorization: Basic $(echo -n "$USER:$PASS" | base64)',
        "Authorization: Basic ${BASIC_AUTH}",
        "the Authorization: Basic scheme (RFC 7617)",
    ],
)
def test_basic_auth_prose_and_templates_are_kept(text: str) -> None:
    assert redact_text(text) == (text, {})


# ── Cookie and Set-Cookie ─────────────────────────────────────────────────────

SID = rand(LOWER_DIGITS, 32)


@pytest.mark.parametrize(
    ("template", "kept"),
    [
        ("Cookie: sessionid={s}; csrftoken=abc", "Cookie: "),
        ("Set-Cookie: sessionid={s}; Path=/; HttpOnly; Secure", "; Path=/; HttpOnly; Secure"),
        ("set-cookie: PHPSESSID={s}; path=/", "; path=/"),
        ("curl --cookie 'sessionid={s}' https://example.com/", "curl --cookie '"),
        ('requests.get(url, headers={{"Cookie": "sessionid={s}"}})', '{"Cookie": "'),
        ("cookie: connect.sid=s%3A{s}.x; theme=dark and the rest", " and the rest"),
        ('document.cookie = "session={s}; path=/"', "document.cookie = "),
    ],
)
def test_cookie_session_ids_are_redacted(template: str, kept: str) -> None:
    text = template.format(s=SID)
    out, report = redact_text(text)
    assert SID not in out
    assert kept in out
    assert report == {"cookie_header": 1}
    assert redact_text(out) == (out, {})


@pytest.mark.parametrize(
    "text",
    [
        "Cookie: theme=dark; lang=en",
        "Set-Cookie: theme=dark; Path=/",
        "The Cookie: header carries the session id.",
        "response.set_cookie('sessionid', value, httponly=True)",
        "document.cookie = 'theme=dark'",
        "Set-Cookie: sessionid=; Max-Age=0",
    ],
)
def test_cookie_prose_and_harmless_cookies_are_kept(text: str) -> None:
    assert redact_text(text) == (text, {})


# ── URI userinfo, any scheme ─────────────────────────────────────────────────

PW = rand(ALNUM, 18)


@pytest.mark.parametrize(
    ("uri", "kind"),
    [
        (f"smtp://mailer:{PW}@mail.example.com:587", "uri_credentials"),
        (f"ssh://deploy:{PW}@host.example.com/repo", "uri_credentials"),
        (f"git+https://bot:{PW}@example.com/org/repo.git", "uri_credentials"),
        (f"ldap://cn=admin:{PW}@ldap.example.com", "uri_credentials"),
        (f"sftp://u:{PW}@files.example.com/in", "uri_credentials"),
        (f"mssql://sa:{PW}@db.example.com/app", "uri_credentials"),
        (f"Postgres://app:{PW}@db.example.com/app", "uri_credentials"),
        (f"postgres://app:{PW}@db.example.com/app", "db_uri_credentials"),
        (f"https://deploy:{PW}@example.com/", "url_credentials"),
        (f"jdbc:mysql://root:{PW}@db.example.com/app", "db_uri_credentials"),
        (f"amqps://guest:{PW}@mq.example.com", "db_uri_credentials"),
    ],
)
def test_uri_userinfo_is_redacted_for_every_scheme(uri: str, kind: str) -> None:
    for text in (uri, f"connect with {uri} now", f'DATABASE_URL="{uri}"', json.dumps({"u": uri})):
        out, report = redact_credentials(text)
        assert PW not in out
        assert report.get(kind) == 1, (text, report)
        assert_value_free(report, PW)


@pytest.mark.parametrize(
    "text",
    [
        "ssh://git@github.com/org/repo.git",
        "git@github.com:org/repo.git",
        "smtp://{user}:{password}@mail.example.com",
        "redis+sentinel://$USER:$PASSWORD@host",
        "ldap://ldap.example.com:389/dc=example",
        "use scheme://user:password@host in the docs",
    ],
)
def test_uri_without_a_literal_password_is_kept(text: str) -> None:
    assert redact_text(text) == (text, {})


# ── key = value assignments ──────────────────────────────────────────────────

PASSWORD = "Sup3r" + rand(ALNUM, 8) + "!"
SECRET = rand(ALNUM, 12) + "9"
TOKEN = rand(ALNUM, 30) + "7"


@pytest.mark.parametrize(
    ("template", "kind"),
    [
        # env files and shell
        ("DB_PASSWORD={v}\n", "password_assignment"),
        ('export DB_PASSWORD="{v}"', "password_assignment"),
        ("PGPASSWORD={v} psql -h db -U app", "password_assignment"),
        ("mysql --password={v} -u root", "password_assignment"),
        ("SMTP_PASS={v}", "password_assignment"),
        # code
        ('password = "{v}"', "password_assignment"),
        ("dbPassword: '{v}',", "password_assignment"),
        ('conn = connect(host="db", password="{v}")', "password_assignment"),
        ('$password = "{v}";', "password_assignment"),
        ("'password' => '{v}',", "password_assignment"),
        ('password := "{v}"', "password_assignment"),
        # YAML, JSON, TOML, INI, .NET connection strings
        ("db:\n  password: {v}\n  user: app\n", "password_assignment"),
        ('db:\n  password: "{v}"\n', "password_assignment"),
        ('{{"user": "app", "password": "{v}"}}', "password_assignment"),
        ('{{"password":"{v}"}}', "password_assignment"),
        ('"{{\\"password\\": \\"{v}\\"}}"', "password_assignment"),
        ('[db]\npassword = "{v}"\n', "password_assignment"),
        ("Server=db;User ID=sa;Password={v};", "password_assignment"),
        ("Your password: {v}", "password_assignment"),
    ],
)
def test_password_assignment_value_is_redacted_and_key_kept(template: str, kind: str) -> None:
    text = template.format(v=PASSWORD)
    out, report = redact_text(text)
    assert PASSWORD not in out
    assert out == text.replace(PASSWORD, CRED)
    assert report == {kind: 1}
    assert_value_free(report, PASSWORD)
    assert redact_text(out) == (out, {})


@pytest.mark.parametrize(
    ("template", "value", "kind"),
    [
        ("SECRET_KEY = '{v}'", SECRET, "secret_assignment"),
        ("client_secret: {v}", SECRET, "secret_assignment"),
        ('"apiKey": "{v}"', SECRET, "secret_assignment"),
        ("X-Api-Key: {v}", SECRET, "secret_assignment"),
        ("COHERE_API_KEY={v}", SECRET, "secret_assignment"),
        ("AWS_SECRET_ACCESS_KEY={v}", SECRET, "secret_assignment"),
        ("encryption_key = b'{v}'", SECRET, "secret_assignment"),
        ("AUTH_TOKEN={v}", TOKEN, "token_assignment"),
        ('access_token: "{v}"', TOKEN, "token_assignment"),
        ("?access_token={v}&page=2", TOKEN, "token_assignment"),
        ("slack:\n  bot_token: {v}\n", TOKEN, "token_assignment"),
    ],
)
def test_secret_and_token_assignments_are_redacted(template: str, value: str, kind: str) -> None:
    text = template.format(v=value)
    out, report = redact_credentials(text)
    assert value not in out
    assert out == text.replace(value, CRED)
    assert report == {kind: 1}
    assert redact_credentials(out) == (out, {})


def test_a_vendor_token_assigned_to_a_key_reports_the_vendor() -> None:
    token = FAMILIES["github_token"]
    for text in (f"GITHUB_TOKEN={token}", f'{{"api_key": "{token}"}}', f"password: {token}"):
        out, report = redact_text(text)
        assert report == {"github_token": 1}
        assert out == text.replace(token, CRED)


def test_assignment_span_is_the_value_only() -> None:
    text = "a=1 DB_PASSWORD=" + PASSWORD + " b=2"
    spans = _credential_spans(_View(text))
    assert [(text[s:e], k) for s, e, k, _ in spans] == [(PASSWORD, "password_assignment")]


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
        assert dict(_assign_keys(rule.kind, _View(text).lowered())) == expected


def test_every_full_text_anchor_is_reached_by_a_fast_anchor_or_a_window() -> None:
    """The engine gates a full-text rule only through these two routes."""
    from transcripts.core.redaction import views

    for gates in views._FULL_TEXT_GATES.values():
        for _, fast, window in gates:
            assert fast is not None or window is not None
