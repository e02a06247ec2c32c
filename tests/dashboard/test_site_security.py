"""Site hardening: where SECRET_KEY comes from, the TLS settings (Secure cookies, HSTS,
the https redirect, the proxy header), the Content-Security-Policy header and a clean
``manage.py check --deploy`` with production settings."""

from __future__ import annotations

import os
import re
import runpy
import secrets
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from kirocrew_site.secret_key import KEY_FILE_NAME, secret_key_load
from tests.fixtures.personas import staff_client

ROOT = Path(__file__).resolve().parents[2]
SETTINGS_FILE = ROOT / "kirocrew_site" / "settings.py"
OLD_PUBLIC_KEY = "kirocrew-insecure-embedded-default-key-change-me"
FOREIGN = ("DJANGO_", "KIROCREW_", "DATABASE_URL", "REDIS_URL", "CELERY_")


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN)}
    env.update(KIROCREW_HOME=str(home), DJANGO_SETTINGS_MODULE="kirocrew_site.settings", **extra)
    return env


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# --- SECRET_KEY ------------------------------------------------------------------------------


def test_the_first_run_creates_a_private_key_file_and_later_runs_reuse_it(tmp_path: Path):
    key = secret_key_load(tmp_path, debug=False, env={})
    path = tmp_path / KEY_FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip() == key
    assert len(key) >= 50
    assert key != OLD_PUBLIC_KEY
    assert secret_key_load(tmp_path, debug=False, env={}) == key
    assert secret_key_load(tmp_path, debug=True, env={}) == key
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILE_NAME]  # no temporary file left
    assert secret_key_load(tmp_path / "other", debug=False, env={}) != key


def test_the_environment_wins_and_no_file_is_written(tmp_path: Path):
    assert secret_key_load(tmp_path, debug=False, env={"KIROCREW_SECRET_KEY": "k1" * 30}) == (
        "k1" * 30
    )
    assert secret_key_load(tmp_path, debug=False, env={"DJANGO_SECRET_KEY": "k2" * 30}) == (
        "k2" * 30
    )
    assert not (tmp_path / KEY_FILE_NAME).exists()


@pytest.mark.parametrize("debug", [False, True])
def test_an_empty_key_file_is_refused_and_never_replaced(tmp_path: Path, debug: bool):
    path = tmp_path / KEY_FILE_NAME
    path.write_text("\n")
    path.chmod(0o600)
    with pytest.raises(ImproperlyConfigured, match="is empty"):
        secret_key_load(tmp_path, debug=debug, env={})
    assert path.read_text() == "\n"


def test_a_key_file_others_may_read_is_refused_without_debug(tmp_path: Path):
    path = tmp_path / KEY_FILE_NAME
    path.write_text("a-key-someone-wrote-by-hand-" * 3)
    path.chmod(0o644)
    with pytest.raises(ImproperlyConfigured, match="chmod 600"):
        secret_key_load(tmp_path, debug=False, env={})
    assert secret_key_load(tmp_path, debug=True, env={}).startswith("a-key-someone")


def test_no_key_to_be_had_refuses_without_debug(tmp_path: Path):
    home = tmp_path / "home"
    (home / KEY_FILE_NAME).mkdir(parents=True)  # neither readable as a key nor replaceable
    with pytest.raises(ImproperlyConfigured, match="Set KIROCREW_SECRET_KEY"):
        secret_key_load(home, debug=False, env={})
    key = secret_key_load(home, debug=True, env={})  # development: this process only
    assert len(key) >= 50
    assert key != secret_key_load(home, debug=True, env={})


LOADER = "import sys; from pathlib import Path; from kirocrew_site.secret_key import secret_key_load as s; print(s(Path(sys.argv[1]), debug=False, env={}))"


def test_processes_starting_together_agree_on_one_key(tmp_path: Path):
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", LOADER, str(tmp_path)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    keys = {proc.communicate(timeout=120)[0].strip() for proc in procs}
    assert len(keys) == 1
    assert keys == {(tmp_path / KEY_FILE_NAME).read_text().strip()}


@pytest.mark.slow
def test_the_site_refuses_to_start_without_a_key_when_debug_is_off(tmp_path: Path):
    (tmp_path / KEY_FILE_NAME).write_text("")
    done = manage(clean_env(tmp_path, DJANGO_DEBUG="0"), "check")
    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr
    assert f"{tmp_path / KEY_FILE_NAME} is empty" in done.stderr
    assert "KIROCREW_SECRET_KEY" in done.stderr


# --- TLS settings ----------------------------------------------------------------------------


def settings_under(monkeypatch: pytest.MonkeyPatch, home: Path, **env: str) -> dict[str, Any]:
    """The settings module's values as a fresh process with this environment gets them."""
    for name in list(os.environ):
        if name.startswith(FOREIGN):
            monkeypatch.delenv(name)
    monkeypatch.setenv("KIROCREW_HOME", str(home))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS_FILE))


TLS_NAMES = [
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_PROXY_SSL_HEADER",
]


