"""GET /api/chat/search: what was said is found, by its owner only, as it changes."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.core.management import call_command

from kirocrew_site.search import services
from tests.search.conftest import Caller


def _snippet(hit: dict[str, Any]) -> str:
    return "".join(part["text"] for part in hit["snippet"])


def test_a_row_is_found_once_appended_with_its_turn_and_highlight(
    apps: tuple[Caller, Caller],
) -> None:
    alpha, _ = apps
    assert alpha.found("postgres") == []
    alpha.turn("alpha-1", "Which database should we use?", "Let us keep SQLite for now.")
    stamps = alpha.turn(
        "alpha-1", "Then what about later?", "We decided on PostgreSQL for production."
    )

    [hit] = alpha.found("postgresql decide")  # every word, stemmed: "decide" finds "decided"
    assert hit["slot"] == "alpha-1"
    assert hit["turn"] == 2
    assert hit["ts"] == stamps[1]
    assert hit["role"] == "assistant"
    assert "decided on" in _snippet(hit)
    assert [p["text"] for p in hit["snippet"] if p["hit"]] == ["decided", "PostgreSQL"]


def test_an_app_never_sees_another_apps_text(apps: tuple[Caller, Caller]) -> None:
    alpha, beta = apps
    alpha.turn("alpha-1", "Rotate the kangaroo credentials", "Rotated the kangaroo keys.")
    beta.turn("beta-1", "Feed the kangaroo", "The kangaroo was fed.")
    beta.turn("beta-1", "Only beta says wombat", "Wombat noted.")

    assert {hit["slot"] for hit in alpha.found("kangaroo")} == {"alpha-1"}
    assert len(alpha.found("kangaroo")) == 2  # its own two rows, never beta's
    assert {hit["slot"] for hit in beta.found("kangaroo")} == {"beta-1"}
    assert alpha.found("wombat") == []  # not even an empty hit for the foreign session
    body = alpha.search("wombat").content.decode()
    assert "beta" not in body.lower()


def test_a_dashboard_user_searches_every_session(
    dashboard: Caller, apps: tuple[Caller, Caller]
) -> None:
    alpha, beta = apps
    alpha.turn("alpha-1", "Pick a colour", "Chartreuse it is.")
    beta.turn("beta-1", "Pick another", "Chartreuse again.")
    assert {hit["slot"] for hit in dashboard.found("chartreuse")} == {"alpha-1", "beta-1"}


def test_rewind_removes_the_dropped_rows_from_the_index(apps: tuple[Caller, Caller]) -> None:
    alpha, _ = apps
    kept = alpha.turn("alpha-1", "Plan the migration", "Plan: copy then switch.")
    alpha.turn("alpha-1", "Actually use the flamingo approach", "Flamingo approach adopted.")
    assert len(alpha.found("flamingo")) == 2

    alpha.post("/api/chat/slots/alpha-1/rewind", {"after_ts": kept[-1]})

    assert alpha.found("flamingo") == []
    assert [hit["turn"] for hit in alpha.found("plan")] == [1, 1]
    alpha.turn("alpha-1", "Then the heron approach", "Heron it is.")
    [question, answer] = alpha.found("heron")
    assert {question["turn"], answer["turn"]} == {2}  # numbered after the rewind, not before


def test_a_revision_replaces_the_rows_indexed_text(apps: tuple[Caller, Caller]) -> None:
    alpha, _ = apps
    stamps = alpha.turn("alpha-1", "Summarise the plan", "Draft: use the pelican parser.")
    alpha.post(
        f"/api/chat/slots/alpha-1/rows/{stamps[1]}/revisions",
        {"patch": {"content": "Final: use the albatross parser."}},
    )
    assert alpha.found("pelican") == []
    [hit] = alpha.found("albatross")
    assert hit["ts"] == stamps[1]
    assert hit["turn"] == 1


def test_a_deleted_session_leaves_no_hit(apps: tuple[Caller, Caller], dashboard: Caller) -> None:
    alpha, _ = apps
    alpha.turn("alpha-1", "Remember the ocelot", "Ocelot remembered.")
    assert alpha.found("ocelot")
    response = alpha.client.delete("/api/chat/slots/alpha-1")
    assert response.status_code == 204
    assert alpha.found("ocelot") == []
    assert dashboard.found("ocelot") == []


def test_bad_queries_get_the_json_envelope(apps: tuple[Caller, Caller]) -> None:
    alpha, _ = apps
    cases: list[dict[str, str | int]] = [
        {"q": ""},
        {"q": "  ?! "},
        {"q": "x" * 201},
        {"q": "ok", "limit": 0},
        {"q": "ok", "limit": "many"},
        {"q": " ".join(f"w{i}" for i in range(13))},
    ]
    for params in cases:
        response = alpha.client.get("/api/chat/search", params)
        assert response.status_code == 422, (params, response.content)
        assert response.json()["code"] == "invalid_request"


def test_engine_syntax_in_a_query_is_searched_as_words(apps: tuple[Caller, Caller]) -> None:
    alpha, _ = apps
    alpha.turn("alpha-1", "The text column holds NEAR data", "Noted: text NEAR data.")
    # FTS5 would read these as syntax (a column filter, NEAR, a phrase, a prefix, NOT).
    for q in ("text: NEAR(data", '"near', "data*", "NOT near", "AND OR"):
        response = alpha.search(q)
        assert response.status_code == 200, (q, response.content)
    assert len(alpha.found("text: NEAR(data")) == 2


def test_rebuild_restores_the_index_from_the_files(apps: tuple[Caller, Caller]) -> None:
    from kirocrew_site.search.models import SearchDoc, SearchMark

    alpha, _ = apps
    alpha.turn("alpha-1", "Note the quokka", "Quokka noted.")
    SearchDoc.objects.all().delete()
    SearchMark.objects.all().delete()
    assert alpha.found("quokka") == []

    call_command("search_rebuild")

    assert len(alpha.found("quokka")) == 2
    alpha.turn("alpha-1", "And the quokka again", "Again.")  # appends continue from the mark
    assert len(alpha.found("quokka")) == 3


def test_a_stored_summary_is_searched_while_summaries_are_on(
    apps: tuple[Caller, Caller], configure: Any
) -> None:
    alpha, beta = apps
    configure(enabled=True, min_user_turns=1)
    alpha.turn("alpha-1", "Migrate the billing service to the narwhal queue", "Started.")
    hits = alpha.found("narwhal")
    summary = [hit for hit in hits if hit["kind"] == "summary"]
    assert summary, hits  # the heuristic's intent title repeats the person's words
    assert summary[0]["slot"] == "alpha-1"
    assert summary[0]["turn"] == 1
    assert beta.found("narwhal") == []

    configure(enabled=False)  # the flag gates reads: no summary text while it is off
    assert {hit["kind"] for hit in alpha.found("narwhal")} == {"row"}


def test_a_row_is_found_while_its_turn_still_runs(apps: tuple[Caller, Caller]) -> None:
    alpha, _ = apps
    alpha.post("/api/chat/slots/alpha-1/turns", {"content": "Start the lemur job"})
    alpha.post("/api/chat/slots/alpha-1/rows", {"role": "tool", "content": "lemur job queued"})
    assert {hit["role"] for hit in alpha.found("lemur")} == {"user", "tool"}


def test_imported_sessions_are_searchable_with_their_archived_rows(
    apps: tuple[Caller, Caller], dashboard: Caller, fixture_tree: Any
) -> None:
    call_command("import_transcripts", str(fixture_tree))

    # The original's answer to "why SSE?" lives in a rotation archive of research-notes.
    hits = dashboard.found("reason SSE WebSocket")
    assert [(hit["slot"], hit["turn"], hit["role"]) for hit in hits][:1] == [
        ("research-notes", 1, "user")
    ]
    assert dashboard.found("orphan daemon SIGHUP")[0]["slot"] == "triage-demo"
    alpha, _ = apps
    assert alpha.found("orphan daemon") == []  # imported without an app: no app's text


def test_a_rotation_keeps_the_index_without_rebuilding_it(
    apps: tuple[Caller, Caller], settings: Any
) -> None:
    from kirocrew_site.search.models import SearchDoc
    from transcripts.models import Slot
    from transcripts.services import session_rotate

    alpha, _ = apps
    alpha.turn("alpha-1", "Keep the dingo note", "Dingo note kept.")
    alpha.turn("alpha-1", "And the emu note", "Emu note kept.")
    before = set(SearchDoc.objects.values_list("id", flat=True))

    key = Slot.objects.get(name="alpha-1").session.key
    settings.TRANSCRIPT_KEEP_LINES = 2
    assert session_rotate(key=key, force=True) > 0  # rows moved into an archive

    assert set(SearchDoc.objects.values_list("id", flat=True)) == before  # not rebuilt
    assert [hit["turn"] for hit in alpha.found("dingo")] == [1, 1]  # archived rows still found
    alpha.turn("alpha-1", "Then the koala note", "Koala note kept.")
    assert {hit["turn"] for hit in alpha.found("koala")} == {3}


def test_an_old_match_is_found_behind_newer_rows_that_do_not_match(
    apps: tuple[Caller, Caller], monkeypatch: Any
) -> None:
    from kirocrew_site.search import selectors

    # Ranking looks at the newest RANK_WINDOW matches: matches, not rows.
    monkeypatch.setattr(selectors, "RANK_WINDOW", 2)
    alpha, _ = apps
    alpha.turn("alpha-1", "The gecko decision", "Gecko chosen.")
    for n in range(3):
        alpha.turn("alpha-1", f"Unrelated {n}", f"Nothing here {n}.")
    assert {hit["turn"] for hit in alpha.found("gecko")} == {1}
    assert len(alpha.found("gecko")) == 2


def test_a_session_longer_than_a_page_is_indexed_through_its_end(
    apps: tuple[Caller, Caller],
) -> None:
    from kirocrew_site.search.models import SearchMark
    from kirocrew_site.search.services import PAGE_ROWS, search_index_session
    from transcripts.models import Session
    from transcripts.services import session_append_rows

    alpha, _ = apps
    session = Session.objects.get(key="dashboard:alpha-1")
    rows: list[dict[str, Any]] = []
    for n in range(1, PAGE_ROWS + 2):  # every two rows a turn: well past two pages
        rows.append({"role": "user", "content": f"question {n}"})
        rows.append(
            {"role": "assistant", "content": f"answer {n}" + (" jackal" if n == 490 else "")}
        )
    session_append_rows(key=session.key, rows=rows)  # one write, announced to nobody

    assert search_index_session(session) == len(rows)
    assert SearchMark.objects.get(session=session).turns == PAGE_ROWS + 1
    [hit] = alpha.found("jackal")
    assert hit["turn"] == 490  # the count carried across page boundaries


def test_a_failed_index_update_at_a_turn_end_is_logged_as_the_turn_ends(
    apps: tuple[Caller, Caller], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The catch-up a turn end runs (rows written without an announcement) names its own
    receiver when it fails, so the log tells a turn end's failure from an append's."""
    alpha, _ = apps

    def index_down(session: Any) -> int:
        raise RuntimeError("index down")

    monkeypatch.setattr(services, "search_index_session", index_down)
    with caplog.at_level(logging.ERROR, logger="kirocrew_site.search.receivers"):
        alpha.turn("alpha-1", "Is the index up?", "Not right now.")
    messages = [record.getMessage() for record in caplog.records]
    assert "search index update failed (on_turn_ended)" in messages
    assert "search index update failed (on_rows_appended)" in messages
