"""PostgreSQL connection pool: throughput and CPU per request, pooled against unpooled.

Two real daphne processes share one PostgreSQL database and one ``KIROCREW_HOME``: one with
``KIROCREW_DB_POOL=1`` (psycopg's pool, the default) and one with ``KIROCREW_DB_POOL=0``
(a new connection per request, as before). A loopback client drives the same mix at each
in turn, interleaved: per slot, appended rows (``POST .../rows``) and summary reads
(``GET .../summary``), 16 connections. Per arm it prints requests/s and the CPU per
request of daphne plus every PostgreSQL server process (``/proc``), so the cost a new
connection puts on the database shows too.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/bench_db_pool.py

Target: pooled requests/s >= 1.1x unpooled (a new connection per request cost 6.4 ms wall
and 4.4 ms of server CPU against 0.09 ms for a reused one). Needs PostgreSQL; without one
it says so and exits 0.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

TARGET = 1.1
CONNECTIONS = 16
SLOTS = 8
BENCH_DB = "kirocrew_bench_pool"


def _postgres_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip().startswith("postgres"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _postgres_cpu() -> float:
    # Backends come and go with unpooled connections: a finished backend's CPU is lost
    # from /proc, so the postmaster's children totals (cutime/cstime) are added.
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in _postgres_pids():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / tick
    return total


async def _drive(base: str, token: str, seconds: float) -> int:
    import httpx

    done = 0
    deadline = time.perf_counter() + seconds
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=CONNECTIONS)
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits) as client:

        async def worker(n: int) -> None:
            nonlocal done
            slot = f"s{n % SLOTS}"
            i = 0
            while time.perf_counter() < deadline:
                if i % 2 == 0:
                    body = {"role": "assistant", "content": f"step {i} of worker {n}"}
                    response = await client.post(f"/api/chat/slots/{slot}/rows", json=body)
                    expected = 201
                else:
                    response = await client.get(f"/api/chat/slots/{slot}/summary")
                    expected = 200
                if response.status_code != expected:
                    raise RuntimeError(f"{response.request.url}: {response.status_code}")
                done += 1
                i += 1

        await asyncio.gather(*(worker(n) for n in range(CONNECTIONS)))
    return done


def _database_url() -> str | None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        return None
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {BENCH_DB}")
    except psycopg.Error as exc:
        print(f"bench_db_pool: PostgreSQL at DATABASE_URL not usable ({exc.__class__.__name__})")
        return None
    return url.rsplit("/", 1)[0] + f"/{BENCH_DB}"


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--duration", type=float, default=5, help="seconds per run (default 5)")
    ap.add_argument("--runs", type=int, default=3, help="runs per arm (default 3)")
    args = ap.parse_args(argv)
    print(f"bench_db_pool: {common.cpu_note()}")
    url = _database_url()
    if url is None:
        print("bench_db_pool: skipped, set DATABASE_URL=postgres://... to run it")
        return 0
    rps: dict[str, list[float]] = {"pooled": [], "unpooled": []}
    cpu: dict[str, list[float]] = {"pooled": [], "unpooled": []}
    with common.temp_dir("db-pool") as tmp:
        env = common.django_env(tmp / "home", DATABASE_URL=url)
        common.django_setup(env)
        from django.db import connections

        from transcripts.models import Slot
        from transcripts.services import app_create, session_create

        app, token = app_create(name="bench")
        for n in range(SLOTS):
            session_create(name=f"s{n}", app=app)
            common.store_summary(Slot.objects.get(name=f"s{n}").name)
        connections.close_all()
        pooled = common.Daphne({**env, "KIROCREW_DB_POOL": "1"}, tmp, token=token)
        unpooled = common.Daphne({**env, "KIROCREW_DB_POOL": "0"}, tmp, token=token)
        with pooled, unpooled:
            servers = {"pooled": pooled, "unpooled": unpooled}
            for server in servers.values():  # warm-up: imports, pool, caches
                asyncio.run(_drive(server.base, token, 1))
            for i in range(args.runs):
                order = ("pooled", "unpooled") if i % 2 == 0 else ("unpooled", "pooled")
                for arm in order:
                    server = servers[arm]
                    before = common.cpu_seconds([server.proc.pid]) + _postgres_cpu()
                    t0 = time.perf_counter()
                    done = asyncio.run(_drive(server.base, token, args.duration))
                    elapsed = time.perf_counter() - t0
                    spent = common.cpu_seconds([server.proc.pid]) + _postgres_cpu() - before
                    rps[arm].append(done / elapsed)
                    cpu[arm].append(spent / done * 1000)
    for arm in ("pooled", "unpooled"):
        print(
            f"{arm:9}: median {statistics.median(rps[arm]):7,.0f} req/s, "
            f"{statistics.median(cpu[arm]):5.2f} ms CPU/request (daphne + PostgreSQL) "
            f"(runs: {', '.join(f'{r:,.0f}' for r in rps[arm])})"
        )
    ratio = statistics.median(rps["pooled"]) / statistics.median(rps["unpooled"])
    cpu_ratio = statistics.median(cpu["pooled"]) / statistics.median(cpu["unpooled"])
    verdict = "OK" if ratio >= TARGET else "MISSED"
    print(f"CPU per request pooled / unpooled = {cpu_ratio:.2f}")
    print(f"req/s pooled / unpooled = {ratio:.2f} (target >= {TARGET}) {verdict}")
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
