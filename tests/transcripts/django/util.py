"""Helpers shared by these tests (and the services profile's import/verify tests)."""

from __future__ import annotations

from io import StringIO
from typing import Any

from django.core.management import CommandError, call_command

from transcripts.models import Session
from transcripts.services.sync import disk_state

MIRRORED = (
    "title",
    "memory_mode",
    "closed",
    "pinned",
    "source",
    "project",
    "sig",
    "gen",
    "size",
    "row_count",
    "user_turns",
    "last_activity",
    "anomaly_counts",
    "file_mtime_ns",
    "file_size",
    "file_inode",
)


def mirror_diff(key: str) -> dict[str, tuple[Any, Any]]:
    """Fields where the Session row differs from a fresh fold of the disk ({} = in step)."""
    row = Session.objects.get(key=key)
    disk = disk_state(key).fields()
    return {
        name: (getattr(row, name), disk[name])
        for name in MIRRORED
        if getattr(row, name) != disk[name]
    }


class Spy:
    """Counts calls of a method while passing them through."""

    def __init__(self, monkeypatch: Any, owner: type, name: str) -> None:
        self.calls: list[tuple[Any, ...]] = []
        original = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(args)
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, wrapper)


def verify(*args: str) -> tuple[int, str]:
    """Run ``verify_transcripts``: (exit code, everything it printed)."""
    out = StringIO()
    try:
        call_command("verify_transcripts", *args, stdout=out)
    except CommandError as exc:
        return exc.returncode, out.getvalue() + str(exc)
    return 0, out.getvalue()
