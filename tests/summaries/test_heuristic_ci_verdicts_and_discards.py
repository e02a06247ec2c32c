"""What CI and the tools said decides
verified. A notification posted right after a push is the run's verdict; a runner's
summary of none failed is a pass; an edit tool row, not the reply's retelling of it, says
when the code last changed; documents have nothing to run. Each test fails without its
change (checked by switching each off)."""

from __future__ import annotations

from pathlib import Path

import pytest

from summaries.core.heuristic.evidence import DISCARDED, notification_verdict, tool_sentences_at
from summaries.core.transcript_turn import ToolRow
from tests.summaries.test_evidence import only_intent
from tests.summaries.test_heuristic_structure import Row

FIX = ("u", "payments-api pods crashloop, the externalsecret key is wrong. fix it in gitops")
EDIT = [
    ("call", "Edit apps/payments/externalsecret.yaml", "edit"),
    ("result", "Applied edit.", "edit", 0),
]
PUSH = [
    ("call", "git commit -am 'payments: fix secret key' && git push", "bash"),
    (
        "result",
        "[main c02e7d4] payments: fix secret key\n a81b2f0..c02e7d4  main -> main",
        "bash",
        0,
    ),
]


def _said(cmd: str, out: str, code: int) -> list[str]:
    rows = [ToolRow("call", cmd, "bash"), ToolRow("result", out, "bash", code)]
    return [s for s, _ in tool_sentences_at(rows)]


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("[cron notification] argocd sync: payments-api Synced / Healthy (rev c02e7d4)", "passed"),
        ("[cron notification] CI for PR #921 (feat/x): passed — pnpm test:ci 223 passed", "passed"),
        ("[cron notification] CI 'backend' on pyd2 failed: 1 failed, 399 passed", "failed"),
        ("[monitor wake] pipeline 88120 on chore/sqlc-127: failed at stage integration", "failed"),
        (
            "[subagent completion event] atlantis: apply for project prod on PR #877 succeeded. "
            "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.",
            "passed",
        ),
        ("[cron notification] CI 'gateway-image' on main: trivy 0 errors, image pushed", None),
        # a subagent's findings: "failed" in the detail is not the run's outcome
        (
            "[subagent completion event] cert-sweep finished: 212 TLS secrets checked. "
            "The ACME order for partners-api failed with a 429",
            None,
        ),
        ("[monitor wake] signup_429_ratio 38% over 30m (threshold 5%)", None),
        ("[subagent completion event] review-bot: PR #377 approved by dmitri.k", None),
        ("[monitor wake] payments-api: restarts 0 in last 30m; error rate 0.02%", None),
    ],
)
def test_a_notification_headline_gives_a_verdict_or_none(text: str, verdict: str | None) -> None:
    said = notification_verdict(text)
    assert said == (None if verdict is None else f"The check {verdict}.")


def test_ci_green_after_the_push_verifies_the_work(tmp_path: Path) -> None:
    rows: list[Row] = [
        FIX,
        *EDIT,
        *PUSH,
        ("u", "[cron notification] argocd sync: payments-api Synced / Healthy (rev c02e7d4)"),
        ("a", "Committed c02e7d4; Argo reports it synced."),
    ]
    intent = only_intent(tmp_path, rows)
    assert (intent["status"], intent["verified"]) == ("completed", True)
    # the notification row is the evidence, and its stamp links to it
    assert intent["evidence"]["kind"] == "test_passed"


