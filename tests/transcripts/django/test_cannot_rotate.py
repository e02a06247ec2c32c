"""A session that cannot rotate is reported by ``verify_transcripts`` and on its admin
page, and the admin's "Rotate (forced)" action repairs it (issue 12, item 6)."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from transcripts.core.codec import MAX_LINE_BYTES
from transcripts.models import Session
from transcripts.runtime import get_store
from transcripts.services import session_append_row, session_create

pytestmark = pytest.mark.django_db
KEY = "dashboard:big-import"


@pytest.fixture
def stuck(settings: Any, kirocrew_home: Any) -> Session:
    """A session over the limit because of a line longer than any reader holds."""
    settings.TRANSCRIPT_FSYNC = "never"
    settings.TRANSCRIPT_MAX_BYTES = 256 * 1024
    slot = session_create(name="big-import", app=None)
    session_append_row(key=KEY, role="user", content="before")
    with get_store().path(KEY).open("ab") as fp:
        fp.write(b'{"role": "tool_result", "content": "' + b"z" * MAX_LINE_BYTES + b'"}\n')
    session_append_row(key=KEY, role="assistant", content="after")  # tries, and fails
    assert get_store().path(KEY).stat().st_size > 256 * 1024
    return slot.session


def verify() -> str:
    out = StringIO()
    try:
        call_command("verify_transcripts", stdout=out)
    except CommandError as exc:
        return out.getvalue() + str(exc)
    return out.getvalue()


def test_verify_reports_cannot_rotate(stuck: Session) -> None:
    text = verify()
    assert f"PROBLEM {KEY}: cannot_rotate: 1 oversize line(s)" in text


def test_the_admin_shows_it_and_the_forced_rotation_repairs_it(
    stuck: Session, admin_client: Client
) -> None:
    page = admin_client.get(reverse("admin:transcripts_session_change", args=[stuck.pk]))
    assert page.status_code == 200
    assert b"cannot_rotate" in page.content
    rows = get_store().read_session(KEY).rows
    response = admin_client.post(
        reverse("admin:transcripts_session_changelist"),
        {"action": "rotate_transcripts", "_selected_action": [stuck.pk]},
        follow=True,
    )
    assert response.status_code == 200
    assert get_store().path(KEY).stat().st_size < 256 * 1024
    assert get_store().read_session(KEY).rows == rows
    assert "cannot_rotate" not in verify()
    page = admin_client.get(reverse("admin:transcripts_session_change", args=[stuck.pk]))
    assert b"cannot_rotate" not in page.content
