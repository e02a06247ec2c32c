"""Import of Claude Code sessions: first run vs a plain orjson parse, and a re-import.

Builds a Claude Code projects folder (default 500 sessions, about 200 MB: prompts,
replies, Bash calls with multi-KB outputs and their structured ``toolUseResult`` copy,
Edit calls with file contents, thinking blocks, bookkeeping lines; every record with the
envelope real Claude Code writes: timestamp, uuid/parentUuid, requestId, model, usage,
tool-use ids of the API's shape, so rows carry the meta real imports redact), then:

1. baseline: ``orjson.loads`` of every line of every file (bytes already in page cache),
   best of three;
2. ``--runs`` times (default 3), in a child process with a fresh private
   ``KIROCREW_HOME`` (``common.django_env``: SQLite, no broker or Redis): the baseline
   again, then ``import_transcripts --format claude-code SRC`` (the first import,
   summaries off so the figure is the importer's own), then the same command over the
   unchanged tree; targets: the median of the runs' throughput ratios (each first import
   against the parse measured beside it: the machine's speed moves by tens of percent
   within minutes) >= 0.5x, and the re-import <= 3 % of the first.

Also printed, to say where the time goes and what bounds it: parse + the pure converter;
the write-boundary redaction of the converted rows alone, row by row
(``transcripts.core.store.redact_row``); the workers' own work (``prepare``, no database)
with one forked worker and with two (how much a second core gives on this machine); per
run, the importer's and the workers' CPU seconds and what one file create costs in that
run's home (the import makes two per session). ``--follow`` (append -> store ->
WebSocket frame) is ``bench_follow_latency.py``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import resource
import statistics
import string
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson

from bench import common

TEXT = (
    "the parser test fails on ISO weeks because the format string uses week numbers "
    "from sunday rather than monday so we switch to the ISO directive and add a case "
    "for the year boundary then run the suite again and commit the change on the branch"
)
WORDS = TEXT.split(" ")


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


BASE62 = string.ascii_letters + string.digits
USAGE = {
    "input_tokens": 4,
    "cache_creation_input_tokens": 1523,
    "cache_read_input_tokens": 18342,
    "output_tokens": 212,
    "service_tier": "standard",
}


def _id(rng: random.Random, prefix: str, n: int) -> str:
    """An Anthropic-style id: ``toolu_01`` / ``req_011C`` / ``msg_01`` + base62."""
    return prefix + "".join(rng.choice(BASE62) for _ in range(n))


def build_session(path: Path, rng: random.Random, target: int) -> int:
    """One session with the envelope real Claude Code records carry (uuid, parentUuid,
    timestamp, userType, isSidechain; requestId, model and usage on assistant records;
    tool-use ids of the API's shape): the converter keeps the timestamp and the call ids
    in each row's meta, and the store redacts that meta."""
    sid = path.stem
    base = {
        "isSidechain": False,
        "userType": "external",
        "sessionId": sid,
        "cwd": "/home/dev/proj",
        "gitBranch": "main",
        "version": "2.1.1",
    }
    lines: list[bytes] = []
    size, turn, parent = 0, 0, None
    clock = datetime(2026, 3, 1, 9, 0, tzinfo=UTC) + timedelta(seconds=rng.randrange(10**7))

    def put(rec: dict[str, Any]) -> None:
        nonlocal size, parent, clock
        me = str(uuid.UUID(int=rng.getrandbits(128)))
        clock += timedelta(milliseconds=rng.randrange(50, 20_000))
        stamp = clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        data = orjson.dumps({"parentUuid": parent, **base, **rec, "uuid": me, "timestamp": stamp})
        parent = me
        lines.append(data)
        size += len(data) + 1

    def reply(content: list[dict[str, Any]], stop: str | None, mid: str) -> dict[str, Any]:
        message: dict[str, Any] = {"id": mid, "type": "message", "role": "assistant"}
        message |= {"model": "claude-sonnet-4-5-20250929", "content": content}
        message |= {"stop_reason": stop, "stop_sequence": None, "usage": USAGE}
        return {"type": "assistant", "requestId": _id(rng, "req_011C", 18), "message": message}

    put({"type": "file-history-snapshot", "snapshot": {}})
    while size < target:
        turn += 1
        put({"type": "user", "message": {"role": "user", "content": _text(rng, 30)}})
        mid = _id(rng, "msg_01", 22)
        thought = {"type": "thinking", "thinking": _text(rng, 120), "signature": _id(rng, "", 300)}
        put(reply([thought], None, mid))
        for step in range(3):
            call = _id(rng, "toolu_01", 22)
            if step == 1:
                tool = {
                    "name": "Edit",
                    "input": {"file_path": "src/a.py", "new_string": _text(rng, 400)},
                }
                out = "The file src/a.py has been updated."
            else:
                tool = {"name": "Bash", "input": {"command": "pytest -q"}}
                out = _text(rng, 1200) + "\n5 passed in 0.3s"
            # One API response per step; its blocks share a message id (the first step's
            # tool_use streams after the thinking block).
            step_mid = mid if step == 0 else _id(rng, "msg_01", 22)
            put(reply([{"type": "tool_use", "id": call, **tool}], "tool_use", step_mid))
            put(
                {
                    "type": "user",
                    "toolUseResult": {"stdout": out, "stderr": "", "interrupted": False},
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": call, "content": out}],
                    },
                }
            )
        put(reply([{"type": "text", "text": _text(rng, 80)}], "end_turn", _id(rng, "msg_01", 22)))
        put({"type": "system", "subtype": "turn_duration", "durationMs": 1234})
    path.write_bytes(b"\n".join(lines) + b"\n")
    return size


