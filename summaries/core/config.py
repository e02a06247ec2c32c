"""The ``session_summary`` section of config.json, its clamps and environment overrides.

A hand-edited config.json must never stop the server: every malformed value degrades to
its default and every out-of-range value is clamped with a WARNING instead of raising.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from transcripts.core.fsutil import atomic_write

logger = logging.getLogger(__name__)

SECTION = "session_summary"
ENV_ENABLED = "KIROCREW_SUMMARY_ENABLED"
ENV_INTS: Mapping[str, str] = {
    "min_user_turns": "KIROCREW_SUMMARY_MIN_USER_TURNS",
    "regenerate_after_turns": "KIROCREW_SUMMARY_REGENERATE_AFTER_TURNS",
    "max_intents": "KIROCREW_SUMMARY_MAX_INTENTS",
    "max_constraints": "KIROCREW_SUMMARY_MAX_CONSTRAINTS",
    "assistant_excerpt_chars": "KIROCREW_SUMMARY_ASSISTANT_EXCERPT_CHARS",
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
        self._clamp("min_user_turns", 1)
        self._clamp("regenerate_after_turns", 1)
        self._clamp("max_intents", 1)
        self._clamp("max_constraints", 0)  # 0 is meaningful: suppress the notes section
        self._clamp("assistant_excerpt_chars", 80)

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


_DEFAULTS: dict[str, int] = {name: getattr(SessionSummaryConfig(), name) for name in ENV_INTS}


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


def _parse_bool(value: object) -> bool | None:
    """True/False for a real bool or a recognised word; None for anything else.

    Deliberately not ``bool(value)``: the original read the string "false" as True.
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
    enabled = _parse_bool(obj.get("enabled"))
    if enabled is not None:
        kwargs["enabled"] = enabled
    for name in ENV_INTS:
        if name in obj:
            kwargs[name] = _safe_int(obj[name], _DEFAULTS[name])
    return kwargs


def _apply_env(kwargs: dict[str, Any], env: Mapping[str, str]) -> None:
    enabled = _parse_bool(env.get(ENV_ENABLED))
    if enabled is not None:
        kwargs["enabled"] = enabled
    for name, var in ENV_INTS.items():
        raw = env.get(var)
        if raw is None:
            continue
        value = _opt_int(raw)
        if value is not None:  # an unparseable override is ignored, not a reset
            kwargs[name] = value


def _read_section(path: Path) -> object:
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        logger.warning("config %s unreadable (%s); session_summary uses defaults", path, exc)
        return None
    return data.get(SECTION) if isinstance(data, dict) else None


def load_config(path: Path, env: Mapping[str, str]) -> SessionSummaryConfig:
    """Read the section from ``path`` and apply environment overrides; never raises."""
    kwargs = _section_kwargs(_read_section(path))
    _apply_env(kwargs, env)
    return SessionSummaryConfig(**kwargs)


def _env_key(env: Mapping[str, str]) -> tuple[str | None, ...]:
    return tuple(env.get(var) for var in (ENV_ENABLED, *ENV_INTS.values()))


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

    def get(self, env: Mapping[str, str] | None = None) -> SessionSummaryConfig:
        env = os.environ if env is None else env
        # Stat before reading: a change landing mid-read then shows up as a new key
        # on the next call instead of being cached under the old one.
        key = (self._file_key(), _env_key(env))
        with self._lock:
            if self._value is None or key != self._key:
                self._value = load_config(self.path, env)
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
