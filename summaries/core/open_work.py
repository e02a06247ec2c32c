"""Which intents are still open work: the one rule the session list's gist and the project
pages ("where was I") both read.

An intent's ``state`` is derived once, by the payload model's rule (``intents.py``); this
module only says which of those states leave work open, and which evidence means the agent
is waiting on the person's answer (an open question). No Django here.
"""

from __future__ import annotations

from typing import Any

from .intents import EvidenceKind, State

# Done and dropped intents are closed; every other state still asks something of someone.
OPEN_STATES: frozenset[State] = frozenset({"in-progress", "needs-you"})
# The agent asked a question (or for a decision) that nobody answered yet.
QUESTION_KIND: EvidenceKind = "pending_decision"


def is_open(state: object) -> bool:
    """True for a state that leaves work open (``OPEN_STATES``)."""
    return state in OPEN_STATES


def open_question(evidence: Any) -> str | None:
    """The unanswered question an intent's evidence quotes, else None.

    ``evidence`` is a dumped ``Evidence`` (a dict) or None; anything else has none."""
    if not isinstance(evidence, dict) or evidence.get("kind") != QUESTION_KIND:
        return None
    quote = evidence.get("quote")
    return quote if isinstance(quote, str) and quote else None
