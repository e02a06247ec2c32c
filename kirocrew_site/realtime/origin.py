"""The socket's Origin rule: Django's CSRF origin check, applied to the handshake.

A browser always sends Origin, so a cross-site page cannot open a socket that rides the
dashboard's session cookie. Non-browser clients (bearer token) may omit it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host


def header(scope: Any, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin1"))
    return None


DEFAULT_PORTS = {"http": 80, "https": 443}
Origin = tuple[str, str, int]  # scheme, lowercased host, port (the default port filled in)


def _parse_origin(value: str) -> Origin | None:
    """``scheme://host[:port]`` and nothing else: userinfo, a path, a query or an unknown
    scheme make it no origin at all (a browser never sends one)."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if (
        scheme not in DEFAULT_PORTS
        or "@" in parts.netloc
        or parts.path not in {"", "/"}
        or parts.query
        or parts.fragment
        or not parts.hostname
    ):
        return None
    return scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme]


def _is_secure(scope: Any) -> bool:
    """What ``request.is_secure()`` says for this handshake."""
    proxy = settings.SECURE_PROXY_SSL_HEADER
    if proxy:
        meta_name, secure_value = proxy
        name = meta_name.removeprefix("HTTP_").lower().replace("_", "-").encode()
        sent = header(scope, name)
        if sent is not None:
            return bool(sent.split(",", 1)[0].strip() == secure_value)
    return str(scope.get("scheme", "ws")) in {"wss", "https"}


def _own_origin(scope: Any) -> Origin | None:
    """The handshake's own origin, as Django's CSRF check builds it from the request."""
    host = header(scope, b"host")
    if settings.USE_X_FORWARDED_HOST:
        host = header(scope, b"x-forwarded-host") or host
    if not host:
        return None
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return None
    return _parse_origin(f"{'https' if _is_secure(scope) else 'http'}://{host}")


def _trusted(origin: Origin) -> bool:
    """``CSRF_TRUSTED_ORIGINS``: exact origins, or ``scheme://*.domain`` for subdomains."""
    scheme, host, port = origin
    for entry in settings.CSRF_TRUSTED_ORIGINS:
        if "://*." in entry:
            entry_scheme, rest = entry.split("://*.", 1)
            wanted = _parse_origin(f"{entry_scheme}://{rest}")
            if (
                wanted is not None
                and (scheme, port) == (wanted[0], wanted[2])
                and host.endswith("." + wanted[1])
            ):
                return True
        elif _parse_origin(entry) == origin:
            return True
    return False


def origin_allowed(scope: Any) -> bool:
    """The Origin must be the handshake's own (scheme, host and port) or a trusted one."""
    value = header(scope, b"origin")
    if value is None:
        return True
    origin = _parse_origin(value)
    if origin is None:
        return False
    return origin == _own_origin(scope) or _trusted(origin)
