"""The login throttle, as the authentication backend so every password ``authenticate()``
passes it, and the login forms that say why a locked-out login failed. An attempt is
reserved under a row lock before the password is checked, so parallel guesses cannot slip
past the limit; a lockout refuses even the right password, with 429 and ``Retry-After``
on the dashboard's login (a script can tell it from a typo).
"""

from __future__ import annotations

import hashlib
import math
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import User
from django.core.exceptions import NON_FIELD_ERRORS, PermissionDenied, ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from .models import LoginThrottle

# Set on the request by the backend when it refused a locked-out login: seconds to wait.
LOCKED_ATTR = "kirocrew_login_locked_for"
LOCKED_CODE = "locked"


def throttle_key(username: str, address: str) -> str:
    return hashlib.sha256(f"{username.casefold()}\0{address}".encode()).hexdigest()


def login_throttle_reserve(*, username: str, address: str) -> int | None:
    """Count one attempt. ``None``: go ahead and check the password. A number: locked
    out for that many more seconds (the attempt is not counted)."""
    limit = int(settings.KIROCREW_LOGIN_MAX_FAILURES)
    if limit <= 0:
        return None
    now = timezone.now()
    window = timedelta(seconds=max(1, int(settings.KIROCREW_LOGIN_WINDOW_SECONDS)))
    with transaction.atomic():
        # Expired windows are dead weight: drop them while the table is locked anyway.
        LoginThrottle.objects.filter(window_start__lt=now - window).delete()
        row, _created = LoginThrottle.objects.select_for_update().get_or_create(
            key=throttle_key(username, address), defaults={"window_start": now}
        )
        if row.attempts >= limit:
            return max(1, math.ceil((row.window_start + window - now).total_seconds()))
        row.attempts += 1
        row.save(update_fields=["attempts"])
    return None


class ThrottledModelBackend(ModelBackend):
    """Django's ModelBackend behind the throttle. A locked-out attempt raises
    PermissionDenied, which stops ``authenticate()`` from trying anything else."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if username is None or password is None:
            return None
        # The peer address daphne or the WSGI server reports (a proxy's, behind one).
        address = str(request.META.get("REMOTE_ADDR") or "") if request is not None else ""
        wait = login_throttle_reserve(username=str(username), address=address)
        if wait is not None:
            if request is not None:
                setattr(request, LOCKED_ATTR, wait)
            raise PermissionDenied("too many failed logins")
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None:  # a success clears the counter
            LoginThrottle.objects.filter(key=throttle_key(str(username), address)).delete()
        return user

    async def aauthenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        """ModelBackend's own async path would skip the throttle: go through the sync one."""
        return await sync_to_async(self.authenticate)(
            request, username=username, password=password, **kwargs
        )


def locked_for(request: HttpRequest | None) -> int | None:
    """Seconds the last ``authenticate()`` on this request was locked out for, if it was."""
    wait = getattr(request, LOCKED_ATTR, None)
    return int(wait) if wait is not None else None


class ThrottledAuthenticationForm(AuthenticationForm):
    """Say why a locked-out login failed, on the dashboard's and the admin's form alike."""

    def get_invalid_login_error(self) -> ValidationError:
        wait = locked_for(self.request)
        if wait is None:
            return super().get_invalid_login_error()
        minutes = max(1, math.ceil(wait / 60))
        return ValidationError(
            "Too many failed login attempts. Try again in %(minutes)d minute%(plural)s.",
            code=LOCKED_CODE,
            params={"minutes": minutes, "plural": "" if minutes == 1 else "s"},
        )


class ThrottledAdminAuthenticationForm(ThrottledAuthenticationForm, AdminAuthenticationForm):
    pass


class LoginView(auth_views.LoginView):
    authentication_form = ThrottledAuthenticationForm
    redirect_authenticated_user = True

    def form_invalid(self, form: Any) -> HttpResponse:
        response = super().form_invalid(form)
        wait = locked_for(self.request)
        if wait is not None and form.has_error(NON_FIELD_ERRORS, code=LOCKED_CODE):
            response.status_code = 429
            response["Retry-After"] = str(wait)
        return response
