"""Who is calling the API: an app (``Authorization: Bearer <token>``) or a dashboard user
(session). Tokens are never logged."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from django.conf import settings
from django.http import HttpRequest
from ninja.security import APIKeyCookie, HttpBearer
from ninja.utils import check_csrf

from transcripts.models import App
from transcripts.services import app_authenticate

SAFE_METHODS = {"GET", "HEAD", "OPTIONS", "TRACE"}


@dataclass(frozen=True, slots=True)
class Caller:
    app: App | None  # None: a dashboard user, unrestricted reads
    user_id: int | None = None
    user: Any = field(default=None, compare=False, repr=False)  # the dashboard user

    @property
    def scope(self) -> App | Literal[""]:
        return self.app if self.app is not None else ""

    @property
    def label(self) -> str:
        return f"app:{self.app.name}" if self.app is not None else f"user:{self.user_id}"

    def may(self, perm: str) -> bool:
        """May this caller use a destructive route guarded by ``perm``? An app may, on its
        own slots (checked per slot); a dashboard user needs staff or the permission."""
        if self.app is not None:
            return True
        user = self.user
        if user is None or not user.is_active:
            return False
        return bool(user.is_staff or user.has_perm(perm))


class CsrfRejected(Exception):
    pass


class AppBearer(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Caller | None:
        app = app_authenticate(token=token)
        return Caller(app=app) if app is not None else None


class DashboardSession(APIKeyCookie):
    """A logged-in dashboard user. Anonymous → None (401), never a CSRF 403 first."""

    param_name = settings.SESSION_COOKIE_NAME

    def __call__(self, request: HttpRequest) -> Caller | None:
        user: Any = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        exempt = getattr(request, "_ninja_csrf_exempt", False)
        if request.method not in SAFE_METHODS and not exempt and check_csrf(request) is not None:
            raise CsrfRejected()
        return Caller(app=None, user_id=user.pk, user=user)

    def authenticate(self, request: HttpRequest, key: str | None) -> Caller | None:
        return None  # unused: __call__ decides from request.user


def caller_of(request: HttpRequest) -> Caller:
    auth = getattr(request, "auth", None)
    if not isinstance(auth, Caller):  # routes are never mounted without auth
        raise TypeError("request has no authenticated caller")
    return auth