def parse_all(files: list[Path]) -> int:
    count = 0
    for path in files:
        for line in path.read_bytes().splitlines():
            orjson.loads(line)
            count += 1
    return count


def convert_all(files: list[Path]) -> list[dict[str, Any]]:
    """The pure converter over every line (what the importer writes, before the store)."""
    from transcripts.core.agents import claude_code
    from transcripts.core.agents.common import ConvState

    rows: list[dict[str, Any]] = []
    for path in files:
        conv = ConvState()
        for line in path.read_bytes().splitlines():
            rows += claude_code.convert(orjson.loads(line), conv).rows
    return rows


def redact_all(rows: list[dict[str, Any]]) -> int:
    """The store's write-boundary redaction of the same rows, nothing else (no disk)."""
    from transcripts.core.store import redact_row, row_order

    for row in rows:
        redact_row(row_order(row))
    return len(rows)


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def child(source: Path, home: Path) -> None:
    """One first import and one re-import in a fresh ``KIROCREW_HOME`` (its own SQLite
    and store), timed in process; prints a JSON line for the parent."""
    common.django_setup(common.django_env(home, KIROCREW_SUMMARY_ENABLED="0"))
    from django.core.management import call_command

    from summaries.worker import summary_worker_drain
    from transcripts.models import Session

    def run() -> str:
        out = io.StringIO()
        call_command("import_transcripts", "--format", "claude-code", str(source), stdout=out)
        return out.getvalue().strip().splitlines()[-1]

    files = sorted(source.iterdir())
    parse_all(files)  # the page cache holds the source for both arms
    # The baseline again, in this process right before its import: the machine's speed
    # moves by tens of percent within minutes, a ratio taken side by side does not.
    parse_s = min(common.timed(partial(parse_all, files))[0] for _ in range(3))
    main0, kids0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    first_s, first_out = common.timed(run)
    main_cpu = _cpu(resource.RUSAGE_SELF) - main0
    workers_cpu = _cpu(resource.RUSAGE_CHILDREN) - kids0
    # Each clean turn end queued a summary pass (a no-op with summaries off) that runs
    # after the command returns: let it finish, untimed, before the re-import.
    summary_worker_drain()
    second_s, second_out = common.timed(run)
    summary_worker_drain()
    sessions = Session.objects.count()
    print(
        json.dumps(
            {
                "first": first_s,
                "parse": parse_s,
                "second": second_s,
                "first_out": first_out,
                "second_out": second_out,
                "main_cpu": main_cpu,
                "workers_cpu": workers_cpu,
                "sessions": sessions,
            }
        )
    )


def scaling(files: list[Path]) -> tuple[float, float]:
    """Seconds for the workers' own work (``prepare``, no database) over ``files`` with
    one forked worker and with two: how much of a second core this machine gives."""
    from django.test import override_settings

    from transcripts.services.agent_import import prepared_in_workers

    def run(workers: int) -> float:
        with override_settings(KIROCREW_IMPORT_WORKERS=workers):
            return common.timed(
                lambda: sum(1 for _ in prepared_in_workers(files, "claude-code", None, False))
            )[0]

    seconds: dict[int, list[float]] = {
        1: [],
        2: [],
    }  # interleaved, best of two: the machine is noisy
    for workers in (1, 2, 1, 2):
        seconds[workers].append(run(workers))
    return min(seconds[1]), min(seconds[2])


def create_cost(folder: Path, count: int = 200) -> float:
    """Seconds per new file in ``folder`` (the import makes two a session: its file and
    its source's state). On this machine's ext4 it ranges from ~20 µs to ~600 µs by
    where the folder's inodes fall, which moves the first import's time with it."""
    folder.mkdir(parents=True, exist_ok=True)
    names = [folder / f"probe-{n}" for n in range(count)]
    start = time.perf_counter()
    for name in names:
        os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    elapsed = time.perf_counter() - start
    for name in names:
        name.unlink()
    return elapsed / count


