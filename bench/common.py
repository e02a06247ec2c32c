"""Shared helpers for the ratio benchmarks: timing, temp dirs, realistic transcript rows.

Every benchmark measures its arms in the same process and run, interleaved, and reports a
ratio against a baseline: absolute times on these shared 2-core machines move, ratios hold.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import random
import statistics
import string
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

TMP_ROOT = "/tmp"
MB = 1_000_000  # MB/s figures use decimal megabytes, as the reference tables do


# ---------------------------------------------------------------------- timing
@dataclass
class Timing:
    name: str
    samples: list[float]

    @property
    def best(self) -> float:
        return min(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


def interleaved(arms: dict[str, Callable[[], Any]], runs: int = 3) -> dict[str, Timing]:
    """Run every arm ``runs`` times, interleaved A/B/A/B, ``gc.collect()`` before each.

    The arm's return value is dropped only after the clock stops (freeing a big result
    is not part of the measured work).
    """
    out = {name: Timing(name, []) for name in arms}
    for _ in range(runs):
        for name, fn in arms.items():
            gc.collect()
            t0 = time.perf_counter()
            result = fn()
            elapsed = time.perf_counter() - t0
            out[name].samples.append(elapsed)
            del result
    gc.collect()
    return out


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, nearest rank below."""
    return sorted(values)[int(q * (len(values) - 1))]


def fmt_latencies(values: list[float], width: int = 7) -> str:
    """``median …, p90 …, min …`` of per-request seconds, in ms."""
    return (
        f"median {statistics.median(values) * 1000:{width}.3f} ms, "
        f"p90 {percentile(values, 0.9) * 1000:{width}.3f} ms, "
        f"min {min(values) * 1000:{width}.3f} ms"
    )


def print_arms(t: dict[str, Timing], *, size: int | None = None, width: int = 14) -> None:
    """The arms table: best and median time, and MB/s at best when ``size`` (bytes) is given."""
    print(f"{'arm':<{width}}{'best':>12}{'median':>12}" + (f"{'MB/s (best)':>14}" if size else ""))
    for name, timing in t.items():
        line = f"{name:<{width}}{fmt_ms(timing.best):>12}{fmt_ms(timing.median):>12}"
        if size:
            line += f"{size / MB / timing.best:>14,.0f}"
        print(line)


def fmt_rate(count: float, unit: str) -> str:
    return f"{count:,.0f} {unit}"


def arg_parser(doc: str | None) -> argparse.ArgumentParser:
    """A bench script's parser: its module docstring, as written, is the ``--help`` text."""
    return argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )


# ---------------------------------------------------------------------- I/O accounting
def proc_io() -> dict[str, int] | None:
    """This process's /proc/self/io counters (rchar/wchar count read()/write() bytes)."""
    try:
        with open("/proc/self/io", "rb") as fp:
            text = fp.read().decode()
    except OSError:
        return None
    return {k: int(v) for k, v in (line.split(": ") for line in text.splitlines())}


def io_delta(fn: Callable[[], Any]) -> tuple[int, int] | None:
    """(rchar, wchar) bytes moved by ``fn`` (mmap reads are invisible to rchar)."""
    first = proc_io()
    if first is None:
        fn()
        return None
    cal = proc_io()
    assert cal is not None
    overhead = cal["rchar"] - first["rchar"]  # reading /proc/self/io is itself a read()
    before = proc_io()
    fn()
    after = proc_io()
    assert before is not None
    assert after is not None
    return after["rchar"] - before["rchar"] - overhead, after["wchar"] - before["wchar"]


# ---------------------------------------------------------------------- temp dirs
@contextlib.contextmanager
def temp_dir(name: str) -> Iterator[Path]:
    """A scratch directory under /tmp, removed on exit (also on error or Ctrl-C)."""
    with tempfile.TemporaryDirectory(prefix=f"kirocrew-bench-{name}-", dir=TMP_ROOT) as d:
        yield Path(d)


class LineWriter:
    """Encoded lines written to ``path`` in batches (one ``write()`` per ``batch`` lines), as
    a context manager; ``written`` is the file's size so far, buffered lines included."""

    def __init__(self, path: Path, *, append: bool = False, batch: int = 1024) -> None:
        self.path = path
        self.mode = "ab" if append else "wb"
        self.batch = batch
        self.written = path.stat().st_size if append else 0
        self._buf: list[bytes] = []
        self._fp: IO[bytes] | None = None

    def __enter__(self) -> LineWriter:
        self._fp = self.path.open(self.mode)
        return self

    def write(self, line: bytes) -> None:
        self._buf.append(line)
        self.written += len(line)
        if len(self._buf) >= self.batch:
            self._flush()

    def _flush(self) -> None:
        assert self._fp is not None
        self._fp.write(b"".join(self._buf))
        self._buf.clear()

    def __exit__(self, exc_type: object, *exc_info: object) -> None:
        assert self._fp is not None
        try:
            if exc_type is None:
                self._flush()
        finally:
            self._fp.close()


