"""THE summary payload, typed, wherever a summary is shaped, stored, served (the OpenAPI)
or asked for (the reply's JSON schema); and the intent state rules. The models check
types, never shape text, so they never change a sealed string; unknown fields are ignored
(older sidecars still read); a turn number is a JSON integer (``true`` is not turn 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, model_validator

Status = Literal["active", "completed", "abandoned"]
State = Literal["done", "needs-you", "in-progress", "dropped"]
EvidenceKind = Literal[
    "test_passed",  # a passing run after the last change
    "test_failed",  # the latest run failed (or the person reported it broken)
    "merged_unverified",  # closed (merged, pushed, deployed) with no passing run
    "dropped",  # the person dropped it
    "user_confirmed",  # the person said it works
    "user_deferred",  # the person said they will check later
    "pending_decision",  # the assistant asked a question nobody answered yet
]
TurnNumber = Annotated[StrictInt, Field(ge=1, description="A person's (user) turn number.")]
TurnRange = Annotated[
    list[TurnNumber],
    Field(min_length=2, max_length=2, description="[first_user_turn, last_user_turn]"),
]


def derive_state(status: object, verified: object, evidence: object = None) -> State:
    """The one word the panel shows and the list's state filter matches: status is about
    the work, verified about the result, ``evidence`` (the kind of the row behind it) says
    whether it waits on the person ("needs-you")."""
    if status == "abandoned":
        return "dropped"
    # Waits on the person whatever its status: the agent asked a question or for a
    # decision nobody answered, or the last run failed.
    if evidence in ("pending_decision", "test_failed"):
        return "needs-you"
    if status == "completed":
        # Finished work whose result nobody confirmed is exactly what a person forgets.
        return "needs-you" if verified is False else "done"
    return "in-progress"


def intent_state(intent: Mapping[str, Any]) -> State:
    """``derive_state`` of a dumped intent (a sidecar's, the mirror's, the API's)."""
    evidence = intent.get("evidence")
    kind = evidence.get("kind") if isinstance(evidence, Mapping) else None
    return derive_state(intent.get("status"), intent.get("verified"), kind)


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore")


class NextStep(_Part):
    """An open step: what to do, why, and what to expect when it is done."""

    what: str = Field(min_length=1)
    why: str = ""
    expect: str = ""


class Evidence(_Part):
    """Why an intent has its state: the one transcript row that decided it."""

    turn: TurnNumber = Field(description="The person's turn number it belongs to.")
    ts: str | None = Field(default=None, description="The row's ts: the panel links to that row.")
    kind: EvidenceKind
    quote: str = Field(
        min_length=1, description="What the row said, cut at a word boundary, redacted."
    )


class ReplyIntent(_Part):
    """An intent as a model is asked to write it (the prompt's shape)."""

    title: str = Field(min_length=1, description="The goal, short, in the person's terms.")
    initial_intent: str = Field(default="", description="Why the work started.")
    progress: list[str] = Field(default_factory=list, description="What is true now.")
    next_steps: list[NextStep] = Field(
        default_factory=list, description="Only genuinely open steps; empty if none."
    )
    ranges: list[TurnRange] = Field(
        default_factory=list, description="User-turn ranges; may overlap other intents'."
    )
    status: Status = Field(default="active", description="About the work.")
    verified: StrictBool | None = Field(
        default=None, description="About the result: confirmed, never confirmed, or not applicable."
    )
    origin_turn: TurnNumber | None = Field(default=None, description="The turn that triggered it.")


class Intent(ReplyIntent):
    """An intent as stored and served: the reply's fields plus what the server derives."""

    state: State = Field(
        default="in-progress", description="From status and verified: the panel's one word."
    )
    last_touched_turn: StrictInt = Field(
        default=0, ge=0, description="The last turn of its ranges."
    )
    evidence: Evidence | None = Field(
        default=None, description="The row behind its state; null when nothing either way was seen."
    )

    @model_validator(mode="before")
    @classmethod
    def _derived_when_absent(cls, data: Any) -> Any:
        # A sidecar from before these fields existed: derive them as the normalizer does.
        if isinstance(data, dict) and ("state" not in data or "last_touched_turn" not in data):
            data = dict(data)
            data.setdefault("state", intent_state(data))
            if "last_touched_turn" not in data:
                ranges = data.get("ranges")
                listed = ranges if isinstance(ranges, list) else []  # else: refused below
                ends = [r[-1] for r in listed if isinstance(r, list) and r]
                data["last_touched_turn"] = max((e for e in ends if type(e) is int), default=0)
        return data


class CitedReplyIntent(ReplyIntent):
    """A reply's intent with the rows behind it; the checks resolve ``cites`` into the
    stored intent's ``evidence`` (the references never reach a stored summary)."""

    cites: list[str] = Field(
        default_factory=list,
        description="References (F<turn>.<n>, U<turn>) of the rows behind status and verified.",
    )


class ReplyConstraint(_Part):
    text: str = Field(min_length=1, description="A rule the person set for this project's work.")
    cite: str | None = Field(default=None, description="U<turn>: the person's turn that said it.")


class ReplyPayload(_Part):
    """What a model server is asked to reply (sent as the response's JSON schema)."""

    intents: list[CitedReplyIntent]
    constraints: list[ReplyConstraint | str] = Field(
        default_factory=list,
        description="Rules the person set that later work on the project follows.",
    )


class SummaryChecks(_Part):
    """What the checks (``checks.py``) removed or downgraded in a reply before it was
    stored: all zero for a reply that held up."""

    intents_dropped: StrictInt = Field(default=0, ge=0, description="Wholly outside the session.")
    ranges_clipped: StrictInt = Field(default=0, ge=0, description="Cut to the session's turns.")
    origins_cleared: StrictInt = Field(default=0, ge=0, description="Origin turn out of range.")
    citations_dropped: StrictInt = Field(
        default=0, ge=0, description="No such row, or the quote is not in it."
    )
    verified_downgraded: StrictInt = Field(
        default=0, ge=0, description="verified: true without a cited pass or confirmation."
    )
    structure_overrides: StrictInt = Field(
        default=0, ge=0, description="A red last run after the last change: not verified."
    )
    constraints_dropped: StrictInt = Field(default=0, ge=0, description="No person's turn says it.")
    titles_cut: StrictInt = Field(default=0, ge=0, description="Over 80 characters.")

    def total(self) -> int:
        return sum(int(v) for v in self.model_dump().values())

    def describe(self) -> str:
        """``"ranges_clipped=1 titles_cut=1"`` (the log form); ``"none"`` when clean."""
        said = [f"{k}={v}" for k, v in self.model_dump().items() if v]
        return " ".join(said) or "none"


class SummaryPayload(_Part):
    """The normalized summary: most recently touched intent first, every string sealed.
    The mirror's ``IntentSummary.payload`` is this model's dump."""

    intents: list[Intent]
    constraints: list[str] = Field(default_factory=list)
    checks: SummaryChecks | None = Field(
        default=None, description="What the checks removed or downgraded before storing."
    )


class StoredSummary(SummaryPayload):
    """A sidecar's payload: the summary and the pass that wrote it (its envelope).

    The envelope is optional only because older writers left fields out; the pass always
    writes every one. ``sig`` and ``gen`` are the sidecar's identity, read by sidecar.py.
    """

    generated_at: float | None = Field(default=None, description="Unix time of the pass.")
    user_turns: StrictInt | None = Field(default=None, ge=0, description="User turns it covers.")
    last_activity: str | None = Field(default=None, description="ts of the last summarized row.")
    model: str | None = Field(default=None, description="The backend that wrote it.")
    duration_ms: StrictInt | None = Field(default=None, ge=0, description="The model call's time.")
    incremental_passes: StrictInt | None = Field(
        default=None, ge=0, description="Incremental passes since the last full one."
    )


def reply_json_schema() -> dict[str, Any]:
    """The JSON schema of a model reply, for ``response_format`` (see backends/openai.py)."""
    return ReplyPayload.model_json_schema()


def is_open(state: object) -> bool:
    """Open work, the one rule the session list's gist and the project pages read: done
    and dropped intents are closed; every other state still asks something of someone."""
    return state in ("in-progress", "needs-you")


def open_question(evidence: Any) -> str | None:
    """The unanswered question a dumped ``Evidence`` (or None) quotes, else None."""
    if not isinstance(evidence, dict) or evidence.get("kind") != "pending_decision":
        return None
    quote = evidence.get("quote")
    return quote if isinstance(quote, str) and quote else None
