"""A first import of many new agent sessions (read by worker processes) writes exactly
what an import read in one process writes, keeps its guarantees, and a run that dies
between its steps loses nothing and duplicates nothing on the next run."""

from __future__ import annotations

import concurrent.futures
import fcntl
import json
import os
import threading
import uuid
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from tests.transcripts.agents.helpers import CLAUDE_FILE, CLAUDE_SID, CODEX_FILE, copy_tree
from tests.transcripts.helpers import live_children
from transcripts import signals
from transcripts.core.agents.prepare import prepare
from transcripts.core.store import TranscriptStore
from transcripts.models import Session, Slot
from transcripts.runtime import get_store
from transcripts.services import agent_import, app_create
from transcripts.services.agent_import import agent_import_paths
from transcripts.services.importing import MAX_IMPORT_WORKERS, import_workers
from transcripts.services.sync import disk_state

pytestmark = pytest.mark.django_db

# Redacted at the write boundary wherever they appear (tool output, a command, a reply).
GITHUB_TOKEN = "ghp_" + "Zq3" * 12
PASSWORD = "Tr0ub4dor&3xyz"
SECRET_LINES = [
    {
        "type": "assistant",
        "sessionId": "SID",
        "uuid": "s1",
        "message": {
            "id": "msg_s1",
            "role": "assistant",
            "stop_reason": "tool_use",
            "content": [
                {
                    "type": "tool_use",
                    "id": f"toolu_{GITHUB_TOKEN}",  # lands in meta.call_id
                    "name": "Bash",
                    "input": {"command": f"curl -H 'Authorization: token {GITHUB_TOKEN}' x"},
                }
            ],
        },
    },
    {
        "type": "user",
        "sessionId": "SID",
        "uuid": "s2",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": f"toolu_{GITHUB_TOKEN}",
                    "content": f"db_password={PASSWORD}\ntoken {GITHUB_TOKEN} accepted",
                }
            ],
        },
    },
    {
        "type": "assistant",
        "sessionId": "SID",
        "uuid": "s3",
        "message": {
            "id": "msg_s3",
            "role": "assistant",
            "stop_reason": "end_turn",
            "content": [{"type": "text", "text": f"Your token {GITHUB_TOKEN} works."}],
        },
    },
]
FIXED = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def run(*args: str) -> str:
    out = StringIO()
    call_command("import_transcripts", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def make_tree(root: Path, copies: int = 9) -> Path:
    """The fixtures (Claude session, its subagent, Codex), plus ``copies`` more Claude
    sessions under new ids, one of them ending with secrets: enough new files for the
    worker processes (``PARALLEL_MIN_FILES``)."""
    src = copy_tree(root)
    original = (src / CLAUDE_FILE).read_text()
    for n in range(copies):
        sid = str(uuid.UUID(int=n + 1))
        text = original.replace(CLAUDE_SID, sid)
        if n == 0:
            text += "".join(json.dumps(line).replace("SID", sid) + "\n" for line in SECRET_LINES)
        (src / CLAUDE_FILE).with_name(f"{sid}.jsonl").write_text(text)
    return src


def fix_clock(store: TranscriptStore) -> None:
    store.clock = lambda: FIXED


def files_of(store: TranscriptStore) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in store.keys_on_disk()}


def states_of(store: TranscriptStore) -> dict[str, Any]:
    folder = store.root / agent_import.STATE_DIR
    return {p.name: json.loads(p.read_bytes()) for p in sorted(folder.glob("*.json"))}


def mirror(key: str) -> dict[str, Any]:
    session = Session.objects.get(key=key)
    slot = Slot.objects.get(session=session)
    skip = {"id", "sig", "file_mtime_ns", "file_inode", "updated_at"}
    fields = {f.attname: getattr(session, f.attname) for f in Session._meta.concrete_fields}
    return {
        **{k: v for k, v in fields.items() if k not in skip},
        "slot": (slot.name, slot.app_id, slot.running, slot.last_stop_reason),
    }


def outcomes(src: Path, **kwargs: Any) -> list[tuple[Any, ...]]:
    result = agent_import_paths(paths=[src], fmt="auto", **kwargs)
    return sorted(
        (o.file, o.status, o.key, o.reason, o.anomalies, o.warnings) for o in result.outcomes
    )