def warm_page_cache(path: Path) -> int:
    """Read the file once so every arm starts from a warm page cache."""
    total = 0
    with path.open("rb", buffering=0) as fp:
        while chunk := fp.read(8 << 20):
            total += len(chunk)
    return total


# ---------------------------------------------------------------------- realistic rows
_WORDS = [
    "the",
    "session",
    "transcript",
    "row",
    "append",
    "lock",
    "rotation",
    "archive",
    "revision",
    "fold",
    "reader",
    "fixed",
    "function",
    "handler",
    "returns",
    "value",
    "error",
    "test",
    "passes",
    "because",
    "config",
    "settings",
    "should",
    "could",
    "would",
    "needs",
    "check",
    "trace",
    "call",
    "site",
    "frontend",
    "backend",
    "request",
    "response",
    "tool",
    "output",
    "file",
    "path",
    "line",
    "column",
    "stack",
    "frame",
    "import",
    "module",
    "class",
    "method",
    "self",
    "data",
    "bytes",
    "string",
    "list",
    "dict",
    "key",
    "value",
    "None",
    "True",
    "False",
    "await",
    "async",
    "def",
    "return",
    "yield",
    "we",
    "I",
    "you",
    "it",
    "this",
    "that",
    "with",
    "from",
    "into",
    "over",
    "under",
    "about",
    "after",
    "before",
    "while",
    "until",
    "summary",
    "dashboard",
    "agent",
    "model",
    "token",
    "cache",
    "index",
    "query",
    "filter",
    "order",
    "group",
    "limit",
    "deploy",
    "build",
    "release",
    "commit",
    "branch",
    "merge",
    "review",
    "diff",
    "patch",
    "hunk",
    "context",
    "window",
]
_UNICODE = ["→", "—", "é", "ü", "…", "✓", "日本語", "データ", "🙂", "±"]
_CODE = [
    "    def fold(self, lines):\n        for line in lines:\n            yield parse(line)\n",
    '    $ grep -n "list_sessions" src/kiro_crew/dashboard/handlers/sessions.py\n',
    '    {"sessions": [], "total": 0, "has_more": false}\n',
    "    - const first = data.sessions[0]\n    + const first = data.sessions?.[0]\n",
    "\tat com.example.Main.run(Main.java:42)\n\tat com.example.Main.main(Main.java:7)\n",
    "```python\nwith store.locked(key):\n    store.append_rows(key, rows)\n```\n",
    'Traceback (most recent call last):\n  File "app.py", line 12, in <module>\n',
]
SECRETS = [
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "sk-proj-" + "Xy3kQ9" * 8,
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "https://attacker.example/collect?token=c2VjcmV0LXRva2VuLXZhbHVl&user=dev",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9s0dGhT2Xy\n-----END RSA PRIVATE KEY-----",
]

ROLES_MIXED = (
    # (role, weight, min chars, max chars)
    ("user", 30, 20, 600),
    ("assistant", 33, 150, 4_000),
    ("tool_call", 10, 80, 500),
    ("tool_result", 20, 300, 9_000),
    ("system", 4, 40, 200),
    ("notice", 3, 30, 160),
)
ROLES_CHAT = (
    ("user", 45, 20, 500),
    ("assistant", 50, 150, 3_800),
    ("system", 5, 40, 200),
)
PROFILES = {"mixed": ROLES_MIXED, "chat": ROLES_CHAT}
BIG_TOOL_OUTPUT = (20_000, 60_000)  # occasional large tool output (1 in 60 tool results)


