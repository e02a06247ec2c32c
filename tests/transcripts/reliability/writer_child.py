"""Child processes for the reliability tests: ``python -m tests.transcripts.reliability.writer_child``.

Each sub-command drives ``TranscriptStore`` from its own process and reports what it did:
acknowledgements go to a pipe fd (one short line per ``os.write``, atomic on a pipe),
results to stdout as one JSON line. Nothing here asserts; the parent tests do.

Environment flags (test controls, never used in production):

* ``KIROCREW_TEST_NOLOCK=1``: replace ``locking.hold`` by a no-op and split every write into
  two ``os.write`` calls, to prove the concurrency test can see corruption.
* ``KIROCREW_TEST_NO_TRUNCATE=1``: make ``os.ftruncate`` a no-op, to prove the disk-full
  test can see a writer that leaves its partial bytes behind.
* ``KIROCREW_TEST_NO_FENCE=1``: make the writer believe the file always ends in ``\n``
  (no fence before a torn tail: the claude-code#52387 bug). A manual teeth check for the
  kill loop: ``KIROCREW_TEST_NO_FENCE=1 pytest tests/transcripts/reliability/test_kill9.py``
  must fail.
"""

from __future__ import annotations

import argparse
import errno
import os
import random
import select
import threading
import time
from pathlib import Path
from typing import Any

from tests.transcripts.reliability.writer_support import (
    AIMED_SIZES,
    BIG,
    CONCURRENT_SIZES,
    HUGE,
    KILL9_SIZES,
    emit,
    enospc_rotation_on_append,
    file_sha,
    install_controls,
    pick_size,
    print_result,
    row_text,
    spy_writes,
)
from transcripts.core.errors import RowNotFound, TranscriptError, TranscriptWriteError
from transcripts.core.fsutil import atomic_write
from transcripts.core.store import TranscriptStore


# ---------------------------------------------------------------------------- sub-commands
def cmd_kill9(args: argparse.Namespace) -> None:
    """Append forever (until SIGKILL); ack each returned append on ``ack_fd``.

    ``W <bytes> <monotonic ns>`` announces a big ``write()`` right before the syscall (the
    parent may aim its kill into it); ``A <ts>`` acks a row, ``V <ts> <target_ts> <value>``
    a revision; ``L <ts>`` says a revision was refused because this process's acked row
    is gone (a lost row).
    """
    install_controls()
    store = TranscriptStore(Path(args.root), max_bytes=HUGE)
    rng = random.Random(args.seed)
    own: list[str] = []
    real_write = os.write

    def announce(fd: int, data: Any) -> int:
        # Tell the parent a big write() is about to start, so it can aim a kill into it.
        if fd != args.ack_fd and len(data) >= BIG:
            real_write(args.ack_fd, b"W %d %d\n" % (len(data), time.monotonic_ns()))
        return real_write(fd, data)

    os.write = announce
    emit(args.ack_fd, "R")
    for n in range(10**9):
        if own and rng.random() < 0.05:
            target = rng.choice(own)
            value = args.seed * 1_000_000 + n
            try:
                done = store.append_revision(args.key, target, {"rev": value})
            except RowNotFound:  # this process's own acked row is gone: report the loss
                emit(args.ack_fd, f"L {target}")
                own.remove(target)
                continue
            emit(args.ack_fd, f"V {done.ts[0]} {target} {value}")
        else:
            size = pick_size(rng, AIMED_SIZES if args.aim else KILL9_SIZES)
            # Aimed runs write their big rows as "user" rows (stored as typed, no redaction
            # pass), so the writer spends its time in I/O rather than in the redactor.
            done = store.append_row(
                args.key,
                "user" if args.aim and size >= BIG else "assistant",
                row_text(size, f"{args.seed}/{n}"),
                meta={"seed": args.seed, "n": n},
            )
            own.append(done.ts[0])
            emit(args.ack_fd, f"A {done.ts[0]}")
        if args.pace:
            time.sleep(args.pace)


