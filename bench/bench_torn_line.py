"""A long torn last line: ``complete_lines`` vs a plain read of the same bytes.

An agent writing a huge record (an inline image) leaves a line without its newline; every
run and every ``--follow`` poll reads it again until the newline comes. For a torn line of
32, 64 and 128 MiB (after one short complete line), interleaved, best of N, page cache
warm:

* complete_lines: ``list(complete_lines(fd, 0, size))`` (yields the one complete line and
  leaves the torn rest for the next run, as the importer does);
* plain read:     ``os.pread`` of the same bytes in the same blocks, each dropped.

Target: complete_lines / plain read <= 3.0 at every size: one read plus one newline search
of each byte (~2x), and the ratio does not grow with the length. The old rescan (the
pending line joined to each block and searched again) took 0.3 s at 32 MiB and 3.1 s at
128 MiB here, ~100x the plain read.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from transcripts.core.agents.source import BLOCK, complete_lines

TARGET = 3.0
MIB = 1 << 20
HEAD = b'{"type": "user", "message": {"content": "hello"}}\n'


def write_torn(path: Path, size: int) -> None:
    """One complete line, then a line of ``size`` bytes with no newline."""
    with path.open("wb") as fp:
        fp.write(HEAD)
        fp.write(b'{"type": "user", "message": {"content": "')
        chunk = b"x" * MIB
        left = size - len(HEAD)
        while left > 0:
            left -= fp.write(chunk[: min(left, MIB)])


def lines_of(fd: int, size: int) -> int:
    found = list(complete_lines(fd, 0, size))
    assert len(found) == 1, found[:2]  # the head; the torn line waits
    return len(found)


def plain_read(fd: int, size: int) -> int:
    pos = 0
    while pos < size:
        pos += len(os.pread(fd, min(BLOCK, size - pos), pos))
    return pos


def measure(path: Path, size: int, runs: int) -> dict[str, common.Timing]:
    fd = os.open(path, os.O_RDONLY)
    try:
        return common.interleaved(
            {
                "complete_lines": lambda: lines_of(fd, size),
                "plain read": lambda: plain_read(fd, size),
            },
            runs=runs,
        )
    finally:
        os.close(fd)


def main() -> int:
    parser = common.arg_parser(__doc__)
    parser.add_argument("--runs", type=int, default=5, help="runs per arm (default 5)")
    parser.add_argument("--sizes", default="32,64,128", help="torn line sizes in MiB")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"bench_torn_line: {common.cpu_note()}")
    worst = 0.0
    with common.temp_dir("torn") as tmp:
        for mib in sizes:
            path = tmp / f"torn-{mib}.jsonl"
            write_torn(path, mib * MIB)
            size = common.warm_page_cache(path)
            timings = measure(path, size, args.runs)
            path.unlink()
            ratio = timings["complete_lines"].best / timings["plain read"].best
            worst = max(worst, ratio)
            print(f"\n{mib} MiB torn line (best of {args.runs}):")
            common.print_arms(timings, size=size, width=16)
            print(f"ratio complete_lines / plain read: {ratio:.2f}")
    print(f"\nworst ratio: {worst:.2f} (target <= {TARGET})")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
