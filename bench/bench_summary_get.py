"""GET summary on a 100 MB transcript vs a 1 KB one: freshness is one stat, never a read.

Sets up a private ``KIROCREW_HOME`` (SQLite, no outside database), an app, and two slots
it owns: ``big`` (a ~100 MB transcript of realistic rows) and ``small`` (~1 KB), each with
a stored summary that matches its transcript. Then times ``GET /api/chat/slots/<slot>/
summary`` through Django's test ``Client`` (the whole middleware stack, in process, the
same for both arms), alternating big/small request by request.

Target: median latency big / small <= 1.2. Also reported: p90 of each arm, and the bytes
one GET reads (``rchar``) on the big slot, which must stay far below the transcript size.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

TARGET = 1.2


def fill_transcript(path: Path, size: int, seed: int, *, short: bool = False) -> int:
    """Append realistic rows straight to the file until it holds about ``size`` bytes
    (``short``: one-line chat rows, for a transcript of about a kilobyte)."""
    from transcripts.core.codec import encode_record

    factory = common.RowFactory(seed=seed)
    rows = 0
    with common.LineWriter(path, append=True, batch=2000) as out:
        while out.written < size:
            row = factory.stamped_row()
            if short:
                role = "user" if rows % 2 == 0 else "assistant"
                row = {"role": role, "content": factory.text(60), "ts": row["ts"]}
            out.write(encode_record(row))
            rows += 1
    return out.written


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--size-mb", type=float, default=100, help="big transcript (default 100)")
    ap.add_argument("--requests", type=int, default=400, help="GETs per arm (default 400)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    print(f"bench_summary_get: {common.cpu_note()}")
    with common.temp_dir("summary-get") as tmp:
        home = tmp / "home"
        common.django_setup(common.django_env(home))

        from django.test import Client

        from transcripts.models import Slot
        from transcripts.runtime import get_store
        from transcripts.services import app_create, session_create, session_sync

        app, token = app_create(name="bench")
        store = get_store()
        for name in ("big", "small"):
            session_create(name=name, app=app)
        big_key = Slot.objects.get(name="big").session.key
        small_key = Slot.objects.get(name="small").session.key
        t0 = time.perf_counter()
        big_size = fill_transcript(store.path(big_key), int(args.size_mb * common.MB), args.seed)
        small_size = fill_transcript(store.path(small_key), 1000, args.seed + 1, short=True)
        for key in (big_key, small_key):
            session_sync(key=key, force=True)
        for name in ("big", "small"):
            common.store_summary(name)
        print(
            f"transcripts: big {big_size / common.MB:,.1f} MB, small {small_size:,} B "
            f"(built in {time.perf_counter() - t0:.1f} s)"
        )
        common.warm_page_cache(store.path(big_key))

        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

        def get(slot: str) -> None:
            response = client.get(f"/api/chat/slots/{slot}/summary")
            assert response.status_code == 200, response.content[:300]

        for slot in ("big", "small"):  # both fresh, both served from the sidecar
            body = client.get(f"/api/chat/slots/{slot}/summary").json()
            assert body["stale"] is False, body
            assert len(body["intents"]) == 6, body
        for _ in range(50):  # warm-up: imports, caches, the database connection
            get("big")
            get("small")

        samples: dict[str, list[float]] = {"big": [], "small": []}
        order = ("big", "small")
        for i in range(args.requests):
            for slot in order if i % 2 == 0 else order[::-1]:
                t = time.perf_counter()
                get(slot)
                samples[slot].append(time.perf_counter() - t)

        moved = common.io_delta(lambda: get("big"))

    big_med, small_med = statistics.median(samples["big"]), statistics.median(samples["small"])
    ratio = big_med / small_med
    for slot, size in (("big", big_size), ("small", small_size)):
        values = samples[slot]
        print(
            f"GET summary, {slot:5} ({size / common.MB:9,.3f} MB): "
            f"{common.fmt_latencies(values, width=6)} ({len(values)} requests)"
        )
    if moved is not None:
        print(
            f"bytes read by one GET on the big slot: {moved[0]:,} "
            f"({moved[0] / big_size:.2e} of the transcript)"
        )
    verdict = "OK" if ratio <= TARGET else "MISSED"
    print(f"median latency big / small = {ratio:.3f} (target <= {TARGET}) {verdict}")
    if moved is not None and moved[0] > 1_000_000:
        print("MISSED: a GET read more than 1 MB")
        return 1
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