def _text_pool(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    total = 0
    while total < size:
        r = rng.random()
        if r < 0.03:
            piece = rng.choice(_CODE)
        elif r < 0.05:
            piece = rng.choice(_UNICODE) + " "
        elif r < 0.08:
            piece = ".\n\n" if rng.random() < 0.3 else ". "
        elif r < 0.09:
            piece = f'"{rng.choice(_WORDS)}" '
        elif r < 0.10:
            piece = f"`{rng.choice(_WORDS)}_{rng.randrange(1000)}` "
        else:
            piece = rng.choice(_WORDS) + " "
        parts.append(piece)
        total += len(piece)
    return "".join(parts)


class TsClock:
    """Offset-aware ISO stamps, strictly increasing, in the transcript's format."""

    def __init__(self, rng: random.Random, start: datetime | None = None) -> None:
        self.rng = rng
        self.now = start or datetime(2026, 1, 15, 9, 0, 0, 1, tzinfo=timezone(timedelta(hours=9)))

    def next(self) -> str:
        self.now += timedelta(microseconds=self.rng.randrange(1_000, 40_000_000))
        if self.now.microsecond == 0:  # keep every stamp the same length (isoformat drops .000000)
            self.now += timedelta(microseconds=1)
        return self.now.isoformat()


class RowFactory:
    """Seeded generator of realistic transcript rows (dashboard-style fields)."""

    def __init__(
        self,
        seed: int = 1,
        profile: str = "mixed",
        secret_rate: float = 0.0,
        exclude_roles: tuple[str, ...] = (),
    ) -> None:
        self.rng = random.Random(seed)
        self.pool = _text_pool(self.rng, 1 << 20)
        self.roles = tuple(r for r in PROFILES[profile] if r[0] not in exclude_roles)
        self._weights = [w for _, w, _, _ in self.roles]
        self.secret_rate = secret_rate
        self.clock = TsClock(self.rng)

    def text(self, length: int) -> str:
        start = self.rng.randrange(0, len(self.pool) - length) if length < len(self.pool) else 0
        return self.pool[start : start + length]

    def mid(self) -> str:
        return "m-" + "".join(self.rng.choices("0123456789abcdef", k=16))

    def content(self, role: str, lo: int, hi: int) -> str:
        rng = self.rng
        if role == "tool_result" and rng.random() < 1 / 60:
            length = rng.randrange(*BIG_TOOL_OUTPUT)
        else:
            # Skewed towards the short end, as real turns are.
            length = int(lo + (hi - lo) * rng.random() ** 2)
        text = self.text(length)
        if self.secret_rate and role != "user" and rng.random() < self.secret_rate:
            at = rng.randrange(0, len(text) + 1)
            text = f"{text[:at]} {rng.choice(SECRETS)} {text[at:]}"
        return text

    def row(self, *, ts: str | None = None, role: str | None = None) -> dict[str, Any]:
        """One row in the store's key order; ``ts`` None leaves it for the store to stamp."""
        rng = self.rng
        if role is None:
            role, _, lo, hi = rng.choices(self.roles, weights=self._weights)[0]
        else:
            _, _, lo, hi = next(r for r in self.roles if r[0] == role)
        row: dict[str, Any] = {"role": role, "content": self.content(role, lo, hi)}
        if role == "system":
            row["cls"] = "system"
        row["ts"] = ts
        row["source_thread"] = "dashboard"
        row["source_user"] = "dashboard"
        meta: dict[str, Any] = {"mid": self.mid()}
        if role == "assistant" and rng.random() < 0.15:
            meta["file_changes"] = [
                {
                    "path": f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py",
                    "added": rng.randrange(1, 80),
                }
                for _ in range(rng.randrange(1, 4))
            ]
        if role in ("tool_call", "tool_result"):
            meta["tool"] = rng.choice(["shell", "read_file", "grep", "edit", "web_fetch"])
        row["meta"] = meta
        return row

    def stamped_row(self) -> dict[str, Any]:
        return self.row(ts=self.clock.next())

    def metadata(self, title: str = "Benchmark session") -> dict[str, Any]:
        return {
            "_type": "metadata",
            "created_at": self.clock.now.isoformat(),
            "last_consolidated": 0,
            "closed": False,
            "pinned": False,
            "title": title,
            "agent": "default",
            "model": "claude-sonnet-4",
        }

    def patch(self, target: dict[str, Any]) -> dict[str, Any]:
        """A realistic single-row state change (stop transition, chip, banner, title)."""
        rng = self.rng
        r = rng.random()
        if r < 0.35:
            return {
                "meta": {**target.get("meta", {}), "kind": "stop_event", "stop_reason": "end_turn"}
            }
        if r < 0.6:
            return {
                "meta": {
                    **target.get("meta", {}),
                    "file_changes": [{"path": "src/app.py", "added": 3}],
                }
            }
        if r < 0.8:
            return {"cls": rng.choice(["stopped", "interrupted", "banner-warning"])}
        return {"title": " ".join(rng.choices(_WORDS, k=5))}


def random_token(rng: random.Random, n: int = 8) -> str:
    return "".join(rng.choices(string.ascii_lowercase + string.digits, k=n))


def cpu_note() -> str:
    return f"{os.cpu_count()} CPU(s), Python {sys.version.split()[0]}"


def cpu_seconds(pids: list[int], *, reaped: bool = False) -> float:
    """utime + stime of ``pids`` (seconds), from /proc; a process gone counts 0.
    ``reaped``: with the children each has waited for (cutime + cstime)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
        if reaped:
            total += int(fields[13]) + int(fields[14])
    return total / tick


def process_tree(root: int) -> list[int]:
    """``root`` and every live descendant (a Celery worker's pool children)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat[1])
    tree, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, ppid in parents.items() if ppid in frontier]
        tree += frontier
    return tree


# ---------------------------------------------------------------------- Django and daphne
# For benchmarks that run the application: a private KIROCREW_HOME (SQLite there), no
# outside database; the Redis channel layer only when a bench asks for it.
_FOREIGN_ENV = ("KIROCREW_", "CELERY_", "DATABASE_URL", "REDIS_URL", "DJANGO_")


def django_env(home: Path, *, redis_url: str | None = None, **extra: str) -> dict[str, str]:
    """The environment for a bench's own Django (in process or in a daphne child)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN_ENV)}
    env.update(
        DJANGO_SETTINGS_MODULE="kirocrew_site.settings",
        KIROCREW_HOME=str(home),
        KIROCREW_TRANSCRIPT_FSYNC="never",
        KIROCREW_SUMMARY_ENABLED="1",
        KIROCREW_LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    if redis_url:
        env["REDIS_URL"] = redis_url
    env.update(extra)
    return env


def django_setup(env: dict[str, str]) -> None:
    """Adopt ``env`` in this process, set Django up and migrate (settings read the
    environment at import, so this must run before anything imports them)."""
    for name in [k for k in os.environ if k.startswith(_FOREIGN_ENV) and k not in env]:
        del os.environ[name]
    os.environ.update(env)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Daphne:
    """A real daphne process on a free loopback port, in its own process group."""

    def __init__(self, env: dict[str, str], log_dir: Path, *, token: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = env
        self.token = token
        self.log_path = log_dir / f"daphne-{self.port}.log"
        self.proc: Any = None

    def __enter__(self) -> Daphne:
        import subprocess

        import httpx

        daphne = Path(sys.executable).parent / "daphne"
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                [
                    str(daphne),
                    "-b",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                    "kirocrew_site.asgi:application",
                ],
                cwd=REPO_ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        headers = {"Authorization": f"Bearer {self.token}"}
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daphne exited:\n{self.log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.base}/api/health", headers=headers).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.__exit__()
                raise RuntimeError(f"daphne did not answer:\n{self.log_path.read_text()[-3000:]}")
            time.sleep(0.1)

    def __exit__(self, *exc_info: object) -> None:
        if self.proc is not None:
            stop_group(self.proc, timeout=5)


def stop_group(proc: Any, *, timeout: float) -> None:
    """SIGTERM ``proc``'s process group, then SIGKILL it if it outlives ``timeout``."""
    import signal
    import subprocess

    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=timeout)
            break
        except subprocess.TimeoutExpired:
            continue


