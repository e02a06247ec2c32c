"""The summary queue's order: apps served round-robin, one entry per slot."""

from __future__ import annotations

from summaries.core.fairqueue import FairQueue, Job


def drain(queue: FairQueue, busy: frozenset[str] = frozenset()) -> list[str]:
    names = []
    while (job := queue.pop(busy)) is not None:
        names.append(job.slot_name)
    return names


def test_another_apps_pass_is_not_behind_all_of_a_busy_apps_passes() -> None:
    queue = FairQueue()
    for n in range(6):
        queue.push("busy", f"busy-{n}")
    queue.push("quiet", "quiet-0")
    queue.push("quiet", "quiet-1")
    assert drain(queue) == [
        "busy-0", "quiet-0", "busy-1", "quiet-1", "busy-2", "busy-3", "busy-4", "busy-5"
    ]  # fmt: skip


def test_an_app_that_gets_work_after_a_busy_apps_pass_goes_before_its_next_one() -> None:
    queue = FairQueue()
    for n in range(3):
        queue.push("a", f"a-{n}")
    assert queue.pop() == Job("a-0")  # running while b's turn ends
    queue.push("b", "b-0")
    assert drain(queue) == ["b-0", "a-1", "a-2"]


def test_a_slot_is_queued_once_and_keeps_a_forced_request() -> None:
    queue = FairQueue()
    assert queue.push("a", "s1")
    assert not queue.push("a", "s1", force=True)  # coalesced, but the POST's force stays
    assert not queue.push("a", "s1")  # a later automatic request does not lower it
    assert len(queue) == 1
    assert queue.pop() == Job("s1", force=True)
    assert queue.pop() is None


def test_a_slot_whose_pass_runs_waits_while_other_slots_go_first() -> None:
    queue = FairQueue()
    queue.push("a", "running")
    queue.push("a", "a-2")
    queue.push("b", "b-1")
    assert drain(queue, busy=frozenset({"running"})) == ["a-2", "b-1"]
    assert queue.pop() == Job("running")  # once it no longer runs


def test_clear_returns_every_queued_job() -> None:
    queue = FairQueue()
    queue.push("a", "s1", force=True)
    queue.push("b", "s2")
    assert sorted(queue.clear(), key=lambda j: j.slot_name) == [Job("s1", True), Job("s2")]
    assert len(queue) == 0
    assert queue.pop() is None
