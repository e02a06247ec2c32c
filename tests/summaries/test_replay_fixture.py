"""Kept replies scored through the real parse, check and normalize path.

``bench/summary_quality.py --backend replay:DIR`` reads a reader's reply per session
(tests/data/summary_replay, written by hand for three tuning sessions) and scores it
through ``shape_reply``, the function the pass stores through. One reply lies (an intent
past the session's end citing a fact that does not exist, a rule nobody stated): the
checks remove it, so the kept replies score perfectly against the labels.
"""

from __future__ import annotations

from pathlib import Path

from bench.summary_quality import (
    DEFAULT_DATA,
    ReplayPredictor,
    evaluate,
    load_labelled_set,
    make_predictor,
    record_prompts,
)
from summaries.core.extract import extract_turns
from summaries.core.prompt import build_prompt

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
    import json

    rows = [json.loads(line) for line in session.path.read_text().splitlines() if line.strip()]
    expected = build_prompt(extract_turns([r for r in rows if r.get("_type") is None]))
    assert (tmp_path / f"{session.name}.prompt.txt").read_text() == expected