def summary_payload(intents: int = 6) -> dict[str, Any]:
    """A realistic stored summary body (the shape the pass writes)."""
    items = []
    for i in range(intents):
        items.append(
            {
                "title": f"Intent {i}: make the export paginate and stream",
                "ranges": [[1 + 3 * i, 3 + 3 * i]],
                "status": "completed" if i % 3 else "active",
                "verified": i % 2 == 0,
                "state": "done" if i % 3 else "in-progress",
                "origin_turn": None,
                "initial_intent": "The export timed out on large tables; page it. " * 3,
                "progress": [
                    f"Step {j}: changed the query and the view; tests pass." for j in range(4)
                ],
                "next_steps": [
                    {
                        "what": "Run the load test",
                        "why": "the CI box is small",
                        "expect": "p99 < 1 s",
                    }
                ],
                "last_touched_turn": 3 + 3 * i,
            }
        )
    return {
        "intents": items,
        "constraints": ["Run tests with -p no:cacheprovider", "Never push to main directly"],
        "generated_at": time.time(),
        "user_turns": 3 * intents,
        "last_activity": "2026-01-15T09:00:00.000001+09:00",
        "model": "heuristic",
        "duration_ms": 12,
    }


def store_summary(slot_name: str, payload: dict[str, Any] | None = None) -> None:
    """Write a summary sidecar that matches the slot's transcript as it is now (the
    guarded write the pass uses), so GET serves it as fresh. Django must be set up."""
    from summaries.core.sidecar import INTENTS, ONE_LINE, write_guarded
    from transcripts.models import Slot
    from transcripts.runtime import get_store

    store = get_store()
    key = Slot.objects.select_related("session").get(name=slot_name).session.key
    identity = store.identity(key)
    assert identity is not None
    body = payload or summary_payload()
    assert write_guarded(store, key, INTENTS, body, sig=identity.sig, gen=identity.gen)
    gist = {"summary": body["intents"][0]["title"], "generated_at": body["generated_at"]}
    assert write_guarded(store, key, ONE_LINE, gist, sig=identity.sig, gen=identity.gen)


