"""Scale-out: CPU per request of two daphne + two Celery workers against one + one.

Both arms share one PostgreSQL database, one Redis server (a db number of their own each,
so neither arm's worker takes the other's tasks) and one sessions folder (``KIROCREW_HOME``).
A loopback client drives the same fixed work at each arm in turn, interleaved: per slot,
on fresh slots each run, turns of a user row (``POST .../turns``), an assistant row
(``POST .../rows``), the turn end (``POST .../turns/end``, which queues a summary pass on
Celery) and a summary read (``GET .../summary``); in the two-daphne arm the slots are split
between the daphnes. After the client, the bench waits until the broker's queue is empty
and no task is unacknowledged, so every pass a turn end queued is counted.

CPU counts every process of the arm: the daphnes, the Celery workers with their pool
children, the PostgreSQL backends connected to the bench's database (sampled from
``pg_stat_activity`` during the run; a backend that ends between samples loses what it
spent since the last), and redis-server (shared with whatever else uses it: noise in both
arms alike). Printed per arm: requests, turn ends, CPU per request, the workers' CPU per
turn end and the summary passes' outcomes (from the workers' logs); then the ratio.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
    REDIS_URL=redis://127.0.0.1:6379 .venv/bin/python bench/bench_scale_out.py

Target: two-plus-two costs at most 1.05x the CPU per request of one-plus-one. Needs
PostgreSQL and Redis; without them it says so and exits 0.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

TARGET = 1.05
SLOTS = 8  # one client per slot
BENCH_DB = "kc_scale"
REDIS_DBS = {"one+one": 12, "two+two": 13}
OUTCOME = re.compile(r"Session summary (?:stored|skipped for \S+: (\S+)|not stored for \S+: (\S+))")


@dataclass
class Run:
    requests: int = 0
    turn_ends: int = 0
    cpu: float = 0.0  # seconds, every process of the arm
    worker_cpu: float = 0.0
    outcomes: collections.Counter[str] = field(default_factory=collections.Counter)


class CeleryWorker:
    """A real ``celery worker`` (prefork, one pool child) in its own process group."""

    def __init__(self, env: dict[str, str], log_dir: Path, name: str) -> None:
        self.env = env
        self.name = name
        self.log_path = log_dir / f"celery-{name}.log"
        self.proc: Any = None

    def __enter__(self) -> CeleryWorker:
        celery = Path(sys.executable).parent / "celery"
        argv = [str(celery), "-A", "kirocrew_site", "worker", "--concurrency=1", "-l", "INFO"]
        argv += ["-n", f"{self.name}@bench", "--without-gossip", "--without-mingle"]
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                argv,
                cwd=common.REPO_ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while b" ready." not in self.log_path.read_bytes():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise RuntimeError(f"celery did not start:\n{self.log_path.read_text()[-3000:]}")
            time.sleep(0.2)
        return self

    def outcomes(self) -> collections.Counter[str]:
        found: collections.Counter[str] = collections.Counter()
        for match in OUTCOME.finditer(self.log_path.read_text(errors="replace")):
            found[match.group(1) or match.group(2) or "stored"] += 1
        return found

    def __exit__(self, *exc_info: object) -> None:
        if self.proc is not None:
            common.stop_group(self.proc, timeout=10)
        self.proc = None


class Backends:
    """The PostgreSQL backends of the bench's database: their pids, sampled while a run
    goes on, and the CPU each was last seen at."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self, conn: Any) -> None:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (BENCH_DB,),
        ).fetchall()
        for (pid,) in rows:
            spent = common.cpu_seconds([pid])
            if spent or pid not in self.seen:
                self.seen[pid] = max(self.seen.get(pid, 0.0), spent)

    def cpu(self) -> float:
        return sum(self.seen.values())

    def __enter__(self) -> Backends:
        import psycopg

        def loop() -> None:
            with psycopg.connect(self.url, autocommit=True) as conn:
                while True:
                    self._sample(conn)
                    if self._stop.wait(0.25):
                        self._sample(conn)
                        return

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def logged_env(env: dict[str, str]) -> dict[str, str]:
    """A worker's environment: the passes' outcomes logged (INFO), to be counted."""
    return {**env, "KIROCREW_LOG_LEVEL": "INFO"}


