"""The heuristic summarizer against the labelled sessions, through the benchmark harness.

The harness (bench/summary_quality.py) reports the figures; this pins them, so a
change that makes summaries wrong more often fails here, by rule family. The targets
apply to the tuning set: every labelled session except the strictly held-out groups
(``sq.STRICT_HELD_OUT``, now ``held-out-6``). Earlier held-out batches, ``held-out-5b``
included, were each measured blind once and tuned on afterwards, so they get a looser
floor. A strictly held-out group was written blind and is never tuned on: it is
reported, and asserted only against a sanity floor (no trap violation; boundary F1 no
worse than the naive baseline), and a failure here never lists its misses. While the
batch is still being written it has no sessions, and its tests are skipped, not passed.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench import summary_quality as sq
from summaries.core.transcript_turn import TranscriptTurn
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer

FAMILY_FLOOR = 0.8  # every rule family, over the tuning sessions tagged with it
HELD_OUT_FLOOR = 0.75
# Each measured blind once, then tuned on (held-out-5b after its F1 0.61 measurement).
HELD_OUT_GROUPS = [
    "held-out",
    "held-out-2",
    "held-out-3",
    "held-out-4",
    "held-out-5a",
    "held-out-5b",
]


# Every rule family of the issue; each must be covered by labelled sessions and hold.
RULE_FAMILIES = (
    "boundary.commit",
    "boundary.gap",
    "boundary.pivot",
    "boundary.correction",
    "boundary.compaction",
    "boundary.title",
    "structure.resume",
    "structure.nested",
    "status.verified",
    "status.merged_unverified",
    "status.abandoned",
    "status.active",
    "question.feasibility",
    "question.info",
    "trap.automation",
    "trap.resend",
    "trap.retraction",
    "trap.options",
    "trap.stale_fact",
    "constraints",
)


@pytest.fixture(scope="module")
def sessions() -> list[sq.Session]:
    # The repository's set plus the newest blind batch (strictly held out until a newer one
    # is reported): both honest estimates are held to the floors below.
    # A batch still being written has no labels.json yet: it loads as no sessions, and the
    # tests that need it skip.
    folder = sq.BLIND_ROOT / sq.LATEST_BLIND
    latest = sq.load_labelled_set(folder) if (folder / "labels.json").is_file() else []
    return sq.load_labelled_set() + [replace(s, label_group=sq.LATEST_BLIND) for s in latest]


@pytest.fixture(scope="module")
def report(sessions: list[sq.Session]) -> sq.Report:
    return sq.evaluate(sessions, sq.heuristic_predictor())


def test_the_labelled_set_is_big_and_covers_every_rule_family(sessions: list[sq.Session]) -> None:
    groups: dict[str, int] = {}
    for s in sessions:
        groups[s.group] = groups.get(s.group, 0) + 1
    assert groups["dev"] >= 30
    held = {g: n for g, n in groups.items() if g.startswith("held-out")}
    assert held, "a held-out check is kept"
    # the repository's own held-out groups: each a handful, reported apart
    assert all(4 <= n <= 12 for g, n in held.items() if g != sq.LATEST_BLIND), held
    if sq.LATEST_BLIND in groups:  # a blind batch big enough to measure (issue 11)
        latest = [s for s in sessions if s.group == sq.LATEST_BLIND]
        assert len(latest) >= 16
        assert sum(len(s.intents) for s in latest) >= 35
    assert set(held) >= set(HELD_OUT_GROUPS), held
    assert not set(HELD_OUT_GROUPS) & sq.STRICT_HELD_OUT  # a tuned-on batch is never "blind"
    assert all(n >= 8 for g, n in held.items() if g in sq.STRICT_HELD_OUT), held
    assert {s.path.name for s in sessions if s.group == "real"} == {
        "dashboard_starter.jsonl",
        "dashboard_triage-demo.jsonl",
        "dashboard_coder-demo.jsonl",
        "dashboard_research-notes.jsonl",
    }
    families = {f for s in sessions for f in s.families}
    assert families >= set(RULE_FAMILIES)


def test_targets_on_the_tuning_set(report: sq.Report) -> None:
    total = report.groups["tuning"]
    assert total.sessions == report.groups["all"].sessions - sum(
        report.groups[g].sessions for g in sq.STRICT_HELD_OUT if g in report.groups
    )
    assert (total.f1 or 0.0) >= sq.TARGETS["f1"], total.misses
    assert (total.state or 0.0) >= sq.TARGETS["state"], total.misses
    assert total.traps == 0, total.misses


def _strict_group(report: sq.Report, group: str) -> sq.Score:
    if group not in report.groups:
        pytest.skip(f"{group} has no labelled sessions yet (a blind batch still being written)")
    return report.groups[group]


@pytest.mark.parametrize("group", sorted(sq.STRICT_HELD_OUT))
def test_the_strictly_held_out_group_is_reported_and_never_trapped(
    report: sq.Report, group: str
) -> None:
    """Figures only, never its misses: this group must not steer any rule change."""
    held = _strict_group(report, group)
    assert held.sessions >= 8
    assert held.traps == 0, (group, held.traps)
    assert group in sq.render(report)


# Measured once, at the end of the held-out-5b round, without reading this group:
# held-out-6 F1 0.62 against the naive baseline's 0.43 (state 0.50, origin 0.81,
# constraint recall 0.29). It clears the floor, so there is no expected-failure marker
# this time (held-out-5b, at 0.61 < 0.69, had one): falling below it fails here.
@pytest.mark.parametrize("group", sorted(sq.STRICT_HELD_OUT))
def test_the_strictly_held_out_group_is_no_worse_than_the_naive_baseline(
    report: sq.Report, group: str
) -> None:
    held, base = _strict_group(report, group), report.baseline_groups[group]
    figures = {k: v for k, v in held.figures().items() if k != "trap_violations"}
    assert (held.f1 or 0.0) >= (base.f1 or 0.0), (group, figures, base.f1)


def test_no_automation_row_or_resend_ever_produces_an_intent(report: sq.Report) -> None:
    for name, score in [*report.groups.items(), *report.families.items()]:
        assert score.traps == 0, (name, [m for m in score.misses if "TRAP" in m])


@pytest.mark.parametrize("family", [*RULE_FAMILIES, "real"])
def test_each_rule_family_holds(report: sq.Report, family: str) -> None:
    score = report.families[family]
    assert (score.f1 or 0.0) >= FAMILY_FLOOR, score.misses
    if score.state is not None:
        assert score.state >= FAMILY_FLOOR, score.misses
    if score.c_recall is not None:
        assert score.c_recall >= FAMILY_FLOOR, score.misses
    if score.c_precision is not None:
        assert score.c_precision >= FAMILY_FLOOR, score.misses


@pytest.mark.parametrize("group", HELD_OUT_GROUPS)
def test_held_out_sessions_stay_close(report: sq.Report, group: str) -> None:
    held = report.groups[group]
    assert (held.f1 or 0.0) >= HELD_OUT_FLOOR, held.misses
    assert (held.state or 0.0) >= HELD_OUT_FLOOR, held.misses


def test_the_heuristic_beats_the_naive_baseline(report: sq.Report) -> None:
    ours, base = report.groups["tuning"], report.baseline_groups["tuning"]
    assert (ours.f1 or 0.0) > (base.f1 or 0.0)
    assert (ours.state or 0.0) > (base.state or 0.0)
    assert (ours.joint or 0.0) > 2 * (base.joint or 0.0)


def test_the_printed_report_names_every_group_and_the_targets(report: sq.Report) -> None:
    text = sq.render(report)
    for label in (
        "dev",
        "held-out",
        "real",
        "tuning",
        "all",
        "trap.resend",
        "targets on the tuning",
    ):
        assert label in text
    assert json.loads(json.dumps(report.as_dict()))["groups"]["all"]["trap_violations"] == 0


# --- the harness's own rules ---------------------------------------------------------


def test_match_needs_half_of_the_larger_side_and_is_one_to_one() -> None:
    a, b = frozenset({1, 2, 3, 4}), frozenset({3, 4})
    assert sq.match([a], [b]) == [(0, 0)]  # 2 of 4: exactly half
    assert sq.match([frozenset({1, 2, 3, 4, 5})], [b]) == []  # 2 of 5: less than half
    assert sq.match([a, b], [b]) == [(1, 0)]  # the better overlap wins the label


def _turn(
    index: int, role: str, text: str, ts: str, user_turn: int | None, **kw: Any
) -> TranscriptTurn:
    return TranscriptTurn(index, role, text, ts, user_turn, **kw)


def test_trap_violations_catch_automation_and_resend_intents() -> None:
    turns = [
        _turn(
            1,
            "user",
            "[cron notification] deps-audit found advisories in pillow",
            "2026-05-01T09:00:00+00:00",
            None,
            injected=True,
        ),
        _turn(2, "user", "Fix the login test", "2026-05-01T09:05:00+00:00", 1),
        _turn(3, "user", "Fix the login test", "2026-05-01T09:06:00+00:00", 2, repeat_of=1),
    ]
    bad = [
        {"title": "Fix the login test again", "ranges": [[2, 2]], "origin_turn": 2},
        {
            "title": "Upgrade pillow advisories",
            "ranges": [[1, 1]],
            "origin_turn": 1,
            "initial_intent": "deps-audit found advisories in pillow",
        },
    ]
    assert len(sq.trap_violations(bad, turns, matched=set())) == 2
    days_later = [
        *turns[:2],
        _turn(3, "user", "Fix the login test", "2026-05-03T09:06:00+00:00", 2, repeat_of=1),
    ]
    assert sq.resend_turns(days_later) == set()  # a repeat days later is a routine


def test_constraint_labels_match_by_required_and_forbidden_strings() -> None:
    label = sq.GoldConstraint(("5434",), ("5433",))
    assert label.matches("Local Postgres listens on 5434")
    assert not label.matches("Postgres moved from 5433 to 5434")
    assert not label.matches("Postgres should listen on 5433")


# --- the same harness against an OpenAI-compatible server --------------------------------


_TERSE_REPLY = json.dumps(
    {
        "intents": [{"title": "Whatever", "ranges": [[1, 1]], "status": "active"}],
        "constraints": [],
    }
)


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAIServer) -> FakeOpenAIServer:
    """Answers every chat completion with one intent covering turn 1, like a terse model."""
    fake_openai.default = Behaviour.reply(_TERSE_REPLY)
    monkeypatch.setenv("KIROCREW_OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("KIROCREW_OPENAI_API_KEY", "test-key")
    return fake_openai


def test_the_harness_runs_a_model_backend_on_the_same_sessions(
    sessions: list[sq.Session], fake_model: FakeOpenAIServer
) -> None:
    subset = [s for s in sessions if s.name.startswith(("s01", "s08", "kc_starter"))]
    report = sq.evaluate(subset, sq.make_predictor("openai:fake-model"), "openai:fake-model")
    prompts = [r.json["messages"][-1]["content"] for r in fake_model.requests]
    assert len(prompts) == len(subset)
    assert all("TRANSCRIPT" in p and "not a work order" in p for p in prompts)
    assert report.groups["all"].sessions == len(subset)
    assert report.groups["all"].tp >= 1  # scored exactly like the heuristic


def test_main_prints_the_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert sq.main(["--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["backend"] == "heuristic"
    assert figures["groups"]["tuning"]["f1"] >= sq.TARGETS["f1"]


def test_a_tuning_run_leaves_the_strictly_held_out_groups_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert sq.main(["--json", "--tuning-only"]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert not set(groups) & sq.STRICT_HELD_OUT
    # a measured blind batch is reported beside ``tuning``, never inside it
    separate = sum(groups[b]["sessions"] for b in sq.SEPARATE_BATCHES if b in groups)
    assert groups["tuning"]["sessions"] + separate == groups["all"]["sessions"]


def test_only_the_named_blind_batches_are_loaded(capsys: pytest.CaptureFixture[str]) -> None:
    assert sq.main(["--json", "--tuning-only"]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    blind = {g for g in groups if (sq.BLIND_ROOT / g).is_dir()}
    assert blind == set(sq.SEPARATE_BATCHES)  # a batch still being written is never read


def test_families_are_read_on_the_tuning_sessions_only(
    sessions: list[sq.Session], report: sq.Report
) -> None:
    tagged = sum(len(s.families) for s in sessions if not s.strictly_held_out)
    assert sum(score.sessions for score in report.families.values()) == tagged


def test_every_labelled_transcript_is_in_the_store_format(sessions: list[sq.Session]) -> None:
    from transcripts.core.fold import fold_bytes

    for session in sessions:
        data = session.path.read_bytes()
        head = json.loads(data.split(b"\n", 1)[0])
        assert head["_type"] == "metadata"
        assert "created_at" in head
        assert fold_bytes(data, file=session.path.name).report.anomalies == [], session.name
        turns = sq.extract(sq.read_records(session.path))
        last = max((t.user_turn or 0 for t in turns), default=0)
        for intent in session.intents:
            assert intent.turns, session.name
            assert max(intent.turns) <= last, session.name


def test_a_label_outside_the_payloads_statuses_is_refused(tmp_path: Path) -> None:
    # "dropped" is the panel's word; the payload says "abandoned". Read silently, it
    # scored as in progress and hid every right answer about a drop.
    intent = {"title": "t", "ranges": [[1, 1]], "status": "dropped", "origin_turn": 1}
    labels = {"sessions": {"s1": {"file": "s1.jsonl", "intents": [intent], "constraints": []}}}
    (tmp_path / "labels.json").write_text(json.dumps(labels), encoding="utf-8")
    with pytest.raises(ValueError, match="'dropped' is not one of"):
        sq.load_labelled_set(tmp_path)
    # every stored batch uses the payload's words
    for batch in sorted(sq.BLIND_ROOT.iterdir()):
        if (batch / "labels.json").exists():
            sq.load_labelled_set(batch)
