"""Import of many small sessions: the first run vs a second run over the unchanged tree.

Builds a source sessions directory (default 1 000 small sessions of 3-30 rows, ~5 % with
an archive), sets up a private ``KIROCREW_HOME`` (``common.django_env``: SQLite there, no
outside database, broker or Redis, so nothing outside the temp dir is touched), runs
``migrate``, then ``call_command("import_transcripts", SOURCE)`` twice.

The second run must find every file unchanged (one stat per file, no fold): target
second <= 5 % of the first. ``filecmp``'s process-wide cache is cleared before each run,
because a real second run is a new process and would not have it.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson

from bench import common

TARGET = 0.05


def build_sessions(source: Path, sessions: int, seed: int) -> tuple[int, int]:
    """Write ``sessions`` small transcripts (+ a few archives) as the original laid them out."""
    f = common.RowFactory(seed=seed, profile="chat")
    rng = f.rng
    (source / "archive").mkdir(parents=True)
    total = archives = 0
    for i in range(sessions):
        stem = f"dashboard_s{i:04d}"
        meta = f.metadata(f"Session {i}")
        lines = [meta] + [f.stamped_row() for _ in range(rng.randrange(3, 31))]
        data = b"".join(orjson.dumps(r) + b"\n" for r in lines)
        (source / f"{stem}.jsonl").write_bytes(data)
        total += len(data)
        if rng.random() < 0.05:
            header = {
                "_type": "archive",
                "reason": "rotate",
                "archived_at": "2025-12-20T09:00:00",
                "count": 3,
            }
            old = [header] + [f.row(ts=f"2025-12-20T09:00:0{j}.000001+09:00") for j in range(3)]
            name = f"{stem}__20251220-090000.jsonl"
            (source / "archive" / name).write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in old))
            archives += 1
    return total, archives


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument(
        "--sessions", type=int, default=1000, help="small sessions to import (default 1000)"
    )
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    print(f"bench_import: {common.cpu_note()}")
    with common.temp_dir("import") as tmp:
        source, home = tmp / "source-sessions", tmp / "home"
        home.mkdir()
        size, archives = build_sessions(source, args.sessions, args.seed)
        print(f"source: {args.sessions:,} sessions, {size / common.MB:.1f} MB, {archives} archives")

        common.django_setup(common.django_env(home))
        import filecmp

        from django.core.management import call_command
        from django.core.management.base import CommandError

        from transcripts.models import Session

        def run() -> str:
            filecmp.clear_cache()
            out = io.StringIO()
            call_command(
                "import_transcripts", str(source), verbosity=1, stdout=out, stderr=io.StringIO()
            )
            return out.getvalue().strip().splitlines()[-1] if out.getvalue().strip() else ""

        try:
            first_s, first_out = common.timed(run)
        except CommandError as exc:
            if "Unknown command" in str(exc):
                print("import_transcripts does not exist yet: nothing measured")
                return 2
            raise
        indexed = Session.objects.count()
        second_s, second_out = common.timed(run)
        assert indexed == args.sessions, (indexed, args.sessions)

    ratio = second_s / first_s
    print(
        f"first run:  {common.fmt_ms(first_s):>12}  ({first_s / args.sessions * 1e3:.2f} ms/session)  {first_out}"
    )
    print(
        f"second run: {common.fmt_ms(second_s):>12}  ({second_s / args.sessions * 1e3:.3f} ms/session)  {second_out}"
    )
    print(f"Session rows after the first run: {indexed:,}")
    print(
        f"ratio second/first: {ratio:.1%}; target <= {TARGET:.0%}: {'MET' if ratio <= TARGET else 'MISSED'}"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
