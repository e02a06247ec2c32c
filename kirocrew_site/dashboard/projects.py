"""Where was I, across sessions: projects and their open intents, shaped for the pages (pure).

A project is the cwd (or repository) a session ran in, as line 0 names it
(``transcripts/core/provenance.session_project``, mirrored as ``Session.project``);
sessions that name none (API-created ones) are grouped under "No project". Which intents
are open is ``summaries.core.intents``'s rule; each intent's state is the one the
panel's badge and the list's "Needs you" filter show (``present.panel_intents``). The
selectors (``project_selectors.py``) read the database and call these. No Django imports.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from summaries.core.intents import is_open, open_question
from transcripts.core.provenance import short_project

NO_PROJECT = ""  # Session.project of a session whose line 0 names no project
NO_PROJECT_LABEL = "No project"
NEEDS_YOU = "needs-you"  # the state the sessions list's "Needs you" filter matches


def project_label(path: str) -> str:
    return short_project(path) if path else NO_PROJECT_LABEL


@dataclass(slots=True)
class ProjectRow:
    """One project of the index: its sessions and, from their stored summaries, the open
    intents and how many of them need the person."""

    path: str
    sessions: int = 0
    open: int = 0
    needs_you: int = 0
    last_activity: dt.datetime | None = None

    @property
    def label(self) -> str:
        return project_label(self.path)


def _newest(a: dt.datetime | None, b: dt.datetime | None) -> dt.datetime | None:
    if a is None or b is None:
        return a or b
    return max(a, b)


def projects_group(
    rows: Iterable[tuple[str, dt.datetime | None, str | None]], *, summaries: bool
) -> list[ProjectRow]:
    """``(project, last_activity, the mirror's states)`` per session → projects, most recent
    activity first ("No project" and never-active ones last among equals).

    ``states`` is the mirror's comma-joined intent states (``IntentSummary.states``, the
    column the list's chips and its state filter read); ``summaries`` off counts none.
    """
    found: dict[str, ProjectRow] = {}
    for path, when, states in rows:
        row = found.setdefault(path, ProjectRow(path))
        row.sessions += 1
        row.last_activity = _newest(row.last_activity, when)
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
class SessionIntents:
    """One session of a project and its stored intents (each with its ``state``)."""

    slot: str | None  # the session page's name; None: no live handle, nothing to link
    title: str
    last_activity: dt.datetime | None
    turns: int
    behind: bool  # the stored summary describes an older transcript
    intents: list[Any] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class OpenItem:
    """An open intent of one of the project's sessions, linked to the turn it was last
    touched in."""

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


def _turn(intent: Mapping[str, Any]) -> int:
    value = intent.get("last_touched_turn")
    return value if type(value) is int and value > 0 else 0


def open_items(sessions: Iterable[SessionIntents], labels: Mapping[str, str]) -> list[OpenItem]:
    """Every open intent of ``sessions``, most recently touched first.

    Touch times are known per session (its last activity) and, within one, by turn: items
    are ordered by their session's last activity, then by their last touched turn (the
    summary's own order breaks ties). Exact within a session; across sessions an older
    intent of a busy session sorts above a quieter session's newest (a turn's time would
    need a transcript read per session).
    """
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
            item = OpenItem(
                title=str(intent.get("title") or "Untitled intent"),
                state=state,
                label=labels.get(state, state),
                question=question,
                turn=min(_turn(intent), session.turns) if session.turns else _turn(intent),
                slot=session.slot,
                session_title=session.title,
                last_activity=session.last_activity,
                behind=session.behind,
            )
            found.append(((when, _turn(intent), -order), item))
    found.sort(key=lambda pair: pair[0], reverse=True)
    return [item for _, item in found]


@dataclass(frozen=True, slots=True)
class ProjectCounts:
    needs_you: int
    questions: int
    in_progress: int


def project_counts(items: Iterable[OpenItem]) -> ProjectCounts:
    listed = list(items)
    return ProjectCounts(
        needs_you=sum(item.state == NEEDS_YOU for item in listed),
        questions=sum(item.question is not None for item in listed),
        in_progress=sum(item.state != NEEDS_YOU for item in listed),
    )
