"""The heuristic summarizer's wall-clock scaling: 750 vs 1 500 turns (one intent each).

Moved here from the unit tests (issue 13: no wall-clock bounds in tests; the test counts
profile events instead). Interleaved, best of N, in one process:

* baseline: ``summarize_turns`` on 750 turns;
* double:   the same on 1 500 turns.

Target: double / baseline <= 2.5 (linear is ~2.0, quadratic would be ~4.0). It also
prints the absolute time for 1 500 turns, the figure the old test bounded at 5 s.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from datetime import datetime, timedelta

from bench import common
from summaries.core.heuristic import summarize_turns
from summaries.core.transcript_turn import TranscriptTurn

START = datetime.fromisoformat("2026-05-04T09:00:00+02:00")
TARGET = 2.5


def turns(n: int) -> list[TranscriptTurn]:
    out: list[TranscriptTurn] = []
    for i in range(n):
        at = START + timedelta(minutes=4 * i)
        ask = f"Separately: fix widget{i} rendering on the settings page number {i}."
        done = f"Changed widget{i}.tsx to use the theme colour. 3 passed. Committed a{i}."
        out.append(TranscriptTurn(2 * i + 1, "user", ask, at.isoformat(), i + 1))
        later = (at + timedelta(minutes=2)).isoformat()
        out.append(TranscriptTurn(2 * i + 2, "assistant", done, later, None))
    return out


def main() -> int:
    parser = common.arg_parser(__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    small, large = turns(750), turns(1500)
    assert len(summarize_turns(large)["intents"]) == 1500  # type: ignore[arg-type]
    timings = common.interleaved(
        {"750 turns": lambda: summarize_turns(small), "1500 turns": lambda: summarize_turns(large)},
        runs=args.runs,
    )
    base, double = timings["750 turns"].best, timings["1500 turns"].best
    ratio = double / base
    print(f"750 turns:  {common.fmt_ms(base)} (best of {args.runs})")
    print(f"1500 turns: {common.fmt_ms(double)} (best of {args.runs})")
    print(f"ratio 1500/750: {ratio:.2f} (target <= {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
