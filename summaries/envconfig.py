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
    """The overrides ``env`` (default: the process environment) sets; unset is None. Each
    count key's variable is ``KIROCREW_SUMMARY_<KEY>`` (``KIROCREW_SUMMARY_MAX_INTENTS``)."""
    enabled = env_bool(ENV_ENABLED, None, env=env)
    counts = {
        key: env_int(f"KIROCREW_SUMMARY_{key.upper()}", None, minimum=floor, env=env)
        for key, floor in FLOORS.items()
    }
    return SummaryOverrides(enabled=enabled, **counts)
