"""Hand-built sessions for the heuristic's rule tests: rows in, intents out."""

from datetime import datetime, timedelta
from typing import Any

from summaries.core.heuristic import summarize_turns
from summaries.core.intents import derive_state
from summaries.core.transcript_turn import TranscriptTurn

START = datetime.fromisoformat("2026-05-04T09:00:00+02:00")
AUTOMATION_PREFIXES = ("[cron notification", "[subagent completion event]", "=== restored context")


def session(*rows: tuple[str, str] | tuple[str, float]) -> list[TranscriptTurn]:
    """Turns as extraction would produce them.

    Rows: ("u", text) person, ("a", text) assistant, ("auto", text) automation posting
    as the user, ("wait", hours) a pause before the next row. Rows are two minutes
    apart otherwise; a verbatim repeat of the previous person turn is marked as a
    resend, as extract_turns does.
    """
    turns: list[TranscriptTurn] = []
    ts = START
    user_turn = 0
    previous: tuple[str, int] | None = None
    for kind, value in rows:
        if kind == "wait":
            assert isinstance(value, int | float)
            ts += timedelta(hours=value)
            continue
        assert isinstance(value, str)
        ts += timedelta(minutes=2)
        index = len(turns) + 1
        if kind == "a":
            turns.append(TranscriptTurn(index, "assistant", value, ts.isoformat(), None))
        elif kind == "auto":
            assert value.lower().startswith(AUTOMATION_PREFIXES)
            turns.append(TranscriptTurn(index, "user", value, ts.isoformat(), None, injected=True))
        else:
            user_turn += 1
            norm = " ".join(value.split())
            repeat = previous[1] if previous and previous[0] == norm else None
            turns.append(
                TranscriptTurn(index, "user", value, ts.isoformat(), user_turn, repeat_of=repeat)
            )
            previous = (norm, user_turn)
    return turns


def intents(turns: list[TranscriptTurn]) -> list[dict[str, Any]]:
    payload = summarize_turns(turns)
    found = payload["intents"]
    assert isinstance(found, list)
    return found


def state(intent: dict[str, Any]) -> str:
    return derive_state(intent["status"], intent["verified"])


def covered(intent: dict[str, Any]) -> set[int]:
    return {t for a, b in intent["ranges"] for t in range(a, b + 1)}


def signals_of(text: str) -> Any:
    from summaries.core.heuristic.signals import classify

    return classify(text)
