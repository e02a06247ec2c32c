"""The summary pass on a ~10 MB session: a pass that finds its summary current vs one
that generates.

Sets up a private ``KIROCREW_HOME`` (SQLite, migrated, no outside database), creates the
slot through ``session_create``, appends a meta-heavy session (``common.meta_heavy_session``:
realistic user/assistant content, ~95 % of the bytes in ``meta``) through the store's
``append_rows`` in batches, then ``session_sync``; summaries on, ``last_stop_reason`` =
``end_turn``, the offline heuristic backend. Arms, interleaved, best of N, each a full
``summary_generate(slot_name=…)`` (gate, marker, snapshot, read, extract, …):

* generate (baseline): the sidecars are deleted first, so the pass reads the session,
  runs the heuristic backend, writes both sidecars and the mirror rows;
* current: a valid sidecar is in place, so the outcome is "current" and no model runs.

Before each arm (outside the clock) the slot's turn mark (``SummaryState.turn_mark``) is
reset to 0, so the cadence gate lets the automatic (non-forced) pass through, as after a
fresh start.

Targets: current <= 0.1x generate, and one current pass reads (``rchar``) < 1 MB: a pass
over an unchanged transcript costs a stat and a sidecar read, never the session, so its
cost does not grow with the transcript.
"""

from __future__ import annotations

import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

TARGET = 0.1
MAX_CURRENT_READ = 1_000_000  # bytes one current pass may read (rchar)
SLOT = "big"


def fill(key: str, size: int, *, seed: int, meta_share: float) -> tuple[int, int]:
    """Append the session through the store, in batches; (rows, bytes on disk)."""
    from transcripts.runtime import get_store

    store = get_store()
    factory = common.RowFactory(seed=seed, profile="chat")
    batch: list[dict[str, object]] = []
    rows = 0
    for row in common.meta_heavy_session(factory, size, meta_share=meta_share):
        row.pop("ts", None)  # the store stamps every row
        batch.append(row)
        if len(batch) >= 64:
            store.append_rows(key, batch)
            rows += len(batch)
            batch.clear()
    if batch:
        store.append_rows(key, batch)
        rows += len(batch)
    return rows, store.path(key).stat().st_size


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--mb", type=float, default=10.0, help="session size in MB (default 10)")
    ap.add_argument("--runs", type=int, default=5, help="runs per arm, interleaved (default 5)")
    ap.add_argument(
        "--meta-share", type=float, default=0.95, help="share of bytes in meta (default 0.95)"
    )
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    print(f"bench_summary_pass: {common.cpu_note()}")
    with common.temp_dir("summary-pass") as tmp:
        common.django_setup(common.django_env(tmp / "home", KIROCREW_SUMMARY_MODEL="heuristic"))

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
        rows, size = fill(key, int(args.mb * common.MB), seed=args.seed, meta_share=args.meta_share)
        session = session_sync(key=key, force=True)
        assert not store.archive_paths(key), "the session rotated: pick a smaller --mb"
        Slot.objects.filter(pk=slot.pk).update(last_stop_reason="end_turn")
        print(
            f"session: {size / common.MB:.1f} MB, {rows:,} rows, {session.user_turns:,} user "
            f"turns (built in {time.perf_counter() - t0:.1f} s)"
        )
        common.warm_page_cache(store.path(key))

        def unmark() -> None:
            summary_turn_mark_set(slot.pk, 0)

        def drop_sidecars() -> None:
            for kind in (INTENTS, ONE_LINE):
                sidecar_path(store.root, key, kind).unlink(missing_ok=True)

        def run(expected: str) -> None:
            outcome = summary_generate(slot_name=SLOT)
            assert outcome == PassOutcome(PassResult(expected)), outcome

        def setup(name: str) -> None:
            unmark()
            if name != "current":
                drop_sidecars()

        expected = {"generate": "stored", "current": "current"}
        timings: dict[str, list[float]] = {name: [] for name in expected}
        for name in expected:  # warm-up: imports, the backend, the connection
            setup(name)
            run(expected[name])
        for _ in range(args.runs):
            for name in expected:
                setup(name)  # outside the clock
                timings[name].append(common.timed(partial(run, expected[name]))[0])
        setup("current")
        moved = common.io_delta(lambda: run("current"))

    t = {name: common.Timing(name, samples) for name, samples in timings.items()}
    common.print_arms(t, width=16)
    base = t["generate"]
    ratio = t["current"].best / base.best
    if moved is not None:
        print(
            f"bytes read by one current pass: {moved[0]:,} ({moved[0] / size:.1%} of the session)"
        )
    met = ratio <= TARGET
    print(
        f"ratio current / generate (time, best): {ratio:.3f}x "
        f"(median {t['current'].median / base.median:.3f}x); target <= {TARGET}x: "
        f"{'MET' if met else 'MISSED'}"
    )
    if moved is not None and moved[0] >= MAX_CURRENT_READ:
        print(f"MISSED: a current pass read {moved[0]:,} B (>= {MAX_CURRENT_READ:,})")
        met = False
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
