"""The demo's live session is the first summary a newcomer reads: its badges must follow
the runs the transcript shows (the replay's tool rows), not contradict them."""

from __future__ import annotations

from typing import Any

import pytest

from kirocrew_site.demo import REPLAY_SLOT
from summaries.selectors import summary_body
from summaries.worker import summary_worker_drain
from tests.dashboard.test_first_ten_minutes import run
from transcripts.models import Slot


@pytest.mark.django_db(transaction=True)
def test_the_demo_summary_shows_both_intents_done_and_verified(
    store: Any, live_server: Any
) -> None:
    code, out, err = run("demo", url=live_server.url, pause=0, wait=10)
    assert code == 0, (out, err)
    assert summary_worker_drain(timeout=60)
    body = summary_body(Slot.objects.get(name=REPLAY_SLOT))
    by_title = {i["title"]: i for i in body["intents"]}
    fix = by_title["The CSV export drops rows whose customer name has accents"]
    since = by_title["Add a --since flag to the export command"]
    assert (fix["status"], fix["verified"]) == ("completed", True)
    # Turn 4's `pytest -q` (51 passed) ran after turn 3's edit: checked, not "Not run".
    assert since["verified"] is True
    assert "Not run since the last change." not in since["progress"]
    assert any("make lint" in c for c in body["constraints"])
