"""B3: bytes written for one single-row state change.

* revision: ``TranscriptStore.append_revision`` on a 500-row session, measured as the file
  size delta (and the process's ``wchar``/``rchar`` deltas from /proc/self/io);
* window rewrite (the original's path): serialize line 0 + the 500-row window with stdlib
  ``json.dumps`` default separators, one ``\\n`` per row, as the original dashboard save
  did; the bytes are measured, then actually written (temp + fsync + replace) for ``wchar``.

Target: the rewrite writes >= 100x the revision's bytes (the reference observed ~8,900x).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from transcripts.core.fsutil import atomic_write
from transcripts.core.store import TranscriptStore

TARGET = 100.0


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--rows", type=int, default=500, help="rows in the window (default 500)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    print(f"bench_state_change_bytes: {common.cpu_note()}")
    f = common.RowFactory(seed=args.seed, profile="chat")
    key = "dashboard:bench-state-change"
    patch = {"cls": "stopped"}  # a stop transition on one row
    with common.temp_dir("state-change") as tmp:
        store = TranscriptStore(tmp / "sessions")  # default fsync policy ("rotate")
        meta = f.metadata("State change benchmark")
        meta.pop("_type")
        rows = [f.row() for _ in range(args.rows)]
        appended = store.append_rows(key, rows, metadata=meta)
        target = appended.ts[len(appended.ts) // 2]
        path = store.path(key)

        before = path.stat().st_size
        io = common.io_delta(lambda: store.append_revision(key, target, patch))
        revision_bytes = path.stat().st_size - before

        folded = store.read_file(key)
        assert len(folded.rows) == args.rows
        assert not folded.report.anomalies
        assert folded.rows[len(folded.rows) // 2]["cls"] == "stopped"

        # The original's path: rewrite line 0 + the whole window, json.dumps defaults.
        window = "".join(json.dumps(r) + "\n" for r in [folded.metadata, *folded.rows]).encode()
        rewrite_bytes = len(window)
        rewrite_path = tmp / "window-rewrite.jsonl"
        rewrite_path.write_bytes(b"")
        io_rewrite = common.io_delta(lambda: atomic_write(rewrite_path, window, fsync=True))

    ratio = rewrite_bytes / revision_bytes
    print(
        f"patch: {json.dumps(patch, separators=(',', ':'))} ({len(json.dumps(patch, separators=(',', ':')))} B)"
    )
    print(f"revision append:           {revision_bytes:>10,} bytes (file size delta)", end="")
    print(f"; wchar {io[1]:,} B, rchar {io[0]:,} B" if io else "")
    print(
        f"rewrite of {args.rows}-row window: {rewrite_bytes:>10,} bytes (json.dumps defaults, "
        f"avg {rewrite_bytes / (args.rows + 1):,.0f} B/line)",
        end="",
    )
    print(f"; wchar {io_rewrite[1]:,} B (temp + fsync + replace)" if io_rewrite else "")
    print(
        f"ratio rewrite/revision: {ratio:,.0f}x; target >= {TARGET:,.0f}x: {'MET' if ratio >= TARGET else 'MISSED'}"
    )
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