def main(argv: list[str] | None = None) -> int:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--mb", type=float, default=200.0, help="total source size (MB)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3, help="first imports, each in a fresh home")
    ap.add_argument("--child", nargs=2, metavar=("SOURCE", "HOME"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]))
        return 0
    print(f"bench_agent_import: {common.cpu_note()}")
    rng = random.Random(args.seed)
    with common.temp_dir("agent-import") as tmp:
        source = tmp / "claude" / "projects" / "-home-dev-proj"
        source.mkdir(parents=True)
        per = int(args.mb * common.MB / args.sessions)
        files = [
            source / f"{uuid.UUID(int=rng.getrandbits(128))}.jsonl" for _ in range(args.sessions)
        ]
        total = sum(build_session(p, rng, per) for p in files)
        print(f"source: {len(files)} Claude Code sessions, {total / common.MB:.1f} MB")
        common.django_setup(common.django_env(tmp / "diagnostics", KIROCREW_SUMMARY_ENABLED="0"))

        parse_all(files)  # warm the page cache for every arm
        parse_s = min(common.timed(lambda: parse_all(files))[0] for _ in range(3))
        records = parse_all(files)
        convert_s, converted = common.timed(lambda: convert_all(files))
        redact_s, row_count = common.timed(partial(redact_all, converted))
        converted.clear()  # 48k rows: not held through the imports
        one_s, two_s = scaling(files)
        runs = []
        for n in range(args.runs):
            home = tmp / f"home-{n}"
            create_s = create_cost(home / "probe")
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(source), str(home)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            run = json.loads(out.strip().splitlines()[-1])
            run["create"] = create_s
            runs.append(run)
            assert run["sessions"] == len(files), run
            print(
                f"  run {n + 1}: first import {common.fmt_ms(run['first'])}, "
                f"{run['parse'] / run['first']:.2f}x its own parse of {common.fmt_ms(run['parse'])} "
                f"(cpu: importer {run['main_cpu']:.2f} s, workers {run['workers_cpu']:.2f} s; "
                f"a file create here {create_s * 1e6:.0f} us), re-import {common.fmt_ms(run['second'])}"
            )
        first_s = statistics.median(run["first"] for run in runs)
        ratio = statistics.median(run["parse"] / run["first"] for run in runs)
        # The import is CPU-bound: its CPU-seconds per parse-second bound what a run can
        # reach on this machine's cores (ratio <= cores / work), and the importer's own
        # share, which one process does, bounds it on any number (ratio <= parse / main).
        work = statistics.median(
            (run["main_cpu"] + run["workers_cpu"]) / run["parse"] for run in runs
        )
        main_share = statistics.median(run["main_cpu"] / run["parse"] for run in runs)
        cores = len(os.sched_getaffinity(0))
        again = statistics.median(run["second"] / run["first"] for run in runs)
        print(
            f"orjson parse:  {common.fmt_ms(parse_s):>10}  {total / parse_s / common.MB:7.1f} MB/s  ({records:,} records; best of 3)"
        )
        print(
            f"parse+convert: {common.fmt_ms(convert_s):>10}  {total / convert_s / common.MB:7.1f} MB/s  "
            f"({row_count:,} rows; parse alone is {parse_s / convert_s:.2f}x of it)"
        )
        print(
            f"redaction of those rows alone, row by row: {common.fmt_ms(redact_s)} = {redact_s / parse_s:.1f}x the parse"
        )
        print(
            f"workers' own work (prepare, no database): 1 worker {common.fmt_ms(one_s)}, "
            f"2 workers {common.fmt_ms(two_s)}: a second worker gives {one_s / two_s:.2f}x"
        )
        print(
            f"first import: {common.fmt_ms(first_s):>10}  {total / first_s / common.MB:7.1f} MB/s  "
            f"(median of {len(runs)}) {runs[-1]['first_out']}"
        )
        print(f"re-import:    {common.fmt_ms(runs[-1]['second']):>10}  {runs[-1]['second_out']}")
        print(
            f"throughput vs parse (median of each run's ratio to the parse beside it): {ratio:.2f}x; "
            f"target >= 0.5x: {'MET' if ratio >= 0.5 else 'MISSED'}"
        )
        print(
            f"work: {work:.1f} CPU-s per parse-second (importer {main_share:.1f}, workers "
            f"{work - main_share:.1f}): at most {cores / work:.2f}x on these {cores} cores, "
            f"{min(8 / work, 1 / main_share):.2f}x on 8 (the importer alone caps it at "
            f"{1 / main_share:.2f}x); 0.5x here needs {work / (2 * cores):.1f}x less work"
        )
        print(
            f"re-import / first: {again:.2%}; target <= 3%: {'MET' if again <= 0.03 else 'MISSED'}"
        )
        ok = ratio >= 0.5 and again <= 0.03
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
