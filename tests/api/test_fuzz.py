"""Fuzzed bodies for every write route: the answer is a 2xx, or a clear 4xx JSON error
with ``error`` and ``code`` after which nothing was written. Never a 5xx."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcripts.core.store import TranscriptStore
from transcripts.models import Session, Slot

from .conftest import Persona, error_of

# Any unicode but lone surrogates (JSON text must be UTF-8); control characters included.
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=12,
)
ROLES = st.sampled_from(["user", "assistant", "tool", "system", "nudge", "bogus", ""])
SLOT_NAMES = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,20}", fullmatch=True) | TEXT

ROUTES: dict[str, tuple[str, str, dict[str, Any]]] = {
    # id: (method, path, {field: a plausible strategy for it})
    "slot_create": (
        "POST",
        "/api/chat/slots",
        {"name": SLOT_NAMES, "title": TEXT, "memory_mode": st.sampled_from(["", "incognito", "x"])},
    ),
    "slot_update": ("PATCH", "/api/chat/slots/fz", {"title": TEXT}),
    "turn_start": ("POST", "/api/chat/slots/fz/turns", {"content": TEXT}),
    "row_append": (
        "POST",
        "/api/chat/slots/fz/rows",
        {"role": ROLES, "content": TEXT, "meta": st.dictionaries(TEXT, JSON, max_size=3)},
    ),
    "row_revise": (
        "POST",
        "/api/chat/slots/fz/rows/{ts}/revisions",
        {"patch": st.dictionaries(TEXT | st.sampled_from(["ts", "_type", "_after_ts"]), JSON)},
    ),
    "turn_end": ("POST", "/api/chat/slots/fz/turns/end", {"stop_reason": TEXT}),
    "rewind": ("POST", "/api/chat/slots/fz/rewind", {"after_ts": TEXT}),
    "fork": ("POST", "/api/chat/slots/fz/fork", {"name": SLOT_NAMES}),
    "summary_generate": ("POST", "/api/chat/slots/fz/summary", {}),
}


def bodies(fields: dict[str, Any]) -> st.SearchStrategy[bytes]:
    """Whole random JSON values, objects with the route's keys holding random JSON or
    plausible values (some keys left out), and raw bytes."""
    keys = [*fields, "extra"]
    plausible = st.fixed_dictionaries({}, optional=fields) if fields else st.just({})
    values = st.one_of(
        JSON,
        st.dictionaries(st.sampled_from(keys), JSON, max_size=len(keys)),
        plausible,
    )
    encoded = values.map(lambda v: json.dumps(v).encode())
    return st.one_of(encoded, encoded, st.binary(max_size=64))


def snapshot(store: TranscriptStore) -> tuple[Any, ...]:
    files = {
        p.relative_to(store.root).as_posix(): p.read_bytes()
        for p in sorted(store.root.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }
    slots = sorted(Slot.objects.values_list("name", "running", "last_stop_reason"))
    return files, slots, Session.objects.count()


@pytest.fixture
def fz(owner: Persona, make_slot: Callable[..., Slot], enabled_summaries: Path) -> Slot:
    return make_slot("fz", app=owner.app, turns=2)


@pytest.mark.parametrize("route", list(ROUTES))
def test_fuzzed_bodies_get_a_2xx_or_a_clean_4xx(
    route: str, owner: Persona, fz: Slot, store: TranscriptStore
) -> None:
    method, template, fields = ROUTES[route]
    first_ts = str(store.read_session("dashboard:fz").rows[0]["ts"])
    path = template.format(ts=quote(first_ts))

    @settings(
        max_examples=60,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(raw=bodies(fields))
    def check(raw: bytes) -> None:
        before = snapshot(store)
        response = owner.call(method, path, raw=raw)
        status = response.status_code
        assert status < 500, (status, raw, response.content)
        if status < 300:
            if status != 204:
                assert response["Content-Type"].startswith("application/json")
            return
        assert 400 <= status < 500, (status, raw)
        text = response.content.decode()
        assert "Traceback" not in text
        error_of(response)
        assert snapshot(store) == before, (status, raw, response.content)

    check()
