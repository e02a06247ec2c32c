"""Password logins are throttled per (username, client address), on the dashboard's login
page and on /admin/login/ alike: after ``KIROCREW_LOGIN_MAX_FAILURES`` attempts the right
password no longer logs in until the window ends; a success clears the count. The counter
lives in the database, so a second process sees the first one's failures."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings as django_settings
from django.contrib.auth import aauthenticate, get_user_model
from django.test import Client, RequestFactory
from django.utils import timezone

from kirocrew_site.dashboard.models import LoginThrottle

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "right-horse-battery-staple"
LIMIT = 5
LOGIN_PAGES = ["/login/", "/admin/login/"]
SESSION = django_settings.SESSION_COOKIE_NAME


@pytest.fixture
def limits(settings: Any) -> None:
    # Hashing is not under test: a fast hasher keeps dozens of attempts cheap.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.KIROCREW_LOGIN_MAX_FAILURES = LIMIT
    settings.KIROCREW_LOGIN_WINDOW_SECONDS = 900


@pytest.fixture
def admin_user(db: Any, limits: None) -> Any:
    return get_user_model().objects.create_superuser("boss", "boss@example.invalid", PASSWORD)


def attempt(client: Client, page: str, password: str, **extra: Any) -> Any:
    return client.post(page, {"username": "boss", "password": password}, **extra)


def logged_in(client: Client) -> bool:
    return SESSION in client.cookies and bool(client.cookies[SESSION].value)


@pytest.mark.parametrize("page", LOGIN_PAGES)
def test_the_right_password_is_refused_after_too_many_failures(admin_user: Any, page: str):
    client = Client()
    for _ in range(LIMIT):
        response = attempt(client, page, "wrong")
        assert response.status_code == 200
        assert b"Too many failed login attempts" not in response.content
    for _ in range(25):  # the finding's 30 guesses: all refused alike
        response = attempt(client, page, "still wrong")
        assert b"Too many failed login attempts" in response.content
    response = attempt(client, page, PASSWORD)
    assert b"Too many failed login attempts. Try again in 15 minutes." in response.content
    assert not logged_in(client)
    assert "_auth_user_id" not in client.session
    if page == "/login/":
        assert response.status_code == 429
        assert 0 < int(response["Retry-After"]) <= 900
    else:
        assert response.status_code == 200  # the admin's own form page, with the message


@pytest.mark.parametrize("page", LOGIN_PAGES)
def test_a_success_clears_the_count(admin_user: Any, page: str):
    client = Client()
    for _round in range(3):
        for _ in range(LIMIT - 1):
            attempt(client, page, "wrong")
        response = attempt(client, page, PASSWORD)
        assert response.status_code == 302
        assert logged_in(client)
        client.logout()
    assert not LoginThrottle.objects.exists()


def test_the_lockout_is_per_username_and_address(admin_user: Any):
    locked = Client(REMOTE_ADDR="198.51.100.7")
    for _ in range(LIMIT):
        attempt(locked, "/login/", "wrong")
    assert attempt(locked, "/login/", PASSWORD).status_code == 429
    # Another address is not locked out, and neither is another username from this one.
    assert attempt(Client(REMOTE_ADDR="198.51.100.8"), "/login/", PASSWORD).status_code == 302
    get_user_model().objects.create_user("other", password=PASSWORD)
    response = locked.post("/login/", {"username": "other", "password": PASSWORD})
    assert response.status_code == 302
    # The two login pages share the count: the admin page is locked too.
    response = attempt(locked, "/admin/login/", PASSWORD, REMOTE_ADDR="198.51.100.7")
    assert b"Too many failed login attempts" in response.content


def test_the_lockout_ends_with_the_window(admin_user: Any):
    client = Client()
    for _ in range(LIMIT):
        attempt(client, "/login/", "wrong")
    assert attempt(client, "/login/", PASSWORD).status_code == 429
    LoginThrottle.objects.update(window_start=timezone.now() - timedelta(seconds=901))
    assert attempt(client, "/login/", PASSWORD).status_code == 302
    assert not LoginThrottle.objects.exists()


def test_the_table_holds_no_username_or_address(admin_user: Any):
    for _ in range(2):
        attempt(Client(REMOTE_ADDR="203.0.113.9"), "/login/", "wrong")
    row = LoginThrottle.objects.get()
    assert row.attempts == 2
    assert "boss" not in str(row.__dict__)
    assert "203.0.113.9" not in str(row.__dict__)


@pytest.mark.django_db(transaction=True)
async def test_the_async_path_is_throttled_too(limits: None):
    """ModelBackend's own ``aauthenticate`` would check the password unthrottled."""
    await sync_to_async(get_user_model().objects.create_user)("boss", password=PASSWORD)
    request = RequestFactory().post("/login/", REMOTE_ADDR="192.0.2.50")
    for _ in range(LIMIT):
        assert await aauthenticate(request, username="boss", password="wrong") is None
    assert await aauthenticate(request, username="boss", password=PASSWORD) is None
    other = RequestFactory().post("/login/", REMOTE_ADDR="192.0.2.51")
    assert await aauthenticate(other, username="boss", password=PASSWORD) is not None


SCRIPT = """
import sys
import django
django.setup()
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from django.test import RequestFactory
password, count = sys.argv[1], int(sys.argv[2])
if password == "--setup":
    call_command("migrate", verbosity=0, interactive=False)
    get_user_model().objects.create_user("boss", password="pw-right-1")
    sys.exit(0)
request = RequestFactory().post("/login/", REMOTE_ADDR="192.0.2.1")
users = [authenticate(request, username="boss", password=password) for _ in range(count)]
print("users:", sum(user is not None for user in users))
"""


@pytest.mark.slow
def test_the_count_holds_across_processes(tmp_path: Path):
    """Two processes on one SQLite database, as daphne and a second server would be: the
    first makes the failures, the second, with the right password, is refused."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "KIROCREW_"))}
    env.pop("DATABASE_URL", None)
    env.update(
        KIROCREW_HOME=str(tmp_path),
        DJANGO_SETTINGS_MODULE="kirocrew_site.settings",
        KIROCREW_LOGIN_MAX_FAILURES=str(LIMIT),
    )

    def run(password: str, count: int) -> str:
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, password, str(count)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    run("--setup", 0)
    assert run("wrong", LIMIT) == "users: 0"
    assert run("pw-right-1", 1) == "users: 0"


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_parallel_guesses_cannot_exceed_the_limit(limits: None, monkeypatch: pytest.MonkeyPatch):
    """Twelve guesses at once on PostgreSQL, each on its own connection: the row lock lets
    exactly LIMIT of them reach the password check."""
    from django.contrib.auth import authenticate
    from django.contrib.auth.backends import ModelBackend
    from django.db import connection

    get_user_model().objects.create_user("boss", password=PASSWORD)
    checked: list[int] = []
    original = ModelBackend.authenticate

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        checked.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ModelBackend, "authenticate", counting)
    start = threading.Barrier(12)

    def guess() -> Any:
        try:
            start.wait(timeout=30)
            request = RequestFactory().post("/login/", REMOTE_ADDR="192.0.2.77")
            return authenticate(request, username="boss", password="wrong")
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=12) as pool:
        results = list(pool.map(lambda _: guess(), range(12)))
    assert results == [None] * 12
    assert len(checked) == LIMIT
    assert LoginThrottle.objects.get().attempts == LIMIT
