"""The list page's live card: the list's own card markup for one session, behind the login."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_a_card_is_the_lists_own_markup(client_in: Client, make_session: Any) -> None:
    make_session("c1", [("user", "Fix the login bug please.")], title="Card session")
    card = client_in.get("/s/c1/card/").json()["html"]
    assert card.startswith('<li class="session-card" data-slot="c1">')
    assert card in client_in.get("/").content.decode()


def test_a_missing_card_is_404_and_a_card_needs_a_login(
    client_in: Client, make_session: Any
) -> None:
    make_session("c1", [("user", "x")])
    assert client_in.get("/s/nope/card/").status_code == 404
    assert Client().get("/s/c1/card/").status_code == 302
