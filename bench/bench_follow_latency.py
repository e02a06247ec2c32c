"""``import_transcripts --follow``: a record appended to a watched Claude Code file -> its
``row`` frame at a dashboard user's WebSocket.

Needs a Redis server (``REDIS_URL``, default ``redis://127.0.0.1:6379``; exit 2 when none
answers). Uses database ``--redis-db`` (default 11), flushed before and after, and a
private ``KIROCREW_HOME`` (SQLite) shared by three processes, as in production.
``--embedded``: no Redis, the default profile, where the server's frame relay
(``$KIROCREW_HOME/frames/``) carries the follower's frames:

* this one builds a folder of Claude Code sessions, imports it once, logs a dashboard
  user in (a Django session cookie) and appends the records;
* a real daphne process (the Redis channel layer) serves ``/ws/dashboard/`` to a
  WebSocket client (a thread here) that presents the cookie and a same-origin Origin;
* ``manage.py import_transcripts --format claude-code --follow --interval I SRC`` as a
  child process, polling the whole folder.

Each append is one ``type: user`` record written to one session file; the clock starts
just after the write and stops (a) when the row is in the store (its text in the
transcript's tail) and (b) when the client has the ``row`` frame of that session. The
appends are spread over the poll phase (not always just after a poll). Target: median
append -> frame within two poll intervals (one interval to be seen at worst, plus the
import and the push); the median, p95 and their ratio to the interval are printed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson

from bench import common
from bench.bench_agent_import import build_session
from bench.bench_frame_latency import on_scratch_redis


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--interval", type=float, default=1.0, help="--follow poll interval (s)")
    ap.add_argument("--appends", type=int, default=15, help="records appended and timed")
    ap.add_argument("--sessions", type=int, default=50, help="sessions in the watched folder")
    ap.add_argument("--redis-db", type=int, default=11)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--embedded", action="store_true", help="no Redis: the frame relay")
    args = ap.parse_args(argv)

    if args.embedded:
        print(f"bench_follow_latency: {common.cpu_note()}; embedded (no Redis: the frame relay)")
        with common.temp_dir("follow-latency") as tmp:
            return run(args, None, tmp)
    return on_scratch_redis(
        "bench_follow_latency", args.redis_db, lambda url, tmp: run(args, url, tmp)
    )


def _dashboard_cookie() -> str:
    """A logged-in dashboard user's session cookie (the daphne child shares the database
    and the SECRET_KEY file under KIROCREW_HOME, so it accepts it)."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.create_user("bench", password=uuid.uuid4().hex)
    client = Client()
    client.force_login(user)
    name = settings.SESSION_COOKIE_NAME
    return f"{name}={client.cookies[name].value}"


