"""The two login pages (the dashboard's and the admin's) with the throttle's own message.

The backend (``throttle.py``) refuses a locked-out attempt; these forms tell the person
why and for how long instead of the usual "wrong password", and the dashboard's page
answers 429 with ``Retry-After`` so a script can tell a lockout from a typo.
"""

from __future__ import annotations

import math
from typing import Any

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.http import HttpResponse

from .throttle import locked_for

LOCKED_CODE = "locked"


def _lockout_error(wait: int) -> ValidationError:
    minutes = max(1, math.ceil(wait / 60))
    return ValidationError(
        "Too many failed login attempts. Try again in %(minutes)d minute%(plural)s.",
        code=LOCKED_CODE,
        params={"minutes": minutes, "plural": "" if minutes == 1 else "s"},
    )


class _LockoutMessage(AuthenticationForm):
    """Say why a locked-out login failed, on the dashboard's and the admin's form alike."""

    def get_invalid_login_error(self) -> ValidationError:
        wait = locked_for(self.request)
        return _lockout_error(wait) if wait is not None else super().get_invalid_login_error()


class ThrottledAuthenticationForm(_LockoutMessage):
    pass


class ThrottledAdminAuthenticationForm(_LockoutMessage, AdminAuthenticationForm):
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
