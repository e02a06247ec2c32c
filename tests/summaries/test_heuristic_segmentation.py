"""The offline summarizer, one rule family at a time: Less eager segmentation, constraint phrasings and the reply's evidence in other words.

Split from the former test_heuristic.py; helpers in heuristic_cases.py. The labelled-set
figures live in test_heuristic_quality.py.
"""

import pytest

from summaries.core.heuristic import summarize_turns
from tests.summaries.heuristic_cases import (
    intents,
    session,
)


class TestLessEagerSegmentation:
    def test_a_refinement_after_a_passing_run_stays_in_the_intent(self) -> None:
        found = intents(
            session(
                ("u", "Add rate limiting to POST /api/signup: 5 per IP per hour."),
                ("a", "Added django-ratelimit on SignupView.post. `pytest accounts`: 58 passed."),
                ("u", "use redis for the counter, not the default cache. we run 6 web pods"),
                ("a", "Added a ratelimit cache alias on Redis. 60 passed."),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 2]]]

    def test_a_reaction_with_though_stays_in_the_intent(self) -> None:
        found = intents(
            session(
                ("u", "Gzip the nightly export files before the upload."),
                ("a", "Added gzip; files are 8x smaller. Ran the export: OK."),
                ("u", "the downstream loader chokes on .gz though"),
                ("a", "Updated the loader to read gzip. Reran the load: 1.2M rows loaded."),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 2]]]

    def test_a_report_that_it_works_after_a_close_stays_with_it(self) -> None:
        found = intents(
            session(
                ("u", "Speed up the nightly export, it times out."),
                ("a", "Added an index on created_at. The export ran in 4m. Merged and deployed."),
                ("wait", 20),
                ("u", "export ran fine overnight 👍"),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 1], [2, 2]]]

    def test_work_still_open_after_a_night_is_not_split(self) -> None:
        found = intents(
            session(
                ("u", "Port the billing cron to a Kubernetes CronJob."),
                (
                    "a",
                    "Wrote the CronJob manifest; still need to wire the secrets, looking into it.",
                ),
                ("wait", 15),
                ("u", "morning, wire the secrets from vault please"),
                ("a", "Mounted the vault secrets; a manual job run succeeded."),
            )
        )
        assert len(found) == 1

    def test_an_unrelated_question_after_finished_work_opens_its_own_intent(self) -> None:
        found = intents(
            session(
                ("u", "Document the allowlist in docs/runbooks/signup.md."),
                ("a", "Added an 'Allowlisted networks' section."),
                ("u", "LGTM"),
                ("u", "q: how many fake accounts got through before the limiter went in, roughly?"),
                ("a", "4,212 signups matching the bot pattern."),
            )
        )
        assert [i["ranges"] for i in found] == [[[1, 2]], [[3, 3]]]

    def test_an_added_ask_after_a_gap_does_not_reopen_finished_work(self) -> None:
        found = intents(
            session(
                ("u", "Rate-limit POST /api/signup, 5 per IP per hour."),
                ("a", "Added the limiter. 58 passed."),
                ("u", "ship it"),
                ("a", "Merged #981 and deployed."),
                ("u", "the welcome email still has the old logo, swap in logo-2026.png"),
                ("a", "Swapped the logo in welcome.html."),
                ("wait", 40),
                (
                    "u",
                    "back. can we also rate-limit password reset requests? same setup, 10/hour per IP",
                ),
                ("a", "Added the same limiter to PasswordResetView. 64 passed."),
            )
        )
        assert [i["origin_turn"] for i in found] == [1, 3, 4]

    def test_a_feasibility_question_taken_up_after_all_is_that_intents_origin(self) -> None:
        found = intents(
            session(
                (
                    "u",
                    "how hard would it be to give `pkgsync` a --dry-run flag? just curious, not for today",
                ),
                ("a", "Not hard: three write paths. About an hour with tests."),
                (
                    "u",
                    "ok. the thing bugging me today: `pkgsync pull` exits 0 when downloads fail. make it exit non-zero",
                ),
                ("a", "pull now exits 2 on any failed download. 88 passed."),
                ("u", "cool. let's do the dry run thing after all, go"),
                ("a", "Added --dry-run to pull and sync. 93 passed."),
            )
        )
        assert sorted((i["origin_turn"], tuple(map(tuple, i["ranges"]))) for i in found) == [
            (1, ((1, 1), (3, 3))),
            (2, ((2, 2),)),
        ]


class TestConstraintPhrasings:
    @pytest.mark.parametrize(
        ("text", "needle"),
        [
            ("roll it to prod. and remember prod only changes through argocd", "argocd"),
            ("don't ever run terraform apply locally, only through atlantis", "atlantis"),
            ("we use pnpm, not npm", "pnpm"),
            ("from now on, deploys go through the release pipeline only", "release pipeline"),
            ("make sure to bump the chart version whenever you touch the templates", "chart"),
            ("the migrations have to go through DATABASE_URL_BILLING", "DATABASE_URL_BILLING"),
            ("our runners are ubuntu-22.04, so keep runs-on as it is", "22.04"),
            ("we renamed the worker to ingest-worker", "ingest-worker"),
        ],
    )
    def test_a_standing_rule_in_other_words_is_a_constraint(self, text: str, needle: str) -> None:
        payload = summarize_turns(session(("u", text), ("a", "Noted.")))
        constraints = payload["constraints"]
        assert isinstance(constraints, list)
        assert any(needle in c for c in constraints), constraints

    @pytest.mark.parametrize(
        "text",
        [
            "upgrade postgres to 16 and make sure the migrations still apply cleanly",
            "for now, always skip the flaky test",
            "remember when we fixed the cache bug?",
            "use a dict here, not a list",
            "crash:\n```\nrequires permissions: FOREGROUND_SERVICE_DATA_SYNC must be declared\n```",
        ],
    )
    def test_a_wish_for_this_work_a_temporary_rule_or_a_paste_is_not(self, text: str) -> None:
        payload = summarize_turns(session(("u", text), ("a", "OK.")))
        assert payload["constraints"] == []


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("Argo CD synced media-svc-prod and reports Healthy.", "green"),
        ("Test upload of 40MB to prod: 201 Created.", "green"),
        ("Moved the tables to the archive schema; row counts match.", "green"),
        ("Upgraded to 9.2; lint passes.", "green"),
        ("CI on #615: all five Python versions green.", "green"),
        ("Rolled out to all 6 pods.", "close"),
        ("It went out with the 02:00 release train.", "close"),
        ("Swapped the logo in welcome.html.", "change"),
    ],
)
def test_reply_evidence_in_other_words(reply: str, kind: str) -> None:
    from summaries.core.heuristic.evidence import reply_evidence

    assert kind in [e.kind.value for e in reply_evidence(reply)]


@pytest.mark.parametrize(
    "reply",
    [
        "Not yet: main goes out with the nightly release train at 02:00.",
        "The import finished at 03:10 with 14 errors.",
        "A lockout after 5 failures is the default.",
    ],
)
def test_reply_evidence_without_a_pass_or_a_close(reply: str) -> None:
    from summaries.core.heuristic.evidence import reply_evidence

    kinds = [e.kind.value for e in reply_evidence(reply)]
    assert "green" not in kinds
    assert "close" not in kinds
