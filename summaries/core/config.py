"""The ``session_summary`` section of config.json, its clamps and its overrides.

A hand-edited config.json must never stop the server: every malformed value degrades to
its default and every out-of-range value is clamped with a WARNING instead of raising.
The overrides come already parsed (``summaries/envconfig.py`` reads the environment with
the site's one strict reader, so a typo there stops start-up instead of being ignored).
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from transcripts.core.fsutil import atomic_write

logger = logging.getLogger(__name__)

SECTION = "session_summary"
#: The count keys and the least each may be (below it: clamped with a WARNING when read
#: from config.json; refused at start-up when set in the environment).
FLOORS: Mapping[str, int] = {
    "min_user_turns": 1,
    "regenerate_after_turns": 1,
    "max_intents": 1,
    "max_constraints": 0,  # 0 is meaningful: suppress the notes section
    "assistant_excerpt_chars": 80,
}
_TRUTHY = frozenset({"1", "true", "yes", "on"})
_FALSY = frozenset({"0", "false", "no", "off"})


class ConfigWriteError(ValueError):
    """config.json exists but is not a JSON object; rewriting it would destroy it."""


@dataclass(frozen=True)
class SessionSummaryConfig:
    # Frozen: ConfigCache hands one instance to every caller, so nobody may mutate it.
    enabled: bool = False
    min_user_turns: int = 2
    regenerate_after_turns: int = 1
    max_intents: int = 50
    max_constraints: int = 50
    assistant_excerpt_chars: int = 400

    def __post_init__(self) -> None:
        for name, floor in FLOORS.items():
            self._clamp(name, floor)

    def _clamp(self, name: str, floor: int) -> None:
        value = getattr(self, name)
        if value < floor:
            logger.warning("%s %d < %d, using %d", name, value, floor, floor)
            object.__setattr__(self, name, floor)

    @classmethod
    def from_section(cls, obj: object) -> SessionSummaryConfig:
        """Build from the raw section; a non-dict section means all defaults."""
        return cls(**_section_kwargs(obj))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SummaryOverrides:
    """Values that beat config.json's, already parsed; None: not overridden."""

    enabled: bool | None = None
    min_user_turns: int | None = None
    regenerate_after_turns: int | None = None
    max_intents: int | None = None
    max_constraints: int | None = None
    assistant_excerpt_chars: int | None = None


NO_OVERRIDES = SummaryOverrides()
_DEFAULTS: dict[str, int] = {name: getattr(SessionSummaryConfig(), name) for name in FLOORS}


def _opt_int(value: object) -> int | None:
    """An int from config or env text, or None when it is not clearly an integer."""
    if isinstance(value, bool):  # JSON true is not a count
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            try:
                value = float(text)  # "3.0" is a number someone typed; "3.5" is not a count
            except ValueError:
                return None
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    return None


def _safe_int(value: object, default: int) -> int:
    parsed = _opt_int(value)
    return default if parsed is None else parsed


def bool_word(value: object) -> bool | None:
    """True/False for a real bool or a recognised word; None for anything else.

    Deliberately not ``bool(value)``: the original read the string "false" as True.
    The site's environment reader takes its words from here too.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUTHY:
            return True
        if word in _FALSY:
            return False
    return None


def _section_kwargs(obj: object) -> dict[str, Any]:
    if not isinstance(obj, dict):
        return {}
    kwargs: dict[str, Any] = {}
    enabled = bool_word(obj.get("enabled"))
    if enabled is not None:
        kwargs["enabled"] = enabled
    for name in FLOORS:
        if name in obj:
            kwargs[name] = _safe_int(obj[name], _DEFAULTS[name])
    return kwargs


def _read_section(path: Path) -> object:
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        logger.warning("config %s unreadable (%s); session_summary uses defaults", path, exc)
        return None
    return data.get(SECTION) if isinstance(data, dict) else None


def load_config(path: Path, overrides: SummaryOverrides = NO_OVERRIDES) -> SessionSummaryConfig:
    """Read the section from ``path`` and apply ``overrides``; never raises."""
    kwargs = _section_kwargs(_read_section(path))
    kwargs.update((k, v) for k, v in asdict(overrides).items() if v is not None)
    return SessionSummaryConfig(**kwargs)


class ConfigCache:
    """Re-reads config.json only when its identity changes, so a toggle needs no restart."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._key: tuple[object, ...] | None = None
        self._value: SessionSummaryConfig | None = None

    def _file_key(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        # st_ino too: write_enabled replaces the file, and a same-size replacement
        # within one mtime tick would otherwise look unchanged.
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def get(self, overrides: SummaryOverrides = NO_OVERRIDES) -> SessionSummaryConfig:
        # Stat before reading: a change landing mid-read then shows up as a new key
        # on the next call instead of being cached under the old one.
        key = (self._file_key(), overrides)
        with self._lock:
            if self._value is None or key != self._key:
                self._value = load_config(self.path, overrides)
                self._key = key
            return self._value


_write_lock = threading.Lock()


def write_enabled(path: Path, enabled: bool) -> None:
    """Set ``session_summary.enabled`` atomically, keeping every other key as it was.

    Raises ConfigWriteError when the existing file is not a JSON object: a hand-edited
    file with a typo must be fixed by a person, not silently replaced.
    """

    def change(data: dict[str, Any]) -> None:
        section = data.get(SECTION)
        if not isinstance(section, dict):
            section = {}
        section["enabled"] = bool(enabled)
        data[SECTION] = section

    update_config(path, change)


def update_config(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Read config.json, let ``change`` edit the object in place, write it back atomically
    (one writer at a time in this process). Raises ConfigWriteError when the existing
    file is not a JSON object."""
    path = Path(path)
    with _write_lock:
        try:
            data = json.loads(path.read_bytes())
        except FileNotFoundError:
            data = {}
        except (ValueError, RecursionError) as exc:
            raise ConfigWriteError(f"{path} is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigWriteError(f"{path} does not hold a JSON object")
        change(data)
        _atomic_write(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())


def _atomic_write(path: Path, payload: bytes) -> None:
    # A new config.json may hold API keys: 0600; an existing one keeps its own mode.
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o600
    atomic_write(path, payload, fsync=True, mode=mode)
