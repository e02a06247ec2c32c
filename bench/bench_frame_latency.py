"""Summary stored -> ``session_summary`` frame received, over the Redis channel layer.

Needs a Redis server (``REDIS_URL``, default ``redis://127.0.0.1:6379``; exit 2 when none
answers). Uses database ``--redis-db`` (default 13), flushed before and after, and a
private ``KIROCREW_HOME`` (SQLite).

Two processes: this one stores summaries (``summary_generate``, the offline heuristic
backend, after appending a row so each pass stores a new summary) and a real daphne
process serves ``/ws/dashboard/`` to a WebSocket client (a thread here, authenticated as
the slot's app). The pass pushes after its commit: the clock starts when the pass's
on-commit push begins (``t_commit``) and stops when the client has the frame
(``t_recv``); both clocks are this process's ``perf_counter``.

Baseline, interleaved in the same run: a raw Redis ``PUBLISH`` -> ``SUBSCRIBE`` round
trip (redis-py, one subscriber thread). Report only: medians, p90, and the ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common


def redis_url(db: int) -> str | None:
    import redis

    parts = urlsplit(os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379")
    url = urlunsplit((parts.scheme, parts.netloc, f"/{db}", "", ""))
    client = redis.Redis.from_url(url, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError:
        return None
    finally:
        client.close()
    return url


def on_scratch_redis(name: str, db: int, run: Callable[[str, Path], int], *, note: str = "") -> int:
    """``run(url, tmp)`` against Redis database ``db``, flushed before and after, in a
    temporary folder; 2 (nothing measured) when no Redis server answers."""
    url = redis_url(db)
    if url is None:
        print(f"{name}: no Redis server answers (set REDIS_URL); nothing to measure")
        return 2
    import redis

    print(f"{name}: {common.cpu_note()}; Redis db {db}{note}")
    flusher = redis.Redis.from_url(url)
    flusher.flushdb()
    try:
        with common.temp_dir(name.removeprefix("bench_").replace("_", "-")) as tmp:
            return run(url, tmp)
    finally:
        flusher.flushdb()
        flusher.close()


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--samples", type=int, default=60, help="frames to time (default 60)")
    ap.add_argument("--redis-db", type=int, default=13)
    args = ap.parse_args(argv)

    return on_scratch_redis(
        "bench_frame_latency", args.redis_db, lambda url, tmp: run(args, url, tmp)
    )


def run(args: argparse.Namespace, url: str, tmp: Path) -> int:
    import redis
    from websockets.sync.client import connect

    env = common.django_env(
        tmp / "home",
        redis_url=url,
        KIROCREW_SUMMARY_MODEL="heuristic",
        KIROCREW_SUMMARY_MIN_USER_TURNS="1",
    )
    common.django_setup(env)

    from summaries import services
    from summaries.services import PassResult, summary_generate
    from transcripts.models import Slot
    from transcripts.services import app_create, session_append_row, session_create

    app, token = app_create(name="bench")
    slot = session_create(name="s1", app=app)
    session_append_row(key=slot.session.key, role="user", content="Please add a CSV export.")
    session_append_row(key=slot.session.key, role="assistant", content="Added it; tests pass.")
    Slot.objects.filter(pk=slot.pk).update(last_stop_reason="end_turn")

    commits: list[float] = []

    announce = services._announce

    def commit_clock(slot_name: str) -> None:
        commits.append(time.perf_counter())
        announce(slot_name)

    # The pass's on-commit announcement: the clock starts before any receiver runs.
    services._announce = commit_clock

    frames: queue.Queue[float] = queue.Queue()
    published: queue.Queue[float] = queue.Queue()
    stop = threading.Event()

    with contextlib.ExitStack() as cleanup:
        server = cleanup.enter_context(common.Daphne(env, tmp, token=token))
        ws = cleanup.enter_context(
            connect(
                f"ws://127.0.0.1:{server.port}/ws/dashboard/",
                additional_headers={"Authorization": f"Bearer {token}"},
                open_timeout=10,
            )
        )
        hello = json.loads(ws.recv(timeout=10))
        assert hello["type"] == "hello", hello

        def listen_ws() -> None:
            while not stop.is_set():
                try:
                    raw = ws.recv(timeout=0.2)
                except TimeoutError:
                    continue
                except Exception:
                    return
                if json.loads(raw).get("type") == "session_summary":
                    frames.put(time.perf_counter())

        subscriber = redis.Redis.from_url(url)
        pubsub = subscriber.pubsub()
        pubsub.subscribe("bench-latency")
        assert pubsub.get_message(timeout=5) is not None  # the subscribe confirmation

        def listen_redis() -> None:
            while not stop.is_set():
                message = pubsub.get_message(timeout=0.2)
                if message and message["type"] == "message":
                    published.put(time.perf_counter())

        threads = [threading.Thread(target=t, daemon=True) for t in (listen_ws, listen_redis)]
        for thread in threads:
            thread.start()
        publisher = redis.Redis.from_url(url)

        frame_lat: list[float] = []
        pass_lat: list[float] = []
        pubsub_lat: list[float] = []
        warmup = 5
        for i in range(args.samples + warmup):
            # arm A: a stored summary's frame
            session_append_row(key=slot.session.key, role="assistant", content=f"Also {i}.")
            started = time.perf_counter()
            outcome = summary_generate(slot_name="s1", force=True)
            assert outcome.reason is PassResult.STORED, outcome
            received = frames.get(timeout=10)
            # arm B: raw PUBLISH -> SUBSCRIBE
            sent = time.perf_counter()
            publisher.publish("bench-latency", b"x")
            arrived = published.get(timeout=10)
            if i >= warmup:
                frame_lat.append(received - commits[-1])
                pass_lat.append(received - started)
                pubsub_lat.append(arrived - sent)
            time.sleep(0.02)

        stop.set()
        for thread in threads:
            thread.join(timeout=2)
        pubsub.close()
        subscriber.close()
        publisher.close()

    def show(label: str, values: list[float]) -> None:
        print(f"{label:42}: {common.fmt_latencies(values)}")

    print(f"samples: {len(frame_lat)} (after {warmup} warm-up)")
    show("commit -> frame at the client (Redis layer)", frame_lat)
    show("pass start -> frame at the client", pass_lat)
    show("baseline: redis PUBLISH -> SUBSCRIBE", pubsub_lat)
    ratio = statistics.median(frame_lat) / statistics.median(pubsub_lat)
    print(f"median commit->frame / raw pub-sub = {ratio:.1f}x (report only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
