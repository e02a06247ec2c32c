"""How much of the summarizer's error is the continue-or-new decision? An oracle says.

    .venv/bin/python bench/boundary_oracle.py

Runs the heuristic over the tuning set and the measured blind batches (``SEPARATE_BATCHES``;
never a strictly held-out group) twice: as it is, and with ``boundary.route``'s continue/new
call replaced by the labels' answer (a turn opens an intent exactly when it is a labelled
intent's origin; resumes, drops, pending questions and everything downstream stay the
heuristic's). The gap between the two lines is what a perfect boundary decision would buy;
what is left under the oracle line is the rest of the pipeline (resume targets, ranges, state).

Measured 2026-12-02 on the tuning set and held-out-7..15 (190 blind sessions): blind F1 0.74
as is, 0.91 under the oracle; state 0.76 both ways. The same decisions were then learned
(logistic regression and gradient-boosted trees over ~70 features of the turn against the
intent in hand, cue votes included, plus sentence-embedding similarities): left-one-batch-out,
no threshold gained more than ~15 of the ~240 wrong decisions net. What separates the labels
is not in those features; see tests/data/summary_quality_blind/README.md.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.fit_boundaries import Fit, line, load  # noqa: E402
from bench.summary_quality import Score, Session, heuristic_predictor, score_session  # noqa: E402
from summaries.core.heuristic import boundary, segment  # noqa: E402
from summaries.core.heuristic.draft import Draft, SegState  # noqa: E402
from summaries.core.heuristic.exchanges import Exchange  # noqa: E402
from summaries.core.heuristic.signals import UserSignals  # noqa: E402
from summaries.core.transcript_turn import TranscriptTurn  # noqa: E402

Data = Sequence[tuple[Session, list[TranscriptTurn]]]


def run(data: Data, origins_of: dict[str, set[int]] | None) -> Fit:
    """Score every session; with ``origins_of``, route's continue/new comes from the labels."""
    origins: set[int] = set()

    def oracle(st: SegState, ex: Exchange, sig: UserSignals) -> tuple[str, Draft | None]:
        action, target = boundary.route(st, ex, sig)
        if action == boundary.RESUME:
            return action, target
        if ex.turn in origins:
            return boundary.NEW, None
        if action == boundary.NEW and st.current is not None:
            return boundary.CONTINUE, st.current
        return action, target

    predict = heuristic_predictor()
    tuning, blind = Score(), Score()
    segment.route = oracle if origins_of is not None else boundary.route  # type: ignore[attr-defined]
    try:
        for session, turns in data:
            origins.clear()
            origins.update((origins_of or {}).get(session.name, ()))
            (blind if session.separate else tuning).add(
                score_session(session, predict(turns), turns)
            )
    finally:
        segment.route = boundary.route  # type: ignore[attr-defined]
    return Fit(tuning, blind)


def main() -> int:
    data = load()
    labels = {
        s.name: {g.origin_turn for g in s.intents if g.origin_turn is not None} for s, _ in data
    }
    for name, origins_of in (("as is", None), ("oracle", labels)):
        fit = run(data, origins_of)
        print(f"{name}:\n  " + line("tuning", fit.tuning) + "\n  " + line("blind", fit.blind))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
