"""The session page's opaque tokens (``dashboard/positions.py``): the rules the page's JS
no longer holds. Pure: no database, no store."""

from __future__ import annotations

import pytest

from kirocrew_site.dashboard.positions import Gap, InvalidToken, Position, gap_request
from kirocrew_site.dashboard.present import Item, RowKind


def item(cursor: str, turn: int | None = None) -> Item:
    return Item(RowKind.USER if turn else RowKind.ASSISTANT, "", cursor, cursor, "", "", turn=turn)


def test_tokens_round_trip_and_are_opaque_text() -> None:
    position = Position("t5#2", 7, "t3", 6, "t4")
    token = position.token()
    assert Position.parse(token) == position
    assert "#" not in token
    assert "t5" not in token  # nothing in it for the page to read
    assert Gap.parse(Gap(3, 9).token()) == Gap(3, 9)


def test_a_position_follows_the_running_turn() -> None:
    start = Position.start("", 0)
    rows = [item("a"), item("b", 1), item("c"), item("d", 2), item("e")]
    after = start.advance(rows, 2)
    assert after == Position("e", 2, "c", 1, "d")
    # Rows without a turn keep the running turn where it was.
    more = after.advance([item("f")], 2)
    assert more == Position("f", 2, "c", 1, "d")
    assert after.advance([], 2) == after


def test_before_any_turn_the_running_turn_is_the_whole_session() -> None:
    after = Position.start("", 0).advance([item("a"), item("b")], 0)
    assert after == Position("b", 0, "", 0, "a")
    start, replaced = after.read_from(["revision"])
    assert (start, replaced) == (Position.start("", 0), "a")


def test_a_revision_or_a_resync_reads_the_running_turn_again() -> None:
    position = Position("e", 2, "c", 1, "d")
    assert position.read_from(["assistant"]) == (position, "")
    assert position.read_from([]) == (position, "")
    for reasons in (["revision"], ["user", "resync"]):
        start, replaced = position.read_from(reasons)
        assert replaced == "d"  # turn 2's user row and every row after it are replaced
        assert (start.after, start.turns) == ("c", 1)  # read from the row before it
    # Nothing of the running turn on the page yet: nothing to replace, just append.
    empty = Position.start("x", 4)
    assert empty.read_from(["revision"]) == (empty, "")


def test_gaps_split_around_what_came() -> None:
    gap = Gap(1, 40)
    assert gap_request([gap], "", 20) == (gap, 21, 40)  # its button: its last turns
    assert gap_request([gap], "turn-30", 20) == (gap, 30, 40)  # a link: from that turn on
    assert gap.split(21, 40) == (Gap(1, 20), None)
    assert gap.split(3, 22) == (Gap(1, 2), Gap(23, 40))
    assert gap.split(1, 40) == (None, None)
    assert gap_request([Gap(1, 1)], "", 20) == (Gap(1, 1), 1, 1)


def test_which_gap_a_request_loads() -> None:
    gaps = [Gap(1, 2), Gap(23, 40)]
    assert gap_request(gaps, "turn-30", 20) == (Gap(23, 40), 30, 40)
    assert gap_request(gaps, "turn-1", 20) == (Gap(1, 2), 1, 2)
    assert gap_request(gaps, "turn-10", 20) is None  # on the page already
    assert gap_request(gaps, "summary-panel", 20) is None  # not a turn
    assert gap_request([Gap(23, 40)], "", 5) == (Gap(23, 40), 36, 40)
    with pytest.raises(InvalidToken):
        gap_request(gaps, "", 20)  # a button sends its own gap
    assert gap_request([Gap(1, 40)], "turn-07", 20) is None  # not a turn's anchor
    assert gap_request([Gap(1, 40)], "turn-12", 20) == (Gap(1, 40), 12, 31)


@pytest.mark.parametrize(
    "token", ["", "%%%", "W10", "WyJ4IiwxXQ", Gap(1, 2).token(), "bnVsbA", "WzEsMl0x"]
)
def test_a_token_the_server_did_not_issue_is_refused(token: str) -> None:
    with pytest.raises(InvalidToken):
        Position.parse(token)