@pytest.mark.parametrize("workers", [1, 3])
def test_sessions_read_by_workers_are_what_one_process_writes(
    tmp_path: Path,
    settings: Any,
    store: TranscriptStore,
    monkeypatch: pytest.MonkeyPatch,
    workers: int,
) -> None:
    settings.KIROCREW_IMPORT_WORKERS = workers
    src = make_tree(tmp_path / "src")
    before = {p: p.read_bytes() for p in src.rglob("*.jsonl")}
    bulk_calls: list[int] = []
    real = agent_import.prepared_in_workers
    forked: list[int] = []
    real_pool = concurrent.futures.ProcessPoolExecutor

    def pool(max_workers: int, **kwargs: Any) -> Any:
        forked.append(max_workers)
        return real_pool(max_workers, **kwargs)

    monkeypatch.setattr(agent_import, "ProcessPoolExecutor", pool)

    def counted(files: list[Path], *args: Any) -> Any:
        answer = list(real(files, *args))
        bulk_calls.append(len(answer))
        return answer

    monkeypatch.setattr(agent_import, "prepared_in_workers", counted)
    fix_clock(store)
    owner, _ = app_create(name="importer")  # --app: both paths give it every session
    bulk = outcomes(src, app=owner)
    assert bulk_calls == [12]  # every file was read by a worker
    assert forked == [workers]  # KIROCREW_IMPORT_WORKERS worker processes
    bulk_files, bulk_states = files_of(store), states_of(store)
    keys = [row[2] for row in bulk]
    bulk_mirror = {key: mirror(key) for key in keys}
    assert {m["app_id"] for m in bulk_mirror.values()} == {owner.pk}
    assert {m["slot"][1] for m in bulk_mirror.values()} == {owner.pk}
    for key in keys:  # the mirror is what a full fold of the written file says
        state = disk_state(key)
        session = Session.objects.get(key=key)
        assert {n: getattr(session, n) for n in state.fields()} == state.fields()

    # The same tree read in this process, into a second store and database.
    settings.KIROCREW_SESSIONS_DIR = tmp_path / "ordinary"
    Session.objects.all().delete()
    ordinary_store = get_store()
    assert ordinary_store.root != store.root
    fix_clock(ordinary_store)
    monkeypatch.setattr(agent_import, "PARALLEL_MIN_FILES", 10**9)
    bulk_calls.clear()
    assert outcomes(src, app=owner) == bulk
    assert bulk_calls == []
    assert files_of(ordinary_store) == bulk_files  # byte for byte: line 0, rows, ts
    assert states_of(ordinary_store) == bulk_states
    assert {key: mirror(key) for key in keys} == bulk_mirror

    # Redaction at the write boundary, and the sources untouched.
    written = b"".join(bulk_files.values())
    assert GITHUB_TOKEN.encode() not in written
    assert PASSWORD.encode() not in written
    assert b"REDACTED" in written
    assert {p: p.read_bytes() for p in src.rglob("*.jsonl")} == before


def test_by_default_an_import_runs_a_worker_per_core_it_may_use(settings: Any) -> None:
    settings.KIROCREW_IMPORT_WORKERS = 0
    cores = sorted(os.sched_getaffinity(0))
    assert import_workers() == min(len(cores), MAX_IMPORT_WORKERS)
    pinned: list[int] = []

    def on_one_core() -> None:  # affinity is per thread: the test's own is untouched
        os.sched_setaffinity(0, {cores[0]})
        pinned.append(import_workers())

    thread = threading.Thread(target=on_one_core)
    thread.start()
    thread.join()
    assert pinned == [1]


def test_appended_records_after_a_first_import_of_many_are_imported_once(
    tmp_path: Path, store: TranscriptStore
) -> None:
    src = make_tree(tmp_path / "src")
    assert "Imported 12, unchanged 0, bad 0" in run("--format", "auto", str(src))
    key = f"claude:{CLAUDE_SID}"
    rows = len(store.read_session(key).rows)
    lines = (src / CLAUDE_FILE).read_text().splitlines(keepends=True)
    with (src / CLAUDE_FILE).open("a") as fp:
        fp.write(lines[3])  # a new prompt
        fp.write(lines[1][:40])  # and a torn tail: it waits
    out = run("--format", "auto", str(src))
    assert "Imported 1, unchanged 11, bad 0" in out
    assert len(store.read_session(key).rows) == rows + 1
    assert "Imported 0, unchanged 12, bad 0" in run("--format", "auto", str(src))
    assert Session.objects.get(key=key).row_count == rows + 1