def cmd_append(args: argparse.Namespace) -> None:
    """``threads`` threads append ``per_thread`` rows each once the start pipe closes."""
    install_controls()
    store = TranscriptStore(Path(args.root), max_bytes=HUGE)
    failures: list[str] = []
    done = [0] * args.threads

    def work(tid: int) -> None:
        rng = random.Random(args.wid * 1000 + tid)
        for n in range(args.per_thread):
            size = pick_size(rng, CONCURRENT_SIZES)
            try:
                store.append_row(
                    args.key,
                    "assistant",
                    row_text(size, f"w{args.wid}t{tid}n{n}"),
                    meta={"w": args.wid, "t": tid, "n": n},
                )
            except TranscriptError as exc:
                failures.append(f"{type(exc).__name__}: {exc}")
            else:
                done[tid] += 1

    threads = [threading.Thread(target=work, args=(t,)) for t in range(args.threads)]
    os.read(args.start_fd, 1)  # blocks until the parent closes its end: all start together
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print_result(appended=sum(done), failures=failures)


def cmd_append_once(args: argparse.Namespace) -> None:
    """One append of ``size`` bytes; reports the outcome and every ``os.write``."""
    install_controls()
    store = TranscriptStore(Path(args.root), max_bytes=HUGE)
    calls = spy_writes()
    try:
        done = store.append_row(args.key, "assistant", row_text(args.size, "disk-full"))
    except TranscriptWriteError as exc:
        code = errno.errorcode.get(exc.errno or 0, str(exc.errno))
        print(f"MARKER TranscriptWriteError {code}", flush=True)
        print_result(outcome="error", type=type(exc).__name__, errno=code, writes=calls)
    except OSError as exc:
        code = errno.errorcode.get(exc.errno or 0, str(exc.errno))
        print_result(outcome="error", type=type(exc).__name__, errno=code, writes=calls)
    else:
        print_result(outcome="appended", ts=done.ts[0], writes=calls)


def cmd_rewrite_once(args: argparse.Namespace) -> None:
    """One rewrite (``title`` or ``rotate``); reports the outcome and every ``os.write``."""
    store = TranscriptStore(Path(args.root), max_bytes=args.max_bytes, keep_lines=args.keep)
    calls = spy_writes()
    try:
        if args.op == "title":
            value: Any = store.update_metadata(args.key, {"title": row_text(args.size, "title")})
        else:
            value = store.rotate(args.key, force=True)
    except OSError as exc:  # TranscriptWriteError is not an OSError: reported as untyped
        code = errno.errorcode.get(exc.errno or 0, str(exc.errno))
        print_result(outcome="untyped", type=type(exc).__name__, errno=code, writes=calls)
    except TranscriptError as exc:
        number = getattr(exc, "errno", None)
        code = errno.errorcode.get(number or 0, str(number))
        print(f"MARKER {type(exc).__name__} {code}", flush=True)
        print_result(outcome="error", type=type(exc).__name__, errno=code, writes=calls)
    else:
        print_result(outcome="done", value=value, writes=calls)


def cmd_pacer(args: argparse.Namespace) -> None:
    """Append a small row about every millisecond until the stop pipe closes; ack each."""
    store = TranscriptStore(Path(args.root), max_bytes=HUGE)
    rng = random.Random(args.seed)
    emit(args.ack_fd, "R")
    for n in range(10**9):
        if select.select([args.stop_fd], [], [], 0.001)[0]:
            return
        size = rng.choice([100, 400, 3_000])
        done = store.append_row(args.key, "assistant", row_text(size, f"pace{n}"), meta={"n": n})
        emit(args.ack_fd, f"A {done.ts[0]}")


def cmd_rotator(args: argparse.Namespace) -> None:
    """Rotate ``count`` times (forced); report rows and archives around each rotation."""
    store = TranscriptStore(Path(args.root), max_bytes=args.max_bytes, keep_lines=args.keep)
    rng = random.Random(args.seed)
    for _ in range(args.count):
        time.sleep(rng.uniform(0.01, 0.03))
        with store.locked(args.key):  # reentrant: rotate() takes the same lock again
            before = [row.get("ts") for row in store.read_file(args.key).rows]
            archives = {p.name for p in store.archive_paths(args.key)}
            dropped = store.rotate(args.key, force=True)
            after = [row.get("ts") for row in store.read_file(args.key).rows]
            new = sorted({p.name for p in store.archive_paths(args.key)} - archives)
        print_result(before=before, after=after, dropped=dropped, new_archives=new)


