"""Full-text search over 1 000 sessions and ~500 MB of transcripts (issue 25, item 9).

Sets up a private ``KIROCREW_HOME`` (SQLite, the embedded profile's FTS5 index; set
``--postgres postgres://…`` to run on PostgreSQL instead), creates 1 000 slots through
``session_create`` (half owned by app ``a``, half by ``b``), fills each with ~0.5 MB of
realistic rows from ``common.RowFactory`` through ``TranscriptStore.append_rows`` (no
HTTP), and indexes each session through ``search_index_session`` (the path every append
takes). A few planted sentences give queries of known rarity:

* rare:   ``decided <codename>``: one codename per 5 sessions (the "where did we decide X");
* mid:    ``kubernetes``: planted in one session in 10;
* common: two words of the row factory's vocabulary (they match most rows);
* scoped: a rare query as app ``a`` (ownership is a clause of the match).

Times ``search_query`` (what the API and the list call; top 20 with snippets), queries
interleaved with the baseline, the list's title-only search (``dashboard_sessions`` +
its first keyset page, what the list ran before). Prints the build and index figures,
median and p95 latency per query class and overall.

Target: median ``search_query`` latency <= 100 ms over the query set.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

TARGET_MS = 100.0
CODENAMES = [
    "".join(random.Random(i).choices("bcdfghjklmnpqrstvwxz", k=3)) + "ovia" for i in range(200)
]


def build(args: Any) -> tuple[int, float, float, int]:
    """The sessions, their rows and the index: (bytes, build s, index s, docs)."""
    from django.db import connection

    from kirocrew_site.search.models import SearchDoc
    from kirocrew_site.search.services import search_index_session
    from transcripts.models import Session
    from transcripts.runtime import get_store
    from transcripts.services import app_create, session_create

    store = get_store()
    apps = [app_create(name="a")[0], app_create(name="b")[0]]
    factory = common.RowFactory(seed=args.seed)
    rng = random.Random(args.seed)
    per_session = int(args.mb * common.MB / args.sessions)
    total = 0
    t0 = time.perf_counter()
    for i in range(args.sessions):
        slot = session_create(name=f"s{i}", app=apps[i % 2], title=f"Session {i} planning")
        key = slot.session.key
        written, batch = 0, []
        planted = [
            {
                "role": "assistant",
                "content": f"We decided to use {CODENAMES[i % 200]} for the queue.",
            }
        ]
        if i % 10 == 0:
            planted.append({"role": "user", "content": "Should we move this to kubernetes?"})
        while written < per_session:
            row = factory.row()
            row.pop("ts", None)
            batch.append(row)
            written += len(row["content"]) + 120
            if len(batch) == 200 or written >= per_session:
                if (planted and rng.random() < 0.5) or written >= per_session:
                    batch[len(batch) // 2 : len(batch) // 2] = planted
                    planted = []
                store.append_rows(key, batch, create=False)
                batch = []
        total += store.path(key).stat().st_size
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    for session in Session.objects.order_by("pk"):
        search_index_session(session)
    indexed = time.perf_counter() - t0
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:  # what autovacuum does after a bulk load
            cur.execute("ANALYZE")
    return total, built, indexed, SearchDoc.objects.count()


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--mb", type=float, default=500, help="transcript MB in all (default 500)")
    ap.add_argument("--rounds", type=int, default=15, help="times each query runs (default 15)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--postgres", default="", help="a postgres:// URL (a scratch database)")
    args = ap.parse_args(argv)

    print(f"bench_search: {common.cpu_note()}")
    with common.temp_dir("search") as tmp:
        extra = {"DATABASE_URL": args.postgres} if args.postgres else {}
        common.django_setup(common.django_env(tmp / "home", **extra))

        from django.db import connection

        from kirocrew_site.dashboard.selectors import dashboard_sessions
        from kirocrew_site.search.selectors import search_query
        from transcripts.listing import session_page
        from transcripts.models import App

        size, built, indexed, docs = build(args)
        print(
            f"{args.sessions} sessions, {size / common.MB:,.0f} MB of transcripts "
            f"({connection.vendor}); built in {built:,.1f} s, indexed in {indexed:,.1f} s "
            f"({size / common.MB / indexed:,.1f} MB/s, {docs:,} docs)"
        )
        db_file = tmp / "home" / "kirocrew.sqlite3"
        if db_file.exists():
            print(f"database file: {db_file.stat().st_size / common.MB:,.0f} MB")

        app_a = App.objects.get(name="a")
        common_words = ("session", "lock")
        used = min(args.sessions, len(CODENAMES))
        pick = [used * k // 8 for k in range(8)]
        queries: dict[str, list[tuple[Any, str]]] = {
            "rare": [("", f"decided {CODENAMES[n]}") for n in pick[:4]],
            "mid": [("", "kubernetes")],
            "common": [("", common_words[0]), ("", " ".join(common_words))],
            # even-numbered sessions are app a's
            "scoped": [(app_a, f"decided {CODENAMES[n - n % 2]}") for n in pick[4:6]],
        }
        for group in queries.values():  # each must find something (the plant worked)
            for scope, text in group:
                assert search_query(scope, text), (scope, text)

        def title_only(text: str) -> int:
            return len(session_page(dashboard_sessions(search=text), limit=50).items)

        samples: dict[str, list[float]] = {name: [] for name in queries}
        baseline: list[float] = []
        for _ in range(args.rounds):
            for name, group in queries.items():
                for scope, text in group:
                    t0 = time.perf_counter()
                    search_query(scope, text, 20)
                    samples[name].append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    title_only(text)
                    baseline.append(time.perf_counter() - t0)

        every = [s for values in samples.values() for s in values]
        print(f"{'query class':<14}{'median':>12}{'p95':>12}")
        for name, values in samples.items():
            print(
                f"{name:<14}{statistics.median(values) * 1000:>9.1f} ms"
                f"{common.percentile(values, 0.95) * 1000:>9.1f} ms"
            )
        median = statistics.median(every) * 1000
        base = statistics.median(baseline) * 1000
        print(f"{'all':<14}{median:>9.1f} ms{common.percentile(every, 0.95) * 1000:>9.1f} ms")
        print(
            f"{'title only':<14}{base:>9.1f} ms"
            f"{common.percentile(baseline, 0.95) * 1000:>9.1f} ms   (baseline, same queries)"
        )
        print(f"full text / title only: {median / base:,.1f}x (median)")
        ok = median <= TARGET_MS
        print(f"target: median <= {TARGET_MS:.0f} ms: {'met' if ok else 'MISSED'}")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
