"""Sessions list and session page, through Django's test client."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from kirocrew_site.dashboard.positions import Position
from summaries.models import IntentSummary, OneLineSummary
from transcripts.services import app_create

pytestmark = pytest.mark.django_db

TWO_TURNS = [
    ("user", "Fix the login bug please."),
    ("assistant", "Looking at it."),
    ("tool_call", "grep -n login src/auth.py"),
    ("tool_result", "12: def login(request):"),
    ("user", "[cron notification] nightly job finished"),
    ("user", "Now add a test."),
    ("assistant", "Added; the key was sk-ant-abcdefghijklmnopqrstuvwx and is now gone."),
]


def page_state(body: str) -> Any:
    found = re.search(r'id="page-state" type="application/json">(.*?)</script>', body)
    assert found is not None
    return json.loads(found.group(1))


def mirror_summary(slot: Any, states: str, gist: str) -> None:
    from django.utils import timezone

    session = slot.session
    IntentSummary.objects.create(
        session=session,
        payload={},
        sig=session.sig,
        gen=session.gen,
        generated_at=timezone.now(),
        states=states,
        intent_count=len(states.split(",")),
    )
    OneLineSummary.objects.create(
        session=session,
        summary=gist,
        sig=session.sig,
        gen=session.gen,
        generated_at=timezone.now(),
    )


@pytest.mark.parametrize("path", ["/", "/s/anything/", "/settings/"])
def test_pages_need_a_login(path: str, db: Any) -> None:
    response = Client().get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


def test_login_page_and_logout(user: Any) -> None:
    client = Client()
    page = client.get("/login/")
    assert page.status_code == 200
    assert b'name="username"' in page.content
    assert b"csrfmiddlewaretoken" in page.content
    # The hint works in a fresh checkout: django is only installed in the venv.
    assert b"<code>.venv/bin/python manage.py createsuperuser</code>" in page.content
    response = client.post("/login/", {"username": "reader", "password": "pw-reader-123"})
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert client.get("/").status_code == 200
    assert client.post("/logout/").status_code == 302
    assert client.get("/").status_code == 302


def test_wrong_password_is_explained(user: Any) -> None:
    response = Client().post("/login/", {"username": "reader", "password": "nope"})
    assert response.status_code == 200
    assert b'role="alert"' in response.content


def test_empty_list_says_how_to_import_or_start(client_in: Client, store: Any) -> None:
    body = client_in.get("/").content.decode()
    assert "No sessions yet" in body
    assert ".venv/bin/python manage.py import_transcripts PATH" in body
    assert ".venv/bin/python manage.py create_app NAME" in body
    assert "POST /api/chat/slots" in body


def test_list_newest_first_with_gist_chips_and_counts(
    client_in: Client, make_session: Any, enabled_summaries: Any
) -> None:
    old = make_session("older", TWO_TURNS, title="Older session")
    new = make_session("newer", [("user", "hello there")], title="Newer session")
    mirror_summary(old, "needs-you,done,done", "Fix the login bug [needs-you] (+2 more)")
    body = client_in.get("/").content.decode()
    assert body.index("Newer session") < body.index("Older session")
    assert "Fix the login bug [needs-you] (+2 more)" in body
    assert "1 Needs you" in body
    assert "2 Done" in body
    assert 'href="/s/older/"' in body
    assert 'href="/s/newer/"' in body
    assert new.session.user_turns == 1
    assert re.search(r"<dt>Turns</dt><dd>2</dd>", body)  # automation is not a turn


def test_list_hides_summaries_when_the_feature_is_off(client_in: Client, make_session: Any) -> None:
    slot = make_session("s1", TWO_TURNS, title="Only session")
    mirror_summary(slot, "done", "A gist nobody should see")
    body = client_in.get("/").content.decode()
    assert "Only session" in body
    assert "A gist nobody should see" not in body
    assert 'name="state"' not in body


def test_list_filters_by_search_app_and_state(
    client_in: Client, make_session: Any, enabled_summaries: Any
) -> None:
    alice = app_create(name="alice")[0]
    make_session("a1", [("user", "x")], title="Alpha release", app=alice)
    beta = make_session("b1", [("user", "y")], title="Beta fixes")
    mirror_summary(beta, "in-progress,dropped", "beta gist")

    def titles(query: str) -> set[str]:
        body = client_in.get("/" + query).content.decode()
        return {t for t in ("Alpha release", "Beta fixes") if t in body}

    assert titles("") == {"Alpha release", "Beta fixes"}
    assert titles("?q=alpha") == {"Alpha release"}
    assert titles("?app=alice") == {"Alpha release"}
    assert titles("?app=-") == {"Beta fixes"}
    assert titles("?app=nobody") == set()
    assert titles("?state=dropped") == {"Beta fixes"}
    assert titles("?state=done") == set()
    body = client_in.get("/?q=zzz").content.decode()
    assert "No sessions match" in body
    assert "Clear the filters" in body


def test_session_page_renders_turn_anchors_tools_and_redactions(
    client_in: Client, make_session: Any
) -> None:
    make_session("s1", TWO_TURNS, title="Login work")
    response = client_in.get("/s/s1/")
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="turn-1"' in body
    assert 'id="turn-2"' in body
    assert 'id="turn-3"' not in body  # the cron row is automation, not a turn
    assert body.count("<details>") >= 3  # two tool rows and the automation row, collapsed
    assert '<mark class="redacted">[REDACTED: credential]</mark>' in body
    assert "sk-ant-" not in body
    state = page_state(body)
    assert state["slot"] == "s1"
    assert '<span id="turn-count">2 turns</span>' in body
    assert state["running"] is False
    assert state["summary"]["enabled"] is False
    # Where live rows continue from: a position the JS echoes, never reads.
    position = Position.parse(state["cursor"])
    assert position.turns == 2
    assert position.after == re.findall(r'data-cursor="([^"]*)"', body)[-1]


def test_session_page_text_is_escaped(client_in: Client, make_session: Any) -> None:
    make_session("s1", [("user", "<script>alert(1)</script>")], title="<b>bold</b>")
    body = client_in.get("/s/s1/").content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<b>bold</b>" not in body


def test_fold_report_skipped_lines_are_a_warning(
    client_in: Client, make_session: Any, store: Any
) -> None:
    slot = make_session("s1", [("user", "first"), ("assistant", "answer")])
    with store.path(slot.session.key).open("ab") as fh:
        fh.write(b"this is not json\n\n")
    body = client_in.get("/s/s1/").content.decode()
    assert 'id="fold-warning"' in body
    assert "2 lines of this transcript could not be read and were skipped" in body
    assert "not valid JSON" in body
    assert "blank line" in body


def test_clean_transcript_has_no_warning(client_in: Client, make_session: Any) -> None:
    make_session("s1", [("user", "first")])
    assert b'id="fold-warning"' not in client_in.get("/s/s1/").content


def test_unknown_session_is_404(client_in: Client, store: Any) -> None:
    assert client_in.get("/s/nope/").status_code == 404


def test_a_404_page_leads_back_to_the_sessions_and_tells_nothing_more(
    client_in: Client, store: Any
) -> None:
    for path in ("/s/nope/", "/no/such/page/"):
        response = client_in.get(path)
        assert response.status_code == 404
        body = response.content.decode()
        assert "<title>Not found · Kiro Crew</title>" in body
        assert '<a class="btn" href="/">Back to sessions</a>' in body
        assert 'data-page="not-found"' in body  # the dashboard script attaches nothing here
        assert "no such session" not in body  # the exception text stays on the server
        assert path not in body  # nor is the request echoed
    anonymous = Client().get("/no/such/page/")
    assert anonymous.status_code == 404
    assert "Back to sessions" in anonymous.content.decode()
    assert "Log out" not in anonymous.content.decode()
    api = Client().get("/api/no/such/")  # API callers still parse JSON
    assert api.status_code == 404
    assert api.json() == {"error": "not found", "code": "not_found"}


def test_summary_panel_state_is_embedded(
    client_in: Client, make_session: Any, enabled_summaries: Any
) -> None:
    make_session("s1", [("user", "only one")])
    body = client_in.get("/s/s1/").content.decode()
    state = page_state(body)
    assert state["summary"]["enabled"] is True
    assert state["summary"]["generate_state"] == "too_few_turns"
    assert 'id="summary-toggle"' in body
    assert "hidden>Summary</button>" not in body


def test_static_files_are_vendored(client_in: Client) -> None:
    body = client_in.get("/login/").content.decode()
    for ref in re.findall(r'(?:href|src)="([^"]+)"', body):
        assert not ref.startswith(("http://", "https://", "//")), ref
