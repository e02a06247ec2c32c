"""Reads of the project pages ("where was I"): what the sessions list shows, by project.

Ownership is the sessions list's: both selectors start from ``dashboard_sessions`` with the
same ``app`` filter, so a project page never shows a session the list would not. The open
intents come from the stored summaries' mirror (``IntentSummary``: the payload the pass
stored and the ``states`` the list's chips and its "Needs you" filter read).
"""

from __future__ import annotations

from dataclasses import dataclass

from summaries.runtime import summary_config
from transcripts.core.provenance import MAX_PROJECT

from .present import STATE_LABELS, panel_intents
from .projects import (
    OpenItem,
    ProjectCounts,
    ProjectRow,
    SessionIntents,
    open_items,
    project_counts,
    project_label,
    projects_group,
)
from .selectors import dashboard_sessions

# A project page reads at most this many of its most recently active sessions (one query;
# each stored summary is a small JSON document).
PROJECT_SESSIONS_MAX = 500


def project_list(*, app: str = "") -> list[ProjectRow]:
    """Every project of the sessions the list shows (``app``: its filter), with counts.

    One query over three small columns per session, however many sessions there are."""
    summaries = summary_config().enabled
    rows = dashboard_sessions(app=app).values_list(
        "project", "last_activity", "intent_summary__states"
    )
    return projects_group(rows, summaries=summaries)


@dataclass(frozen=True, slots=True)
class ProjectView:
    path: str
    label: str
    summaries: bool  # off: no intents are read (the flag gates reads)
    items: list[OpenItem]
    counts: ProjectCounts
    sessions: list[SessionIntents]
    truncated: bool  # more sessions than PROJECT_SESSIONS_MAX: the oldest were not read


def project_get(*, path: str, app: str = "") -> ProjectView | None:
    """The project ``path`` ("" = "No project") as the list shows it, or None when the list
    shows no session of it (unknown, or all of another app under the ``app`` filter)."""
    if len(path) > MAX_PROJECT or "\x00" in path:
        return None  # no stored project can be this (provenance cuts and drops NUL)
    summaries = summary_config().enabled
    found = list(dashboard_sessions(app=app).filter(project=path)[: PROJECT_SESSIONS_MAX + 1])
    if not found:
        return None
    sessions = []
    for session in found[:PROJECT_SESSIONS_MAX]:
        mirror = getattr(session, "intent_summary", None) if summaries else None
        payload = mirror.payload if mirror is not None and isinstance(mirror.payload, dict) else {}
        raw = payload.get("intents")
        slot = getattr(session, "slot", None)
        sessions.append(
            SessionIntents(
                slot=slot.name if slot is not None else None,
                title=session.title or (slot.name if slot is not None else session.key),
                last_activity=session.last_activity,
                turns=session.user_turns,
                behind=mirror is not None
                and (mirror.sig, mirror.gen) != (session.sig, session.gen),
                # Each intent's state as the panel's badge and the list's filter read it.
                intents=panel_intents(list(raw)) if isinstance(raw, list) else [],
            )
        )
    items = open_items(sessions, STATE_LABELS)
    return ProjectView(
        path=path,
        label=project_label(path),
        summaries=summaries,
        items=items,
        counts=project_counts(items),
        sessions=sessions,
        truncated=len(found) > PROJECT_SESSIONS_MAX,
    )
