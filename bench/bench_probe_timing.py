"""Timing oracle check: does a foreign slot answer slower than a missing one?

Sets up a private ``KIROCREW_HOME`` (SQLite, no outside database), an owner app with
``--requests`` slots and a prober app. The prober GETs ``/api/chat/slots/<name>`` through
Django's test ``Client`` (the whole middleware stack, in process), alternating a foreign
name (an owner's slot) and a missing one request by request, every name distinct (a
first probe: the audit's insert path, as in an enumeration sweep). Both must be the same
404; the bench prints the median latency of each arm, their ratio, and how many probes a
threshold classifier (above the overall median: "exists") labels correctly (50 % is a
coin toss; the finding this answers reported 37 of 40 before the fix).

Target: median foreign / missing within 1 +/- 0.1 (report; timing is noisy here).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

TOLERANCE = 0.1


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--requests", type=int, default=400, help="probes per arm (default 400)")
    args = ap.parse_args(argv)

    print(f"bench_probe_timing: {common.cpu_note()}")
    with common.temp_dir("probe-timing") as tmp:
        common.django_setup(common.django_env(tmp / "home"))

        from django.test import Client

        from transcripts.models import SecurityEvent
        from transcripts.services import app_create, session_create

        owner, _ = app_create(name="owner")
        _, token = app_create(name="prober")
        n = args.requests
        for i in range(n + 20):
            session_create(name=f"taken-{i}", app=owner)
        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

        def probe(name: str) -> float:
            t = time.perf_counter()
            response = client.get(f"/api/chat/slots/{name}")
            elapsed = time.perf_counter() - t
            assert response.status_code == 404, response.content[:300]
            return elapsed

        for i in range(20):  # warm-up: imports, caches, the database connection
            probe(f"taken-{n + i}")
            probe(f"warm-missing-{i}")

        samples: dict[str, list[float]] = {"foreign": [], "missing": []}
        for i in range(n):
            pair = [("foreign", f"taken-{i}"), ("missing", f"absent-{i}")]
            for arm, name in pair if i % 2 == 0 else pair[::-1]:
                samples[arm].append(probe(name))
        rows = SecurityEvent.objects.count()
        probes = sum(SecurityEvent.objects.values_list("count", flat=True))

    foreign, missing = (statistics.median(samples[a]) for a in ("foreign", "missing"))
    ratio = foreign / missing
    for arm, values in samples.items():
        print(f"GET foreign-or-missing slot, {arm:7}: {common.fmt_latencies(values, width=6)}")
    threshold = statistics.median(samples["foreign"] + samples["missing"])
    right = sum(t > threshold for t in samples["foreign"])
    right += sum(t <= threshold for t in samples["missing"])
    print(f"threshold classifier: {right} of {2 * n} probes right ({right / (2 * n):.0%})")
    print(f"audit: {probes} probes recorded on {rows} rows")
    ok = abs(ratio - 1) <= TOLERANCE
    verdict = "OK" if ok else "MISSED"
    print(f"median latency foreign / missing = {ratio:.3f} (target 1 +/- {TOLERANCE}) {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
