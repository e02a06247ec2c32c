"""Server memory while 10 clients page through a 100 MB session (issue 12, item 1).

Builds the same ~100 MB rotated session as ``bench_paging.py`` in a private
``KIROCREW_HOME``, starts ONE real daphne process on it and records its resident size
(``VmRSS``) once idle (after a warm-up on a small session), then while 10 concurrent
clients each walk every page of the big session (``?limit=…&after=<next>``), sampling
every 20 ms. Before the offset index, every page folded the whole session.

Target: peak RSS while paging <= 2x the idle RSS (both printed in MB).
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from bench.bench_paging import fill

TARGET = 2.0


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fp:
        for line in fp:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024 / common.MB
    raise RuntimeError("no VmRSS")


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--size-mb", type=float, default=100, help="big session (default 100)")
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument(
        "--limit", type=int, default=100, help="rows per page (default 100, the API default)"
    )
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    print(f"bench_paging_memory: {common.cpu_note()}")
    with common.temp_dir("paging-memory") as tmp:
        home = tmp / "home"
        env = common.django_env(home)
        common.django_setup(env)
        import httpx

        from transcripts.models import Slot
        from transcripts.runtime import get_store
        from transcripts.services import app_create, session_create

        app, token = app_create(name="bench")
        store = get_store()
        for name in ("big", "small"):
            session_create(name=name, app=app)
        big = Slot.objects.get(name="big").session.key
        small = Slot.objects.get(name="small").session.key
        size = fill(
            store,
            big,
            int(args.size_mb * common.MB),
            args.seed,
            rotate_every=store.max_bytes + 65536,
        )
        fill(store, small, 200_000, args.seed + 1, rotate_every=None)
        rows = len(store.read_session(big).rows)
        print(f"big session: {size / common.MB:.1f} MB, {rows:,} rows")
        headers = {"Authorization": f"Bearer {token}"}
        with common.Daphne(env, tmp, token=token) as server:
            pid = server.proc.pid
            with httpx.Client(base_url=server.base, headers=headers, timeout=600) as client:
                for _ in range(20):  # warm-up: imports, the database, a small session
                    assert client.get("/api/chat/slots/small/transcript").status_code == 200
            time.sleep(1.0)
            idle = rss_mb(pid)
            peak, stop = idle, threading.Event()

            def sample() -> None:
                nonlocal peak
                while not stop.is_set():
                    peak = max(peak, rss_mb(pid))
                    time.sleep(0.02)

            pages: list[int] = []
            failures: list[str] = []

            def walk() -> None:
                seen, query = 0, f"?limit={args.limit}"
                with httpx.Client(base_url=server.base, headers=headers, timeout=600) as c:
                    while True:
                        response = c.get("/api/chat/slots/big/transcript" + query)
                        if response.status_code != 200:
                            failures.append(response.text[:200])
                            return
                        body = response.json()
                        seen += len(body["rows"])
                        pages.append(1)
                        if body["next"] is None:
                            break
                        query = f"?limit={args.limit}&after={quote(body['next'])}"
                if seen != rows:
                    failures.append(f"walked {seen} rows of {rows}")

            sampler = threading.Thread(target=sample)
            sampler.start()
            t0 = time.perf_counter()
            walkers = [threading.Thread(target=walk) for _ in range(args.clients)]
            for w in walkers:
                w.start()
            for w in walkers:
                w.join()
            elapsed = time.perf_counter() - t0
            stop.set()
            sampler.join()

    if failures:
        print("FAILED:", failures[:3])
        return 1
    ratio = peak / idle
    print(
        f"{args.clients} clients walked {len(pages):,} pages of {args.limit} rows in "
        f"{elapsed:.1f} s; server RSS idle {idle:.1f} MB, peak {peak:.1f} MB"
    )
    met = ratio <= TARGET
    print(f"ratio peak / idle RSS = {ratio:.2f} (target <= {TARGET}) {'MET' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
