"""The whole turn loop through the HTTP API on PostgreSQL: create a slot, start a turn with
the user's row, append the assistant's row, end the turn; the commit dispatches the
summary pass (inline here), which stores the sidecars and mirrors them into PostgreSQL;
GET serves it. Transactional: the pass is dispatched by an on-commit callback."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from summaries.core.sidecar import INTENTS, ONE_LINE, read_strict
from summaries.models import IntentSummary, OneLineSummary
from summaries.state import summary_in_flight_until, summary_turn_mark
from transcripts.models import Session, Slot
from transcripts.runtime import get_store
from transcripts.services import app_create

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

ASKS = [
    "Please add a CSV export button to the orders report page.",
    "Now paginate the export so it works on tables with a million rows.",
]
ANSWERS = [
    "Added the CSV export button; the export test passes.",
    "The export streams in pages of 5 000 rows now; the load test passes.",
]


class Api:
    def __init__(self, client: Client, token: str) -> None:
        self.client = client
        self.headers = {"Authorization": f"Bearer {token}"}

    def __call__(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = json.dumps(body) if body is not None else ""
        response = self.client.generic(
            method, path, data, content_type="application/json", headers=self.headers
        )
        return response.status_code, json.loads(response.content) if response.content else None


@pytest.fixture
def api(client: Client, services_home, on_postgres, eager_tasks) -> Api:
    _app, token = app_create(name="looper")
    return Api(client, token)


def turn(api: Api, slot: str, ask: str, answer: str) -> None:
    base = f"/api/chat/slots/{slot}"
    status, body = api("POST", f"{base}/turns", {"content": ask})
    assert status == 201, body
    status, body = api("POST", f"{base}/rows", {"role": "assistant", "content": answer})
    assert status == 201, body
    status, body = api("POST", f"{base}/turns/end", {"stop_reason": "end_turn"})
    assert status == 200, body


def test_a_turn_through_the_api_stores_a_summary_and_its_mirror_rows(api):
    status, body = api("POST", "/api/chat/slots", {"name": "loop"})
    assert status == 201, body

    turn(api, "loop", ASKS[0], ANSWERS[0])

    slot = Slot.objects.select_related("session", "app").get(name="loop")
    key = slot.session.key
    store = get_store()
    data = read_strict(store, key, INTENTS)
    assert data is not None, "the turn end's pass stored no summary"
    assert data["user_turns"] == 1
    assert data["model"] == "heuristic"
    gist = read_strict(store, key, ONE_LINE)
    assert gist is not None
    identity = store.identity(key)
    assert identity is not None

    mirror = IntentSummary.objects.get(session=slot.session)
    assert mirror.payload == {
        "intents": data["intents"],
        "constraints": data["constraints"],
        "checks": data["checks"],
    }
    assert (mirror.sig, mirror.gen, mirror.user_turns) == (identity.sig, identity.gen, 1)
    assert mirror.intent_count == len(data["intents"]) >= 1
    one_line = OneLineSummary.objects.get(session=slot.session)
    assert (one_line.summary, one_line.sig) == (gist["summary"], identity.sig)
    assert summary_turn_mark(slot) == 1
    assert summary_in_flight_until(slot) is None
    assert slot.app is not None
    assert slot.app.name == "looper"
    session = Session.objects.get(key=key)
    assert (session.sig, session.row_count, session.user_turns) == (identity.sig, 2, 1)

    status, body = api("GET", "/api/chat/slots/loop/summary")
    assert status == 200, body
    assert body["stale"] is False
    assert body["user_turns"] == 1
    assert [i["title"] for i in body["intents"]] == [i["title"] for i in data["intents"]]

    # The next turn moves the transcript: the pass regenerates (cadence 1) and the
    # mirror row is updated in place, not duplicated.
    turn(api, "loop", ASKS[1], ANSWERS[1])
    assert IntentSummary.objects.filter(session=slot.session).count() == 1
    assert OneLineSummary.objects.filter(session=slot.session).count() == 1
    updated = IntentSummary.objects.get(session=slot.session)
    assert updated.user_turns == 2
    assert updated.sig == store.identity(key).sig  # type: ignore[union-attr]
    status, body = api("GET", "/api/chat/slots/loop/summary")
    assert status == 200, body
    assert (body["stale"], body["user_turns"], body["new_turns"]) == (False, 2, 0)
    status, body = api("GET", "/api/chat/slots/loop/transcript")
    assert status == 200, body
    assert [r["content"] for r in body["rows"]] == [ASKS[0], ANSWERS[0], ASKS[1], ANSWERS[1]]
    # The slot list reads the one-line mirror (a join on PostgreSQL).
    status, body = api("GET", "/api/chat/slots")
    assert status == 200, body
    listed = {s["name"]: s["summary"] for s in body["slots"]}
    assert listed == {"loop": OneLineSummary.objects.get(session=slot.session).summary}
    assert listed["loop"]