def test_ci_red_after_the_push_reopens_it_and_the_fix_that_follows_counts(tmp_path: Path) -> None:
    red: list[Row] = [
        FIX,
        *EDIT,
        *PUSH,
        ("u", "[cron notification] CI pipeline #8812 for main: failed (job: lint)"),
    ]
    assert only_intent(tmp_path, red)["status"] == "active"
    fixed = [
        *red,
        # the assistant acting on the red run goes on with the same exchange
        ("call", "Edit apps/payments/externalsecret.yaml", "edit"),
        ("result", "Applied edit.", "edit", 0),
        ("call", "yamllint apps/ && git commit -am 'lint' && git push", "bash"),
        ("result", "[main d13e0a1] lint\n c02e7d4..d13e0a1  main -> main", "bash", 0),
        ("u", "[cron notification] CI pipeline #8815 for main: passed"),
    ]
    intent = only_intent(tmp_path, fixed)
    assert (intent["status"], intent["verified"]) == ("completed", True)


def test_a_nightly_notification_hours_later_is_nobodys_verdict(tmp_path: Path) -> None:
    rows: list[Row] = [
        FIX,
        *EDIT,
        *PUSH,
        ("a", "Pushed c02e7d4."),
        ("wait", 14),
        ("u", "[cron notification] nightly-backup-verify FAILED for pg-orders"),
    ]
    intent = only_intent(tmp_path, rows)
    assert (intent["status"], intent["verified"]) == ("completed", False)  # merged, unrun


@pytest.mark.parametrize(
    ("cmd", "out", "said"),
    [
        (
            "helm lint charts/search-api",
            "1 chart(s) linted, 0 chart(s) failed",
            "The check passed.",
        ),
        (
            "./gradlew testDebugUnitTest assembleRelease",
            "91 tests completed, 0 failed\nBUILD SUCCESSFUL",
            "Tests passed.",
        ),
        ("./gradlew :app:testDebugUnitTest", "3 tests completed, 1 failed", "Tests failed."),
    ],
)
def test_a_runner_summary_of_none_failed_is_a_pass(cmd: str, out: str, said: str) -> None:
    assert _said(cmd, out, 0) == [said]


def test_the_replys_account_of_tool_edits_does_not_undo_the_run_after_them(
    tmp_path: Path,
) -> None:
    rows: list[Row] = [
        ("u", "search-api needs an HPA: min 3 max 12, target 70% cpu"),
        ("call", "Edit charts/search-api/templates/hpa.yaml", "edit"),
        ("result", "Applied edit.", "edit", 0),
        ("call", "helm lint charts/search-api", "bash"),
        ("result", "1 chart(s) linted, 0 chart(s) failed", "bash", 0),
        # written after the run, about the edit before it
        ("a", "HPA template added, gated by autoscaling.enabled, defaults 3-12 at 70% CPU."),
    ]
    intent = only_intent(tmp_path, rows)
    assert (intent["status"], intent["verified"]) == ("completed", True)


def test_edits_to_documents_only_have_nothing_to_run(tmp_path: Path) -> None:
    rows: list[Row] = [
        # "webhook" is a word of code: the person's words alone would leave it unverified
        ("u", "schreib bitte auf, wie man einen fehlgeschlagenen Stripe-Webhook wiederholt"),
        ("call", "Write ops/stripe-webhook-replay.md", "write"),
        ("result", "Created file (31 lines)", "write", 0),
        ("call", "git add -A && git commit -m 'ops: stripe replay' && git push", "bash"),
        ("result", "[main 1a2b3c4] ops: stripe replay\n 9f..1a  main -> main", "bash", 0),
        ("a", "Fertig, gepusht."),
    ]
    intent = only_intent(tmp_path, rows)
    assert (intent["status"], intent["verified"]) == ("completed", None)


def test_a_result_the_person_took_that_changed_nothing_is_done(tmp_path: Path) -> None:
    rows: list[Row] = [
        ("u", "dedupe data/customers.parquet on email, write data/customers_dedup.parquet"),
        ("call", "python - <<'PY'\nimport pandas as pd\n...\nPY", "bash"),
        ("result", "184213 171988", "bash", 0),
        ("a", "184,213 → 171,988 rows (12,225 duplicates removed), in customers_dedup.parquet."),
        ("u", "good"),
    ]
    intent = only_intent(tmp_path, rows)
    assert (intent["status"], intent["verified"]) == ("completed", None)


