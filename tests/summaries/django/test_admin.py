"""Summaries' admin: its inline and "Summarize now" reach the session admin through the
extension point transcripts documents (``transcripts.admin.session_admin_extend``), and
the summary state is editable so an operator can clear a stuck marker."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from summaries.models import IntentSummary
from summaries.services import summary_generate
from summaries.state import summary_in_flight_until
from tests.fixtures.summary_state import in_flight_set
from transcripts.models import Session, Slot

pytestmark = pytest.mark.django_db


def test_summarize_now_is_a_session_action_that_summarizes_one_session(
    admin_client, enabled_summaries, make_slot, backend
):
    make_slot("s1", turns=2)
    make_slot("s2", turns=2)
    changelist = reverse("admin:transcripts_session_changelist")
    assert b"Summarize now (one session)" in admin_client.get(changelist).content

    both = list(Session.objects.values_list("pk", flat=True))
    refused = admin_client.post(
        changelist, {"action": "summarize_now", "_selected_action": both}, follow=True
    )
    assert b"summaries are never generated in batch" in refused.content
    assert backend.calls == 0

    one = Slot.objects.get(name="s1").session_id
    done = admin_client.post(
        changelist, {"action": "summarize_now", "_selected_action": [one]}, follow=True
    )
    assert b"A new summary of s1 was written." in done.content  # a sentence, not "S1: stored"
    assert backend.calls == 1
    again = admin_client.post(
        changelist, {"action": "summarize_now", "_selected_action": [one]}, follow=True
    )
    assert b"The summary of s1 is already up to date." in again.content

    page = admin_client.get(reverse("admin:transcripts_session_change", args=[one]))
    assert IntentSummary.objects.filter(session_id=one).exists()
    assert b"Intent summary" in page.content  # the inline, on transcripts' session page


def test_a_stuck_marker_is_cleared_from_the_summary_state_admin(admin_client, make_slot):
    slot = make_slot("s1", turns=1)
    in_flight_set(slot.pk, timezone.now() + dt.timedelta(minutes=5))
    changelist = admin_client.get(reverse("admin:summaries_summarystate_changelist"))
    assert changelist.status_code == 200

    url = reverse("admin:summaries_summarystate_change", args=[slot.pk])
    response = admin_client.post(
        url, {"turn_mark": 0, "in_flight_until_0": "", "in_flight_until_1": ""}
    )
    assert response.status_code == 302, response.content
    assert summary_in_flight_until(Slot.objects.get(pk=slot.pk)) is None


def test_the_intent_summary_admin_shows_what_the_checks_did(
    admin_client, enabled_summaries, make_slot, backend
):
    make_slot("s1", turns=2)
    # A title over the limit and a rule nobody stated: both corrected before storing.
    backend.reply = (
        '{"intents": [{"title": "' + "word " * 30 + '", "ranges": [[1, 2]]}],'
        ' "constraints": ["Deploy only on Fridays"]}'
    )
    assert summary_generate(slot_name="s1").ok
    summary = IntentSummary.objects.get()
    changelist = admin_client.get(reverse("admin:summaries_intentsummary_changelist"))
    assert b"constraints_dropped=1 titles_cut=1" in changelist.content
    page = admin_client.get(reverse("admin:summaries_intentsummary_change", args=[summary.pk]))
    assert b"constraints_dropped=1 titles_cut=1" in page.content
