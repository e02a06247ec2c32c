"""Operational checks read from tool rows, and an
"also" / "while you're in there" aside that names other work. Each test fails without its
change (the ops-check pattern matching nothing; the aside cue needing no shared word at all)."""

from __future__ import annotations

from pathlib import Path

import pytest

from summaries.core.heuristic.evidence import tool_sentences_at
from summaries.core.transcript_turn import ToolRow
from tests.summaries.heuristic_cases import covered, intents, session, state
from tests.summaries.test_evidence import only_intent

FIX = ("u", "payments-api pods crashloop, the externalsecret key is wrong. fix it in gitops")
DONE = ("a", "Committed c02e7d4 to gitops; the rollout finished and the pods are Running.")


def _said(cmd: str, out: str, code: int) -> list[str]:
    rows = [ToolRow("call", cmd, "bash"), ToolRow("result", out, "bash", code)]
    return [s for s, _ in tool_sentences_at(rows)]


@pytest.mark.parametrize(
    ("cmd", "out", "code", "said"),
    [
        (
            "kubectl -n payments rollout status deploy/payments-api --timeout=120s",
            'deployment "payments-api" successfully rolled out',
            0,
            "The check passed.",
        ),
        (
            "kubectl -n payments rollout status deploy/payments-api --timeout=60s",
            "error: timed out waiting for the condition",
            1,
            "The check failed.",
        ),
        (
            "argocd app wait payments-prod --health --timeout 300",
            "Sync Status: Synced\nHealth Status: Degraded",
            0,
            "The check failed.",
        ),
        ("argocd app get checkout-prod", "Sync Status: Synced\nHealth Status: Healthy", 0, ""),
        ("kustomize build apps/x | kubeconform -strict -summary", "Valid: 12, Invalid: 0", 0, ""),
        ("dbt build --select fct_orders", "Done. PASS=9 WARN=0 ERROR=0 SKIP=0 TOTAL=9", 0, ""),
    ],
)
def test_an_operational_check_reports_by_exit_code_and_health(
    cmd: str, out: str, code: int, said: str
) -> None:
    assert _said(cmd, out, code) == [said or "The check passed."]


def test_a_rollout_that_finished_after_the_change_verifies_it(tmp_path: Path) -> None:
    intent = only_intent(
        tmp_path,
        [
            FIX,
            ("call", "Edit apps/payments/externalsecret.yaml", "edit"),
            ("result", "Applied edit.", "edit", 0),
            ("call", "git commit -am 'payments: fix secret key' && git push", "bash"),
            ("result", "[main c02e7d4] payments: fix secret key\n main -> main", "bash", 0),
            ("call", "kubectl -n payments rollout status deploy/payments-api", "bash"),
            ("result", 'deployment "payments-api" successfully rolled out', "bash", 0),
            DONE,
        ],
    )
    assert (intent["status"], intent["verified"]) == ("completed", True)


@pytest.mark.parametrize(
    "aside",
    [
        "while you're in there bump node 18 -> 20 in the Dockerfile and the CI image, 18 is EOL",
        "cool. also would be nice if the recon result got posted to #finops in slack, can you look",
    ],
)
def test_an_aside_in_other_words_after_a_result_opens_new_work(aside: str) -> None:
    turns = session(
        ("u", "the recon job drops rows with a missing bank reference, fix the parser"),
        ("a", "Fixed the parser in recon/parse.py to keep rows without a reference. Tests passed."),
        ("u", aside),
        ("a", "Done."),
    )
    assert [covered(i) for i in intents(turns)] == [{1}, {2}]


def test_an_aside_naming_the_work_in_hand_stays_with_it() -> None:
    turns = session(
        ("u", "the recon-parser drops rows with a missing bank reference, fix it"),
        ("a", "Fixed recon/parse.py to keep rows without a reference. Tests passed."),
        ("u", "while you're in there, make the recon-parser log how many rows it kept"),
        ("a", "Added a count to the log line."),
    )
    assert [covered(i) for i in intents(turns)] == [{1, 2}]


REPORT = (
    ("u", "find which endpoints had the worst p95 latency last week"),
    ("a", "Worst p95 last week: /search 1.9 s, /export 1.2 s, /cart 0.8 s."),
)


def test_a_report_taken_and_followed_by_other_work_is_done() -> None:
    found = intents(
        session(
            *REPORT,
            ("u", "next: bump the Go toolchain to 1.23 in go.mod and the Dockerfile"),
            ("a", "Bumped go.mod and the Dockerfile to 1.23. Tests passed."),
        )
    )
    assert [covered(i) for i in found] == [{1}, {2}]
    assert state(found[0]) == "done"


def test_a_report_nobody_answered_yet_stays_open() -> None:
    [only] = intents(session(*REPORT))
    assert state(only) == "in-progress"


def test_a_terse_routine_ask_on_a_later_day_is_a_new_run() -> None:
    found = intents(
        session(
            ("u", "morning check pls"),
            ("a", "Sentry: 2 new issues, both known. SLO board green."),
            ("u", "we need tenant_id on audit_log, add the column with a backfill"),
            ("a", "Added the column and the backfill migration. Tests passed."),
            ("wait", 20),
            # no distinctive word at all: matched on all its words against the first ask
            ("u", "morning check"),
            ("a", "Sentry quiet overnight; SLO board green."),
        )
    )
    assert [covered(i) for i in found] == [{1}, {2}, {3}]


def test_a_terse_follow_up_after_a_pause_is_not_a_rerun() -> None:
    found = intents(
        session(
            ("u", "the export drops rows with empty names, fix it"),
            ("a", "Fixed parse.py to keep them. Tests passed."),
            ("wait", 20),
            ("u", "fix it"),
            ("a", "Which part is still wrong?"),
        )
    )
    assert len(found) == 1
