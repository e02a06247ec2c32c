"""The ``response_format`` an OpenAI-compatible server is asked for, and what each
(server, model) has refused, remembered for the process."""

from __future__ import annotations

import re
import threading
from enum import Enum
from typing import Any, Final

from summaries.core.intents import reply_json_schema

#: The reply's shape, derived from the payload model (summaries/core/intents.py): sent as
#: ``response_format`` so a server that supports structured output keeps to it. Not
#: ``strict``: the normalizer already copes with anything, and strict mode would refuse
#: the schema's optional fields on api.openai.com.
RESPONSE_FORMAT: Final = {
    "type": "json_schema",
    "json_schema": {"name": "intent_summary", "schema": reply_json_schema(), "strict": False},
}
#: llama.cpp's form: a JSON object constrained by the same schema (its grammar honours it).
JSON_OBJECT_SCHEMA_FORMAT: Final = {"type": "json_object", "schema": reply_json_schema()}
#: The last resort: any JSON object.
JSON_OBJECT_FORMAT: Final = {"type": "json_object"}


class OutputFormat(Enum):
    """The ``response_format`` ladder, most structured first. A server that refuses one
    (naming it) gets the next; the step is remembered per (URL, model) for the process."""

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT_SCHEMA = "json_object+schema"
    JSON_OBJECT = "json_object"

    @property
    def body(self) -> dict[str, Any]:
        return _FORMAT_BODIES[self]

    @property
    def fallback(self) -> OutputFormat | None:
        ladder = list(OutputFormat)
        index = ladder.index(self)
        return ladder[index + 1] if index + 1 < len(ladder) else None


_FORMAT_BODIES: Final[dict[OutputFormat, dict[str, Any]]] = {
    OutputFormat.JSON_SCHEMA: RESPONSE_FORMAT,
    OutputFormat.JSON_OBJECT_SCHEMA: JSON_OBJECT_SCHEMA_FORMAT,
    OutputFormat.JSON_OBJECT: JSON_OBJECT_FORMAT,
}
#: A refusal of the output format: 400/422 from servers that validate the field, 500 from
#: llama_cpp.server, which fails while building the grammar. Only with the field named in
#: the body: 401/403/404 and other 4xx/5xx are not cured by another format.
FORMAT_REFUSALS: Final = frozenset({400, 422, 500})
FORMAT_NAMES: Final = re.compile(rb"response_format|json_schema", re.IGNORECASE)

# Which format each (chat completions URL, model) accepts, learned from refusals. Process
# memory: a restarted worker asks once more (one refused request), and a server upgraded
# to support structured output gets it back then.
_format_memory: dict[tuple[str, str], OutputFormat] = {}
_format_lock = threading.Lock()


def format_learned(url: str, model: str) -> OutputFormat:
    """The most structured format ``model`` at ``url`` has not refused (in this process)."""
    with _format_lock:
        return _format_memory.get((url, model), OutputFormat.JSON_SCHEMA)


def format_remember(url: str, model: str, fmt: OutputFormat) -> None:
    with _format_lock:
        _format_memory[(url, model)] = fmt
