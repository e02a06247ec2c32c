"""B1: the fold vs a plain orjson parse of the same lines (both keep the parsed rows).

Builds a ~100 MB transcript (mixed realistic rows, ~1.5 % revisions, some with position
hints), warms the page cache, then times, interleaved, best of N:

* fold:        ``fold_stream(fp)`` (the one fold every reader uses);
* plain:       read the file, split on ``b"\\n"``, ``orjson.loads`` each line, keep a list;
* json-plain:  the same with stdlib ``json.loads`` (values the parser choice; report only);
* raw read:    just ``read()`` the bytes (I/O headroom; report only).

Target: fold throughput >= 0.8x the plain parse (fold time <= 1.25x plain time).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson

from bench import common
from transcripts.core.codec import POSITION_HINT, REVISION, encode_record
from transcripts.core.fold import fold_stream

TARGET = 0.8


def build_transcript(
    path: Path, size: int, *, seed: int, revision_rate: float, hint_rate: float, profile: str
) -> dict[str, int]:
    """Write a transcript of about ``size`` bytes straight to disk (the store's encoding)."""
    f = common.RowFactory(seed=seed, profile=profile)
    rng = f.rng
    rows: list[dict[str, Any]] = []  # the rows written so far (for revision targets)
    counts = {"rows": 0, "revisions": 0, "hints": 0, "bytes": 0}
    with common.LineWriter(path) as out:
        out.write(encode_record(f.metadata()))
        while out.written < size:
            if rows and rng.random() < revision_rate:
                n = len(rows)
                # Mostly recent rows (a turn's stop, a chip), sometimes an old one (a title).
                index = (
                    rng.randrange(max(0, n - 50), n) if rng.random() < 0.85 else rng.randrange(n)
                )
                patch = f.patch(rows[index])
                if rng.random() < hint_rate:
                    anchor_index = rng.randrange(n)
                    patch[POSITION_HINT] = "" if rng.random() < 0.1 else rows[anchor_index]["ts"]
                    counts["hints"] += 1
                record = {
                    "_type": REVISION,
                    "target_ts": rows[index]["ts"],
                    "patch": patch,
                    "ts": f.clock.next(),
                }
                counts["revisions"] += 1
            else:
                record = f.stamped_row()
                rows.append(record)
                counts["rows"] += 1
            out.write(encode_record(record))
    counts["bytes"] = out.written
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--mb", type=float, default=100.0, help="transcript size in MB (default 100)")
    ap.add_argument("--runs", type=int, default=3, help="runs per arm, interleaved (default 3)")
    ap.add_argument(
        "--revision-rate", type=float, default=0.015, help="share of records that are revisions"
    )
    ap.add_argument(
        "--hint-rate", type=float, default=0.1, help="share of revisions with a position hint"
    )
    ap.add_argument("--profile", choices=sorted(common.PROFILES), default="mixed")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-extra", action="store_true", help="skip the json-plain and raw-read arms")
    ap.add_argument(
        "--profile-fold",
        action="store_true",
        help="cProfile one fold run and print the top entries",
    )
    args = ap.parse_args(argv)

    print(f"bench_fold: {common.cpu_note()}")
    with common.temp_dir("fold") as tmp:
        path = tmp / "big.jsonl"
        build_s, counts = common.timed(
            lambda: build_transcript(
                path,
                int(args.mb * common.MB),
                seed=args.seed,
                revision_rate=args.revision_rate,
                hint_rate=args.hint_rate,
                profile=args.profile,
            )
        )
        size = path.stat().st_size
        lines = counts["rows"] + counts["revisions"] + 1
        print(
            f"file: {size / common.MB:.1f} MB, {lines:,} lines, {counts['rows']:,} rows "
            f"(avg {size / lines:,.0f} B/line), {counts['revisions']:,} revisions "
            f"({counts['revisions'] / lines:.2%}), {counts['hints']} with position hints; "
            f"built in {build_s:.1f} s"
        )
        common.warm_page_cache(path)

        def fold():
            with path.open("rb") as fp:
                return fold_stream(fp, file=path.name)

        def plain():
            with path.open("rb") as fp:
                data = fp.read()
            return [orjson.loads(line) for line in data.split(b"\n") if line]

        def json_plain():
            with path.open("rb") as fp:
                data = fp.read()
            return [json.loads(line) for line in data.split(b"\n") if line]

        def raw_read():
            with path.open("rb") as fp:
                return len(fp.read())

        # Sanity: the fold agrees with the file it read (and reports nothing on a clean file).
        folded = fold()
        assert len(folded.rows) == counts["rows"], (len(folded.rows), counts["rows"])
        assert folded.report.revisions == counts["revisions"]
        assert not folded.report.anomalies, folded.report.counts()
        del folded

        if args.profile_fold:
            import cProfile
            import pstats

            prof = cProfile.Profile()
            prof.enable()
            fold()
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)

        arms = {"fold": fold, "plain orjson": plain}
        if not args.no_extra:
            arms |= {"plain json": json_plain, "raw read": raw_read}
        t = common.interleaved(arms, runs=args.runs)

    common.print_arms(t, size=size)
    speed = t["plain orjson"].best / t["fold"].best  # fold throughput / plain throughput
    print(
        f"ratio fold/plain throughput (best): {speed:.2f}x  "
        f"(median: {t['plain orjson'].median / t['fold'].median:.2f}x; "
        f"time ratio fold/plain {1 / speed:.2f}); target >= {TARGET}x: "
        f"{'MET' if speed >= TARGET else 'MISSED'}"
    )
    if "plain json" in t:
        print(
            f"ratio fold vs plain json.loads (throughput): {t['plain json'].best / t['fold'].best:.2f}x"
        )
        print(
            f"ratio plain orjson time / raw read time: {t['plain orjson'].best / t['raw read'].best:.1f}x"
        )
    return 0 if speed >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
