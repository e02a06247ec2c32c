"""config.json's ``session_summary`` (clamps, overrides) and ``summary_backend`` (the
settings page's pick) sections. A hand-edited config.json never stops the server: a
malformed value degrades to its default, an out-of-range one is clamped with a WARNING.
The overrides come parsed (``summaries/envconfig.py``: strict, a typo stops start-up).
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
_WORDS = {
    **dict.fromkeys(("1", "true", "yes", "on"), True),
    **dict.fromkeys(("0", "false", "no", "off"), False),
}


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
            value = getattr(self, name)
            if value < floor:
                logger.warning("%s %d < %d, using %d", name, value, floor, floor)
                object.__setattr__(self, name, floor)

    @classmethod
    def from_section(cls, obj: object) -> SessionSummaryConfig:
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
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            try:
                value = float(value)  # "3.0" is a number someone typed; "3.5" is not a count
            except ValueError:
                return None
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def bool_word(value: object) -> bool | None:
    """True/False for a real bool or a recognised word (the site's environment reader's too);
    None for anything else. Not ``bool(value)``: the string "false" is not True."""
    if isinstance(value, bool):
        return value
    return _WORDS.get(value.strip().lower()) if isinstance(value, str) else None


def _section_kwargs(obj: object) -> dict[str, Any]:
    if not isinstance(obj, dict):
        return {}
    kwargs: dict[str, Any] = {}
    if (enabled := bool_word(obj.get("enabled"))) is not None:
        kwargs["enabled"] = enabled
    for name in FLOORS:
        if name in obj:
            parsed = _opt_int(obj[name])
            kwargs[name] = _DEFAULTS[name] if parsed is None else parsed
    return kwargs


def _read_section(path: Path, section: str, unreadable: str) -> object:
    try:
        data = json.loads(Path(path).read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        logger.warning("config %s unreadable (%s); %s", path, exc, unreadable)
        return None
    return data.get(section) if isinstance(data, dict) else None


def load_config(path: Path, overrides: SummaryOverrides = NO_OVERRIDES) -> SessionSummaryConfig:
    """Never raises."""
    kwargs = _section_kwargs(_read_section(path, SECTION, "session_summary uses defaults"))
    kwargs.update((k, v) for k, v in asdict(overrides).items() if v is not None)
    return SessionSummaryConfig(**kwargs)


class ConfigCache:
    """Re-reads config.json only when its identity changes, so a toggle needs no restart."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._key: tuple[object, ...] | None = None
        self._value: SessionSummaryConfig | None = None

    def get(self, overrides: SummaryOverrides = NO_OVERRIDES) -> SessionSummaryConfig:
        # Stat before reading: a change landing mid-read then shows up as a new key on the
        # next call. st_ino too: write_enabled replaces the file, and a same-size
        # replacement within one mtime tick would otherwise look unchanged.
        try:
            st = self.path.stat()
            identity: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            identity = None
        key = (identity, overrides)
        with self._lock:
            if self._value is None or key != self._key:
                self._value = load_config(self.path, overrides)
                self._key = key
            return self._value


_write_lock = threading.Lock()


def write_enabled(path: Path, enabled: bool) -> None:
    """Set ``session_summary.enabled``, keeping every other key (``update_config``)."""

    def change(data: dict[str, Any]) -> None:
        section = data.get(SECTION)
        data[SECTION] = {**(section if isinstance(section, dict) else {}), "enabled": bool(enabled)}

    update_config(path, change)


def update_config(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Read config.json, let ``change`` edit the object in place, write it back atomically
    (one writer at a time in this process). Raises ConfigWriteError when the existing file
    is not a JSON object: a hand-edited file with a typo is a person's to fix."""
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
        # A new config.json may hold API keys: 0600; an existing one keeps its own mode.
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o600
        payload = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()
        atomic_write(path, payload, fsync=True, mode=mode)


# --- summary_backend: a stored choice (the spec and, for a discovered local server, its
# base URL) wins over KIROCREW_SUMMARY_MODEL. A section not of the exact shape reads as
# "nothing chosen" (logged): a typo falls back to the default, the server still starts.

BACKEND_SECTION = "summary_backend"
MAX_FIELD_CHARS = 300  # a spec or URL longer than this is not something a person picked


@dataclass(frozen=True, slots=True)
class BackendChoice:
    spec: str  # a KIROCREW_SUMMARY_MODEL value: heuristic, openai:<m>, claude-cli[:m], ...
    base_url: str = ""  # the OpenAI-compatible server it was found at ("" = the setting's)

    @classmethod
    def from_section(cls, obj: object) -> BackendChoice | None:
        if not isinstance(obj, dict):
            return None
        spec, base_url = obj.get("spec"), obj.get("base_url", "")
        if not (_field_ok(spec) and spec and (base_url == "" or _field_ok(base_url))):
            return None
        return cls(spec=str(spec).strip(), base_url=str(base_url).strip())


def _field_ok(value: object) -> bool:
    return (
        isinstance(value, str)
        and len(value) <= MAX_FIELD_CHARS
        and value.isprintable()
        and value == value.strip()
    )


def read_choice(path: Path) -> BackendChoice | None:
    section = _read_section(path, BACKEND_SECTION, "no summary backend chosen")
    choice = BackendChoice.from_section(section)
    if section is not None and choice is None:
        logger.warning("config %s: %s is malformed; ignoring it", path, BACKEND_SECTION)
    return choice


def write_choice(path: Path, choice: BackendChoice | None) -> None:
    """Store ``choice`` (None: back to the environment's default), keeping every other key."""

    def change(data: dict[str, Any]) -> None:
        if choice is None:
            data.pop(BACKEND_SECTION, None)
        else:
            url = {"base_url": choice.base_url} if choice.base_url else {}
            data[BACKEND_SECTION] = {"spec": choice.spec, **url}

    update_config(path, change)


def effective_spec(choice: BackendChoice | None, default_spec: str) -> str:
    """What writes summaries: the stored choice, else the environment's default."""
    return choice.spec if choice is not None else default_spec
