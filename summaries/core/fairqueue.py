"""The summary queue's order (pure; the caller holds the lock): the next pass comes from
the app served least recently, so an app that ends 500 turns at once cannot put every
other app's summaries behind its own; within an app, first come, first served. A slot is
queued once (a pass reads the transcript as it is when it starts), keeping any ``force``.
"""

from __future__ import annotations

from collections.abc import Container, Hashable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Job:
    slot_name: str
    force: bool = False


class FairQueue:
    def __init__(self) -> None:
        # app -> its slots in arrival order (value: force); only apps with work are keys,
        # in the order they got work (the tie-break between apps never served)
        self._queues: dict[Hashable, dict[str, bool]] = {}
        self._served: dict[Hashable, int] = {}  # app -> when it was last served
        self._clock = 0

    def __len__(self) -> int:
        return sum(map(len, self._queues.values()))

    def __contains__(self, slot_name: object) -> bool:
        return any(slot_name in queue for queue in self._queues.values())

    def push(self, app: Hashable, slot_name: str, *, force: bool = False) -> bool:
        """Queue a pass; False when the slot was already queued (coalesced, ``force``
        kept if either asked for it)."""
        if (queue := next((q for q in self._queues.values() if slot_name in q), None)) is not None:
            queue[slot_name] = queue[slot_name] or force
            return False
        self._queues.setdefault(app, {})[slot_name] = force
        return True

    def pop(self, busy: Container[str] = ()) -> Job | None:
        """The oldest slot not in ``busy`` (its pass is running) of the app served least
        recently (not a fixed rotation: an app that gets work just after a busy app's pass
        goes before that app's next one); None when none."""
        best: tuple[int, Hashable, str] | None = None
        for app, queue in self._queues.items():
            served = self._served.get(app, -1)
            if best is not None and served >= best[0]:
                continue
            if (slot_name := next((name for name in queue if name not in busy), None)) is not None:
                best = (served, app, slot_name)
        if best is None:
            return None
        _, app, slot_name = best
        queue = self._queues[app]
        force = queue.pop(slot_name)
        if not queue:
            del self._queues[app]
        self._clock += 1
        self._served[app] = self._clock
        return Job(slot_name, force)

    def clear(self) -> list[Job]:
        """Empty the queue; the jobs it held, in no particular order."""
        jobs = [Job(name, force) for q in self._queues.values() for name, force in q.items()]
        self._queues.clear()
        return jobs
