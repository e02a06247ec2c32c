"""How long the OpenAI-compatible backend takes to give up on a server that never answers.

Moved here from the unit tests (issue 13: no wall-clock bounds in tests; the test checks
the events, two requests and a BackendTimeout, instead). The fake server of the tests
delays every reply by 10 minutes; the backend's timeout is 0.3 s and a timed-out
generation is never asked again (it may still be running on the server), so it should
give up after about 0.3 s. Best and worst of N runs.

Target: worst <= 3.0x the configured 0.3 s (a hung client would take minutes).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import contextlib

from bench import common
from summaries.core.backends import BackendTimeout
from summaries.core.backends.openai import OpenAIBackend
from tests.summaries.fake_openai_server import Behaviour, FakeOpenAIServer

TIMEOUT = 0.3
TARGET = 3.0


def main() -> int:
    parser = common.arg_parser(__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    samples: list[float] = []
    for _ in range(args.runs):
        with FakeOpenAIServer() as server:
            server.enqueue(Behaviour.sleep(600.0), Behaviour.sleep(600.0))
            backend = OpenAIBackend("m", server.base_url, None, timeout=TIMEOUT, retry_backoff=0.0)
            started = time.perf_counter()
            with contextlib.suppress(BackendTimeout):
                backend.generate("prompt", [])
            samples.append(time.perf_counter() - started)
            assert len(server.requests) == 1
    expected = TIMEOUT
    ratio = max(samples) / expected
    print(f"gave up after: best {common.fmt_ms(min(samples))}, worst {common.fmt_ms(max(samples))}")
    print(f"worst / {TIMEOUT} s: {ratio:.2f} (target <= {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
