"""Standing-rule shapes found on blind batches 10 and 11 (issue 11): a sanctioned path, a
gate before an irreversible step, a version pin, "never by hand", a correction that names
the old value, rules in other languages; and the requests that only look like rules."""

from __future__ import annotations

import pytest

from tests.summaries.test_heuristic_constraints import constraints_of


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # "we use X" with its scope or the tool it replaces, in any language
        ("ok thanks. we use yarn in this repo, not npm", "yarn"),
        ("Ojo: usamos bun, no npm", "bun"),
        # the one path: "goes through", "passa da", "passe par", "üzerinden", "X only"
        ("Everything goes through the spinnaker pipeline, no exceptions.", "spinnaker"),
        ("Da noi tutto passa da Jenkins.", "jenkins"),
        ("Les mises en prod passent toujours par le pipeline release-prod.", "release-prod"),
        ("Her şey Flux üzerinden gidiyor.", "flux"),
        ("raise the replicas to 4. helmfile only, thanks", "helmfile"),
        # never by hand, in any language
        ("Nicht von Hand konfigurieren, alles kommt aus Puppet.", "puppet"),
        ("Non modificare mai i record in locale, usiamo octodns.", "octodns"),
        ("設定は手で変更しないで、chefで管理しています。", "chef"),
        # a gate before an irreversible step
        ("Kein helm upgrade bevor ich den Diff gesehen habe!", "diff"),
        ("Kör alltid diff och visa mig innan du gör deploy.", "deploy"),
        # a version the work may not go past
        ("fine, but MSRV stays 1.70, nothing newer", "1.70"),
        ("our minimum is Android 8, so guard anything newer", "android 8"),
        ("we stay on node 20, no experimental flags", "node 20"),
        # permission, habit and scope
        ("and don't bump dependencies without asking me first", "asking"),
        ("run make fmt before every push please", "make fmt"),
        ("no println in library code, only in examples", "println"),
        ("don't touch package.json versions, changesets does that", "changesets"),
        # how a kind of thing is done here, even beside a request
        ("speed it up. benchmarks use divan, compare against main", "divan"),
        ("the commit message needs the JIRA key in front, it's PAY-12", "jira key"),
        ("all schema changes go through Omar, so tag him on the PR.", "omar"),
        ("all stores are in America/Chicago, yes", "america/chicago"),
        # a correction that names the old value, in any language
        ("Prod körs i us-east-2, inte us-east-1.", "us-east-2"),
        ("bucket'\u0131n ad\u0131 logs değil, logs-archive", "logs-archive"),
        ("la base c'est MySQL 8, pas 5.7", "mysql 8"),
        ("yes, the queue is jobs-v2, the old jobs queue was torn down", "jobs-v2"),
        (
            "ah right, is app.settings.live. app.settings_prod was the old layout",
            "app.settings.live",
        ),
        ("kolumna to order_lines です。items は昔の名前です。", "order_lines"),
        ("de queue heet jobs-v2, niet jobs", "jobs-v2"),
    ],
)
def test_rule_shapes_are_constraints(text: str, needle: str) -> None:
    found = constraints_of(text)
    assert any(needle in c.lower() for c in found), found


@pytest.mark.parametrize(
    "text",
    [
        # a request that reads like "X go through" or "X only"
        "Deploy main to staging. Deploys go through ./run.sh staging",
        "Store only the user ids",
        "tests are red on main since the merge",
        # the old value alone, or a document naming it
        "3300 war der alte Port",
        "the README still documents the old name app_settings",
        # a one-off task said with a modal, and a change to make
        "The sms key must be rotated, they sent mail that old keys expire",
        "we must change the relay to the new one, relay-2.example.net, the old one stops soon",
        # "no, not X" carries no value
        "no, not UTC. The business day is Europe/Berlin.",
        # "don't touch" with nothing named is no rule
        "Minh already doing alerts in other ticket, don't touch",
    ],
)
def test_requests_and_old_values_are_not_constraints(text: str) -> None:
    found = constraints_of(text)
    assert not found, found


def test_a_correction_keeps_the_value_that_holds_not_the_old_one() -> None:
    found = constraints_of("Ja sorry, der heißt prod-euc1-b, prod-eu-1 war der alte.")
    assert any("prod-euc1-b" in c for c in found), found
    assert not any("prod-eu-1" in c for c in found), found


def test_an_owner_of_it_keeps_what_it_is() -> None:
    found = constraints_of("green. don't touch .gitlab-ci.yml, infra owns it")
    assert any("gitlab-ci" in c and "infra" in c for c in found), found


def test_before_every_run_is_standing_even_said_this_time() -> None:
    found = constraints_of("also make lint before every commit, you did it this time but keep on")
    assert any("make lint" in c.lower() for c in found), found
