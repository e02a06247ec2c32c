"""GET /api/chat/slots/{slot}/summary serves each intent's evidence; OpenAPI describes it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.test import Client

from summaries.core.intents import Intent
from summaries.core.payload import EVIDENCE_KINDS
from summaries.core.sidecar import INTENTS, write_guarded
from tests.summaries.payload_helpers import KEYS
from transcripts.core.store import TranscriptStore
from transcripts.models import Slot
from transcripts.services import session_append_row

from .conftest import Persona

URL = "/api/chat/slots/ev1/summary"


def body_of(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.content
    body: dict[str, Any] = json.loads(response.content)
    return body


def test_get_serves_the_heuristics_evidence_with_the_tool_rows_ts(
    owner: Persona, make_slot: Callable[..., Slot], enabled_summaries: Path
) -> None:
    slot = make_slot("ev1", app=owner.app, turns=0)
    key = slot.session.key
    rows = [
        ("user", "Fix the parser in parse.py so it keeps rows with empty names", None),
        ("assistant", "I changed parse.py to keep rows with empty names.", None),
        ("tool_call", "pytest -q tests/test_parse.py", {"tool": "bash"}),
        ("tool_result", "5 passed in 0.12s", {"tool": "bash", "exit_code": 0}),
        ("user", "Now add a --strict flag to the CLI in cli.py", None),
        ("assistant", "I added --strict to cli.py.", None),
    ]
    stamps = [session_append_row(key=key, role=r, content=c, meta=m).ts[0] for r, c, m in rows]
    assert body_of(owner.call("POST", URL))["model"] == "heuristic"
    intents = body_of(owner.call("GET", URL))["intents"]
    by_title = {i["title"]: i for i in intents}
    assert len(by_title) == 2, by_title
    parser = next(i for t, i in by_title.items() if "parser" in t.lower())
    assert parser["evidence"]["kind"] == "test_passed"
    assert parser["evidence"]["ts"] == stamps[3]  # the tool_result row
    assert parser["evidence"]["turn"] == 1
    strict = next(i for t, i in by_title.items() if "strict" in t.lower())
    assert strict["evidence"] is None  # changed, never run: no evidence either way


def test_a_stored_bad_evidence_is_served_as_null_not_a_500(
    owner: Persona, make_slot: Callable[..., Slot], store: TranscriptStore, enabled_summaries: Path
) -> None:
    slot = make_slot("ev1", app=owner.app, turns=2)
    identity = store.identity(slot.session.key)
    assert identity is not None
    bad = [{"turn": "x", "kind": "test_passed", "quote": "ok"}, {"kind": "nope"}, "str", 5]
    good = {"turn": 1, "ts": "2026-10-07T09:04:00+00:00", "kind": "dropped", "quote": "drop it"}
    intents = [
        {"title": f"Intent {i}", "ranges": [[1, 1]], "status": "active", "evidence": ev}
        for i, ev in enumerate([*bad, good])
    ]
    payload = {"intents": intents, "constraints": [], "generated_at": time.time(), "user_turns": 2}
    assert write_guarded(
        store, slot.session.key, INTENTS, payload, sig=identity.sig, gen=identity.gen
    )
    served = body_of(owner.call("GET", URL))["intents"]
    assert [i["evidence"] for i in served] == [None, None, None, None, good]


def test_openapi_describes_evidence(client: Client) -> None:
    schema = json.loads(client.get("/api/openapi.json").content)
    parts = schema["components"]["schemas"]
    intent = parts["Intent"]
    assert "evidence" in intent["properties"]
    evidence = parts["Evidence"]
    assert set(evidence["properties"]) == {"turn", "ts", "kind", "quote"}
    kinds = set(evidence["properties"]["kind"]["enum"])
    assert kinds == EVIDENCE_KINDS
    summary = parts["SummaryOut"]["properties"]["intents"]
    assert summary["items"]["$ref"].endswith("/Intent")


def test_openapi_describes_an_intent(client: Client) -> None:
    """The served document names every field of an intent, typed, from the payload model."""
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    parts = json.loads(response.content)["components"]["schemas"]
    properties = parts["Intent"]["properties"]
    assert set(properties) == set(Intent.model_fields)
    assert list(properties) == KEYS  # every stored field, in the stored order
    assert parts["Intent"]["required"] == ["title"]
    assert properties["status"]["enum"] == ["active", "completed", "abandoned"]
    assert properties["state"]["enum"] == ["done", "needs-you", "in-progress", "dropped"]
    turn_range = properties["ranges"]["items"]
    assert (turn_range["type"], turn_range["minItems"], turn_range["maxItems"]) == ("array", 2, 2)
    assert turn_range["items"]["type"] == "integer"
    assert properties["next_steps"]["items"]["$ref"].endswith("/NextStep")
    assert set(parts["NextStep"]["properties"]) == {"what", "why", "expect"}
    assert all(p.get("description") for p in properties.values())  # each field documented
