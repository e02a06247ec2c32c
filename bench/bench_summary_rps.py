"""GET summary requests/s vs a trivial JSON view on the same daphne process, under load
from a loopback client.

Sets up a private ``KIROCREW_HOME`` (SQLite, no outside database), an app, a slot with a
realistic transcript (~1 MB) and a stored summary, then starts ONE real daphne process
and alternates load runs against two authenticated routes:

* summary:  ``GET /api/chat/slots/<slot>/summary`` (one precompiled slot + session
  query with the ownership check, config, sidecar read, one stat of the transcript,
  ``generate_state``);
* baseline: ``GET /api/health`` (``{"ok": true}``; the same auth, nothing else).

Load generator: ``wrk`` when installed (``apt-get install -y wrk``; ``-t1 -c16``), else a
Python asyncio/httpx loop with 16 connections (that client is slower than daphne, so the
ratio it reports is compressed towards 1: prefer wrk). Each run lasts ``--duration``
seconds, ``--runs`` per arm, interleaved.

Target: median req/s summary / baseline >= 0.8 (issue 12: the GET executes one
precompiled slot query, so it does no more ORM compilation than the baseline).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

TARGET = 0.8
CONNECTIONS = 16


def wrk_run(url: str, token: str, seconds: float) -> tuple[float, str]:
    out = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{CONNECTIONS}",
            f"-d{max(1, round(seconds))}s",
            "--latency",
            "-H",
            f"Authorization: Bearer {token}",
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=seconds + 30,
    ).stdout
    if re.search(r"Non-2xx or 3xx responses", out):
        raise RuntimeError(f"wrk saw error responses from {url}:\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p99 = re.search(r"99%\s+(\S+)", out)
    return rps, p99.group(1) if p99 else "?"


def python_run(url: str, token: str, seconds: float) -> tuple[float, str]:
    import httpx

    async def run() -> tuple[int, list[float]]:
        done = 0
        latencies: list[float] = []
        deadline = time.perf_counter() + seconds
        limits = httpx.Limits(max_connections=CONNECTIONS)
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(limits=limits, headers=headers) as client:

            async def worker() -> None:
                nonlocal done
                while time.perf_counter() < deadline:
                    t = time.perf_counter()
                    response = await client.get(url)
                    if response.status_code != 200:
                        raise RuntimeError(f"{url}: {response.status_code}")
                    latencies.append(time.perf_counter() - t)
                    done += 1

            await asyncio.gather(*(worker() for _ in range(CONNECTIONS)))
        return done, latencies

    t0 = time.perf_counter()
    done, latencies = asyncio.run(run())
    p99 = common.percentile(latencies, 0.99)
    return done / (time.perf_counter() - t0), f"{p99 * 1000:.2f}ms"


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--duration", type=float, default=5, help="seconds per run (default 5)")
    ap.add_argument("--runs", type=int, default=3, help="runs per arm (default 3)")
    ap.add_argument("--python-client", action="store_true", help="ignore wrk even if present")
    args = ap.parse_args(argv)

    use_wrk = shutil.which("wrk") is not None and not args.python_client
    load = wrk_run if use_wrk else python_run
    print(f"bench_summary_rps: {common.cpu_note()}")
    print(
        f"load generator: {'wrk -t1' if use_wrk else 'python asyncio/httpx'}, "
        f"{CONNECTIONS} connections"
    )
    with common.temp_dir("summary-rps") as tmp:
        home = tmp / "home"
        env = common.django_env(home)
        common.django_setup(env)

        from bench.bench_summary_get import fill_transcript
        from transcripts.models import Slot
        from transcripts.runtime import get_store
        from transcripts.services import app_create, session_create, session_sync

        app, token = app_create(name="bench")
        session_create(name="s1", app=app)
        key = Slot.objects.get(name="s1").session.key
        size = fill_transcript(get_store().path(key), 1_000_000, 1)
        session_sync(key=key, force=True)
        common.store_summary("s1")
        print(f"transcript: {size / common.MB:.1f} MB, summary with 6 intents")
        from django.db import connections

        connections.close_all()  # daphne owns the database from here on

        with common.Daphne(env, tmp, token=token) as server:
            urls = {
                "baseline": f"{server.base}/api/health",
                "summary": f"{server.base}/api/chat/slots/s1/summary",
            }
            for url in urls.values():  # warm-up
                load(url, token, 1)
            results: dict[str, list[float]] = {"baseline": [], "summary": []}
            tails: dict[str, list[str]] = {"baseline": [], "summary": []}
            for i in range(args.runs):
                arms = ("baseline", "summary") if i % 2 == 0 else ("summary", "baseline")
                for arm in arms:
                    rps, p99 = load(urls[arm], token, args.duration)
                    results[arm].append(rps)
                    tails[arm].append(p99)

    for arm in ("baseline", "summary"):
        print(
            f"{arm:8}: median {statistics.median(results[arm]):8,.0f} req/s "
            f"(runs: {', '.join(f'{r:,.0f}' for r in results[arm])}; p99 {', '.join(tails[arm])})"
        )
    ratio = statistics.median(results["summary"]) / statistics.median(results["baseline"])
    verdict = "OK" if ratio >= TARGET else "MISSED"
    print(f"req/s summary / baseline = {ratio:.3f} (target >= {TARGET}) {verdict}")
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
