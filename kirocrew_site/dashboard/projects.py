"""Projects (``Session.project``, the cwd line 0 names; none: "No project") and their open
intents. Both reads start from ``dashboard_sessions`` with the list's ``app`` filter, so a
project page never shows a session the list would not.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from summaries.core.intents import is_open, open_question
from summaries.runtime import summary_config
from transcripts.core.provenance import MAX_PROJECT, short_project

from .present import STATE_LABELS, panel_intents
from .selectors import dashboard_sessions, mirror_behind

NO_PROJECT = ""  # Session.project of a session whose line 0 names no project
NO_PROJECT_LABEL = "No project"
NEEDS_YOU = "needs-you"  # the state the sessions list's "Needs you" filter matches
# A project page reads at most this many of its most recently active sessions (one query;
# each stored summary is a small JSON document).
PROJECT_SESSIONS_MAX = 500


def project_label(path: str) -> str:
    return short_project(path) if path else NO_PROJECT_LABEL


@dataclass(slots=True)
class ProjectRow:
    path: str
    sessions: int = 0
    open: int = 0
    needs_you: int = 0
    last_activity: dt.datetime | None = None

    @property
    def label(self) -> str:
        return project_label(self.path)


@dataclass(frozen=True, slots=True)
class SessionIntents:
    slot: str | None  # the session page's name; None: no live handle, nothing to link
    title: str
    last_activity: dt.datetime | None
    turns: int
    behind: bool  # the stored summary describes an older transcript
    intents: list[Any] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class OpenItem:
    title: str
    state: str
    label: str
    question: str | None  # the unanswered question it waits on, if any
    turn: int  # its last touched turn (0: unknown; the link opens the session)
    slot: str | None
    session_title: str
    last_activity: dt.datetime | None
    behind: bool

    @property
    def anchor(self) -> str:
        return f"turn-{self.turn}" if self.turn > 0 else ""


def open_items(sessions: Iterable[SessionIntents]) -> list[OpenItem]:
    """Every open intent, by its session's last activity, its last touched turn, then the
    summary's order (a turn's own time would cost a transcript read per session)."""
    found: list[tuple[tuple[float, int, int], OpenItem]] = []
    for session in sessions:
        when = session.last_activity.timestamp() if session.last_activity else float("-inf")
        for order, intent in enumerate(session.intents):
            if not isinstance(intent, dict):
                continue
            state = str(intent.get("state") or "")
            question = open_question(intent.get("evidence"))
            if not is_open(state) and question is None:
                continue
            touched = intent.get("last_touched_turn")
            touched = touched if type(touched) is int and touched > 0 else 0
            item = OpenItem(
                title=str(intent.get("title") or "Untitled intent"),
                state=state,
                label=STATE_LABELS.get(state, state),
                question=question,
                turn=min(touched, session.turns) if session.turns else touched,
                slot=session.slot,
                session_title=session.title,
                last_activity=session.last_activity,
                behind=session.behind,
            )
            found.append(((when, touched, -order), item))
    found.sort(key=lambda pair: pair[0], reverse=True)
    return [item for _, item in found]


@dataclass(frozen=True, slots=True)
class ProjectCounts:
    needs_you: int
    questions: int
    in_progress: int


def project_list(*, app: str = "") -> list[ProjectRow]:
    """Every project of the sessions the list shows (one query over three small columns),
    most recent activity first ("No project" and never-active ones last among equals)."""
    rows = dashboard_sessions(app=app).values_list(
        "project", "last_activity", "intent_summary__states"
    )
    summaries = summary_config().enabled
    found: dict[str, ProjectRow] = {}
    for path, when, states in rows:
        row = found.setdefault(path, ProjectRow(path))
        row.sessions += 1
        row.last_activity = max(filter(None, (row.last_activity, when)), default=None)
        if summaries and states:
            for state in states.split(","):
                row.open += is_open(state)
                row.needs_you += state == NEEDS_YOU
    epoch = dt.datetime.min.replace(tzinfo=dt.UTC)
    return sorted(
        found.values(),
        key=lambda r: (r.last_activity or epoch, r.path != NO_PROJECT, r.path),
        reverse=True,
    )


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
    """The project ``path`` ("" = "No project"), or None when the list shows no session of it."""
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
        slot = getattr(session, "slot", None)
        sessions.append(
            SessionIntents(
                slot=slot.name if slot is not None else None,
                title=session.title or (slot.name if slot is not None else session.key),
                last_activity=session.last_activity,
                turns=session.user_turns,
                behind=summaries and mirror_behind(session),
                # Each intent's state as the panel's badge and the list's filter read it.
                intents=panel_intents(payload.get("intents")),
            )
        )
    items = open_items(sessions)
    return ProjectView(
        path=path,
        label=project_label(path),
        summaries=summaries,
        items=items,
        counts=ProjectCounts(
            needs_you=sum(item.state == NEEDS_YOU for item in items),
            questions=sum(item.question is not None for item in items),
            in_progress=sum(item.state != NEEDS_YOU for item in items),
        ),
        sessions=sessions,
        truncated=len(found) > PROJECT_SESSIONS_MAX,
    )