def cmd_enospc(args: argparse.Namespace) -> None:
    """Inside a tiny tmpfs: fill it through appends, then check every failure was clean."""
    root = Path(args.root)
    store = TranscriptStore(root, max_bytes=HUGE)
    store.create(args.key, {"title": "enospc"})
    path = store.path(args.key)
    sidecar = root / ".derived" / "sidecar.json"  # a derived file next to the transcripts
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(sidecar, b'{"intents": []}', fsync=True)
    filler = root / "filler.bin"
    filler.write_bytes(b"\0" * 24 * 1024)
    calls = spy_writes()
    out: dict[str, Any] = {"appended": 0}
    for _ in range(1000):
        sha, size = file_sha(path), path.stat().st_size
        del calls[:]
        try:
            store.append_row(args.key, "assistant", row_text(3_000, "fill"))
        except TranscriptWriteError as exc:
            out["append_error"] = errno.errorcode.get(exc.errno or 0, str(exc.errno))
            out["append_writes"] = list(calls)
            out["append_unchanged"] = file_sha(path) == sha and path.stat().st_size == size
            break
        out["appended"] += 1
    rows_before = len(store.read_file(args.key).rows)
    data_sha, sidecar_sha = file_sha(path), file_sha(sidecar)
    for name, action in (
        ("title", lambda: store.update_metadata(args.key, {"title": row_text(20_000, "title")})),
        ("sidecar", lambda: atomic_write(sidecar, b" " * 20_000, fsync=True)),
    ):
        try:
            action()
        except (OSError, TranscriptError) as exc:
            number = getattr(exc, "errno", None)
            out[f"{name}_error"] = [type(exc).__name__, errno.errorcode.get(number or 0, number)]
        else:
            out[f"{name}_error"] = None
    out["rewrites_unchanged"] = file_sha(path) == data_sha and file_sha(sidecar) == sidecar_sha
    out["temps"] = sorted(p.name for p in root.rglob(".*.tmp-*"))
    filler.unlink()
    done = store.append_row(args.key, "assistant", "after the disk had room again")
    rows = store.read_file(args.key).rows
    out["recovered"] = len(rows) == rows_before + 1 and rows[-1].get("ts") == done.ts[0]
    out["anomalies"] = store.read_file(args.key).report.counts()
    store.delete(args.key)
    out["rotation"] = enospc_rotation_on_append(root, args.key + "-rotating")
    print_result(**out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="writer_child")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("kill9")
    p.add_argument("root")
    p.add_argument("key")
    p.add_argument("ack_fd", type=int)
    p.add_argument("seed", type=int)
    p.add_argument("--pace", type=float, default=0.0)
    p.add_argument("--aim", action="store_true")
    p.set_defaults(func=cmd_kill9)

    p = sub.add_parser("append")
    p.add_argument("root")
    p.add_argument("key")
    p.add_argument("wid", type=int)
    p.add_argument("threads", type=int)
    p.add_argument("per_thread", type=int)
    p.add_argument("start_fd", type=int)
    p.set_defaults(func=cmd_append)

    p = sub.add_parser("append_once")
    p.add_argument("root")
    p.add_argument("key")
    p.add_argument("size", type=int)
    p.set_defaults(func=cmd_append_once)

    p = sub.add_parser("rewrite_once")
    p.add_argument("root")
    p.add_argument("key")
    p.add_argument("op", choices=["title", "rotate"])
    p.add_argument("--size", type=int, default=3_000)
    p.add_argument("--keep", type=int, default=200)
    p.add_argument("--max-bytes", type=int, default=HUGE)
    p.set_defaults(func=cmd_rewrite_once)

    p = sub.add_parser("pacer")
    p.add_argument("root")
    p.add_argument("key")
    p.add_argument("ack_fd", type=int)
    p.add_argument("stop_fd", type=int)
    p.add_argument("seed", type=int)
    p.set_defaults(func=cmd_pacer)

    p = sub.add_parser("rotator")
    p.add_argument("root")
    p.add_argument("key")
    p.add_argument("count", type=int)
    p.add_argument("seed", type=int)
    p.add_argument("--keep", type=int, default=5)
    p.add_argument("--max-bytes", type=int, default=16 * 1024)
    p.set_defaults(func=cmd_rotator)

    p = sub.add_parser("enospc")
    p.add_argument("root")
    p.add_argument("key")
    p.set_defaults(func=cmd_enospc)

    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
