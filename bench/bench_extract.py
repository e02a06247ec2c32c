"""Turn extraction on a meta-heavy transcript: the summary pass's read vs a plain parse.

Builds a ~15 MB transcript whose bytes are ~95 % ``meta`` (big nested dicts on the
assistant rows: tool calls with their output, reasoning, usage, context files), with
realistic user/assistant content, as the original's sessions are. Page cache warm, then,
interleaved, best of N:

* plain orjson (baseline): read the file, split on ``b"\\n"``, ``orjson.loads`` each line;
* fold+extract: ``extract_turns(store.read_session(key).rows)``, what the summary pass
  runs on a session it reads whole (the one path: the fold every reader shares).

Target: fold+extract time <= 2.0x the plain parse: extraction redacts every kept turn,
user rows included, before any summarizer reads it (issue 11), which costs about as much
as the parse on this corpus. (A raw-line twin that skipped decoding ``meta`` with msgspec
saved only 8-14 % of the CPU time and was removed: docs/DESIGN.md, "Reading long sessions".) A summary pass on a
session over 4 MB reads only its tail window (summaries/core/extract.py), so this cost is
bounded per pass whatever the session's size (bench_pass_100mb.py). It also
prints the bytes the model reads: ``build_prompt(turns)`` (the bounded input plus the
prompt) and the unbounded ``render_input(turns)``, as a share of the transcript's bytes.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson

from bench import common
from summaries.core.extract import count_user_turns, extract_turns, render_input
from summaries.core.prompt import build_prompt
from transcripts.core.codec import encode_record
from transcripts.core.store import TranscriptStore

TARGET = 2.0
KEY = "dashboard_bench-extract"


def build_transcript(path: Path, size: int, *, seed: int, meta_share: float) -> dict[str, int]:
    """Write the session straight to disk in the store's encoding; count where bytes go."""
    f = common.RowFactory(seed=seed, profile="chat")
    counts = {"rows": 0, "bytes": 0, "meta_bytes": 0, "content_bytes": 0}
    head = encode_record(f.metadata("Meta-heavy session"))
    with common.LineWriter(path, batch=256) as out:
        out.write(head)
        for row in common.meta_heavy_session(f, size - len(head), meta_share=meta_share):
            out.write(encode_record(row))
            counts["rows"] += 1
            # '"meta":' + the value; the rest of the line is role, content, ts, keys.
            counts["meta_bytes"] += len(orjson.dumps(row["meta"])) + 8
            counts["content_bytes"] += len(row["content"].encode())
    counts["bytes"] = out.written
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--mb", type=float, default=15.0, help="transcript size in MB (default 15)")
    ap.add_argument("--runs", type=int, default=5, help="runs per arm, interleaved (default 5)")
    ap.add_argument(
        "--meta-share", type=float, default=0.95, help="share of bytes in meta (default 0.95)"
    )
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    print(f"bench_extract: {common.cpu_note()}")
    with common.temp_dir("extract") as tmp:
        store = TranscriptStore(tmp / "sessions")
        store.root.mkdir(parents=True)
        path = store.path(KEY)
        build_s, counts = common.timed(
            lambda: build_transcript(
                path, int(args.mb * common.MB), seed=args.seed, meta_share=args.meta_share
            )
        )
        size = path.stat().st_size
        print(
            f"file: {size / common.MB:.1f} MB, {counts['rows']:,} rows "
            f"(avg {size / counts['rows']:,.0f} B/row); meta {counts['meta_bytes'] / size:.1%} "
            f"of the bytes, content {counts['content_bytes'] / size:.1%}; built in {build_s:.1f} s"
        )
        common.warm_page_cache(path)

        def lines() -> list[bytes]:
            with path.open("rb") as fp:
                return fp.read().split(b"\n")

        def plain():
            return [orjson.loads(line) for line in lines() if line]

        def fold_extract():
            return extract_turns(store.read_session(KEY).rows)

        turns = fold_extract()
        assert len(plain()) == counts["rows"] + 1

        arms = {"plain orjson": plain, "fold+extract": fold_extract}
        t = common.interleaved(arms, runs=args.runs)

    prompt_bytes = len(build_prompt(turns).encode())
    render_bytes = len(render_input(turns).encode())
    common.print_arms(t, size=size)
    base = t["plain orjson"]
    ratio = t["fold+extract"].best / base.best
    print(
        f"ratio fold+extract / plain orjson (time, best): {ratio:.2f}x "
        f"(median {t['fold+extract'].median / base.median:.2f}x); target <= {TARGET}x: "
        f"{'MET' if ratio <= TARGET else 'MISSED'}"
    )
    print(
        f"turns: {len(turns):,} ({count_user_turns(turns):,} genuine user turns); the model reads "
        f"build_prompt {prompt_bytes:,} B = {prompt_bytes / size:.2%} of the transcript, "
        f"render_input (unbounded) {render_bytes:,} B = {render_bytes / size:.2%}"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
