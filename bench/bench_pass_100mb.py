"""A generating summary pass on a 100 MB transcript vs an orjson parse of it (issue 11, item 6).

Sets up a private ``KIROCREW_HOME`` (SQLite, migrated), creates slot ``big`` through
``session_create`` and fills it with about ``--mb`` MB of realistic rows and revisions
(``bench_paging.fill``: ~1.5 % revisions, mostly of recent rows). By default one file (the
"100 MB transcript" of the issue); ``--rotated`` rotates it the way appends do (~10 MB
archives, a small current file). ``session_sync`` mirrors it (not timed). Arms,
interleaved, ``--runs`` each:

* orjson: read every file of the session and ``orjson.loads`` each line (the plain parse
  of the transcript, the yardstick);
* pass: ``summary_generate(slot_name="big", force=True)`` with no valid sidecar (both are
  deleted before each run, outside the clock): gate, snapshot, the bounded read, the
  heuristic backend, sidecars and mirror written; outcome "stored".

Printed: both (best and median), the ratio pass / orjson (target <= 1.5x, best of N:
the cores are shared, other load only adds time) and the
bytes one pass read (``rchar``). ``--whole`` adds one run of the pass reading the whole
session (the bounded read switched off: the cost before this bench's fix), report only.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from bench.bench_paging import fill

TARGET = 1.5
SLOT = "big"


def parse_all(paths: list[Path]) -> int:
    rows = 0
    for path in paths:
        for line in path.read_bytes().split(b"\n"):
            if line:
                orjson.loads(line)
                rows += 1
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--mb", type=float, default=100, help="session size in MB (default 100)")
    ap.add_argument("--runs", type=int, default=5, help="runs per arm, interleaved (default 5)")
    ap.add_argument("--rotated", action="store_true", help="rotate as appends do")
    ap.add_argument("--whole", action="store_true", help="also time one whole-session pass")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", action="store_true", help="print a profile of one pass")
    args = ap.parse_args(argv)

    print(f"bench_pass_100mb: {common.cpu_note()}")
    with common.temp_dir("pass-100mb") as tmp:
        common.django_setup(common.django_env(tmp / "home", KIROCREW_SUMMARY_MODEL="heuristic"))

        from summaries import services
        from summaries.core.sidecar import INTENTS, ONE_LINE, sidecar_path
        from summaries.services import PassOutcome, PassResult, summary_generate
        from summaries.state import summary_turn_mark_set
        from transcripts.models import Slot
        from transcripts.runtime import get_store
        from transcripts.services import session_create, session_sync

        store = get_store()
        slot = session_create(name=SLOT, app=None)
        key = slot.session.key
        t0 = time.perf_counter()
        every = store.max_bytes + 64 * 1024 if args.rotated else None
        size = fill(store, key, int(args.mb * common.MB), args.seed, rotate_every=every)
        session = session_sync(key=key, force=True)
        Slot.objects.filter(pk=slot.pk).update(last_stop_reason="end_turn")
        paths = [*store.archive_paths(key), store.path(key)]
        print(
            f"session: {size / common.MB:,.1f} MB in {len(paths)} file(s), "
            f"{session.row_count:,} rows, {session.user_turns:,} user turns "
            f"(built in {time.perf_counter() - t0:.1f} s)"
        )
        for path in paths:
            common.warm_page_cache(path)

        def setup() -> None:
            summary_turn_mark_set(slot.pk, 0)
            for kind in (INTENTS, ONE_LINE):
                sidecar_path(store.root, key, kind).unlink(missing_ok=True)

        def run_pass() -> None:
            outcome = summary_generate(slot_name=SLOT, force=True)
            assert outcome == PassOutcome(PassResult.STORED), outcome

        arms: dict[str, Any] = {"orjson": lambda: parse_all(paths), "pass": run_pass}
        timings: dict[str, list[float]] = {name: [] for name in arms}
        setup()
        run_pass()  # warm-up: imports, the backend, the connection
        parse_all(paths)
        for _ in range(args.runs):
            for name, fn in arms.items():
                setup()  # outside the clock
                timings[name].append(common.timed(fn)[0])
        setup()
        moved = common.io_delta(run_pass)
        if args.profile:
            import cProfile
            import pstats

            setup()
            prof = cProfile.Profile()
            prof.runcall(run_pass)
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)

        t = {name: common.Timing(name, samples) for name, samples in timings.items()}
        common.print_arms(t, width=10)
        if moved is not None:
            print(f"bytes read by one pass: {moved[0]:,} ({moved[0] / size:.2%} of the session)")
        if args.whole:
            real = services._read_window
            services._read_window = lambda *a, **kw: None
            try:
                setup()
                whole_s = common.timed(run_pass)[0]
            finally:
                services._read_window = real
            print(f"pass reading the whole session (before the fix): {common.fmt_ms(whole_s)}")
        # Best of N: on shared cores the other processes only ever add time.
        ratio = t["pass"].best / t["orjson"].best
        met = ratio <= TARGET
        print(
            f"ratio pass / orjson (best): {ratio:.3f}x "
            f"(median {t['pass'].median / t['orjson'].median:.3f}x); "
            f"target <= {TARGET}x: {'MET' if met else 'MISSED'}"
        )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
