"""Kept replies scored through the real parse, check and normalize path.

``bench/summary_quality.py --backend replay:DIR`` reads a reader's reply per session
(tests/data/summary_replay, written by hand for three tuning sessions) and scores it
through ``shape_reply``, the function the pass stores through. One reply lies (an intent
past the session's end citing a fact that does not exist, a rule nobody stated): the
checks remove it, so the kept replies score perfectly against the labels.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bench.summary_quality import (
    BLIND_ROOT,
    DEFAULT_DATA,
    ReplayPredictor,
    evaluate,
    extract,
    load_labelled_set,
    make_predictor,
    read_records,
    record_prompts,
)
from summaries.core.extract import extract_turns
from summaries.core.prompt import build_prompt
from summaries.core.reply import shape_reply

REPLIES = Path(__file__).resolve().parent.parent / "data" / "summary_replay"
KEPT = ("f02_celery_double_run_ci_red", "f03_terse_ship_ship", "f07_regex_then_vpn_fact")


def _sessions(*names: str):
    return [s for s in load_labelled_set(DEFAULT_DATA) if s.name in names]


def test_kept_replies_score_through_the_checked_path() -> None:
    predictor = make_predictor(f"replay:{REPLIES}")
    report = evaluate(_sessions(*KEPT), predictor, "replay")
    every = report.groups["all"].figures()
    assert every["sessions"] == 3
    assert (every["f1"], every["state"], every["origin"]) == (1.0, 1.0, 1.0)
    assert (every["constraint_precision"], every["constraint_recall"]) == (1.0, 1.0)
    assert every["trap_violations"] == 0


def test_a_missing_reply_is_reported_and_scored_as_empty() -> None:
    predictor = make_predictor(f"replay:{REPLIES}")
    assert isinstance(predictor, ReplayPredictor)
    report = evaluate(_sessions("f01_hotfix_then_footer_hold_off"), predictor, "replay")
    assert predictor.missing == ["f01_hotfix_then_footer_hold_off"]
    figures = report.groups["all"].figures()
    assert (figures["matched"], figures["predicted_only"]) == (0, 0)


def test_recorded_prompts_are_the_full_pass_prompts(tmp_path: Path) -> None:
    (session,) = _sessions("f02_celery_double_run_ci_red")
    assert record_prompts([session], tmp_path) == 1
    rows = [json.loads(line) for line in session.path.read_text().splitlines() if line.strip()]
    expected = build_prompt(extract_turns([r for r in rows if r.get("_type") is None]))
    assert (tmp_path / f"{session.name}.prompt.txt").read_text() == expected


# The blind replays (bench/replay/held-out-N): a capable reader's replies to the recorded
# prompts, kept as fixtures. Their figures through today's parse and checks may not fall
# below what was measured blind (F1, state, origin, constraint precision, recall).
BLIND_REPLAYS = {
    "held-out-22": (0.79, 0.77, 0.92, 0.90, 1.00),
    "held-out-23": (0.94, 0.92, 0.97, 0.86, 0.95),
    "held-out-24": (0.83, 0.88, 0.91, 0.90, 1.00),
    "held-out-25": (1.00, 0.98, 1.00, 0.94, 0.95),
}
REPLAY_ROOT = Path(__file__).resolve().parents[2] / "bench" / "replay"


@pytest.mark.parametrize("batch", sorted(BLIND_REPLAYS))
def test_blind_replays_keep_their_measured_figures(batch: str) -> None:
    sessions = [replace(s, label_group=batch) for s in load_labelled_set(BLIND_ROOT / batch)]
    predictor = make_predictor(f"replay:{REPLAY_ROOT / batch}")
    got = evaluate(sessions, predictor, "replay").groups[batch]
    assert isinstance(predictor, ReplayPredictor)
    assert predictor.missing == []
    floors = BLIND_REPLAYS[batch]
    figures = (got.f1, got.state, got.origin, got.c_precision, got.c_recall)
    assert all(round(v or 0.0, 2) >= f for v, f in zip(figures, floors, strict=True)), (
        batch,
        figures,
    )
    assert got.traps == 0


@pytest.mark.parametrize("batch", sorted(BLIND_REPLAYS))
def test_a_stored_replay_holds_nothing_the_checks_would_remove(batch: str) -> None:
    """What the checks let through passes them again unchanged: no stored claim is one
    the checks should have removed."""
    for session in load_labelled_set(BLIND_ROOT / batch):
        turns = extract(read_records(session.path))
        reply = (REPLAY_ROOT / batch / f"{session.name}.reply.txt").read_text()
        first = shape_reply(reply, turns).payload
        assert first is not None, session.name
        again = shape_reply(json.dumps(first.model_dump(mode="json")), turns)
        assert again.checks.total() == 0, (session.name, again.checks.describe())
        assert again.payload is not None, session.name
        assert (again.payload.intents, again.payload.constraints) == (
            first.intents,
            first.constraints,
        ), session.name