def _redis_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip().startswith("redis-server"):
                    pids.append(int(entry.name))
    return pids


async def _drive(bases: list[str], token: str, slots: list[str], turns: int) -> int:
    """``turns`` turns on every slot, slot i on ``bases[i % len(bases)]``; requests made."""
    import httpx

    done = 0
    headers = {"Authorization": f"Bearer {token}"}
    clients = [httpx.AsyncClient(base_url=base, headers=headers, timeout=60) for base in bases]

    async def call(client: httpx.AsyncClient, method: str, path: str, expected: int, **kw: Any):
        nonlocal done
        response = await client.request(method, path, **kw)
        if response.status_code != expected:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:200]}")
        done += 1

    async def session(n: int, slot: str) -> None:
        client = clients[n % len(clients)]
        await call(client, "POST", "/api/chat/slots", 201, json={"name": slot})
        for i in range(turns):
            words = f"please fix step {i} of the export in src/export_{n}.py and run the tests"
            await call(
                client, "POST", f"/api/chat/slots/{slot}/turns", 201, json={"content": words}
            )
            reply = f"Fixed step {i}: the export now writes the header once. 12 tests pass."
            body = {"role": "assistant", "content": reply}
            await call(client, "POST", f"/api/chat/slots/{slot}/rows", 201, json=body)
            end = {"stop_reason": "end_turn"}
            await call(client, "POST", f"/api/chat/slots/{slot}/turns/end", 200, json=end)
            await call(client, "GET", f"/api/chat/slots/{slot}/summary", 200)

    try:
        await asyncio.gather(*(session(n, slot) for n, slot in enumerate(slots)))
    finally:
        for client in clients:
            await client.aclose()
    return done


def _drained(redis_url: str, timeout: float = 300.0) -> bool:
    """The broker holds no queued task and none unacknowledged (kombu's Redis keys)."""
    import redis

    conn = redis.Redis.from_url(redis_url)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not conn.llen("celery") and not conn.hlen("unacked"):
            return True
        time.sleep(0.2)
    return False


