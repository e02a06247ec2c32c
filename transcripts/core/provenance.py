"""Where a session came from, as line 0 tells it (no Django here).

The agent importers write ``source`` (claude-code / codex) and ``cwd`` into line 0
(``services/agent_import.py``). Files this system creates (``session_create``, fork) carry
a ``key`` in line 0; the original system never wrote one, so a line 0 without ``source``
and without ``key`` is a transcript of the original's format (``kirocrew``).
"""

from __future__ import annotations

import os
from typing import Any

KIROCREW, CLAUDE_CODE, CODEX, API = "kirocrew", "claude-code", "codex", "api"
AGENT_SOURCES = (CLAUDE_CODE, CODEX)  # imported from another agent's session files
SOURCE_LABELS: dict[str, str] = {
    CLAUDE_CODE: "Claude Code",
    CODEX: "Codex",
    KIROCREW: "Kiro Crew",
    API: "API",
}
SOURCE_CHOICES = tuple(SOURCE_LABELS.items())
MAX_PROJECT = 1024  # a path longer than this is cut (the column is indexed nowhere, but bounded)
SHORT_PROJECT = 40  # the list shows at most about this many characters of a project path
# Line 0 keys naming the project, by preference: the agents' cwd, the original's own keys.
_PROJECT_KEYS = ("cwd", "project", "workspace")


def session_source(metadata: dict[str, Any] | None) -> str:
    """One of ``SOURCE_LABELS``: line 0's own ``source`` when it is one we know."""
    meta = metadata or {}
    claimed = meta.get("source")
    if claimed in AGENT_SOURCES:
        return str(claimed)
    return API if isinstance(meta.get("key"), str) and meta.get("key") else KIROCREW


def session_project(metadata: dict[str, Any] | None) -> str:
    """The project path line 0 names ("" when none); NUL dropped (PostgreSQL text)."""
    meta = metadata or {}
    for name in _PROJECT_KEYS:
        value = meta.get(name)
        if isinstance(value, str) and value.strip():
            return value.replace("\x00", "").strip()[:MAX_PROJECT]
    return ""


def short_project(path: str, *, home: str | None = None) -> str:
    """``/home/ann/src/dateparse`` → ``~/src/dateparse``; a long path keeps its tail."""
    home = os.path.expanduser("~") if home is None else home
    short = path
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] in ("home", "Users"):
        short = "~/" + "/".join(parts[2:])  # any user's home, not only the server's
    elif home and home != "/" and (path == home or path.startswith(home.rstrip("/") + "/")):
        short = "~" + path[len(home.rstrip("/")) :]
    if len(short) <= SHORT_PROJECT:
        return short
    tail = short.rsplit("/", 2)[-2:] if "/" in short else [short]
    cut = "…/" + "/".join(tail)
    return cut if len(cut) <= SHORT_PROJECT else "…" + short[-(SHORT_PROJECT - 1) :]
