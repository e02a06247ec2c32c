"""Coverage of the write-boundary redaction: Authorization: Basic, Cookie and Set-Cookie
headers, URI userinfo for any scheme, and key = value assignments.
"""

from __future__ import annotations

import json

import pytest

from tests.transcripts.redaction_coverage_cases import (
    BASIC,
    CRED,
    FAMILIES,
    PASSWORD,
    PW,
    SECRET,
    SID,
    TOKEN,
    assert_value_free,
)
from transcripts.core.redaction import (
    redact_credentials,
    redact_text,
)
from transcripts.core.redaction.finders import credential_spans
from transcripts.core.redaction.views import View

# ── Authorization: Basic ──────────────────────────────────────────────────────


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
    spans = credential_spans(View(text))
    assert [(text[s:e], k) for s, e, k, _ in spans] == [(PASSWORD, "password_assignment")]
