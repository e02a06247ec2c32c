"""Transcript pages cost O(page): a 100 MB rotated session vs a 1 MB one (issue 12, item 1).

Sets up a private ``KIROCREW_HOME`` (SQLite), an app and two slots it owns: ``big`` (about
100 MB of realistic rows, rotated the way appends rotate it: ~10 MB per archive, about
200 rows left in the current file) and ``small`` (about 1 MB, never rotated). Both get
revisions (~1.5 %, mostly recent rows, some far back). Then, through Django's test
``Client`` (the whole middleware stack, in process), request by request alternating:

* tail: append one row to each session (not timed), then ``GET …/transcript?after=<the
  previous last cursor>``: what every open tab does on each ``row`` frame;
* oldest: ``GET …/transcript?after=<3rd row>&limit=100``, a page that starts in the
  oldest archive of ``big`` (in the only file of ``small``).

Targets: median tail big / small <= 1.5; median oldest big / small <= 2.0. Also printed:
the first GET of ``big`` in a fresh process (it indexes every file once), what the full
fold (the pre-index read) costs for ``big``, the bytes one tail GET reads (``rchar``) and
the offset index's memory (tracemalloc, bytes per row).
"""

from __future__ import annotations

import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

TAIL_TARGET = 1.5
OLDEST_TARGET = 2.0


def fill(store: Any, key: str, size: int, seed: int, *, rotate_every: int | None) -> int:
    """Append realistic rows and revisions straight to the file until the session holds
    about ``size`` bytes, rotating each ``rotate_every`` bytes as appends would."""
    from transcripts.core.codec import REVISION, encode_record

    factory = common.RowFactory(seed=seed)
    rng = factory.rng
    total = 0
    recent: list[dict[str, Any]] = []
    path = store.path(key)
    while total < size:
        chunk = min(size - total, rotate_every or size)
        with common.LineWriter(path, append=True, batch=2000) as out:
            start = out.written
            while out.written - start < chunk:
                if recent and rng.random() < 0.015:
                    far = rng.random() < 0.15
                    target = rng.choice(recent) if far else recent[-1]
                    record = {
                        "_type": REVISION,
                        "target_ts": target["ts"],
                        "patch": factory.patch(target),
                        "ts": factory.clock.next(),
                    }
                else:
                    record = factory.stamped_row()
                    recent = [*recent, record][-150:]  # targets the current file still holds
                out.write(encode_record(record))
        total += out.written - start
        if rotate_every:
            store.rotate(key)
    return total


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--size-mb", type=float, default=100, help="big session (default 100)")
    ap.add_argument("--small-mb", type=float, default=1, help="small session (default 1)")
    ap.add_argument("--requests", type=int, default=200, help="GETs per arm (default 200)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    print(f"bench_paging: {common.cpu_note()}")
    with common.temp_dir("paging") as tmp:
        home = tmp / "home"
        common.django_setup(common.django_env(home))

        from django.test import Client

        from transcripts.core.paging import PAGE_INDEX
        from transcripts.models import Slot
        from transcripts.runtime import get_store
        from transcripts.services import app_create, session_create

        app, token = app_create(name="bench")
        store = get_store()
        keys = {}
        for name in ("big", "small"):
            session_create(name=name, app=app)
            keys[name] = Slot.objects.get(name=name).session.key
        t0 = time.perf_counter()
        sizes = {
            "big": fill(
                store,
                keys["big"],
                int(args.size_mb * common.MB),
                args.seed,
                rotate_every=store.max_bytes + 64 * 1024,  # as appends rotate it
            ),
            "small": fill(
                store,
                keys["small"],
                int(args.small_mb * common.MB),
                args.seed + 1,
                rotate_every=None,
            ),
        }
        archives = len(store.archive_paths(keys["big"]))
        print(
            f"sessions: big {sizes['big'] / common.MB:,.1f} MB ({archives} archives, current "
            f"file {store.path(keys['big']).stat().st_size / common.MB:.2f} MB), small "
            f"{sizes['small'] / common.MB:,.2f} MB (built in {time.perf_counter() - t0:.1f} s)"
        )
        for path in [store.path(keys["big"]), *store.archive_paths(keys["big"])]:
            common.warm_page_cache(path)
        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

        def get(name: str, query: str) -> dict[str, Any]:
            response = client.get(f"/api/chat/slots/{name}/transcript{query}")
            assert response.status_code == 200, response.content[:300]
            body: dict[str, Any] = response.json()
            return body

        full_s, view = common.timed(lambda: store.read_session(keys["big"]))
        rows_big = len(view.rows)
        third = {name: store.read_session(keys[name]).rows[2]["ts"] for name in keys}
        last = {name: store.read_session(keys[name]).rows[-1]["ts"] for name in keys}
        del view

        PAGE_INDEX.clear()
        cold_s, _ = common.timed(lambda: get("big", "?limit=1"))
        PAGE_INDEX.clear()
        tracemalloc.start()
        get("big", "?limit=1")
        index_bytes = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        get("small", "?limit=1")
        print(
            f"before the index, one page of big folded the session: {common.fmt_ms(full_s)}; "
            f"first GET of big in a process (indexes {archives + 1} files once): "
            f"{common.fmt_ms(cold_s)}; index memory {index_bytes / common.MB:.1f} "
            f"MB for {rows_big:,} rows ({index_bytes / max(rows_big, 1):.0f} B/row)"
        )

        def tail(name: str) -> float:
            store.append_row(keys[name], "assistant", "one more row")
            t = time.perf_counter()
            body = get(name, f"?after={quote(last[name])}")
            elapsed = time.perf_counter() - t
            assert [r["content"] for r in body["rows"]] == ["one more row"], body["rows"][:2]
            last[name] = body["rows"][-1]["ts"]
            return elapsed

        def oldest(name: str) -> float:
            t = time.perf_counter()
            body = get(name, f"?after={quote(third[name])}&limit=100")
            elapsed = time.perf_counter() - t
            assert len(body["rows"]) == 100
            assert body["next"]
            return elapsed

        for _ in range(20):  # warm-up: imports, the database connection
            for name in ("big", "small"):
                tail(name)
                oldest(name)
        samples: dict[str, dict[str, list[float]]] = {"tail": {}, "oldest": {}}
        order = ("big", "small")
        for i in range(args.requests):
            for name in order if i % 2 == 0 else order[::-1]:
                samples["tail"].setdefault(name, []).append(tail(name))
                samples["oldest"].setdefault(name, []).append(oldest(name))
        store.append_row(keys["big"], "assistant", "one more row")
        moved = common.io_delta(lambda: get("big", f"?after={quote(last['big'])}"))

    ok = True
    for arm, target in (("tail", TAIL_TARGET), ("oldest", OLDEST_TARGET)):
        for name in order:
            print(
                f"{arm:6} {name:5} ({sizes[name] / common.MB:7,.1f} MB): "
                f"{common.fmt_latencies(samples[arm][name], width=6)}"
            )
        ratio = statistics.median(samples[arm]["big"]) / statistics.median(samples[arm]["small"])
        met = ratio <= target
        ok = ok and met
        print(
            f"ratio {arm} big / small (median) = {ratio:.2f} (target <= {target}) "
            f"{'MET' if met else 'MISSED'}"
        )
    if moved is not None:
        print(f"bytes read by one tail GET of big: {moved[0]:,} ({moved[0] / sizes['big']:.1e})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
