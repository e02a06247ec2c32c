"""The heuristic reads structure: tool rows, unanswered questions, timestamps, clause ends.

Sessions are real JSONL files on disk, read through both extraction entry points, so
what is asserted is what the summarizer sees in production. None of these outcomes
depends on the language of the prose around the tool rows.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from summaries.core.extract import render_input
from summaries.core.heuristic import summarize_turns
from summaries.core.heuristic.compose import fit_phrase, title_for
from summaries.core.intents import derive_state
from summaries.core.transcript_turn import TranscriptTurn
from tests.summaries.extract_helpers import turns_of_bytes

T0 = datetime(2026, 10, 7, 9, 0, 0).astimezone()

Row = tuple[Any, ...]


def write(tmp_path: Path, rows: list[Row]) -> Path:
    """Rows: ("u"|"a", text), ("call", cmd, tool), ("result", out, tool, exit), ("wait", h)."""
    at = T0
    lines = [{"_type": "metadata", "created_at": at.isoformat(), "title": "t"}]
    roles = {"u": "user", "a": "assistant"}
    for row in rows:
        if row[0] == "wait":
            at += timedelta(hours=row[1])
            continue
        at += timedelta(minutes=1)
        rec: dict[str, Any] = {"ts": at.isoformat()}
        if row[0] in roles:
            rec |= {"role": roles[row[0]], "content": row[1]}
        elif row[0] == "call":
            rec |= {"role": "tool_call", "content": row[1], "meta": {"tool": row[2]}}
        else:
            meta = {"tool": row[2], "exit_code": row[3], "stdout_bytes": 123}
            rec |= {"role": "tool_result", "content": row[1], "meta": meta}
        lines.append(rec)
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def turns_of(path: Path) -> list[TranscriptTurn]:
    return turns_of_bytes(path.read_bytes())


def summary(tmp_path: Path, rows: list[Row]) -> dict[str, Any]:
    return summarize_turns(turns_of(write(tmp_path, rows)))


def state(intent: dict[str, Any]) -> str:
    return derive_state(str(intent["status"]), intent["verified"])


PYTEST_PASS = "........\n8 passed in 0.41s"
COMMIT = "[main 5b0e7d2] fix: keep the last row\n 1 file changed, 3 insertions(+)"


def fix_and_commit(ask: str, ack: str) -> list[Row]:
    return [
        ("u", ask),
        ("a", ack),
        ("call", "Edit app/export.py", "edit"),
        ("result", "replaced 1 block", "edit", 0),
        ("call", "pytest -q tests/test_export.py", "bash"),
        ("result", PYTEST_PASS, "bash", 0),
        ("call", "git commit -am 'fix: keep the last row'", "bash"),
        ("result", COMMIT, "bash", 0),
    ]


class TestToolRows:
    def test_a_passing_pytest_then_a_commit_is_done_and_verified(self, tmp_path: Path) -> None:
        found = summary(tmp_path, fix_and_commit("the export drops the last row, fix it", "On it."))
        [intent] = found["intents"]
        assert (intent["status"], intent["verified"]) == ("completed", True)

    def test_the_same_structure_in_german_gives_the_same_state(self, tmp_path: Path) -> None:
        rows = fix_and_commit("Der Export verliert die letzte Zeile, bitte beheben", "Mache ich.")
        [intent] = summary(tmp_path, rows)["intents"]
        assert (intent["status"], intent["verified"]) == ("completed", True)

    def test_a_failing_run_by_exit_code_keeps_it_open(self, tmp_path: Path) -> None:
        rows = fix_and_commit("the export drops the last row, fix it", "On it.")[:5]
        rows.append(("result", "..F.....\n1 failed, 7 passed in 0.52s", "bash", 1))
        [intent] = summary(tmp_path, rows)["intents"]
        assert (intent["status"], intent["verified"]) == ("active", False)

    def test_ci_red_after_the_push_reopens_the_work(self, tmp_path: Path) -> None:
        rows = [
            *fix_and_commit("fix + push to main", "Ok."),
            ("call", "git push origin main", "bash"),
            ("result", "To github.com:acme/app.git\n   1a2b3c..5b0e7d2  main -> main", "bash", 0),
            ("u", "ci?"),
            ("a", "Checking."),
            ("call", "gh run watch 8812034417", "bash"),
            ("result", "X test (1.63)  failed\n✓ test (stable)", "bash", 1),
        ]
        intent = summary(tmp_path, rows)["intents"][-1]
        assert (intent["status"], intent["verified"]) == ("active", False)

    def test_a_failing_exploration_command_is_not_a_failed_check(self, tmp_path: Path) -> None:
        rows = [
            *fix_and_commit("the export drops the last row, fix it", "On it."),
            ("call", "grep -rn legacy_export app/", "bash"),
            ("result", "", "bash", 1),
            ("call", "psql -c 'select 1'", "bash"),
            ("result", "psql: error: connection refused", "bash", 2),
        ]
        [intent] = summary(tmp_path, rows)["intents"]
        assert (intent["status"], intent["verified"]) == ("completed", True)

    def test_a_merged_pr_by_gh_closes_it(self, tmp_path: Path) -> None:
        rows = [
            *fix_and_commit("rate limiter per tenant, PLAT-904", "Sure.")[:6],
            ("call", "gh pr create --fill", "bash"),
            ("result", "https://github.com/acme/api/pull/77", "bash", 0),
            ("call", "gh pr merge 77 --squash", "bash"),
            ("result", "✓ Squashed and merged pull request #77", "bash", 0),
        ]
        [intent] = summary(tmp_path, rows)["intents"]
        assert (intent["status"], intent["verified"]) == ("completed", True)

    def test_the_model_prompt_never_sees_tool_rows(self, tmp_path: Path) -> None:
        turns = turns_of(write(tmp_path, fix_and_commit("fix the export", "On it.")))
        rendered = render_input(turns)
        assert "pytest" not in rendered
        assert "5b0e7d2" not in rendered
        assert rendered.count("\n\n") == 1  # one user block and one assistant block

    def test_a_meta_that_is_not_an_object_still_reads(self, tmp_path: Path) -> None:
        path = write(tmp_path, fix_and_commit("fix the export", "On it."))
        text = path.read_text(encoding="utf-8").replace('{"tool": "edit"}', '"edit"')
        path.write_text(text, encoding="utf-8")
        found: dict[str, Any] = summarize_turns(turns_of(path))
        [intent] = found["intents"]
        assert intent["verified"] is True


class TestPendingDecision:
    def test_an_unanswered_question_keeps_the_work_active(self, tmp_path: Path) -> None:
        rows = [
            *fix_and_commit("Add a --since flag to the export command", "On it."),
            ("a", "Done. Should --since take a date or a duration like 7d?"),
        ]
        [intent] = summary(tmp_path, rows)["intents"]
        assert intent["status"] == "active"
        first = intent["next_steps"][0]
        assert "--since take a date or a duration" in first["what"]

    def test_options_offered_in_spanish_are_a_decision_too(self, tmp_path: Path) -> None:
        rows = [
            ("u", "Agrega la columna moneda a facturas con una migración"),
            (
                "a",
                "Hay dos caminos:\n\n1. Actualizar el test.\n2. Fijar las columnas.\n\n¿Cuál preferís?",
            ),
        ]
        [intent] = summary(tmp_path, rows)["intents"]
        assert state(intent) != "done"
        assert "¿Cuál preferís?" in intent["next_steps"][0]["what"]

    def test_a_short_answer_to_the_question_continues_the_work(self, tmp_path: Path) -> None:
        rows = [
            *fix_and_commit("Corrige a paginação de GET /pedidos e commita", "Ok."),
            ("a", "Commitado. Não rodei a suíte; quer que eu tente pelo container?"),
            ("u", "Não precisa, amanhã eu testo na homologação."),
        ]
        found = summary(tmp_path, rows)["intents"]
        assert len(found) == 1
        assert found[0]["ranges"] == [[1, 2]]


class TestRoutineByTimestamp:
    def test_a_routine_asked_again_next_day_is_new_while_other_work_is_open(
        self, tmp_path: Path
    ) -> None:
        rows: list[Row] = [
            ("u", "morning. start today's reconciliation run please"),
            ("a", "Reconciliation for 2026-11-15: all lines matched. Result OK."),
            ("u", "next: we onboard Banco Austral. they send CAMT.053 xml, need a parser"),
            ("a", "Do you have a sample file?"),
            ("u", "not yet, continue tomorrow"),
            ("wait", 22),
            ("u", "today's reconciliation run pls"),
            ("a", "2026-11-16: 3 lines unmatched."),
        ]
        found = summary(tmp_path, rows)["intents"]
        assert [f["origin_turn"] for f in found] == [1, 2, 4]


class TestTitles:
    @pytest.mark.parametrize(
        ("text", "title"),
        [
            (
                "The CSV export drops rows whose customer name has a comma in it, since Monday",
                "The CSV export drops rows",
            ),
            (
                "Add a --since flag to the export command so that ops can pull recent rows only",
                "Add a --since flag to the export command",
            ),
        ],
    )
    def test_a_long_ask_is_cut_where_a_clause_ends(self, text: str, title: str) -> None:
        assert title_for(text) == title

    @pytest.mark.parametrize(
        ("text", "title"),
        [
            (
                "what I actually need: /pricing-old and /plans should 301",
                "/pricing-old and /plans should 301",
            ),
            (
                "Übrigens: der Bucket heißt eigentlich hv-backup-prod",
                "Der Bucket heißt eigentlich hv-backup-prod",
            ),
            ("fix the parser: it drops rows and dupes", "Fix the parser: it drops rows and dupes"),
            ("FOO-12: fix the login redirect loop", "FOO-12: fix the login redirect loop"),
        ],
    )
    def test_a_short_lead_announcing_the_ask_is_not_the_title(self, text: str, title: str) -> None:
        assert title_for(text) == title

    def test_a_colon_inside_a_redaction_tag_is_neither_a_lead_nor_a_cut(self) -> None:
        text = "DB_PASSWORD=[REDACTED: credential] is the deploy key for staging and prod hosts"
        assert title_for(text).startswith("DB_PASSWORD=[REDACTED: credential]")

    def test_never_cut_mid_phrase_and_never_over_the_limit(self) -> None:
        text = "Investigate the intermittent latency spikes in the checkout service during peak"
        out = fit_phrase(text)
        assert len(out) <= 60
        assert text.startswith(out)
        assert out == "Investigate the intermittent latency spikes"


class TestCiRedInProse:
    def test_other_jobs_passing_do_not_make_a_red_ci_green(self, tmp_path: Path) -> None:
        rows: list[Row] = [
            ("u", "fix the overflow in the tlv parser and push to main"),
            ("a", "Fixed `parse` with checked_add, tests pass. Pushed as 6a0f3d1."),
            ("u", "ci?"),
            ("a", "CI is red on the MSRV job (Rust 1.63). Stable and nightly jobs pass."),
        ]
        [intent] = summary(tmp_path, rows)["intents"]
        assert (intent["status"], intent["verified"]) == ("active", False)


class TestChecksAndRunsByName:
    def test_a_check_program_exiting_zero_verifies_the_routine(self, tmp_path: Path) -> None:
        rows: list[Row] = [
            ("u", "Bitte das nächtliche Backup prüfen, mit Restore-Test."),
            ("a", "Ich schaue es mir an."),
            ("call", "ssh restore-test-01 'sudo /opt/hv/bin/restore-check.sh 2026-10-12'", "bash"),
            (
                "result",
                "row count check: 214 tables, 0 mismatches\nRESTORE CHECK PASSED",
                "bash",
                0,
            ),
            ("a", "Backup 2026-10-12: 18,3 GiB, stabil."),
        ]
        [intent] = summary(tmp_path, rows)["intents"]
        assert (intent["status"], intent["verified"]) == ("completed", True)

    def test_running_the_changed_script_later_is_an_observed_run(self, tmp_path: Path) -> None:
        rows: list[Row] = [
            ("u", "retention.sh löscht nicht mehr richtig, bitte reparieren"),
            ("a", "Fehler gefunden."),
            ("call", "Edit /opt/hv/bin/retention.sh", "edit"),
            ("result", "line 12: quote the prefix", "edit", 0),
            ("call", "DRY_RUN=1 /opt/hv/bin/retention.sh", "bash"),
            ("result", "[dry-run] 67 prefixes", "bash", 0),
            ("a", "Soll ich es scharf laufen lassen?"),
            ("u", "Ja, los."),
            ("a", "Mache ich."),
            ("call", "/opt/hv/bin/retention.sh", "bash"),
            ("result", "deleted 67 prefixes", "bash", 0),
            ("a", "Erledigt."),
        ]
        [intent] = summary(tmp_path, rows)["intents"]
        assert (intent["status"], intent["verified"]) == ("completed", True)


class TestDropWithUndo:
    def test_revert_after_a_drop_is_part_of_the_drop_not_new_work(self, tmp_path: Path) -> None:
        rows: list[Row] = [
            ("u", "swap our custom logger for structlog in billing/. start w/ invoices module"),
            ("a", "Invoices module converted; 3 tests fail on caplog."),
            ("u", "hmm 47 files. nah forget it, not this sprint. revert"),
            ("a", "Reverted; working tree clean."),
            ("u", "instead: typo in dunning email subject, 'Reminer'. fix + push"),
            ("a", "Fixed and pushed (88e1a0c); dunning tests pass."),
        ]
        found = summary(tmp_path, rows)["intents"]
        assert [(f["origin_turn"], f["status"]) for f in found] == [
            (1, "abandoned"),
            (3, "completed"),
        ]
