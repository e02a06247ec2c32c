"""Admin pages render for every model; the session page shows the folded transcript."""

from __future__ import annotations

import hashlib
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from transcripts.models import App, Session, Slot
from transcripts.services import (
    security_event_record,
    session_append_row,
    session_create,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def populated(store, fixture_tree, alice):
    call_command("import_transcripts", str(fixture_tree), stdout=StringIO())
    slot = session_create(name="xss", title="<b>bold</b>", app=alice)
    session_append_row(key=slot.session.key, role="assistant", content="<script>alert(1)</script>")
    security_event_record(caller="app:bob", operation="slot_read", resource="xss")
    return store


@pytest.mark.parametrize("model", ["app", "session", "slot", "securityevent"])
def test_changelists_render(admin_client, populated, model):
    response = admin_client.get(reverse(f"admin:transcripts_{model}_changelist"))
    assert response.status_code == 200
    searched = admin_client.get(reverse(f"admin:transcripts_{model}_changelist"), {"q": "x"})
    assert searched.status_code == 200


def test_change_pages_render(admin_client, populated):
    for obj in (App.objects.first(), Slot.objects.first(), *Session.objects.all()[:1]):
        assert obj is not None
        url = reverse(f"admin:transcripts_{obj._meta.model_name}_change", args=[obj.pk])
        assert admin_client.get(url).status_code == 200
    event = populated and admin_client.get(reverse("admin:transcripts_securityevent_changelist"))
    assert b"slot_read" in event.content


def test_session_page_shows_transcript_and_report(admin_client, populated):
    session = Session.objects.get(key="dashboard:research-notes")
    page = admin_client.get(reverse("admin:transcripts_session_change", args=[session.pk]))
    html = page.content.decode()
    assert "What was the original reason we went with SSE" in html  # an archived row
    assert "archive/research-notes__20251220-090000.jsonl" in html  # read order
    assert "Transcript (folded)" in html
    assert "Fold report" in html
    assert "2025-11-02T15:45:00+00:00" in html


def test_session_page_escapes_content(admin_client, populated):
    session = Session.objects.get(key="dashboard:xss")
    html = admin_client.get(
        reverse("admin:transcripts_session_change", args=[session.pk])
    ).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_long_transcripts_show_both_ends(admin_client, store):
    slot = session_create(name="long", app=None)
    from transcripts.services import session_append_rows

    session_append_rows(
        key=slot.session.key,
        rows=[{"role": "user", "content": f"row-{i:04d}"} for i in range(450)],
    )
    html = admin_client.get(
        reverse("admin:transcripts_session_change", args=[slot.session.pk])
    ).content.decode()
    assert "row-0000" in html
    assert "row-0449" in html
    assert "row-0225" not in html
    assert "50 rows not shown" in html


def test_sessions_are_read_only(admin_client, populated):
    assert admin_client.get(reverse("admin:transcripts_session_add")).status_code == 403
    session = Session.objects.first()
    assert session is not None
    url = reverse("admin:transcripts_session_delete", args=[session.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 403
    assert Session.objects.filter(pk=session.pk).exists()


def test_app_token_is_shown_once(admin_client, db):
    response = admin_client.post(
        reverse("admin:transcripts_app_add"), {"name": "from-admin"}, follow=True
    )
    assert response.status_code == 200
    app = App.objects.get(name="from-admin")
    shown = [str(m) for m in response.context["messages"]]
    token = next(m for m in shown if "Token for app" in m).split("<code>")[1].split("</code>")[0]
    assert hashlib.sha256(token.encode()).hexdigest() == app.token_hash
    assert token.startswith(app.token_prefix)
    again = admin_client.get(reverse("admin:transcripts_app_changelist"))
    assert token not in again.content.decode()
    assert app.token_prefix in again.content.decode()
    change = admin_client.get(reverse("admin:transcripts_app_change", args=[app.pk]))
    assert token not in change.content.decode()
    assert app.token_hash not in change.content.decode()


def _action(admin_client, action: str, *sessions: Session):
    return admin_client.post(
        reverse("admin:transcripts_session_changelist"),
        {"action": action, "_selected_action": [s.pk for s in sessions]},
        follow=True,
    )


def test_verify_action(admin_client, populated):
    starter = Session.objects.get(key="dashboard:starter")
    triage = Session.objects.get(key="dashboard:triage-demo")
    Session.objects.filter(pk=triage.pk).update(row_count=1)
    response = _action(admin_client, "verify_transcripts", starter, triage)
    shown = [str(m) for m in response.context["messages"]]
    # Named by slot, in words: never "dashboard:starter: ok".
    assert "Session 'starter': transcript verified, no problems found" in shown
    assert any(m.startswith("Session 'triage-demo': drift") for m in shown)


def test_rotate_action(admin_client, populated):
    starter = Session.objects.get(key="dashboard:starter")
    response = _action(admin_client, "rotate_transcripts", starter)
    shown = [str(m) for m in response.context["messages"]]
    assert "Session 'starter': rotated, 0 rows archived" in shown
    assert Session.objects.get(pk=starter.pk).gen == 1