def test_tls_settings_come_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    plain = settings_under(monkeypatch, tmp_path)
    assert [plain[n] for n in TLS_NAMES] == [False, False, False, 0, False, False, None]
    tls = settings_under(monkeypatch, tmp_path, KIROCREW_TLS="1")
    assert [tls[n] for n in TLS_NAMES] == [True, True, True, 31_536_000, True, True, None]
    tuned = settings_under(
        monkeypatch,
        tmp_path,
        KIROCREW_TLS="1",
        DJANGO_SECURE_HSTS_SECONDS="3600",
        DJANGO_SECURE_HSTS_PRELOAD="0",
        DJANGO_SECURE_SSL_REDIRECT="0",
        DJANGO_SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO, https",
    )
    assert [tuned[n] for n in TLS_NAMES] == [
        *[True, True, False, 3600, True, False],
        ("HTTP_X_FORWARDED_PROTO", "https"),
    ]
    with pytest.raises(ImproperlyConfigured, match="HTTP_X_FORWARDED_PROTO,https"):
        settings_under(monkeypatch, tmp_path, DJANGO_SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto")
    assert plain["SECRET_KEY"] == (tmp_path / KEY_FILE_NAME).read_text().strip()


def test_behind_tls_cookies_are_secure_and_hsts_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: Any, db: Any
):
    with monkeypatch.context() as scoped:
        tls = settings_under(scoped, tmp_path / "tls", KIROCREW_TLS="1")
    for name in TLS_NAMES:
        setattr(settings, name, tls[name])
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    get_user_model().objects.create_user("tls-user", password="tls-password-1")
    client = Client()
    assert client.get("/login/").status_code == 301  # plain http is sent to https
    page = client.get("/login/", secure=True)
    assert page.headers["Strict-Transport-Security"] == (
        "max-age=31536000; includeSubDomains; preload"
    )
    assert re.search(r"csrftoken=.*; Secure", str(page.cookies["csrftoken"]))
    done = client.post(
        "/login/", {"username": "tls-user", "password": "tls-password-1"}, secure=True
    )
    assert done.status_code == 302
    assert "Secure" in str(done.cookies["sessionid"])
    assert "HttpOnly" in str(done.cookies["sessionid"])


@pytest.mark.slow
def test_check_deploy_is_clean_with_production_settings(tmp_path: Path):
    production = clean_env(
        tmp_path,
        DJANGO_DEBUG="0",
        KIROCREW_TLS="1",
        DJANGO_ALLOWED_HOSTS="kirocrew.example",
        DJANGO_CSRF_TRUSTED_ORIGINS="https://kirocrew.example",
        DJANGO_SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https",
        KIROCREW_SECRET_KEY=secrets.token_urlsafe(48),
    )
    done = manage(production, "check", "--deploy", "--fail-level", "WARNING")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout
    # The same with the generated key file instead of the environment's key.
    del production["KIROCREW_SECRET_KEY"]
    done = manage(production, "check", "--deploy", "--fail-level", "WARNING")
    assert done.returncode == 0, done.stdout + done.stderr


# --- Content-Security-Policy -----------------------------------------------------------------

INLINE = [
    re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I),
    re.compile(r"\sstyle=", re.I),
    re.compile(r"\son[a-z]+=", re.I),
    re.compile(r"<style", re.I),
    re.compile(r"javascript:", re.I),
]


def assert_no_inline_code(html: str) -> None:
    for pattern in INLINE:
        assert not pattern.search(html), pattern.search(html)


@pytest.mark.parametrize(
    "path", ["/login/", "/", "/s/csp-slot/", "/settings/", "/admin/", "/admin/login/"]
)
def test_every_page_carries_the_policy_and_runs_no_inline_code(
    path: str, settings: Any, db: Any, kirocrew_home: Path
):
    from transcripts.services import session_create

    session_create(name="csp-slot", app=None)
    user = get_user_model().objects.create(username="csp", is_staff=True, is_superuser=True)
    client = Client()
    if path != "/admin/login/" and path != "/login/":
        client.force_login(user)
    response = client.get(path, follow=True)
    assert response.status_code == 200
    policy = response.headers["Content-Security-Policy"]
    assert policy == settings.KIROCREW_CSP
    for directive in ["script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"]:
        assert directive in policy
    assert "unsafe-inline" not in policy
    assert_no_inline_code(response.content.decode())


def test_the_policy_is_also_on_api_errors_and_can_be_turned_off(settings: Any, db: Any):
    assert Client().get("/api/chat/slots").headers["Content-Security-Policy"]
    settings.KIROCREW_CSP = ""
    assert "Content-Security-Policy" not in Client().get("/login/").headers


def test_the_settings_page_never_shows_the_secret_key(settings: Any, db: Any):
    settings.SECRET_KEY = "s3cr3t-" + secrets.token_urlsafe(40)
    page = staff_client("settings-staff").get("/settings/")
    assert page.status_code == 200
    assert settings.SECRET_KEY not in page.content.decode()
    assert settings.SECRET_KEY[:16] not in page.content.decode()
