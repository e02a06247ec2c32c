"""The summary backend a person picked on the settings page: the ``summary_backend``
section of config.json (next to ``session_summary``, in the same file and written the
same atomic way).

Precedence: a stored choice wins; with none, ``KIROCREW_SUMMARY_MODEL`` (the
environment's default) stands. A choice records the spec (``openai:qwen2.5``) and, for a
local OpenAI-compatible server found by discovery, the base URL it answered at.

A hand-edited section that is not the exact shape reads as "nothing chosen" (logged), so
a typo falls back to the environment's default instead of stopping the server.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import update_config

logger = logging.getLogger(__name__)

SECTION = "summary_backend"
#: A spec or URL longer than this is not something a person picked.
MAX_FIELD_CHARS = 300


@dataclass(frozen=True, slots=True)
class BackendChoice:
    spec: str  # a KIROCREW_SUMMARY_MODEL value: heuristic, openai:<m>, claude-cli[:m], ...
    base_url: str = ""  # the OpenAI-compatible server it was found at ("" = the setting's)

    def to_dict(self) -> dict[str, str]:
        out = {"spec": self.spec}
        if self.base_url:
            out["base_url"] = self.base_url
        return out

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
    """The stored choice, or None (no file, no section, or a section of the wrong shape)."""
    try:
        data: Any = json.loads(Path(path).read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        logger.warning("config %s unreadable (%s); no summary backend chosen", path, exc)
        return None
    section = data.get(SECTION) if isinstance(data, dict) else None
    choice = BackendChoice.from_section(section)
    if section is not None and choice is None:
        logger.warning("config %s: %s is malformed; ignoring it", path, SECTION)
    return choice


def write_choice(path: Path, choice: BackendChoice | None) -> None:
    """Store ``choice`` (None: forget it, back to the environment's default), keeping
    every other key. Raises ConfigWriteError on a config.json that is not a JSON object."""

    def change(data: dict[str, Any]) -> None:
        if choice is None:
            data.pop(SECTION, None)
        else:
            data[SECTION] = choice.to_dict()

    update_config(path, change)


def effective_spec(choice: BackendChoice | None, default_spec: str) -> str:
    """What writes summaries: the stored choice, else the environment's default."""
    return choice.spec if choice is not None else default_spec
