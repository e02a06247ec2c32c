"""The summary queue's order: one queue per app, served round-robin, one entry per slot.

An app that ends 500 turns at once (an import, a runaway agent) must not put every other
app's summaries behind its own: the next pass always comes from the app after the one
served last that has work, so another app's pass waits for at most one pass of each
other app with work. Within an app, first come, first served.

A slot is queued at most once: a pass reads the transcript as it is when it starts, so a
second request before it started adds nothing but may raise it to ``force`` (an explicit
request lifts cadence; it must not be lost to an automatic one already waiting).

Pure: no Django, no threads (the caller holds its own lock).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Job:
    slot_name: str
    force: bool = False


class FairQueue:
    def __init__(self) -> None:
        # app -> its slots in arrival order (value: force); only apps with work are keys
        self._queues: dict[Hashable, OrderedDict[str, bool]] = {}
        self._turns: deque[Hashable] = deque()  # apps with work, the next to serve first
        self._app_of: dict[str, Hashable] = {}

    def __len__(self) -> int:
        return len(self._app_of)

    def __contains__(self, slot_name: object) -> bool:
        return slot_name in self._app_of

    def push(self, app: Hashable, slot_name: str, *, force: bool = False) -> bool:
        """Queue a pass; False when the slot was already queued (coalesced, ``force``
        kept if either asked for it)."""
        queued_in = self._app_of.get(slot_name)
        if queued_in is not None:
            queue = self._queues[queued_in]
            queue[slot_name] = queue[slot_name] or force
            return False
        queue = self._queues.get(app)
        if queue is None:
            queue = self._queues[app] = OrderedDict()
            self._turns.append(app)
        queue[slot_name] = force
        self._app_of[slot_name] = app
        return True

    def pop(self, busy: Container[str] = ()) -> Job | None:
        """The next pass: the oldest slot not in ``busy`` (a slot whose pass is running:
        its next pass waits for it) of the next app in turn; None when there is none."""
        for _ in range(len(self._turns)):
            app = self._turns[0]
            queue = self._queues[app]
            slot_name = next((name for name in queue if name not in busy), None)
            if slot_name is None:
                self._turns.rotate(-1)  # all of this app's slots are running: next app
                continue
            self._turns.popleft()
            force = queue.pop(slot_name)
            del self._app_of[slot_name]
            if queue:
                self._turns.append(app)  # its next pass waits for every other app's turn
            else:
                del self._queues[app]
            return Job(slot_name, force)
        return None

    def clear(self) -> list[Job]:
        """Empty the queue; the jobs it held, in no particular order."""
        jobs = [Job(name, force) for q in self._queues.values() for name, force in q.items()]
        self._queues.clear()
        self._turns.clear()
        self._app_of.clear()
        return jobs
