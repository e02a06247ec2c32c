"""Receivers of ``transcripts.signals`` (connected in ``SummariesConfig.ready``).

Imported agent sessions (``import_transcripts --format claude-code|codex``) have no turn
API: their clean turn ends and new rows reach the same summary dispatch and WebSocket
frames through these, so transcripts never imports summaries.
"""

from __future__ import annotations

import logging
from typing import Any

from .frames import RowData, RowFrame
from .push import push_frame
from .runtime import summary_config
from .turns import _dispatch_summary

log = logging.getLogger(__name__)


def on_rows_appended(
    sender: Any, *, slot_name: str, ts: list[str], roles: list[str], **_: Any
) -> None:
    for stamp, role in zip(ts, roles, strict=False):
        push_frame(slot_name, RowFrame(data=RowData(key=slot_name, ts=stamp, role=role)).wire())


def on_turn_ended(sender: Any, *, slot_name: str, **_: Any) -> None:
    """The turn API's turn end path: the cheap gates (cadence included) run in the pass."""
    if summary_config().enabled:
        _dispatch_summary(slot_name)
    else:
        log.debug("Session summary skipped for %s: disabled", slot_name)
