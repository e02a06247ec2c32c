"""Prompt size per pass against session length: a full pass vs an incremental one.

Builds sessions of N user turns (each: a request, an assistant reply of ~600 characters,
an edit, a test run, a commit every third turn: what a coding agent's session holds), a
previous summary of them (one intent per ten turns, the last one open), then one more
turn, and prints what each kind of pass sends:

* full: ``build_prompt(turns)``, the instructions plus the bounded transcript and its
  tool facts;
* incremental: ``build_incremental_prompt(previous, turns, since=N)``, the update rules,
  the previous payload, the new turn and its facts.

Characters always; prompt tokens too with ``--base-url URL --model NAME`` (an
OpenAI-compatible server's ``usage.prompt_tokens``, one request per prompt,
``max_tokens`` 1). Target: after one new turn on a 200-turn session the incremental
pass sends at most 10 % of what a full pass sends.

    .venv/bin/python bench/bench_prompt_size.py [--turns 25 50 100 200]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from summaries.core.extract import extract_turns  # noqa: E402
from summaries.core.intents import SummaryPayload  # noqa: E402
from summaries.core.prompt import build_incremental_prompt, build_prompt  # noqa: E402

TARGET = 0.10
REPLY = (
    "I traced it to the session handling in the request middleware: the cookie is read "
    "before the refresh sets it, so every third request sees a stale token. I moved the "
    "read after the refresh, added a regression test that replays the exact sequence from "
    "the logs, and ran the module's tests. "
) * 2


def session_rows(turns: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    minute = 0

    def ts() -> str:
        nonlocal minute
        minute += 1
        return (
            f"2026-11-{1 + minute // 1440:02d}T{minute // 60 % 24:02d}:{minute % 60:02d}:00+00:00"
        )

    for n in range(1, turns + 1):
        rows.append(
            {"role": "user", "content": f"Next: fix issue #{n} in module m{n % 7}.py", "ts": ts()}
        )
        rows.append({"role": "assistant", "content": REPLY, "ts": ts()})
        rows.append(
            {"role": "tool_call", "content": f"src/m{n % 7}.py: fix #{n}", "meta": {"tool": "edit"}}
        )
        rows.append(
            {
                "role": "tool_result",
                "content": "ok",
                "ts": ts(),
                "meta": {"tool": "edit", "exit_code": 0},
            }
        )
        rows.append({"role": "tool_call", "content": "pytest -q", "meta": {"tool": "bash"}})
        rows.append(
            {
                "role": "tool_result",
                "content": f"{100 + n} passed in 3.1s",
                "ts": ts(),
                "meta": {"tool": "bash", "exit_code": 0},
            }
        )
        if n % 3 == 0:
            rows.append(
                {
                    "role": "tool_call",
                    "content": f"git commit -am 'fix #{n}'",
                    "meta": {"tool": "bash"},
                }
            )
            rows.append(
                {
                    "role": "tool_result",
                    "content": f"[main {n:07x}] fix #{n}",
                    "ts": ts(),
                    "meta": {"tool": "bash", "exit_code": 0},
                }
            )
    return rows


def previous_summary(turns: int) -> SummaryPayload:
    intents = []
    for start in range(1, turns + 1, 10):
        end = min(turns, start + 9)
        last = end == turns
        intents.append(
            {
                "title": f"Fix the issues #{start}-#{end}",
                "ranges": [[start, end]],
                "status": "active" if last else "completed",
                "verified": None if last else True,
                "origin_turn": start,
                "initial_intent": f"Issues #{start} to #{end} were reported from production.",
                "progress": [f"#{start}-#{end - 1} fixed and tested", "committed on main"],
                "next_steps": [{"what": f"Fix #{end}", "why": "still open", "expect": "tests pass"}]
                if last
                else [],
            }
        )
    intents.reverse()
    return SummaryPayload.model_validate({"intents": intents, "constraints": []})


def prompt_tokens(base_url: str, model: str, prompt: str) -> int | None:
    import httpx

    body = {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": 1}
    reply = httpx.post(base_url.rstrip("/") + "/chat/completions", json=body, timeout=120)
    usage = reply.json().get("usage") or {}
    value = usage.get("prompt_tokens")
    return value if isinstance(value, int) else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[25, 50, 100, 200])
    parser.add_argument("--base-url", help="an OpenAI-compatible server, for token counts")
    parser.add_argument("--model", default="", help="the model name to send with --base-url")
    args = parser.parse_args(argv)
    print(f"{'turns':>6} {'full chars':>11} {'incr chars':>11} {'ratio':>7}  tokens full/incr")
    verdict = None
    for n in args.turns:
        turns = extract_turns(session_rows(n + 1))
        full = build_prompt(turns)
        incremental = build_incremental_prompt(previous_summary(n), turns, since=n)
        ratio = len(incremental) / len(full)
        tokens = "-"
        if args.base_url:
            a = prompt_tokens(args.base_url, args.model, full)
            b = prompt_tokens(args.base_url, args.model, incremental)
            tokens = f"{a}/{b}"
        print(f"{n:>6} {len(full):>11,} {len(incremental):>11,} {ratio:>7.1%}  {tokens}")
        if n == 200:
            verdict = ratio
    if verdict is not None:
        ok = "meets" if verdict <= TARGET else "MISSES"
        print(f"200 turns + 1: incremental = {verdict:.1%} of full ({ok} the {TARGET:.0%} target)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
