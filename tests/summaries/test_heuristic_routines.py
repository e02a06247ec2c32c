"""Routines, dormant work and closes read from structure (issue 11): a routine asked again
on a later day is a new run, a dormant intent named again is resumed, and a turn whose reply
only commits, pushes or opens a PR closes the work before it, in any language."""

from __future__ import annotations

from tests.summaries.heuristic_cases import covered, intents, session


def test_a_routine_asked_word_for_word_on_a_later_day_is_a_new_run() -> None:
    # the work in hand (the alert) shares "nightly" with the routine: words alone tie
    found = intents(
        session(
            ("u", "nightly ok?"),
            ("a", "The nightly run finished at 04:10, 1.2M rows loaded, 3 tests passed."),
            ("u", "want a slack alert when the nightly fails"),
            ("a", "Which channel should it post to?"),
            ("u", "later. meeting"),
            ("wait", 20),
            ("u", "nightly ok?"),
            ("a", "The nightly run finished at 03:55, 1.3M rows loaded."),
        )
    )
    assert sorted(covered(i) for i in found) == [{1}, {2, 3}, {4}]


def test_the_routine_in_hand_asked_again_the_next_day_is_a_new_run() -> None:
    found = intents(
        session(
            ("u", "morning, backup check as usual"),
            ("a", "Last night's dump is 41 GB, uploaded to the bucket; all 3 checks passed."),
            ("u", "ok"),
            ("wait", 24),
            ("u", "morning. backup"),
            ("a", "Last night's dump is 42 GB, uploaded; all 3 checks passed."),
        )
    )
    assert sorted(covered(i) for i in found) == [{1, 2}, {3}]


def test_a_reply_that_only_opens_a_pr_closes_the_work_before_it_in_any_language() -> None:
    found = intents(
        session(
            ("u", "A rota GET /pedidos está repetindo o último item da página. Pode investigar?"),
            ("a", "Fixed the offset in api/pedidos.py; all 198 tests passed."),
            ("u", "Ótimo. Abre um PR para a branch homolog, não para a main."),
            ("a", "Opened PR #377 against homolog."),
        )
    )
    assert [covered(i) for i in found] == [{1, 2}]
    assert found[0]["status"] == "completed"


def test_a_commit_after_a_discussed_add_on_closes_the_work_that_was_done() -> None:
    # the add-on was only discussed (no change, no run): the commit is the first work's
    found = intents(
        session(
            ("u", "Necesito un script que genere el informe mensual de ventas en CSV."),
            ("a", "Created reports/ventas.py; 3 tests passed."),
            ("u", "Perfecto. ¿Y podrías además mandarlo por correo a contabilidad?"),
            ("a", "¿A qué dirección?"),
            ("u", "Hazle commit entonces"),
            ("a", "Committed 2be07a4."),
        )
    )
    first = next(i for i in found if 1 in covered(i))
    assert 3 in covered(first)
    assert first["status"] == "completed"


def test_a_long_new_request_after_a_close_is_not_related_by_three_common_words() -> None:
    # "data", "model", "feature" are in any long intent's vocabulary: a small share of a
    # long request, not a reason to keep it in the committed work
    found = intents(
        session(
            (
                "u",
                "The data loader in churn/data.py broke after the partition change. Please fix"
                " it so the model pipeline reads the curated data again.",
            ),
            ("a", "Fixed churn/data.py to read the event_date partitions; 12 tests passed."),
            ("u", "Wonderful, please commit that."),
            ("a", "Committed a1b2c3d."),
            (
                "u",
                "I'd like a baseline now. Could you train an XGBoost classifier on the current"
                " feature set from January to June, evaluate it on July partitions of curated data,"
                " and write the"
                " ROC-AUC, the confusion matrix and the top features into a model report?",
            ),
            ("a", "Trained it: ROC-AUC 0.812 on July. Wrote reports/baseline.md."),
        )
    )
    assert [covered(i) for i in found] == [{1, 2}, {3}]


def test_a_failure_told_in_the_works_own_words_the_next_day_reopens_it() -> None:
    found = intents(
        session(
            ("u", "the weekly_revenue report shows sunday sales on monday, fix the timezone"),
            ("a", "Fixed the bucketing in marts/weekly_revenue.sql; dbt test passed. Pushed."),
            ("u", "ok"),
            ("wait", 20),
            ("auto", "[cron notification] nightly FAILED at dbt test weekly_revenue"),
            ("u", "morning. weekly_revenue test fail :("),
            (
                "a",
                "The weekly total includes refunds, the daily one does not. Fixed it; dbt"
                " test passed.",
            ),
        )
    )
    assert [covered(i) for i in found] == [{1, 2, 3}]


