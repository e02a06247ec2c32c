"""Slot names are one global namespace: a generated name is unguessable; a chosen one may
collide with another owner's (a known limit, as in the original)."""

from __future__ import annotations

import json
import re

from transcripts.core.keys import is_valid_slot_name
from transcripts.models import Slot

from .conftest import Persona, error_of

GENERATED = re.compile(r"s-[A-Za-z0-9_-]{22}")  # "s-" + token_urlsafe(16): 128 random bits


def test_a_create_without_a_name_gets_an_unguessable_one(
    owner: Persona, dashboard: Persona
) -> None:
    names = []
    for persona, body in ((owner, {}), (owner, {"title": "t"}), (dashboard, {"name": None})):
        response = persona.call("POST", "/api/chat/slots", body)
        assert response.status_code == 201, response.content
        name = json.loads(response.content)["name"]
        assert GENERATED.fullmatch(name), name
        assert is_valid_slot_name(name)
        assert Slot.objects.get(name=name).app == persona.app
        assert persona.call("GET", f"/api/chat/slots/{name}").status_code == 200
        names.append(name)
    assert len(set(names)) == len(names)


def test_a_taken_name_is_409_whoever_owns_it(owner: Persona, foreign: Persona) -> None:
    """The documented limit: the 409 tells ``foreign`` that the name is taken."""
    assert owner.call("POST", "/api/chat/slots", {"name": "shared"}).status_code == 201
    response = foreign.call("POST", "/api/chat/slots", {"name": "shared"})
    assert response.status_code == 409
    assert error_of(response)["code"] == "slot_exists"
    assert Slot.objects.get(name="shared").app == owner.app
