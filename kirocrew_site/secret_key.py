"""Where ``SECRET_KEY`` comes from: the environment, else ``$KIROCREW_HOME/secret_key``.

The file is created on the first run (0600, hard-linked into place, so two processes
starting together agree on one key) and never overwritten. With ``DEBUG`` off the site
refuses to start when no key can be had rather than run with a guessable one.
"""

from __future__ import annotations

import contextlib
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from transcripts.core.fsutil import atomic_write

KEY_FILE_NAME = "secret_key"
ENV_NAMES = ("KIROCREW_SECRET_KEY", "DJANGO_SECRET_KEY")
HINT = (
    "Set KIROCREW_SECRET_KEY (the same value for every process of one site), or let the "
    "site create {path} on its first run."
)


def secret_key_load(home: Path, *, debug: bool, env: Mapping[str, str]) -> str:
    for name in ENV_NAMES:
        value = env.get(name, "").strip()
        if value:
            return value
    path = home / KEY_FILE_NAME
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fresh = (secrets.token_urlsafe(48) + "\n").encode()
            with contextlib.suppress(FileExistsError):  # another process won: use its key
                # 0600 whatever the umask says; linked into place, never over another key.
                atomic_write(path, fresh, fsync=True, mode=0o600, exclusive=True)
        key = path.read_text(encoding="utf-8").strip()
        if not key:
            # Never replaced: a new key would silently end every session and signed link.
            raise ImproperlyConfigured(f"{path} is empty. " + HINT.format(path=path))
        mode = path.stat().st_mode
    except OSError as exc:
        if debug:
            # A development run on a read-only data root: a key for this process only
            # (sessions end with it), never a public one.
            return secrets.token_urlsafe(48)
        raise ImproperlyConfigured(
            f"No SECRET_KEY: {path} could not be read or created ({exc}). " + HINT.format(path=path)
        ) from exc
    if not debug and mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ImproperlyConfigured(
            f"{path} may be read by other users (mode {stat.S_IMODE(mode):o}): "
            f"chmod 600 {path}, or set KIROCREW_SECRET_KEY instead."
        )
    return key