def test_a_source_another_importer_holds_is_left_to_it(
    tmp_path: Path, store: TranscriptStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = make_tree(tmp_path / "src")
    monkeypatch.setattr(agent_import, "LOCK_TIMEOUT_S", 0.05)
    held = os.open(src / CODEX_FILE, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)  # a --follow in another process, mid-import
    try:
        out = run("--format", "auto", str(src))
    finally:
        os.close(held)
    assert "Imported 11, unchanged 1, bad 0" in out
    assert not Session.objects.filter(source="codex").exists()
    assert "Imported 1, unchanged 11, bad 0" in run("--format", "auto", str(src))
    assert Session.objects.filter(source="codex").count() == 1


def test_a_run_cut_short_after_a_session_file_is_finished_by_the_next_run(
    tmp_path: Path, store: TranscriptStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process dies after a new session's file is in place, before its database rows
    and its state: the next run settles it from its write-ahead record, once."""
    src = make_tree(tmp_path / "src")

    def die(*_: Any, **__: Any) -> None:
        raise SystemExit("killed")  # a BaseException: nothing after it runs

    monkeypatch.setattr(agent_import, "session_index", die)
    with pytest.raises(SystemExit):
        run("--format", "auto", str(src))
    assert len(store.keys_on_disk()) == 1  # linked...
    assert not Session.objects.exists()
    assert not states_of(store)
    monkeypatch.undo()
    out = run("--format", "auto", str(src))
    assert "Imported 11, unchanged 1, bad 0" in out  # the first one settled, not re-read
    assert Session.objects.count() == 12
    assert len(states_of(store)) == 12
    assert not list((store.root / agent_import.STATE_DIR).glob("*.pending"))
    for session in Session.objects.all():
        rows = store.read_session(session.key).rows
        assert session.row_count == len(rows) == len({row["ts"] for row in rows})


def test_turn_ends_ask_for_the_pass_and_frames_come_only_when_following(
    tmp_path: Path, store: TranscriptStore, django_capture_on_commit_callbacks: Any
) -> None:
    src = make_tree(tmp_path / "src")
    passes: list[str] = []
    frames: list[str] = []
    rows: dict[str, int] = {}

    def on_pass(sender: Any, *, slot_name: str, **_: Any) -> None:
        passes.append(slot_name)

    def on_frame(sender: Any, *, slot_name: str, quiet: bool = False, **_: Any) -> None:
        if not quiet:  # what realtime's receiver does: a quiet turn end pushes no frame
            frames.append(slot_name)

    def on_rows(sender: Any, *, slot_name: str, ts: list[str], **_: Any) -> None:
        rows[slot_name] = rows.get(slot_name, 0) + len(ts)

    signals.turn_ended.connect(on_pass, dispatch_uid="test.pass")
    signals.turn_ended.connect(on_frame, dispatch_uid="test.frame")
    signals.rows_appended.connect(on_rows, dispatch_uid="test.rows")
    try:
        with django_capture_on_commit_callbacks(execute=True):
            run("--format", "auto", str(src))
        ended = set(Slot.objects.filter(last_stop_reason="end_turn").values_list("name", flat=True))
        assert ended  # the fixtures end turns cleanly
        assert sorted(passes) == sorted(ended)  # one ask per session with a clean end
        assert frames == []  # no frames from a one-off import
        assert rows == {}

        # The same tree again from scratch, now as a --follow's first poll.
        passes.clear()
        Session.objects.all().delete()
        for path in store.root.glob("*.jsonl"):
            path.unlink()
        for path in (store.root / agent_import.STATE_DIR).glob("*.json"):
            path.unlink()
        with django_capture_on_commit_callbacks(execute=True):
            run("--format", "auto", "--follow", "--polls", "1", str(src))
        assert sorted(frames) == sorted(passes) == sorted(ended)
        assert rows == {
            s.slot.name: s.row_count for s in Session.objects.select_related("slot").all()
        }
    finally:
        signals.turn_ended.disconnect(dispatch_uid="test.pass")
        signals.turn_ended.disconnect(dispatch_uid="test.frame")
        signals.rows_appended.disconnect(dispatch_uid="test.rows")


def test_an_error_while_committing_stops_the_workers_at_once(
    tmp_path: Path, store: TranscriptStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The traceback of an error in the importer's own step keeps its frames alive; the
    workers must not live (or block on a full pipe) as long as it does."""
    src = make_tree(tmp_path / "src", copies=60)
    before = live_children()

    def failing(*_: Any) -> Any:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(agent_import, "_create", failing)
    with pytest.raises(RuntimeError, match="went away") as raised:
        agent_import_paths(paths=[src], fmt="auto")
    assert raised.traceback  # held: its frames (the importer's generator too) still live
    assert live_children() - before == set()


def test_a_file_that_kills_its_worker_is_read_by_the_importer(
    tmp_path: Path, store: TranscriptStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A source whose reading kills the worker process outright (a crash, the OOM killer)
    is missing from the workers' results (and so are those the broken pool never read):
    the importer reads what is left itself: every session once."""
    src = make_tree(tmp_path / "src", copies=20)
    poison = sorted(src.rglob("*.jsonl"))[3]

    def dies_on_poison(path: Path, job: Any) -> Any:
        if path == poison:
            os._exit(137)  # as SIGKILL would: no answer, no clean-up
        return prepare(path, job)

    monkeypatch.setattr(agent_import, "prepare", dies_on_poison)
    results = agent_import_paths(paths=[src], fmt="auto").outcomes
    statuses = {Path(o.file): o.status for o in results}
    assert set(statuses.values()) == {"imported"}, statuses
    assert len(statuses) == len(list(src.rglob("*.jsonl")))
    assert Session.objects.count() == len(statuses)
    assert sorted(files_of(store)) == sorted({store.path(o.key).name for o in results})