def test_also_something_unrelated_after_a_commit_is_a_second_deliverable() -> None:
    found = intents(
        session(
            ("u", "thumbnailer workers maxed out at 4 pods. hpa max -> 12"),
            ("a", "Changed deploy/media/thumbnailer-hpa.yaml: max 12, applied."),
            ("u", "commit"),
            ("a", "Committed and pushed 0d4f7a2."),
            ("u", "also the queue alert threshold, 500 -> 2000 jobs"),
            ("a", "Changed deploy/media/alerts.yaml: threshold 2000. Committed and pushed."),
        )
    )
    assert [covered(i) for i in found] == [{1, 2}, {3}]


def test_a_turn_that_only_states_a_standing_rule_opens_nothing_in_any_language() -> None:
    found = intents(
        session(
            ("u", "Salut, restaure le dump de la base `compta` dans le conteneur de test."),
            ("a", "Restored the dump into test-pg: 184 211 rows in factures, 3 checks passed."),
            ("u", "Parfait, merci. Le script doit toujours tourner avec --target test-pg."),
            ("a", "Noted: always --target test-pg."),
        )
    )
    assert [covered(i) for i in found] == [{1, 2}]


def test_a_number_repeated_from_the_reply_just_given_follows_it_up() -> None:
    found = intents(
        session(
            ("u", "morning. start today's reconciliation run please"),
            ("a", "Run started: 2 files; 2 unmatched bank lines of 412.00 EUR each, 1 of 19.99."),
            ("u", "412 twice... probably the duplicate payout incident. check the payouts table"),
            ("a", "Yes: payouts 558120 and 558121 are the same transfer."),
        )
    )
    assert [covered(i) for i in found] == [{1, 2}]


def test_scratch_that_leave_it_right_after_the_ask_is_no_intent_not_a_dropped_one() -> None:
    found = intents(
        session(
            ("u", "can you make the login page support dark mode? the designers keep asking"),
            ("a", "Sure, looking at the login templates first."),
            ("u", "actually no, scratch that, the team is redoing the login flow. leave it"),
            ("a", "Understood, I haven't touched anything."),
            ("u", "real task: the preferences link in the newsletter template is 404"),
            ("a", "Changed templates/email/weekly.mjml; the email build passed."),
        )
    )
    assert [covered(i) for i in found] == [{3}]


def test_a_terse_order_naming_nothing_of_the_settled_work_opens_new_work() -> None:
    found = intents(
        session(
            ("u", "run pending migrations with --lock-timeout=3s"),
            ("a", "Applied 3 migrations; all checks passed."),
            ("u", "thanks"),
            ("u", "restart pay-gw"),
            ("a", "paygate restarted and healthy."),
        )
    )
    assert [covered(i) for i in found] == [{1, 2}, {3}]
    assert found[1]["status"] == "completed"


def test_a_drop_sharing_one_chance_word_with_older_work_drops_the_work_in_hand() -> None:
    found = intents(
        session(
            ("u", "log retention on the app hosts is 30 days, make it 14"),
            ("a", "Changed logrotate on app-1..4 to 14 days."),
            ("u", "new thing. I want a disk-usage alert for db-2 at 80%"),
            ("a", "Which pager route should it page?"),
            ("u", "not sure, need to ask Bram who owns the pager. leave it for now, end of day"),
            ("a", "OK, parked."),
        )
    )
    first = next(i for i in found if 1 in covered(i))
    assert covered(first) == {1}
    assert first["status"] != "abandoned"


def test_a_version_asked_about_follows_up_the_release_just_rolled_out() -> None:
    found = intents(
        session(
            ("u", "node_exporter upgrade to 1.9.1 on all hosts, canary db-r3 first"),
            ("a", "Bumped group_vars/all.yml. Deployed: db-r3 runs 1.9.1 and metrics are served."),
            ("u", "whats new in 1.9 btw, anything breaking?"),
            ("a", "Nothing breaking for our config."),
        )
    )
    assert [covered(i) for i in found] == [{1, 2}]


def test_a_close_of_new_work_is_not_handed_back_to_the_work_before_it() -> None:
    # "y" to "roll it out?" deploys the new work: no close word, nothing handed back
    found = intents(
        session(
            ("u", "free disk on build-runner-3"),
            ("a", "Pruned docker images: 61 GB freed; the disk check passed."),
            ("u", "ok"),
            ("u", "next: node_exporter to 1.9.1 everywhere"),
            ("a", "Pinned at 1.7.0. Roll out with the node_exporter role?"),
            ("u", "y"),
            ("a", "Deployed."),
        )
    )
    upgrade = next(i for i in found if 3 in covered(i))
    assert covered(upgrade) == {3, 4}
