"""How far do two careful people agree on the labels? The ceiling any summarizer is held to.

    .venv/bin/python bench/label_agreement.py

For each batch in ``tests/data/summary_quality_blind/agreement/`` a second labeller, who saw
neither the summarizer nor the first labels, labelled the batch's sessions from the transcripts
alone (same written conventions). Their labels are scored as if they were a summarizer's output
against the batch's own labels, with the scorer of ``summary_quality`` (intents as predicted
intents; the non-optional constraints' own words as predicted constraints).

Measured 2026-12-02 (held-out-14 and -15, 40 sessions): boundary F1 0.98, state 0.96, origin
0.99, constraints P/R 0.96/0.95. The labels are consistent; what the heuristic misses is in
the text for a reader who understands it (``boundary_oracle.py``: the continue-or-new call).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.fit_boundaries import line  # noqa: E402
from bench.summary_quality import (  # noqa: E402
    BLIND_ROOT,
    Score,
    extract,
    load_labelled_set,
    read_records,
    score_session,
)

AGREEMENT = BLIND_ROOT / "agreement"


def as_payload(spec: dict[str, object]) -> dict[str, object]:
    intents = spec.get("intents") or []
    constraints = spec.get("constraints") or []
    assert isinstance(intents, list)
    assert isinstance(constraints, list)
    return {
        "intents": [
            {k: i.get(k) for k in ("title", "ranges", "status", "verified", "origin_turn")}
            for i in intents
        ],
        "constraints": [c["text"] for c in constraints if not c.get("optional")],
    }


def main() -> int:
    total = Score()
    for path in sorted(AGREEMENT.glob("*.json")):
        second = json.loads(path.read_text(encoding="utf-8"))["sessions"]
        score = Score()
        for session in load_labelled_set(BLIND_ROOT / path.stem):
            turns = extract(read_records(session.path))
            score.add(score_session(session, as_payload(second[session.name]), turns))
        print(line(path.stem.removeprefix("held-out-"), score))
        total.add(score)
    print(line("all", total))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
