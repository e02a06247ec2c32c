"""Issue 12 item 5: the polled GET …/summary costs what /api/health costs in ORM work.

Behaviour, not timing: the queries a request runs and the SQL it has Django compile.
The GET used to build and compile its own slot query (select_related, Meta ordering,
slice) on every request; now it executes one precompiled statement.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.db.models.sql.compiler import SQLCompiler
from django.utils import timezone

from summaries.models import SummaryState
from summaries.selectors import slot_for_summary_read
from summaries.state import summary_state_of, summary_turn_mark_set
from tests.fixtures.summary_state import in_flight_set
from transcripts.models import Session, Slot

from .conftest import Persona, error_of

URL = "/api/chat/slots/s1/summary"


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The SQL statements Django's ORM compiles, in order."""
    seen: list[str] = []
    original = SQLCompiler.as_sql

    def counting(self: SQLCompiler, *args: Any, **kwargs: Any) -> Any:
        sql = original(self, *args, **kwargs)
        seen.append(sql[0])
        return sql

    monkeypatch.setattr(SQLCompiler, "as_sql", counting)
    return seen


@pytest.fixture
def s1(owner: Persona, make_slot: Callable[..., Slot]) -> Slot:
    return make_slot("s1", app=owner.app, turns=2)


def test_get_summary_compiles_no_more_sql_than_health(
    owner: Persona,
    s1: Slot,
    enabled_summaries: Any,
    compiled: list[str],
    django_assert_num_queries: Any,
) -> None:
    assert owner.call("GET", "/api/health").status_code == 200  # warm every cache
    assert owner.call("GET", URL).status_code == 200
    compiled.clear()
    assert owner.call("GET", "/api/health").status_code == 200
    health = len(compiled)
    compiled.clear()
    with django_assert_num_queries(2):  # the token, then slot + session + owner together
        response = owner.call("GET", URL)
    assert response.status_code == 200
    assert json.loads(response.content)["user_turns"] is None  # no summary yet, still a body
    assert len(compiled) == health == 1, compiled


def test_the_fast_read_builds_the_same_slot_as_the_orm(
    owner: Persona, s1: Slot, enabled_summaries: Any, django_assert_num_queries: Any
) -> None:
    soon = timezone.now() + dt.timedelta(seconds=30)
    fast = slot_for_summary_read("s1")
    assert fast is not None
    with django_assert_num_queries(0):  # no state row yet: known without another query
        assert summary_state_of(fast) is None
    Slot.objects.filter(pk=s1.pk).update(
        running=True, last_stop_reason="max_tokens", dirty_until=soon
    )
    in_flight_set(s1.pk, soon)
    summary_turn_mark_set(s1.pk, 7)
    Session.objects.filter(pk=s1.session_id).update(
        anomaly_counts={"torn_tail": 1}, closed=True, memory_mode="persistent"
    )
    fast = slot_for_summary_read("s1")
    orm = Slot.objects.select_related("session", "summary_state").get(name="s1")
    assert fast is not None
    with django_assert_num_queries(0):  # the state came with the slot
        fast_state = summary_state_of(fast)
    assert fast_state is not None
    for model_fields, a, b in (
        (Slot._meta.concrete_fields, fast, orm),
        (Session._meta.concrete_fields, fast.session, orm.session),
        (SummaryState._meta.concrete_fields, fast_state, orm.summary_state),
    ):
        for field in model_fields:
            assert getattr(a, field.attname) == getattr(b, field.attname), field.name
            assert type(getattr(a, field.attname)) is type(getattr(b, field.attname)), field.name
    assert slot_for_summary_read("nope") is None


def test_foreign_missing_and_bad_names_answer_as_before(
    owner: Persona, foreign: Persona, s1: Slot, enabled_summaries: Any
) -> None:
    theirs = foreign.call("GET", URL)
    missing = foreign.call("GET", "/api/chat/slots/nope/summary")
    assert (theirs.status_code, missing.status_code) == (404, 404)
    assert error_of(theirs) == error_of(missing)
    assert error_of(theirs)["code"] == "slot_not_found"
    bad = owner.call("GET", "/api/chat/slots/-bad/summary")
    assert bad.status_code == 400
    assert error_of(bad)["code"] == "invalid_slot_name"