# ---------------------------------------------------------------------- meta-heavy sessions
_TOOLS = ("shell", "read_file", "grep", "edit", "web_fetch", "list_dir", "run_tests")


def nested_meta(f: RowFactory, size: int) -> dict[str, Any]:
    """A realistic assistant ``meta`` of about ``size`` encoded bytes: nested tool calls
    (inputs, outputs, timings), token usage, reasoning blocks, file changes, context files.

    In the original, ``meta`` is where a transcript's bytes are (14.65 MB of a 15.6 MB
    session): the summarizer never reads it.
    """
    rng = f.rng
    meta: dict[str, Any] = {
        "mid": f.mid(),
        "kind": "assistant_message",
        "stop_reason": "end_turn",
        "usage": {
            "input_tokens": rng.randrange(1_000, 180_000),
            "output_tokens": rng.randrange(50, 8_000),
            "cache": {"read": rng.randrange(0, 150_000), "write": rng.randrange(0, 20_000)},
        },
        "model": {"id": "claude-sonnet-4", "region": "us-east-1", "latency_ms": rng.randrange(900)},
    }
    calls: list[dict[str, Any]] = []
    reasoning: list[dict[str, Any]] = []
    files: list[dict[str, Any]] = []
    meta["tool_calls"], meta["reasoning"], meta["context"] = calls, reasoning, {"files": files}
    used = 600  # the fixed part above, roughly
    while used < size:
        r = rng.random()
        if r < 0.6:
            output = f.text(min(size - used, rng.randrange(400, 12_000)) + 1)
            call = {
                "id": "toolu_" + random_token(rng, 20),
                "name": rng.choice(_TOOLS),
                "input": {
                    "path": f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py",
                    "args": [rng.choice(_WORDS) for _ in range(rng.randrange(1, 6))],
                    "options": {"timeout_s": rng.randrange(5, 120), "cwd": "/work/repo"},
                },
                "result": {"exit": rng.choice((0, 0, 0, 1)), "output": output},
                "timing": {"started_ms": rng.randrange(10**9), "took_ms": rng.randrange(5, 9_000)},
            }
            calls.append(call)
            used += len(output) + 330
        elif r < 0.85:
            text = f.text(rng.randrange(200, 3_000))
            reasoning.append({"type": "thinking", "text": text, "signature": random_token(rng, 64)})
            used += len(text) + 120
        else:
            path = f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}_{rng.randrange(99)}.py"
            lines = [rng.randrange(1, 900) for _ in range(rng.randrange(2, 40))]
            files.append({"path": path, "lines": lines, "sha": random_token(rng, 40)})
            used += 90 + 4 * len(lines)
    return meta


def meta_heavy_session(
    f: RowFactory, size: int, *, meta_share: float = 0.95
) -> Iterator[dict[str, Any]]:
    """Stamped user/assistant rows (realistic content) until about ``size`` bytes, with
    ``meta_share`` of the bytes in big nested ``meta`` dicts on the assistant rows.

    About 1 user row in 25 is automation posting as the user (an injected prefix), as in
    real sessions; content sizes follow ``RowFactory``'s chat profile.
    """
    rng = f.rng
    written = 0
    while written < size:
        if rng.random() < 0.04:
            user = f"[cron notification] nightly build {rng.randrange(9999)} finished"
        else:
            user = f.content("user", 20, 900)
        answer = f.content("assistant", 150, 3_800)
        content_bytes = len(user.encode()) + len(answer.encode()) + 300
        meta_bytes = int(content_bytes * meta_share / (1 - meta_share))
        ask = {"role": "user", "content": user, "ts": f.clock.next(), "meta": {"mid": f.mid()}}
        reply = {
            "role": "assistant",
            "content": answer,
            "ts": f.clock.next(),
            "source_thread": "dashboard",
            "meta": nested_meta(f, meta_bytes),
        }
        written += content_bytes + meta_bytes
        yield ask
        yield reply
