"""Fit the boundary weights (summaries/core/heuristic/boundary.py ``WEIGHTS``) on the labelled sets.

    .venv/bin/python bench/fit_boundaries.py                # one coordinate-search pass
    .venv/bin/python bench/fit_boundaries.py --passes 2 --features pivot,gap

Reads the labelled tuning set (never the strictly held-out group, see
bench/summary_quality.py ``STRICT_HELD_OUT``) and the measured blind batches
(``SEPARATE_BATCHES``), summarizes every session with the heuristic under a candidate
weight table and keeps, one weight at a time, the value that scores best. The score is the
boundary F1 plus half the joint (boundary and state) accuracy over the blind batches, under
a floor: the tuning set must keep F1 >= 0.99, state >= 0.98 and origin >= 0.995 (the rules
it pins hold).
No dependency: a plain coordinate search over a small grid (0, and 1 and 1.5 times each
power of two up to 2^15), since the features are mostly 0/1 cues whose order matters more
than their scale. Prints the train figures before and after, and the fitted table to paste
into ``WEIGHTS``. The fitted figures are train figures: the honest estimate is the next
blind batch.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.summary_quality import (  # noqa: E402
    BLIND_ROOT,
    DEFAULT_DATA,
    SEPARATE_BATCHES,
    Score,
    Session,
    extract,
    heuristic_predictor,
    load_labelled_set,
    read_records,
    score_session,
)
from summaries.core.heuristic import boundary  # noqa: E402
from summaries.core.transcript_turn import TranscriptTurn  # noqa: E402

GRID = (0.0, *sorted({m * 2.0**k for k in range(16) for m in (1.0, 1.5)}))
FLOOR_F1 = 0.99
FLOOR_STATE = 0.98
FLOOR_ORIGIN = 0.995


@dataclass(frozen=True, slots=True)
class Fit:
    tuning: Score
    blind: Score

    @property
    def ok(self) -> bool:
        t = self.tuning
        return (
            (t.f1 or 0.0) >= FLOOR_F1
            and (t.state or 0.0) >= FLOOR_STATE
            and (t.origin or 0.0) >= FLOOR_ORIGIN
        )

    @property
    def objective(self) -> float:
        return (self.blind.f1 or 0.0) + 0.5 * (self.blind.joint or 0.0)


def load(
    data_dir: Path = DEFAULT_DATA, blind_root: Path | None = BLIND_ROOT
) -> list[tuple[Session, list[TranscriptTurn]]]:
    """The tuning sessions and, from ``blind_root``, the measured blind batches (extracted once)."""
    sessions = [s for s in load_labelled_set(data_dir) if not s.strictly_held_out]
    if blind_root is not None:
        for batch in SEPARATE_BATCHES:
            blind = load_labelled_set(blind_root / batch)
            sessions += [replace(s, label_group=batch) for s in blind]
    return [(s, extract(read_records(s.path))) for s in sessions]


def evaluate(data: Sequence[tuple[Session, list[TranscriptTurn]]]) -> Fit:
    predict = heuristic_predictor()
    tuning, blind = Score(), Score()
    for session, turns in data:
        s = score_session(session, predict(turns), turns)
        (blind if session.separate else tuning).add(s)
    return Fit(tuning, blind)


def line(name: str, s: Score) -> str:
    def f(x: float | None) -> str:
        return "  -  " if x is None else f"{x:5.2f}"

    return (
        f"{name:8} n={s.sessions:3} F1 {f(s.f1)} state {f(s.state)} joint {f(s.joint)}"
        f" origin {f(s.origin)} c.P {f(s.c_precision)} c.R {f(s.c_recall)}"
    )


def fit(
    data: Sequence[tuple[Session, list[TranscriptTurn]]], names: Sequence[str], passes: int
) -> Fit:
    weights = boundary.WEIGHTS  # searched in place: the heuristic reads this table
    best = evaluate(data)
    for _ in range(passes):
        improved = False
        for name in names:
            start = weights[name]
            for value in GRID:
                if value == start:
                    continue
                weights[name] = value
                trial = evaluate(data)
                if trial.ok and trial.objective > best.objective + 1e-9:
                    best, start, improved = trial, value, True
                    print(f"  {name} -> {value:g}: objective {best.objective:.3f}", flush=True)
            weights[name] = start
        if not improved:
            break
    return best


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=1)
    parser.add_argument("--features", default="", help="comma-separated subset of WEIGHTS")
    args = parser.parse_args(argv)
    names = [n for n in args.features.split(",") if n] or list(boundary.WEIGHTS)
    unknown = [n for n in names if n not in boundary.WEIGHTS]
    if unknown:
        parser.error(f"unknown features: {', '.join(unknown)}")
    data = load()
    before = evaluate(data)
    print("before:\n  " + line("tuning", before.tuning) + "\n  " + line("blind", before.blind))
    after = fit(data, names, args.passes)
    print("after:\n  " + line("tuning", after.tuning) + "\n  " + line("blind", after.blind))
    print("WEIGHTS = {")
    for name, value in boundary.WEIGHTS.items():
        print(f'    "{name}": {value!r},')
    print("}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
