"""Who may read ``KIROCREW_HOME`` (transcripts, password and token hashes, login sessions,
the secret key): only its owner. Every process writes there with a private umask; an
existing home others can read is reported (``exposure``) and tightened (``tighten``).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from transcripts.core.fsutil import kind_of

# Group and other: no bits. A stricter owner part of the caller's umask is kept.
PRIVATE_BITS = 0o077


def private_umask() -> None:
    old = os.umask(PRIVATE_BITS)  # the only way to read the umask is to set it
    os.umask(old | PRIVATE_BITS)


@dataclass(frozen=True, slots=True)
class Exposed:
    path: Path
    mode: int  # permission bits (S_IMODE)


def exposure(home: Path) -> list[Exposed]:
    """The home and its direct entries that give group or other any bit (links not judged).
    Shallow on purpose: it runs at every start, and the home's own mode is what lets others
    reach anything below it."""
    found: list[Exposed] = []
    try:
        entries = [home, *(home / name for name in sorted(os.listdir(home)))]
    except FileNotFoundError:
        return found
    for path in entries:
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        if not stat.S_ISLNK(mode) and mode & PRIVATE_BITS:
            found.append(Exposed(path, stat.S_IMODE(mode)))
    return found


@dataclass(frozen=True, slots=True)
class Change:
    path: Path
    old: int
    new: int
    folder: bool


@dataclass(slots=True)
class TightenReport:
    changed: list[Change] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # (path, why)
    failed: list[tuple[Path, str]] = field(default_factory=list)  # (path, OS error)


def tighten(home: Path) -> TightenReport:
    """Remove group and other bits from every folder and regular file under ``home`` (other
    entries are skipped). Never follows a link: the walk works on folder descriptors and
    ``chmod`` does not follow (an entry swapped for a link meanwhile fails instead)."""
    report = TightenReport()
    _tighten_one(report, Path(home), os.path.basename(home), None)  # the home itself
    for top, dirs, files, top_fd in os.fwalk(home, follow_symlinks=False):
        for name in (*dirs, *files):
            _tighten_one(report, Path(top) / name, name, top_fd)
    return report


def _tighten_one(report: TightenReport, path: Path, name: str, dir_fd: int | None) -> None:
    target = name if dir_fd is not None else str(path)
    try:
        mode = os.stat(target, dir_fd=dir_fd, follow_symlinks=False).st_mode
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            report.skipped.append((path, kind_of(mode)))
            return
        old = stat.S_IMODE(mode)
        new = old & ~PRIVATE_BITS
        if new == old:
            return
        os.chmod(target, new, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return  # removed while we walked
    except OSError as exc:
        report.failed.append((path, exc.strerror or str(exc)))
        return
    report.changed.append(Change(path, old, new, stat.S_ISDIR(mode)))