WORK_IT = [
    ("u", "aggiungi la paginazione a cursore su /v1/transactions"),
    ("call", "Edit internal/store/transactions.go", "edit"),
    ("result", "Applied edit.", "edit", 0),
    ("call", "go test ./internal/store/...", "bash"),
    ("result", "ok  \tgithub.com/acme/ledger/internal/store\t0.41s", "bash", 0),
    ("a", "Ho cambiato lo store, i test passano; ora tocca all'handler."),
    # "leave it, throw the changes away", in words no lexicon knows
    ("u", "lascia stare, il team prodotto la fa nella v2. butta via le modifiche"),
    # an empty output is still a result: the exit code says it ran
    ("call", "git checkout -- internal/store/transactions.go && git status --short", "bash"),
    ("result", "", "bash", 0),
    ("a", "Fatto, albero pulito."),
]


def test_work_its_own_tools_threw_away_is_dropped_in_any_language(tmp_path: Path) -> None:
    intent = only_intent(tmp_path, WORK_IT)
    assert (intent["status"], intent["verified"]) == ("abandoned", None)
    assert intent["evidence"]["kind"] == "dropped"
    assert intent["evidence"]["turn"] == 2  # the person's turn whose tools discarded it


def test_the_turn_after_a_discard_opens_other_work(tmp_path: Path) -> None:
    from summaries.core.heuristic import summarize_turns
    from tests.summaries.test_heuristic_structure import turns_of, write

    rows: list[Row] = [
        *WORK_IT,
        ("u", "un'ultima cosa: l'immagine del Dockerfile pesa 1,1 GB, si può ridurre?"),
        ("call", "docker build -t api:slim .", "bash"),
        ("result", "Successfully built 3f2a1b", "bash", 0),
        ("a", "Multi-stage: 1,1 GB → 38 MB."),
    ]
    found = summarize_turns(turns_of(write(tmp_path, rows)))["intents"]
    assert isinstance(found, list)
    assert [(i["ranges"], i["status"]) for i in found if i["status"] == "abandoned"] == [
        ([[1, 2]], "abandoned")
    ]
    assert any(i["ranges"] == [[3, 3]] for i in found)


@pytest.mark.parametrize(
    ("cmd", "out", "code", "said"),
    [
        (
            "terraform plan -detailed-exitcode -no-color | tail -1",
            "No changes. Your infrastructure matches the configuration.",
            0,
            ["The check passed."],
        ),
        ("terraform plan -out tf.plan", "Plan: 1 to add, 0 to change, 0 to destroy.", 0, []),
        (
            "ansible-playbook runners.yml --limit build-runner-3 --check",
            "PLAY RECAP\nbuild-runner-3 : ok=14 changed=0 unreachable=0 failed=0",
            0,
            ["The check passed."],
        ),
        (
            "ansible-playbook site.yml --check",
            "PLAY RECAP\nedge-1 : ok=3 changed=0 unreachable=0 failed=1",
            2,
            ["The check failed."],
        ),
        ("git branch -D ci/detox && git push origin --delete ci/detox", "", 0, [DISCARDED]),
        ("gh pr close 409 --comment 'superseded by #414'", "", 0, []),
        ("git checkout -- app/routes/v2.py && pytest -q", "5 passed", 0, ["Tests passed."]),
        ("git checkout -- base.yaml && cat > overlays/patch.yaml <<'Y'", "", 0, []),
        # switching branches is not a check that passed
        (
            "git checkout -b fix/x && git commit -am 'x' && git push -u origin fix/x",
            "[fix/x 1a2b3c4] x\n * [new branch]      fix/x -> fix/x",
            0,
            ["Committed.", "Pushed."],
        ),
    ],
)
def test_dry_runs_and_discards_read_from_the_command(
    cmd: str, out: str, code: int, said: list[str]
) -> None:
    assert _said(cmd, out, code) == said