def run(args: argparse.Namespace, url: str | None, tmp: Path) -> int:
    from websockets.sync.client import connect

    rng = random.Random(args.seed)
    source, home = tmp / "claude" / "projects" / "-home-dev-proj", tmp / "home"
    source.mkdir(parents=True)
    home.mkdir()
    files = [source / f"{uuid.UUID(int=rng.getrandbits(128))}.jsonl" for _ in range(args.sessions)]
    for path in files:
        build_session(path, rng, 20_000)
    target = files[0]

    env = common.django_env(home, redis_url=url, KIROCREW_SUMMARY_ENABLED="0")
    common.django_setup(env)
    from django.core.management import call_command

    from transcripts.core.keys import slot_name_for_key
    from transcripts.runtime import get_store
    from transcripts.services import app_create

    # The child's first poll then only checks offsets, as a long-running follow does.
    call_command("import_transcripts", "--format", "claude-code", str(source), stdout=io.StringIO())
    key = f"claude:{target.stem}"
    slot_name, store = slot_name_for_key(key), get_store()
    _, token = app_create(name="bench")  # the Daphne helper's health check needs a token
    cookie = _dashboard_cookie()

    frames: queue.Queue[float] = queue.Queue()
    stop = threading.Event()
    manage = str(common.REPO_ROOT / "manage.py")
    follow_cmd = [sys.executable, manage, "import_transcripts", "--format", "claude-code"]
    follow_cmd += ["--follow", "--interval", str(args.interval), str(source)]

    with contextlib.ExitStack() as cleanup:
        server = cleanup.enter_context(common.Daphne(env, tmp, token=token))
        ws = cleanup.enter_context(
            connect(
                f"ws://127.0.0.1:{server.port}/ws/dashboard/",
                additional_headers={"Cookie": cookie, "Origin": server.base},
                open_timeout=10,
            )
        )
        hello = json.loads(ws.recv(timeout=10))
        assert hello == {"type": "hello", "data": {"scope": "dashboard"}}, hello

        def listen() -> None:
            while not stop.is_set():
                try:
                    frame = json.loads(ws.recv(timeout=0.2))
                except TimeoutError:
                    continue
                except Exception:
                    return
                data = frame.get("data") or {}
                if frame.get("type") == "row" and data.get("key") == slot_name:
                    frames.put(time.perf_counter())

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        cleanup.callback(listener.join, 5)
        cleanup.callback(stop.set)
        log = (tmp / "follow.log").open("wb")
        cleanup.callback(log.close)
        child = subprocess.Popen(
            follow_cmd,
            env={**os.environ, **env},
            cwd=common.REPO_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        cleanup.callback(_stop, child)

        def append_and_time(marker: str, limit: float) -> tuple[float, float]:
            """(append -> in the store, append -> row frame), in seconds."""
            while not frames.empty():  # a late frame of an earlier append is not this one's
                frames.get_nowait()
            record = {
                "type": "user",
                "sessionId": target.stem,
                "uuid": str(uuid.uuid4()),
                "message": {"role": "user", "content": marker},
            }
            with target.open("ab") as fp:
                fp.write(orjson.dumps(record) + b"\n")
            start = time.perf_counter()
            stored = framed = None
            needle = marker.encode()
            while stored is None or framed is None:
                now = time.perf_counter()
                if now - start > limit:
                    raise RuntimeError(f"{marker}: no row after {limit:.0f}s (see follow.log)")
                if stored is None and needle in store.path(key).read_bytes()[-4096:]:
                    stored = now - start
                if framed is None:
                    with contextlib.suppress(queue.Empty):
                        framed = frames.get(timeout=0.005) - start
            return stored, framed

        # Warm-up, not counted: the child's Django start-up and its first poll.
        append_and_time("follow-warmup", 120.0)
        in_store: list[float] = []
        on_socket: list[float] = []
        for i in range(args.appends):
            time.sleep(args.interval * (0.3 + 0.37 * (i % 3)))  # spread over the poll phase
            stored, framed = append_and_time(f"follow-marker-{i}", 10 * args.interval)
            in_store.append(stored)
            on_socket.append(framed)
    return report(args.interval, in_store, on_socket)


def _stop(child: subprocess.Popen[bytes]) -> None:
    child.terminate()
    try:
        child.wait(timeout=30)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def report(interval: float, in_store: list[float], on_socket: list[float]) -> int:
    def line(name: str, values: list[float]) -> float:
        median = statistics.median(values)
        p95 = common.percentile(values, 0.95)
        print(
            f"  append -> {name:<10} median {median * 1000:6.0f} ms ({median / interval:.2f} "
            f"intervals)  p95 {p95 * 1000:6.0f} ms ({p95 / interval:.2f})  "
            f"max {max(values) * 1000:6.0f} ms"
        )
        return median

    print(f"--follow, poll interval {interval:.2f}s, {len(on_socket)} appends:")
    line("in store", in_store)
    median = line("row frame", on_socket)
    met = median <= 2 * interval
    print(
        f"median append -> frame / interval: {median / interval:.2f}; target <= 2.0: "
        f"{'MET' if met else 'MISSED'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
