"""The session page's first render: a 100 MB session vs a 1 MB one (issue 12, item 2).

Sets up a private ``KIROCREW_HOME`` (SQLite) with two slots: ``big`` (about 100 MB of
realistic rows and revisions, rotated as appends rotate it: ~10 MB per archive) and
``small`` (about 1 MB), built as ``bench_paging.py`` builds them. Then, through Django's
test ``Client`` (the whole middleware stack, in process, a logged-in dashboard user):

* cold: the first ``GET /s/<slot>/`` in the process (the offset index of every file of the
  session is built once, the cost of one full fold; printed, not the target);
* warm: after that warm-up request, ``GET /s/<slot>/`` alternating big and small; each
  renders the session's last ``KIROCREW_SESSION_PAGE_TURNS`` turns (default 20).

Target: median warm first render big / small <= 2.0. Also printed: the rows and turns each
page shows, and what rendering every row (the page before this change) cost for ``small``.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from bench.bench_paging import fill

TARGET = 2.0


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--size-mb", type=float, default=100, help="big session (default 100)")
    ap.add_argument("--small-mb", type=float, default=1, help="small session (default 1)")
    ap.add_argument("--requests", type=int, default=30, help="GETs per arm (default 30)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    print(f"bench_session_page: {common.cpu_note()}")
    with common.temp_dir("session-page") as tmp:
        home = tmp / "home"
        common.django_setup(common.django_env(home))

        from django.conf import settings
        from django.contrib.auth import get_user_model
        from django.test import Client

        from transcripts.core.paging import PAGE_INDEX
        from transcripts.models import Slot
        from transcripts.runtime import get_store
        from transcripts.services import session_create

        store = get_store()
        keys = {}
        for name in ("big", "small"):
            session_create(name=name, app=None)
            keys[name] = Slot.objects.get(name=name).session.key
        t0 = time.perf_counter()
        sizes = {
            "big": fill(
                store,
                keys["big"],
                int(args.size_mb * common.MB),
                args.seed,
                rotate_every=store.max_bytes + 64 * 1024,
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
            f"sessions: big {sizes['big'] / common.MB:,.1f} MB ({archives} archives), small "
            f"{sizes['small'] / common.MB:,.2f} MB (built in {time.perf_counter() - t0:.1f} s)"
        )
        for path in [store.path(keys["big"]), *store.archive_paths(keys["big"])]:
            common.warm_page_cache(path)
        user = get_user_model().objects.create_user("bench")
        client = Client()
        client.force_login(user)

        def get(name: str) -> str:
            response = client.get(f"/s/{name}/")
            assert response.status_code == 200, response.content[:300]
            return response.content.decode()

        PAGE_INDEX.clear()
        get("small")  # imports, templates, the database connection: not the index's cost
        PAGE_INDEX.clear()
        cold = {}
        for name in ("big", "small"):
            t = time.perf_counter()
            body = get(name)
            cold[name] = time.perf_counter() - t
            shown = len(re.findall(r'<li class="row ', body))
            turns = re.findall(r'id="turn-(\d+)"', body)
            print(
                f"cold (first GET in the process, builds the offset index) {name:5}: "
                f"{common.fmt_ms(cold[name])}; page shows {shown} rows, turns "
                f"{turns[0] if turns else '-'}-{turns[-1] if turns else '-'}"
            )
        samples: dict[str, list[float]] = {"big": [], "small": []}
        order = ("big", "small")
        for i in range(args.requests):
            for name in order if i % 2 == 0 else order[::-1]:
                t = time.perf_counter()
                get(name)
                samples[name].append(time.perf_counter() - t)
        settings.KIROCREW_SESSION_PAGE_TURNS = 10**9  # every row: the page before the change
        every_small, _ = common.timed(lambda: get("small"))

    for name in order:
        print(
            f"warm  {name:5} ({sizes[name] / common.MB:7,.1f} MB): "
            f"{common.fmt_latencies(samples[name], width=6)}"
        )
    ratio = statistics.median(samples["big"]) / statistics.median(samples["small"])
    met = ratio <= TARGET
    print(
        f"ratio first render big / small (median, after a warm-up GET that built the index) = "
        f"{ratio:.2f} (target <= {TARGET}) {'MET' if met else 'MISSED'}"
    )
    cold_ratio = cold["big"] / cold["small"]
    print(f"cold ratio (first GET in a process, index build) = {cold_ratio:.1f}")
    print(f"small rendered with every row (before the change): {common.fmt_ms(every_small)}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
