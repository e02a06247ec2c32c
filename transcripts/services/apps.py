"""API apps: tokens are shown once and stored only as a sha256 hash."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.db import IntegrityError, transaction

from ..models import App
from ..signals import app_token_rotated
from .announce import announce
from .errors import AppExists, AppNameInvalid

TOKEN_PREFIX = "kc_"  # noqa: S105 (a public marker, not a secret)
PREFIX_LEN = 8
MAX_TOKEN_LEN = 512


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def app_token_new() -> tuple[str, str, str]:
    """A fresh token with its hash and display prefix: ``(token, token_hash, token_prefix)``."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, token_hash(token), token[:PREFIX_LEN]


def app_name_clean(name: str) -> str:
    name = name.strip()
    limit = getattr(App._meta.get_field("name"), "max_length", None) or 100
    if not name or len(name) > limit or any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise AppNameInvalid(f"an app name is 1 to {limit} printable characters")
    return name


def app_create(*, name: str) -> tuple[App, str]:
    """Create an app; returns it with its token, which is not stored and cannot be shown again."""
    name = app_name_clean(name)
    token, digest, prefix = app_token_new()
    try:
        with transaction.atomic():
            app = App.objects.create(name=name, token_hash=digest, token_prefix=prefix)
    except IntegrityError:
        raise AppExists(f"an app named {name!r} already exists") from None
    return app, token


def app_token_rotate(*, name: str) -> tuple[App, str]:
    """A new token for the app ``name`` (the old one stops working); App.DoesNotExist if none.

    The app is kept, so its sessions stay owned. Announced after commit: sockets opened with
    the old token were authenticated once, at connect, so whoever listens closes them.
    """
    token, digest, prefix = app_token_new()
    with transaction.atomic():
        app = App.objects.select_for_update().get(name=name.strip())
        app.token_hash, app.token_prefix = digest, prefix
        app.save(update_fields=["token_hash", "token_prefix"])
        announce(app_token_rotated, App, app_id=app.pk)
    return app, token


def app_authenticate(*, token: str) -> App | None:
    """The app holding ``token``, or None. Compares hashes in constant time."""
    if not token or len(token) > MAX_TOKEN_LEN or not token.startswith(TOKEN_PREFIX):
        return None
    digest = token_hash(token)
    app = App.objects.filter(token_hash=digest).first()
    # The lookup already matched the hash; the constant-time compare guards against a
    # database whose collation matches loosely (case-insensitive text comparison).
    if app is None or not hmac.compare_digest(app.token_hash, digest):
        return None
    return app
