"""Who receives a slot's frames. Groups: ``dashboard`` (every logged-in dashboard user)
and ``app-<id>`` (one app's sockets, which receive frames only for that app's own slots)."""

from __future__ import annotations

import re

from transcripts.models import Slot

DASHBOARD_GROUP = "dashboard"
# Every group name this module spells, and no other spelling (no leading zeros, ASCII digits).
GROUP_NAME = re.compile(rf"{DASHBOARD_GROUP}|app-(?:0|[1-9][0-9]{{0,18}})")


def app_group(app_id: int) -> str:
    return f"app-{app_id}"


def slot_groups(slot_name: str) -> list[str]:
    app_id = Slot.objects.filter(name=slot_name).values_list("app_id", flat=True).first()
    return [DASHBOARD_GROUP] if app_id is None else [DASHBOARD_GROUP, app_group(app_id)]


def group_sees_slot(group: str, slot_name: str) -> bool:
    """Whether ``slot_groups`` sends ``slot_name``'s frames to ``group``: anyone who can
    write to the channel layer (Redis) can send any frame to any group."""
    return group == DASHBOARD_GROUP or group in slot_groups(slot_name)
