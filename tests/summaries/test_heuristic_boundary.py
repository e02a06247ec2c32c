"""Boundaries as scored decisions (issue 11, item 3): the features, the weight table and
the fitting script (bench/fit_boundaries.py) on real transcript files."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bench import fit_boundaries
from bench import summary_quality as sq
from summaries.core.heuristic import boundary, summarize_turns
from summaries.core.heuristic.draft import Draft
from tests.summaries.extract_helpers import turns_of_bytes

T0 = datetime(2026, 10, 7, 9, 0, 0).astimezone()

FIX = "fix the login redirect bug in auth/views.py, it loops back to /login"
FIXED = "Changed auth/views.py: the redirect now keeps the next parameter."
PIVOT = "switching gears: write the onboarding email template for new customers"
DRAFTED = "Drafted templates/email/onboarding.html with the welcome copy."
# a new request with no pivot phrase, in English and in French
ENGLISH = "the onboarding email template for new customers needs the welcome copy"
FOREIGN = "le modèle du courriel d'accueil pour les nouveaux clients doit avoir le texte"


def write(path: Path, turns: list[tuple[str, str]]) -> Path:
    at = T0
    lines = [{"_type": "metadata", "created_at": at.isoformat(), "title": "t"}]
    for role, text in turns:
        at += timedelta(minutes=1)
        lines.append({"ts": at.isoformat(), "role": role, "content": text})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def ranges(path: Path) -> list[list[list[int]]]:
    turns = turns_of_bytes(path.read_bytes())
    out: dict[str, Any] = summarize_turns(turns)
    return [i["ranges"] for i in out["intents"]]


PIVOT_SESSION = [("user", FIX), ("assistant", FIXED), ("user", PIVOT), ("assistant", DRAFTED)]


def test_decide_sums_the_weights_of_the_votes_per_option() -> None:
    cur, older = Draft(origin=0), Draft(origin=1)
    votes = [
        boundary.Vote("default", boundary.CONTINUE, cur),
        boundary.Vote("short_answer", boundary.CONTINUE, cur),
        boundary.Vote("weak_pivot", boundary.NEW, None),
        boundary.Vote("unrelated_request", boundary.NEW, None),
        boundary.Vote("blamed_older", boundary.RESUME, older),
    ]
    weights = {"default": 1.0, "weak_pivot": 2.0, "unrelated_request": 2.0, "blamed_older": 3.5}
    assert boundary.decide(votes, weights) == (boundary.NEW, None)  # 4 > 3.5 > 1
    assert boundary.decide(votes, weights | {"short_answer": 8.0}) == (boundary.CONTINUE, cur)
    assert boundary.decide(votes, weights | {"blamed_older": 5.0}) == (boundary.RESUME, older)
    # a tie goes to the cheaper mistake: continuing
    assert boundary.decide(votes, weights | {"default": 4.0}) == (boundary.CONTINUE, cur)


def test_the_weight_table_decides_the_boundary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "s.jsonl", PIVOT_SESSION)
    assert ranges(path) == [[[1, 1]], [[2, 2]]]
    # with every vote for a new intent weighed at nothing, the pivot continues the work
    silenced = dict.fromkeys(("pivot", "weak_pivot", "unrelated_request", "settled_other"), 0.0)
    monkeypatch.setattr(boundary, "WEIGHTS", boundary.WEIGHTS | silenced)
    assert ranges(path) == [[[1, 2]]]


def test_after_a_close_the_same_structure_splits_in_any_language(tmp_path: Path) -> None:
    """Structural evidence only: a commit closed the work, and the next request shares no
    word with it. English and French get the same boundaries (no English cue is needed)."""
    closed = "Changed auth/views.py and committed it: [main 5b0e7d2] fix: keep the next parameter."
    english = write(
        tmp_path / "en.jsonl",
        [("user", FIX), ("assistant", closed), ("user", ENGLISH), ("assistant", DRAFTED)],
    )
    foreign = write(
        tmp_path / "fr.jsonl",
        [("user", FIX), ("assistant", closed), ("user", FOREIGN), ("assistant", DRAFTED)],
    )
    assert ranges(foreign) == ranges(english) == [[[1, 1]], [[2, 2]]]


def _labelled(tmp_path: Path, weights_to_find: list[tuple[str, str]]) -> Path:
    """A two-session labelled set: one tuning session and one in a blind batch."""
    data = tmp_path / "data"
    (data / "blind" / "held-out-8").mkdir(parents=True)
    intents = [
        {"ranges": [[1, 1]], "status": "completed", "verified": False, "origin_turn": 1},
        {"ranges": [[2, 2]], "status": "active", "origin_turn": 2},
    ]
    for folder in (data, data / "blind" / "held-out-8"):
        write(folder / "s.jsonl", weights_to_find)
        doc = {"sessions": {"s": {"file": "s.jsonl", "intents": intents}}}
        (folder / "labels.json").write_text(json.dumps(doc), encoding="utf-8")
    return data


def test_fit_finds_the_weight_that_restores_the_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _labelled(tmp_path, PIVOT_SESSION)
    silenced = dict.fromkeys(("pivot", "weak_pivot", "unrelated_request", "settled_other"), 0.0)
    monkeypatch.setattr(boundary, "WEIGHTS", boundary.WEIGHTS | silenced)
    monkeypatch.setattr(fit_boundaries, "SEPARATE_BATCHES", ("held-out-8",))
    sessions = fit_boundaries.load(data, data / "blind")
    assert [s.separate for s, _ in sessions] == [False, True]
    assert (fit_boundaries.evaluate(sessions).blind.f1 or 0.0) < 1.0
    fitted = fit_boundaries.fit(sessions, ["pivot"], passes=1)
    assert fitted.blind.f1 == 1.0
    assert fitted.tuning.f1 == 1.0
    assert boundary.WEIGHTS["pivot"] > boundary.WEIGHTS["default"]


# Floors per measured blind batch: F1, state, constraint recall, constraint precision.
# held-out-10/11 were tuned on for constraints only (2026-12-02, round 2; before it their
# constraint recall was 0.13 / 0.09 and precision 0.45 / 0.30).
_BLIND_FLOORS = {
    "held-out-7": (0.76, 0.78, 0.65, 0.70),
    "held-out-8": (0.76, 0.78, 0.65, 0.70),
    "held-out-9": (0.76, 0.78, 0.65, 0.70),
    "held-out-10": (0.62, 0.62, 0.65, 0.70),
    "held-out-11": (0.70, 0.60, 0.65, 0.70),
    # blind 2026-12-02: F1 0.63, state 0.82, constraint recall 0.26, precision 0.47; after
    # round 3 (tuned on): 0.67 / 0.84 / 0.35 / 0.69
    "held-out-12": (0.64, 0.80, 0.32, 0.65),
    # blind 2026-12-02, before and after round 3 alike (never tuned on yet): F1 0.73,
    # state 0.59, constraint recall 0.33, precision 0.75
    "held-out-13": (0.70, 0.56, 0.30, 0.70),
    # blind 2026-12-02: F1 0.68, state 0.69, constraint recall 0.40, precision 0.80; after
    # round 4 (tuned on): 0.74 / 0.66 / 0.40 / 0.80
    "held-out-14": (0.70, 0.62, 0.37, 0.75),
    # blind 2026-12-02 (before round 4): F1 0.64, state 0.82, constraint recall 0.49,
    # precision 0.61
    "held-out-15": (0.61, 0.78, 0.45, 0.57),
    # blind 2026-12-02 (before and after round 4 alike): F1 0.71, state 0.72, constraint
    # recall 0.66, precision 0.80; round 5 (tuned on) left it there
    "held-out-16": (0.68, 0.69, 0.63, 0.77),
    # blind 2026-12-02: F1 0.54 / 0.53, state 0.68 / 0.59 before / after round 5,
    # constraint recall 0.43, precision 0.82; round 6 (tuned on): state 0.67
    "held-out-17": (0.50, 0.63, 0.40, 0.79),
    # blind 2026-12-02 (after rounds 5 and 6): F1 0.63, state 0.68, constraint recall 0.59,
    # precision 0.70; after round 7 (never tuned on): 0.63 / 0.68 / 0.63 / 0.71
    "held-out-18": (0.60, 0.65, 0.60, 0.68),
    # blind 2026-12-02: F1 0.55, state 0.68, constraint recall 0.52 / 0.55, precision
    # 0.79 / 0.85 before / after round 7
    "held-out-19": (0.52, 0.65, 0.52, 0.82),
    # blind 2026-12-02 (the stop-18 final code, never tuned on): F1 0.56, state 0.83,
    # constraint recall 0.42, precision 0.85
    # 2026-12-07: the "continues" vote, new_ticket, long_disjoint, dated_rerun and the
    # definite-reference cues deleted (pooled blind F1 +0.018): state 0.78 (F1 0.56 -> 0.61)
    "held-out-20": (0.53, 0.76, 0.39, 0.82),
    # blind 2026-12-02 (the stop-19 code, unchanged since): F1 0.72, state 0.63, constraint
    # recall 0.50, precision 0.87
    "held-out-21": (0.69, 0.60, 0.47, 0.84),
    # blind 2026-12-06 (the stop-20 code): F1 0.72, state 0.59, constraint recall 0.77,
    # precision 0.90; the model path's replay was tuned on it, the heuristic never
    "held-out-22": (0.69, 0.56, 0.74, 0.87),
    # blind 2026-12-06 (the stop-21 code, never tuned on): F1 0.68, state 0.48, constraint
    # recall 0.75, precision 0.94
    "held-out-23": (0.65, 0.45, 0.72, 0.91),
    # blind 2026-12-06 (the stop-21 code, never tuned on): F1 0.75, state 0.54, constraint
    # recall 0.45, precision 0.82
    # 2026-12-07, the same deletions: F1 0.70
    "held-out-24": (0.68, 0.51, 0.42, 0.79),
}


def test_the_measured_blind_batches_keep_the_fitted_figures() -> None:
    """Floors under the measured blind batches after the structure rounds (held-out-7/8/9
    before the 2026-12-02 round: F1 0.76 / 0.72 / 0.62, state 0.79 / 0.69 / 0.74, constraint
    recall 0.60 / 0.43 / 0.52). They are train figures now; the next blind batch is the
    honest estimate."""
    assert set(_BLIND_FLOORS) == set(sq.SEPARATE_BATCHES)
    for batch in sq.SEPARATE_BATCHES:
        f1, state, c_recall, c_precision = _BLIND_FLOORS[batch]
        sessions = [
            replace(s, label_group=batch) for s in sq.load_labelled_set(sq.BLIND_ROOT / batch)
        ]
        got = sq.evaluate(sessions, sq.heuristic_predictor()).groups[batch]
        assert got.traps == 0
        assert (got.f1 or 0.0) >= f1, (batch, got.figures())
        assert (got.state or 0.0) >= state, (batch, got.figures())
        assert (got.c_recall or 0.0) >= c_recall, (batch, got.figures())
        assert (got.c_precision or 0.0) >= c_precision, (batch, got.figures())
