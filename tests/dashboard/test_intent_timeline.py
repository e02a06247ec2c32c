"""The session page's intent timeline: laid out on the server, drawn as inline SVG."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from django.test import Client

from kirocrew_site.dashboard.present import MIN_BAR_SHARE, timeline_layout
from summaries.core.gate import PassResult
from summaries.services import summary_generate
from tests.fixtures.summaries import use_backend
from transcripts.models import Slot
from transcripts.services import session_append_row


def lane(title: str, state: str, ranges: list[list[int]]) -> dict[str, Any]:
    return {"title": title, "state": state, "ranges": ranges}


# ---------------------------------------------------------------- the layout (pure)


def test_lanes_follow_the_order_work_started_so_a_nested_intent_sits_below_its_host() -> None:
    timeline = timeline_layout(
        [
            lane("Nested fix", "done", [[4, 5]]),  # most recently touched first, as stored
            lane("Late work", "in-progress", [[9, 10]]),
            lane("Outer refactor", "needs-you", [[2, 8]]),
            lane("Kick-off", "done", [[1, 1]]),
        ],
        turns=10,
        covered=10,
    )
    assert timeline is not None
    assert [x.title for x in timeline.lanes] == [
        "Kick-off",
        "Outer refactor",
        "Nested fix",
        "Late work",
    ]
    outer = timeline.lanes[1]
    # A bar spans its turns on the turn axis: turn 2 starts at x=1, turns 2-8 are 7 wide.
    assert (outer.bars[0].x, outer.bars[0].width) == ("1", "7")
    assert outer.bars[0].anchor == "turn-2"
    assert outer.bars[0].tip == "Outer refactor — Needs you, turns 2\u20138"


def test_a_dormant_stretch_between_two_ranges_is_drawn_between_their_bars() -> None:
    timeline = timeline_layout(
        [lane("Payments", "in-progress", [[8, 9], [1, 3]])],
        turns=12,
        covered=12,
    )
    assert timeline is not None
    (only,) = timeline.lanes
    assert [(b.first, b.last) for b in only.bars] == [(1, 3), (8, 9)]
    # Dormant from the end of turn 3 to the start of turn 8.
    assert [(d.x, d.width) for d in only.dormant] == [("3", "4")]


def test_a_one_turn_range_of_a_long_session_still_gets_a_bar_inside_the_axis() -> None:
    timeline = timeline_layout(
        [lane("Last-minute fix", "done", [[1000, 1000]])],
        turns=1000,
        covered=1000,
    )
    assert timeline is not None
    (bar,) = timeline.lanes[0].bars
    assert float(bar.width) == pytest.approx(1000 * MIN_BAR_SHARE)
    assert float(bar.x) + float(bar.width) == pytest.approx(1000)


def test_malformed_ranges_are_dropped_and_no_ranges_draw_no_timeline() -> None:
    assert timeline_layout([], turns=5, covered=5) is None
    assert (
        timeline_layout(
            [lane("No turns", "done", []), {"title": "x", "ranges": [[True, 2], [0, 1], "1-2"]}],
            turns=5,
            covered=5,
        )
        is None
    )


def test_turns_after_the_summary_are_marked_not_summarized_and_the_axis_fits_every_range() -> None:
    timeline = timeline_layout([lane("Fix", "in-progress", [[1, 7]])], turns=5, covered=3)
    assert timeline is not None
    assert timeline.turns == 7  # a range past the mirror's count (a rewind) still fits
    assert (timeline.uncovered_x, timeline.uncovered_width) == ("3", "4")


# ---------------------------------------------------------------- the session page


class Scripted:
    name = "scripted"

    def __init__(self, intents: list[dict[str, Any]]) -> None:
        self.intents = intents

    def generate(self, prompt: str, turns: Sequence[Any]) -> str:
        return json.dumps({"intents": self.intents, "constraints": []})


MULTI: list[dict[str, Any]] = [
    {"title": "Outer refactor", "status": "active", "ranges": [[1, 2], [6, 8]]},
    {"title": "Nested <fix> & co", "status": "completed", "verified": True, "ranges": [[3, 4]]},
    {"title": "Ship it", "status": "completed", "verified": False, "ranges": [[8, 8]]},
]


@pytest.fixture
def summarized(
    make_session: Callable[..., Slot],
    enabled_summaries: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> Slot:
    rows: list[tuple[str, Any]] = []
    for n in range(1, 9):
        rows += [("user", f"Turn {n}: next step, please."), ("assistant", f"Done with {n}.")]
    slot = make_session("multi", rows, title="Multi-intent session")
    use_backend(monkeypatch, Scripted(MULTI))
    assert summary_generate(slot_name="multi", force=True).reason is PassResult.STORED
    return slot


def timeline_of(body: str) -> str:
    found = re.search(r'<section id="intent-timeline".*?</section>', body, re.S)
    assert found is not None
    return found.group(0)


@pytest.mark.django_db
def test_the_session_page_draws_one_lane_per_intent_above_the_transcript(
    summarized: Slot, client_in: Client
) -> None:
    body = client_in.get("/s/multi/").content.decode()
    svg = timeline_of(body)
    assert body.index('id="intent-timeline"') < body.index('id="transcript"')
    assert "hidden" not in svg.split(">", 1)[0]
    assert svg.count('<svg class="timeline-track" viewBox="0 0 8 12"') == 3
    # Each bar is a link to its turn's anchor with a <title> to hover, coloured by state.
    bars = re.findall(
        r'<a class="tl-link" href="#(turn-\d+)"><title>([^<]*)</title>'
        r'<rect class="tl-bar tl-([a-z-]+)"',
        svg,
    )
    assert bars == [
        ("turn-1", "Outer refactor — Active, turns 1\u20132", "in-progress"),
        ("turn-6", "Outer refactor — Active, turns 6\u20138", "in-progress"),
        ("turn-3", "Nested &lt;fix&gt; &amp; co — Done, turns 3\u20134", "done"),
        ("turn-8", "Ship it — Needs you, turn 8", "needs-you"),
    ]
    assert svg.count('class="tl-dormant"') == 1  # the outer refactor waited over turns 3-5
    assert "tl-uncovered" not in svg  # the summary covers every turn


@pytest.mark.django_db
def test_the_timeline_partial_serves_the_same_drawing_and_turns_after_the_summary_show(
    summarized: Slot, client_in: Client
) -> None:
    page = timeline_of(client_in.get("/s/multi/").content.decode())
    partial = client_in.get("/s/multi/timeline/")
    assert partial.status_code == 200
    assert timeline_of(partial.json()["html"]) == page

    session_append_row(key=summarized.session.key, role="user", content="Turn 9, one more.")
    later = timeline_of(client_in.get("/s/multi/timeline/").json()["html"])
    assert 'viewBox="0 0 9 12"' in later
    assert '<rect class="tl-uncovered" x="8" y="0" width="1"' in later


@pytest.mark.django_db
def test_no_summary_or_summaries_off_leave_the_timeline_hidden(
    summarized: Slot, client_in: Client, configure: Callable[..., Any], make_session: Any
) -> None:
    make_session("bare", [("user", "hello")])
    bare = timeline_of(client_in.get("/s/bare/").content.decode())
    assert bare.startswith('<section id="intent-timeline" class="timeline"')
    assert " hidden>" in bare.split("\n", 1)[0]
    assert "<svg" not in bare

    configure(enabled=False)
    off = timeline_of(client_in.get("/s/multi/timeline/").json()["html"])
    assert "<svg" not in off


@pytest.mark.django_db
def test_the_timeline_partial_of_a_missing_slot_is_a_json_404(client_in: Client) -> None:
    response = client_in.get("/s/nope/timeline/")
    assert response.status_code == 404
    assert response.json()["code"] == "slot_not_found"
    assert Client().get("/s/nope/timeline/").status_code == 302  # a login first
