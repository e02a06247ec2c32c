"""The environment's overrides of config.json's ``session_summary`` keys, read strictly
(``kirocrew_site/env.py``): once by settings.py, so a bad value stops start-up, and on each
``runtime.summary_config`` call, so a process whose environment changes sees it.
"""

from __future__ import annotations

from collections.abc import Mapping

from kirocrew_site.env import env_bool, env_int

from .core.config import FLOORS, SummaryOverrides

ENV_ENABLED = "KIROCREW_SUMMARY_ENABLED"


def summary_overrides_read(env: Mapping[str, str] | None = None) -> SummaryOverrides:
    """The overrides ``env`` (default: the process environment) sets; unset is None."""

    def count(field: str, name: str) -> int | None:
        return env_int(name, None, minimum=FLOORS[field], env=env)

    return SummaryOverrides(
        enabled=env_bool(ENV_ENABLED, None, env=env),
        min_user_turns=count("min_user_turns", "KIROCREW_SUMMARY_MIN_USER_TURNS"),
        regenerate_after_turns=count(
            "regenerate_after_turns", "KIROCREW_SUMMARY_REGENERATE_AFTER_TURNS"
        ),
        max_intents=count("max_intents", "KIROCREW_SUMMARY_MAX_INTENTS"),
        max_constraints=count("max_constraints", "KIROCREW_SUMMARY_MAX_CONSTRAINTS"),
        assistant_excerpt_chars=count(
            "assistant_excerpt_chars", "KIROCREW_SUMMARY_ASSISTANT_EXCERPT_CHARS"
        ),
    )
