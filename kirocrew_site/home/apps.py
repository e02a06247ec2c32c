"""The data folder (``KIROCREW_HOME``): the start-up warning when other users can read it,
as a system check and as the same line logged by the entry points that run no checks
(daphne, WSGI, a Celery worker)."""

from __future__ import annotations

import logging
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core import checks

from .core.modes import exposure

logger = logging.getLogger("kirocrew_site.home")

FIX_COMMAND = ".venv/bin/python manage.py secure_home"  # as the README writes commands
_reported = False


def home_exposure_message() -> str | None:
    home = settings.KIROCREW_HOME
    found = exposure(home)
    if not found:
        return None
    worst = found[0]
    others = len(found) - 1
    more = f" and {others} more entr{'y' if others == 1 else 'ies'} in it" if others else ""
    return (
        f"{worst.path} can be read by other local users (mode {worst.mode:o}){more}; "
        f"it holds transcripts, login sessions and password hashes. "
        f"Run `{FIX_COMMAND}` to make it 0700/0600."
    )


def home_exposure_check(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    global _reported
    message = home_exposure_message()
    if message is None:
        return []
    _reported = True
    return [checks.Warning(message, id="home.W001")]


def home_warn_at_start(*, unless_checked: bool = True) -> None:
    """By default not after the check printed it in this process (``runserver`` imports
    asgi.py after its checks); Celery runs the checks without printing them."""
    if unless_checked and _reported:
        return
    message = home_exposure_message()
    if message is not None:
        logger.warning(message)


class HomeConfig(AppConfig):
    name = "kirocrew_site.home"
    label = "home"
    verbose_name = "Data folder"

    def ready(self) -> None:
        checks.register(home_exposure_check, checks.Tags.security)
