"""GET /api/chat/slots: a page when the app owns 10 000 slots vs when it owns 10.

Sets up a private ``KIROCREW_HOME`` (SQLite, no outside database, migrated) and two
apps: ``small`` owns 10 slots, ``big`` owns 10 000 (rows inserted in bulk: the list reads
the database only), each with a one-line summary, activity spread over a year and some
slots that never had a row. Times ``GET /api/chat/slots?limit=10`` through Django's test
``Client`` (the whole middleware stack, in process), alternating request by request:

* small: the first (and only) page of the small app;
* big:   the first page of the big app;
* deep:  a page in the middle of the big app (a cursor ~5 000 slots in; report and target).

Target: median latency big / small <= 2.0 and deep / small <= 2.0.
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

TARGET = 2.0
LIMIT = 10


def populate(app: Any, prefix: str, count: int) -> None:
    from django.utils import timezone

    from summaries.models import OneLineSummary
    from transcripts.models import Session, Slot

    now = timezone.now()
    sessions = [
        Session(
            key=f"dashboard:{prefix}{i}",
            safe_key=f"dashboard_{prefix}{i}",
            app=app,
            title=f"Session {i}",
            # one in 20 never had a row; the others spread over a year
            last_activity=None if i % 20 == 0 else now - timedelta(minutes=(i * 7919) % 525_600),
            user_turns=i % 40,
        )
        for i in range(count)
    ]
    Session.objects.bulk_create(sessions, batch_size=2000)
    created = Session.objects.filter(key__startswith=f"dashboard:{prefix}").order_by("pk")
    Slot.objects.bulk_create(
        [Slot(name=s.key.split(":", 1)[1], session=s, app=app) for s in created], batch_size=2000
    )
    OneLineSummary.objects.bulk_create(
        [
            OneLineSummary(session=s, summary=f"Gist of {s.title}", sig=1, gen=0, generated_at=now)
            for s in created
        ],
        batch_size=2000,
    )


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--slots", type=int, default=10_000, help="the big app's slots")
    ap.add_argument("--requests", type=int, default=300, help="GETs per arm (default 300)")
    args = ap.parse_args(argv)

    print(f"bench_slot_list: {common.cpu_note()}")
    with common.temp_dir("slot-list") as tmp:
        common.django_setup(common.django_env(tmp / "home"))

        from django.test import Client

        from transcripts.services import app_create

        small_app, small_token = app_create(name="small")
        big_app, big_token = app_create(name="big")
        t0 = time.perf_counter()
        populate(small_app, "small", 10)
        populate(big_app, "big", args.slots)
        print(f"slots: small 10, big {args.slots:,} (built in {time.perf_counter() - t0:.1f} s)")

        small = Client(HTTP_AUTHORIZATION=f"Bearer {small_token}")
        big = Client(HTTP_AUTHORIZATION=f"Bearer {big_token}")
        cursor = None
        for _ in range(args.slots // 2 // 200):  # walk to the middle, 200 a page
            query = "?limit=200" + (f"&cursor={cursor}" if cursor else "")
            cursor = big.get(f"/api/chat/slots{query}").json()["next"]
        urls = {
            "small": (small, f"/api/chat/slots?limit={LIMIT}"),
            "big": (big, f"/api/chat/slots?limit={LIMIT}"),
            "deep": (big, f"/api/chat/slots?limit={LIMIT}&cursor={cursor}"),
        }

        def get(arm: str) -> int:
            client, url = urls[arm]
            response = client.get(url)
            assert response.status_code == 200, response.content[:300]
            return len(response.content)

        sizes = {arm: get(arm) for arm in urls}
        for arm in urls:
            assert len(big.get(urls[arm][1]).json()["slots"]) == LIMIT or arm == "small"
        for _ in range(30):  # warm-up
            for arm in urls:
                get(arm)
        samples: dict[str, list[float]] = {arm: [] for arm in urls}
        order = tuple(urls)
        for i in range(args.requests):
            for arm in order if i % 2 == 0 else order[::-1]:
                t = time.perf_counter()
                get(arm)
                samples[arm].append(time.perf_counter() - t)

    for arm, values in samples.items():
        print(f"{arm:6}: {common.fmt_latencies(values, width=6)} ({sizes[arm]:,} B a page)")
    base = statistics.median(samples["small"])
    ok = True
    for arm in ("big", "deep"):
        ratio = statistics.median(samples[arm]) / base
        verdict = "OK" if ratio <= TARGET else "MISSED"
        ok = ok and ratio <= TARGET
        print(f"median latency {arm} / small = {ratio:.3f} (target <= {TARGET}) {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
