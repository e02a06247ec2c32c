"""GET /api/chat/search: what was said is found, by its owner only, as it changes."""

from __future__ import annotations

from django.core.management import call_command

from tests.search.conftest import Caller


def _snippet(hit: dict) -> str:
    return "".join(part["text"] for part in hit["snippet"])


def test_a_row_is_found_once_appended_with_its_turn_and_highlight(apps: tuple[Caller, Caller]) -> None:
    alpha, _ = apps
    assert alpha.found("postgres") == []
    alpha.turn("alpha-1", "Which database should we use?", "Let us keep SQLite for now.")
    stamps = alpha.turn("alpha-1", "Then what about later?", "We decided on PostgreSQL for production.")

    [hit] = alpha.found("postgresql decide")  # every word, stemmed: "decide" finds "decided"
    assert hit["slot"] == "alpha-1"
    assert hit["turn"] == 2
    assert hit["ts"] == stamps[1]
    assert hit["role"] == "assistant"
    assert "decided on" in _snippet(hit)
    assert [p["text"] for p in hit["snippet"] if p["hit"]] == ["decided", "PostgreSQL"]
