"""States of checks and questions read from structure (issue 11): what the person asked for
and whether they took the answer, not the words they asked it in."""

from __future__ import annotations

from tests.summaries.heuristic_cases import intents, session, signals_of, state


def test_a_terse_check_answered_and_acknowledged_is_done() -> None:
    # "morning. backup" is neither a question nor a request in any lexicon's eyes
    found = intents(
        session(
            ("u", "morning. backup"),
            ("a", "Last night's backup (10-26): 42.4 GB uploaded to the bucket, exit 0."),
            ("u", "ok"),
        )
    )
    assert [state(i) for i in found] == ["done"]
    assert found[0]["verified"] is None


def test_a_request_answered_and_acknowledged_without_a_change_stays_open() -> None:
    # the same shape with a request: nothing was made for it, so nothing is done
    found = intents(
        session(
            ("u", "add a retention rule for the backups bucket"),
            ("a", "Which retention period do you want, 30 or 90 days?"),
            ("u", "ok"),
        )
    )
    assert [state(i) for i in found] == ["in-progress"]


def test_a_standing_never_run_rule_is_not_a_report_of_an_unchecked_result() -> None:
    rule = signals_of("migrations are applied by the pipeline, so never run `alembic upgrade` here")
    assert not rule.deferred_check
    assert signals_of("I never tested it on staging").deferred_check


def test_a_question_followed_by_what_each_answer_changes_is_still_pending() -> None:
    found = intents(
        session(
            ("u", "write up a partitioning plan for the events table in docs/partitioning.md"),
            ("a", "Wrote docs/partitioning.md: monthly range partitions, backfill by month."),
            ("u", "would the nightly rollup get faster?"),
            (
                "a",
                "Only if it reads one day. Does the rollup recompute every day, or only"
                " yesterday? If it recomputes all, I'd add an incremental section. If only"
                " yesterday, the plan stands as is.",
            ),
        )
    )
    assert [state(i) for i in found] == ["in-progress"]
    assert found[0]["next_steps"][0]["what"].startswith("Answer the open question")


def test_words_of_any_script_are_whole_words_and_inverted_marks_start_sentences() -> None:
    from summaries.core.heuristic.words import content_words, sentences

    assert {"änderung", "konfiguration"} <= content_words("Änderung der Konfiguration")
    assert "paginação" in content_words("a paginação está duplicada")
    assert sentences("Perfecto. ¿Y podrías mandarlo?") == ["Perfecto.", "¿Y podrías mandarlo?"]


def test_dont_change_anything_in_other_languages_makes_a_question_a_feasibility_one() -> None:
    for text in (
        "Una pregunta, solo por curiosidad, no cambies nada: ¿sería difícil un binario único?",
        "Question, ne change rien pour l'instant : ce serait compliqué d'ajouter un export ?",
        "Nur aus Neugier, nichts ändern: wäre ein Export nach Excel viel Arbeit?",
        "Só por curiosidade, não mude nada: seria difícil exportar em Excel?",
    ):
        assert signals_of(text).feasibility, text


def test_titles_are_never_cut_inside_brackets_or_code_and_drop_greetings() -> None:
    from summaries.core.heuristic.compose import title_for

    said = "now the monthly finance exports for 2024 and 2025 (csv in s3) were made wrong"
    assert title_for(said) == "The monthly finance exports for 2024 and 2025"
    assert title_for("Bom dia! A rota GET /pedidos está repetindo itens").startswith("A rota")
    assert title_for("Hello again. now I would like a sweep on v7.1").startswith("I would like")
    names = "The README still documents the old env names like `LEDGER_DB_URL` and `LEDGER_TZ`"
    assert title_for(names) == "The README still documents the old env names"


def test_a_result_posted_where_its_readers_are_is_a_close() -> None:
    from summaries.core.heuristic.evidence import Ev, reply_evidence

    assert [e.kind for e in reply_evidence("Posted to #finance-ops.")] == [Ev.CLOSE]
    assert [e.kind for e in reply_evidence("Posted with the late-booking note.")] == [Ev.CLOSE]
    assert not reply_evidence("our duplicate was reversed, so it never posted to the ledger.")
    found = intents(
        session(
            ("u", "reconcile yesterday's payouts against the bank statement"),
            ("a", "2026-11-22 reconciled: 1,284 payouts, all matched, zero difference."),
            ("u", "great, post it in #finance-ops"),
            ("a", "Posted to #finance-ops."),
        )
    )
    assert [state(i) for i in found] == ["done"]


def test_it_works_in_other_languages_confirms_the_result() -> None:
    for text in ("Top, klappt bei mir auch. Danke!", "Merci, ça marche.", "Gracias, funciona."):
        assert signals_of(text).claims_works, text
    assert not signals_of("klappt nicht, gleicher Fehler").claims_works


def test_a_run_that_succeeds_is_a_pass() -> None:
    from summaries.core.heuristic.evidence import Ev, reply_evidence

    said = "Dry-run with the DNS challenge succeeds."
    assert [e.kind for e in reply_evidence(said)] == [Ev.GREEN]
    assert not reply_evidence("The dry-run never succeeds on that box.")


def test_forgetting_a_named_thing_drops_it() -> None:
    assert signals_of("mmh no. too much. forget catboost, we stay with lightgbm").drop
    assert signals_of("so let's forget about the sweep entirely").drop
    assert not signals_of("don't forget the changelog, please").drop
    assert not signals_of("forget-me-not is the name of the flower plugin").drop
