"""POST …/turns/end latency with session summaries on vs off (embedded profile, ~10 MB
session): the turn end never waits for the summary pass.

Sets up a private ``KIROCREW_HOME`` (SQLite, no broker: the embedded profile, where the
pass runs on the in-process worker), an app and a slot with a ~10 MB transcript of
realistic rows. Each round runs one turn through Django's test ``Client`` (start, an
assistant row, end) and times only the turn end; rounds alternate summaries on / off
(``KIROCREW_SUMMARY_ENABLED``, read per request), with ``min_user_turns`` and
``regenerate_after_turns`` at 1 so every "on" turn end dispatches a generating pass.
Before each timed turn end the worker is drained (untimed): a pass left over from the
previous round must not compete for the CPU with the request being measured.

Target: median latency on / off <= 1.2. Also reported: how many passes stored a summary
(every "on" round should), and what one pass took on the worker (the time the request
no longer waits).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

TARGET = 1.2


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--size-mb", type=float, default=10, help="transcript size (default 10)")
    ap.add_argument("--rounds", type=int, default=10, help="turn ends per arm (default 10)")
    args = ap.parse_args(argv)

    print(f"bench_turn_end: {common.cpu_note()}")
    with common.temp_dir("turn-end") as tmp:
        env = common.django_env(
            tmp / "home",
            KIROCREW_SUMMARY_MIN_USER_TURNS="1",
            KIROCREW_SUMMARY_REGENERATE_AFTER_TURNS="1",
        )
        common.django_setup(env)

        from django.test import Client

        from bench.bench_summary_get import fill_transcript
        from summaries.core.sidecar import sidecar_path
        from summaries.worker import summary_worker_drain
        from transcripts.models import Slot
        from transcripts.runtime import get_store
        from transcripts.services import app_create, session_create, session_sync

        _app, token = app_create(name="bench")
        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
        session_create(name="s1", app=_app)
        key = Slot.objects.get(name="s1").session.key
        size = fill_transcript(get_store().path(key), int(args.size_mb * common.MB), 1)
        session_sync(key=key, force=True)
        print(f"transcript: {size / common.MB:.1f} MB")

        def post(path: str, body: dict[str, object]) -> None:
            response = client.post(
                f"/api/chat/slots/s1/{path}", json.dumps(body), content_type="application/json"
            )
            assert response.status_code in (200, 201), response.content[:300]

        def turn(n: int, summaries: bool) -> float:
            os.environ["KIROCREW_SUMMARY_ENABLED"] = "1" if summaries else "0"
            post("turns", {"content": f"Question {n}: make the export stream, please"})
            post("rows", {"role": "assistant", "content": f"Answer {n}: done, tests pass."})
            assert summary_worker_drain(timeout=600)
            t = time.perf_counter()
            post("turns/end", {"stop_reason": "end_turn"})
            return time.perf_counter() - t

        def stored() -> float | None:
            data = sidecar_path(get_store().root, key, "intents")
            return data.stat().st_mtime if data.exists() else None

        turn(0, True)  # warm-up, and a first summary
        t = time.perf_counter()
        assert summary_worker_drain(timeout=600)
        pass_seconds = time.perf_counter() - t
        samples: dict[str, list[float]] = {"on": [], "off": []}
        passes = 0
        for i in range(args.rounds):
            for arm in ("on", "off") if i % 2 == 0 else ("off", "on"):
                before = stored()
                samples[arm].append(turn(2 * i + (arm == "on") + 1, arm == "on"))
                assert summary_worker_drain(timeout=600)
                passes += arm == "on" and stored() != before
        os.environ["KIROCREW_SUMMARY_ENABLED"] = "1"

    for arm, values in samples.items():
        print(f"turn end, summaries {arm:3}: {common.fmt_latencies(values, width=7)}")
    print(f"summaries stored by the 'on' turn ends: {passes} of {args.rounds}")
    print(
        f"one pass on the worker (first round, after its turn end answered): {pass_seconds:.2f} s"
    )
    ratio = statistics.median(samples["on"]) / statistics.median(samples["off"])
    verdict = "OK" if ratio <= TARGET else "MISSED"
    print(f"median latency on / off = {ratio:.3f} (target <= {TARGET}) {verdict}")
    if passes < args.rounds:
        print("MISSED: an 'on' turn end stored no summary")
        return 1
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
