"""Appends to a session that cannot rotate stay O(1) (issue 12, item 6).

Two sessions in one store with the default limits (10 MiB, 200 rows kept): ``stuck``
holds a line longer than the reader's maximum (as an import can bring: 8 MiB + 1) and
about ``--size-mb`` MB of rows, so it is over the limit and rotation refuses it; ``small``
holds ~1 MB. Each run appends one realistic row to each, alternating, one call per row
(``TranscriptStore.append_rows``, lock + redaction + ts stamping).

Before: every append to ``stuck`` tried to rotate, i.e. folded the whole file, then gave
up. Now a failed rotation is retried only once the file has doubled.

Target: median append stuck / small <= 1.5. Also printed: the bytes one append to
``stuck`` reads (``rchar``).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from transcripts.core.codec import MAX_LINE_BYTES, encode_record
from transcripts.core.store import TranscriptStore

TARGET = 1.5


def fill(store: TranscriptStore, key: str, size: int, seed: int, *, oversize: bool) -> int:
    store.create(key, {"title": key})
    factory = common.RowFactory(seed=seed)
    with common.LineWriter(store.path(key), append=True, batch=2000) as out:
        if oversize:
            out.write(b'{"role":"tool_result","content":"' + b"z" * MAX_LINE_BYTES + b'"}\n')
        while out.written < size:
            out.write(encode_record(factory.stamped_row()))
    return out.written


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--size-mb", type=float, default=50, help="stuck session (default 50)")
    ap.add_argument("--appends", type=int, default=200, help="appends per arm (default 200)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    print(f"bench_stuck_append: {common.cpu_note()}")
    with common.temp_dir("stuck-append") as tmp:
        store = TranscriptStore(tmp, fsync="never")
        sizes = {
            "stuck": fill(store, "stuck", int(args.size_mb * common.MB), args.seed, oversize=True),
            "small": fill(store, "small", common.MB, args.seed + 1, oversize=False),
        }
        rows = common.RowFactory(seed=args.seed + 2, exclude_roles=("user",))
        samples: dict[str, list[float]] = {"stuck": [], "small": []}
        store.append_rows("stuck", [rows.row()])  # the one failed attempt (logged)
        for i in range(args.appends):
            for key in ("stuck", "small") if i % 2 == 0 else ("small", "stuck"):
                row = rows.row()
                t = time.perf_counter()
                store.append_rows(key, [row])
                samples[key].append(time.perf_counter() - t)
        moved = common.io_delta(lambda: store.append_rows("stuck", [rows.row()]))
        assert not store.archive_paths("stuck"), "the stuck session rotated"

    for key in ("stuck", "small"):
        print(
            f"append to {key:5} ({sizes[key] / common.MB:6,.1f} MB): "
            f"{common.fmt_latencies(samples[key], width=6)}"
        )
    ratio = statistics.median(samples["stuck"]) / statistics.median(samples["small"])
    if moved is not None:
        print(f"bytes read by one append to stuck: {moved[0]:,}")
    met = ratio <= TARGET
    print(
        f"ratio append stuck / small (median) = {ratio:.2f} (target <= {TARGET}) "
        f"{'MET' if met else 'MISSED'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