def _services(db_url: str, redis_url: str) -> str | None:
    """The bench database's URL (created afresh), or None when a service is unusable."""
    import psycopg
    import redis

    try:
        with psycopg.connect(db_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {BENCH_DB}")
        for db in REDIS_DBS.values():
            redis.Redis.from_url(f"{redis_url}/{db}").flushdb()
    except (psycopg.Error, redis.RedisError) as exc:
        print(f"bench_scale_out: PostgreSQL or Redis not usable ({exc.__class__.__name__})")
        return None
    return db_url.rsplit("/", 1)[0] + f"/{BENCH_DB}"


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--turns", type=int, default=20, help="turns per slot and run (default 20)")
    ap.add_argument("--runs", type=int, default=3, help="runs per arm (default 3)")
    args = ap.parse_args(argv)
    print(f"bench_scale_out: {common.cpu_note()}")
    db_url = os.environ.get("DATABASE_URL", "")
    redis_base = os.environ.get("REDIS_URL", "").rstrip("/")
    redis_base = re.sub(r"/\d+$", "", redis_base)
    if not db_url.startswith("postgres") or not redis_base.startswith("redis"):
        print("bench_scale_out: skipped, set DATABASE_URL=postgres://... and REDIS_URL=redis://...")
        return 0
    url = _services(db_url, redis_base)
    if url is None:
        return 0
    runs: dict[str, list[Run]] = {arm: [] for arm in REDIS_DBS}
    with common.temp_dir("scale-out") as tmp, contextlib.ExitStack() as stack:
        envs = {
            arm: common.django_env(tmp / "home", redis_url=f"{redis_base}/{db}", DATABASE_URL=url)
            for arm, db in REDIS_DBS.items()
        }
        common.django_setup(envs["one+one"])
        from django.db import connections

        from transcripts.services import app_create

        _app, token = app_create(name="bench")
        connections.close_all()
        counts = {"one+one": 1, "two+two": 2}
        daphnes = {
            arm: [
                stack.enter_context(common.Daphne(envs[arm], tmp, token=token))
                for _ in range(counts[arm])
            ]
            for arm in REDIS_DBS
        }
        workers = {
            arm: [
                stack.enter_context(CeleryWorker(logged_env(envs[arm]), tmp, f"{arm[:3]}{i}"))
                for i in range(counts[arm])
            ]
            for arm in REDIS_DBS
        }
        for arm in REDIS_DBS:  # warm-up: imports, pools, caches
            bases = [d.base for d in daphnes[arm]]
            asyncio.run(_drive(bases, token, [f"warm-{arm[:3]}-{n}" for n in range(SLOTS)], 3))
            _drained(f"{redis_base}/{REDIS_DBS[arm]}")
        for i in range(args.runs):
            order = list(REDIS_DBS) if i % 2 == 0 else list(reversed(REDIS_DBS))
            for arm in order:
                runs[arm].append(
                    _run(arm, i, daphnes[arm], workers[arm], url, redis_base, token, args.turns)
                )
    for arm, done in runs.items():
        outcomes: collections.Counter[str] = collections.Counter()
        for run in done:
            outcomes += run.outcomes
        per_request = [run.cpu / run.requests * 1000 for run in done]
        per_turn = [run.worker_cpu / run.turn_ends * 1000 for run in done]
        print(
            f"{arm}: median {statistics.median(per_request):5.2f} ms CPU/request "
            f"(runs: {', '.join(f'{v:.2f}' for v in per_request)}); workers "
            f"{statistics.median(per_turn):5.1f} ms CPU/turn end; "
            f"{done[0].requests} requests, {done[0].turn_ends} turn ends a run"
        )
        turn_ends = sum(run.turn_ends for run in done)
        print(
            "  pass outcomes per turn end: "
            + ", ".join(f"{k} {v / turn_ends:.2f}" for k, v in outcomes.most_common())
        )
    ratio = statistics.median(r.cpu / r.requests for r in runs["two+two"]) / statistics.median(
        r.cpu / r.requests for r in runs["one+one"]
    )
    verdict = "OK" if ratio <= TARGET else "MISSED"
    print(f"CPU per request two+two / one+one = {ratio:.2f} (target <= {TARGET}) {verdict}")
    return 0 if ratio <= TARGET else 1


def _run(
    arm: str,
    number: int,
    daphnes: list[common.Daphne],
    workers: list[CeleryWorker],
    url: str,
    redis_base: str,
    token: str,
    turns: int,
) -> Run:
    run = Run()
    slots = [f"r{number}-{arm[:3]}-{n}" for n in range(SLOTS)]
    logged = [w.outcomes() for w in workers]

    def app_cpu() -> tuple[float, float]:
        worker = sum(
            common.cpu_seconds(common.process_tree(w.proc.pid), reaped=True) for w in workers
        )
        server = common.cpu_seconds([d.proc.pid for d in daphnes]) + common.cpu_seconds(
            _redis_pids()
        )
        return worker, server

    with Backends(url) as backends:
        time.sleep(0.5)  # a first sample of the pooled backends
        first = backends.cpu()
        worker0, server0 = app_cpu()
        run.requests = asyncio.run(_drive([d.base for d in daphnes], token, slots, turns))
        if not _drained(f"{redis_base}/{REDIS_DBS[arm]}"):
            raise RuntimeError(f"{arm}: the summary passes did not finish")
        worker1, server1 = app_cpu()
    run.turn_ends = turns * len(slots)
    run.worker_cpu = worker1 - worker0
    run.cpu = run.worker_cpu + server1 - server0 + backends.cpu() - first
    for worker, before in zip(workers, logged, strict=True):
        run.outcomes += worker.outcomes() - before
    return run


if __name__ == "__main__":
    sys.exit(main())
