"""Strict readers of the environment: an unset or empty variable gives the default; any
other value must parse, or ``ImproperlyConfigured`` names the variable (a typo must stop
the site at start-up, not run it with a default). django-environ was refused: it reads
``ture`` as False and ``1,5`` as 1.5, names no variable, and has no minimum or duration.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Collection, Mapping
from typing import TypeVar
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

# config.json's ``enabled`` and the environment's flags read the same yes/no words.
from summaries.core.config import bool_word

D = TypeVar("D")  # a default: a value of the reader's type, or None for "not set"
_DURATION = re.compile(r"(\d+)\s*([smhd]?)")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
# Schemes whose URL names a file or socket path instead of a host.
_HOSTLESS = ("sqlite", "spatialite", "unix", "memory")


def _raw(name: str, env: Mapping[str, str] | None) -> str | None:
    value = (os.environ if env is None else env).get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def _bad(name: str, value: str, expected: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{name}={value!r} is not valid: expected {expected}")


def env_str(name: str, default: str, env: Mapping[str, str] | None = None) -> str:
    """Free text; unlike the typed readers an empty value is kept (e.g. ``KIROCREW_CSP=``)."""
    value = (os.environ if env is None else env).get(name)
    return default if value is None else value


def env_bool(name: str, default: D, env: Mapping[str, str] | None = None) -> bool | D:
    value = _raw(name, env)
    if value is None:
        return default
    parsed = bool_word(value)
    if parsed is None:
        raise _bad(name, value, "one of 1/true/yes/on or 0/false/no/off")
    return parsed


def env_int(
    name: str, default: D, *, minimum: int = 0, env: Mapping[str, str] | None = None
) -> int | D:
    value = _raw(name, env)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise _bad(name, value, f"an integer >= {minimum}") from None
    if number < minimum:
        raise _bad(name, value, f"an integer >= {minimum}")
    return number


def env_float(
    name: str, default: float, *, minimum: float = 0.0, env: Mapping[str, str] | None = None
) -> float:
    value = _raw(name, env)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        raise _bad(name, value, f"a number >= {minimum}") from None
    if not math.isfinite(number) or number < minimum:
        raise _bad(name, value, f"a finite number >= {minimum}")
    return number


def env_duration(
    name: str, default: int, *, minimum: int = 0, env: Mapping[str, str] | None = None
) -> int:
    """Whole seconds: ``600``, ``600s``, ``10m``, ``1h`` or ``1d``."""
    value = _raw(name, env)
    if value is None:
        return default
    match = _DURATION.fullmatch(value.lower())
    expected = f"seconds >= {minimum}, as 600, 600s, 10m, 1h or 1d"
    if match is None:
        raise _bad(name, value, expected)
    seconds = int(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    if seconds < minimum:
        raise _bad(name, value, expected)
    return seconds


def env_list(name: str, default: str, env: Mapping[str, str] | None = None) -> list[str]:
    """Comma-separated; a value with no item at all (``","``) is refused, not read as empty."""
    value = _raw(name, env)
    items = [item.strip() for item in (default if value is None else value).split(",")]
    items = [item for item in items if item]
    if value is not None and not items:
        raise _bad(name, value, "a comma-separated list with at least one item")
    return items


def env_url(
    name: str, default: str, *, schemes: Collection[str], env: Mapping[str, str] | None = None
) -> str:
    value = _raw(name, env)
    if value is None:
        return default
    expected = f"a URL starting with one of {', '.join(s + '://' for s in schemes)}"
    try:
        parts = urlsplit(value)
    except ValueError:
        raise _bad(name, value, expected) from None
    scheme = parts.scheme.lower()
    if scheme not in schemes or "://" not in value:
        raise _bad(name, value, expected)
    if scheme.startswith(_HOSTLESS):  # a path (or sqlite's :memory:), not a host
        return value
    try:
        port_ok = parts.port is None or parts.port > 0  # .port raises on a bad port
    except ValueError:
        port_ok = False
    if not parts.hostname or not port_ok:
        raise _bad(name, value, expected + " and a host[:port]")
    return value


def env_url_list(
    name: str, default: str, *, schemes: Collection[str], env: Mapping[str, str] | None = None
) -> list[str]:
    """Comma-separated URLs; ``off`` is none."""
    value = _raw(name, env)
    if value is not None and value.lower() == "off":
        return []
    text = default if value is None else value
    urls = [item.strip() for item in text.split(",") if item.strip()]
    for url in urls:
        env_url(name, "", schemes=schemes, env={name: url})
    return urls


def env_choice(
    name: str, default: str, choices: Collection[str], env: Mapping[str, str] | None = None
) -> str:
    value = _raw(name, env)
    if value is None:
        return default
    if value.lower() not in choices:
        raise _bad(name, value, f"one of {', '.join(choices)}")
    return value.lower()


def env_proxy_header(name: str, env: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """``HTTP_X_FORWARDED_PROTO,https``: the request header (as in ``request.META``) and
    the value that means the client spoke HTTPS to the proxy."""
    value = _raw(name, env)
    if value is None:
        return None
    header, sep, secure = (part.strip() for part in value.partition(","))
    if not sep or not header.startswith("HTTP_") or not secure:
        raise ImproperlyConfigured(f"{name} must look like HTTP_X_FORWARDED_PROTO,https")
    return header, secure
