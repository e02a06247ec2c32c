"""``import_transcripts --format claude-code|codex|auto`` on real files in a scratch tree."""

from __future__ import annotations

import json
import random
import string
import threading
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from summaries.core.sidecar import sidecar_path
from summaries.state import summary_turn_mark
from tests.transcripts.agents.helpers import (
    CLAUDE_FILE,
    CLAUDE_SID,
    CLAUDE_TALLY,
    CODEX_FILE,
    CODEX_ID,
    CODEX_TALLY,
    copy_tree,
)
from transcripts import signals
from transcripts.models import Session, Slot
from transcripts.runtime import get_store

pytestmark = pytest.mark.django_db

CLAUDE_KEY = f"claude:{CLAUDE_SID}"
CODEX_KEY = f"codex:{CODEX_ID}"


def run(*args: str) -> str:
    out = StringIO()
    call_command("import_transcripts", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def rows_of(key: str) -> list[dict[str, Any]]:
    return get_store().read_session(key).rows


@pytest.fixture
def src(tmp_path: Path, store) -> Path:
    return copy_tree(tmp_path / "src")


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_auto_imports_both_formats_with_provenance_and_turns(src: Path) -> None:
    before = snapshot(src)
    out = run("--format", "auto", str(src))
    assert "Imported 3, unchanged 0, bad 0" in out
    claude = Session.objects.get(key=CLAUDE_KEY)
    codex = Session.objects.get(key=CODEX_KEY)
    assert (claude.user_turns, codex.user_turns) == (3, 3)
    assert (claude.row_count, codex.row_count) == (21, 17)
    line0 = get_store().read_metadata(CLAUDE_KEY) or {}
    assert line0["source"] == "claude-code"
    assert line0["source_path"] == str((src / CLAUDE_FILE).absolute())
    assert (line0["source_session_id"], line0["cwd"]) == (CLAUDE_SID, "/home/ann/src/dateparse")
    assert line0["git_branch"] == "fix/dates"
    assert line0["title"] == "Fix ISO week date parsing"  # Claude Code's own (its summary record)
    codex0 = get_store().read_metadata(CODEX_KEY) or {}
    assert (codex0["source"], codex0["cwd"], codex0["git_branch"]) == (
        "codex",
        "/home/ann/src/tinycli",
        "main",
    )
    side = Session.objects.get(key=f"{CLAUDE_KEY}:agent-a1b2c3")  # kept apart
    assert side.row_count == 4
    assert Slot.objects.filter(session=claude).exists()
    assert snapshot(src) == before  # the sources are never modified


def test_every_record_is_reported(src: Path) -> None:
    out = run("--format", "auto", "-v", "2", str(src))
    for tally in (CLAUDE_TALLY, CODEX_TALLY):
        for bucket, count in tally.items():
            assert f"{bucket}={count}" in out


def test_rerun_is_unchanged_and_an_appended_record_lands_exactly_once(src: Path) -> None:
    run("--format", "claude-code", str(src / "claude"))
    assert "Imported 0, unchanged 2" in run("--format", "claude-code", str(src / "claude"))
    path = src / CLAUDE_FILE
    record = json.loads(path.read_text().splitlines()[3])
    record.update(uuid="u99", message={"role": "user", "content": "One more thing"})
    with path.open("a") as fp:
        fp.write(json.dumps(record) + "\n")
    added = run("--format", "claude-code", str(src / "claude"))
    assert "(records: imported=1)" in added  # this run's record, not the file's total
    run("--format", "claude-code", str(src / "claude"))
    contents = [r["content"] for r in rows_of(CLAUDE_KEY)]
    assert contents.count("One more thing") == 1
    assert Session.objects.get(key=CLAUDE_KEY).user_turns == 4


def test_a_torn_tail_waits_for_the_next_run(src: Path) -> None:
    path = src / CODEX_FILE
    whole = path.read_bytes()
    cut = whole.rindex(b'"some_new_event"')  # inside the last line
    path.write_bytes(whole[:cut])
    run("--format", "codex", str(path))
    torn_rows = len(rows_of(CODEX_KEY))
    with path.open("ab") as fp:
        fp.write(whole[cut:])
    run("--format", "codex", str(path))
    assert len(rows_of(CODEX_KEY)) == torn_rows == 17  # the last line holds no row
    # A torn line that does hold a row: the half line is never imported.
    line = json.dumps(
        {
            "timestamp": "x",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "half then whole"},
        }
    )
    with path.open("a") as fp:
        fp.write(line[:30])
    run("--format", "codex", str(path))
    assert all("half" not in str(r["content"]) for r in rows_of(CODEX_KEY))
    with path.open("a") as fp:
        fp.write(line[30:] + "\n")
    run("--format", "codex", str(path))
    assert [r["content"] for r in rows_of(CODEX_KEY)].count("half then whole") == 1


def test_a_format_change_mid_way_is_reported_not_fatal(src: Path) -> None:
    path = src / CLAUDE_FILE
    with path.open("a") as fp:
        fp.write((src / CODEX_FILE).read_text())
        fp.write("{not json\n")
    out = run("--format", "claude-code", "-v", "2", str(path))
    assert "the format changes at line 31" in out
    assert "foreign:event_msg=" in out
    assert "bad_line=1" in out
    assert Session.objects.get(key=CLAUDE_KEY).user_turns == 3


def test_wrong_format_and_bad_usage_exit_codes(src: Path) -> None:
    out = StringIO()
    with pytest.raises(CommandError) as bad:
        call_command("import_transcripts", "--format", "codex", str(src / CLAUDE_FILE), stdout=out)
    assert bad.value.returncode == 1
    assert "looks like claude-code, not codex (use --format claude-code or auto)" in out.getvalue()
    assert not Session.objects.exists()
    with pytest.raises(CommandError) as usage:
        run("--format", "codex")
    assert usage.value.returncode == 2
    link = src / "link.jsonl"
    link.symlink_to(src / CODEX_FILE)
    with pytest.raises(CommandError):
        run("--format", "auto", str(src))
    assert Session.objects.filter(key=CODEX_KEY).count() == 1  # the real file, once


def test_rows_pass_the_write_boundary_redaction(src: Path) -> None:
    rng = random.Random(7)
    token = "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    path = src / CODEX_FILE
    out = {
        "timestamp": "x",
        "type": "response_item",
        "payload": {
            "type": "function_call_output",
            "call_id": "call_9",
            "output": f"export GH={token}",
        },
    }
    with path.open("a") as fp:
        fp.write(json.dumps(out) + "\n")
    run("--format", "codex", str(path))
    text = get_store().path(CODEX_KEY).read_text()
    assert token not in text
    assert token in path.read_text()  # the source is untouched


def test_clean_turn_ends_and_new_rows_are_signalled(
    src: Path, django_capture_on_commit_callbacks
) -> None:
    """Sent after commit: the test runs the commit callbacks as a commit would."""

    def run(*args: str) -> None:
        with django_capture_on_commit_callbacks(execute=True):
            globals()["run"](*args)

    ended: list[str] = []
    announced: list[int] = []

    def on_end(sender, *, slot_name: str, **_) -> None:
        ended.append(slot_name)

    def on_rows(sender, *, slot_name: str, ts: list[str], **_) -> None:
        announced.append(len(ts))

    signals.turn_ended.connect(on_end)
    signals.rows_appended.connect(on_rows)
    try:
        run("--format", "claude-code", str(src / CLAUDE_FILE))
        assert ended == [CLAUDE_KEY]
        assert announced == []
        path = src / CLAUDE_FILE
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        call, result, reply = lines[6], lines[7], lines[12]
        call["message"]["id"], reply["message"]["id"] = "msg_new1", "msg_new2"
        call["message"]["content"][0]["id"] = "toolu_new"
        result["message"]["content"][0]["tool_use_id"] = "toolu_new"
        with path.open("a") as fp:  # a prompt and a reply still using a tool: no clean end
            fp.write(json.dumps(lines[3]) + "\n" + json.dumps(call) + "\n")
        run("--format", "claude-code", "--follow", "--polls", "1", str(path))
        assert ended == [CLAUDE_KEY]
        assert announced == [2]
        with path.open("a") as fp:  # the result, then a reply that ends its turn
            fp.write(json.dumps(result) + "\n" + json.dumps(reply) + "\n")
        run("--format", "claude-code", "--follow", "--polls", "1", str(path))
        assert ended == [CLAUDE_KEY, CLAUDE_KEY]
        assert announced == [2, 2]
    finally:
        signals.turn_ended.disconnect(on_end)
        signals.rows_appended.disconnect(on_rows)


def test_follow_polls_and_picks_up_a_record_written_meanwhile(src: Path) -> None:
    path = src / CODEX_FILE
    line = json.dumps(
        {
            "timestamp": "x",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "written while following"},
        }
    )

    def append() -> None:
        with path.open("a") as fp:
            fp.write(line + "\n")

    timer = threading.Timer(0.3, append)
    timer.start()
    try:
        run("--format", "codex", "--follow", "--interval", "0.2", "--polls", "6", str(path))
    finally:
        timer.join()
    run("--format", "codex", str(path))  # in case the write landed after the last poll
    contents = [r["content"] for r in rows_of(CODEX_KEY)]
    assert contents.count("written while following") == 1


def test_dry_run_changes_nothing(src: Path) -> None:
    out = run("--format", "auto", "--dry-run", str(src))
    assert "Would import 3" in out
    assert not Session.objects.exists()
    assert not list(get_store().root.glob("*.jsonl"))
    with pytest.raises(CommandError) as usage:
        run("--format", "auto", "--dry-run", "--follow", str(src))
    assert usage.value.returncode == 2


def test_a_clean_turn_end_runs_the_gated_summary_pass_with_tool_evidence(
    src: Path, enabled_summaries, eager_tasks, counting_backend, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run("--format", "claude-code", str(src / CLAUDE_FILE))
    assert counting_backend.calls == 1
    slot = Slot.objects.get(name=CLAUDE_KEY)
    assert (slot.last_stop_reason, summary_turn_mark(slot)) == ("end_turn", 3)
    intents = json.loads(sidecar_path(get_store().root, CLAUDE_KEY, "intents").read_text())
    assert intents["user_turns"] == 3
    assert intents["intents"][0]["verified"] is True  # a passing test run after the edit
    path = src / CLAUDE_FILE
    reply = json.loads(path.read_text().splitlines()[12])
    reply["message"]["id"] = "msg_again"
    with path.open("a") as fp:  # another clean end without a new user turn: cadence says no
        fp.write(json.dumps(reply) + "\n")
    with django_capture_on_commit_callbacks(execute=True):
        run("--format", "claude-code", str(path))
    assert counting_backend.calls == 1


def test_a_session_deleted_from_the_store_is_not_brought_back(src: Path) -> None:
    from transcripts.services import session_delete

    path = src / CODEX_FILE
    run("--format", "codex", str(path))
    session_delete(key=CODEX_KEY)
    with path.open("a") as fp:
        fp.write(path.read_text().splitlines()[21] + "\n")
    out = run("--format", "codex", "-v", "2", str(path))
    assert "deleted from the store; not re-imported" in out
    assert not get_store().exists(CODEX_KEY)
    assert not Session.objects.filter(key=CODEX_KEY).exists()


def test_nul_characters_in_a_source_never_stall_the_file(src: Path) -> None:
    path = src / CODEX_FILE
    binary = {
        "timestamp": "x",
        "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": "c", "output": "PK\u0000\u0003zip"},
    }
    prompt = {
        "timestamp": "x",
        "type": "event_msg",
        "payload": {"type": "user_message", "message": "and\u0000then"},
    }
    with path.open("a") as fp:
        fp.write(json.dumps(binary) + "\n" + json.dumps(prompt) + "\n")
    run("--format", "codex", str(path))  # no CommandError: nothing reported bad
    contents = [r["content"] for r in rows_of(CODEX_KEY)]
    assert "PK\ufffd\u0003zip" in contents
    assert "and\ufffdthen" in contents


def test_follow_reports_a_bad_file_once_not_every_poll(src: Path) -> None:
    (src / "junk.jsonl").write_text("not json at all\n")
    out = StringIO()
    with pytest.raises(CommandError) as bad:
        call_command(
            "import_transcripts",
            "--format",
            "auto",
            "--follow",
            "--interval",
            "0.01",
            "--polls",
            "3",
            str(src),
            stdout=out,
            stderr=StringIO(),
        )
    assert bad.value.returncode == 1
    assert out.getvalue().count("junk.jsonl: bad: format not recognised") == 1


def test_a_database_error_after_the_append_does_not_append_the_batch_twice(
    src: Path, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks
) -> None:
    """The append lands, the mirror's transaction fails: the file is reported bad, and
    the next run settles the written-ahead batch instead of appending it again, with the
    clean turn end the lost transaction would have recorded and announced."""
    from django.db import DatabaseError

    from transcripts.services import agent_import

    run("--format", "claude-code", str(src / "claude"))
    Slot.objects.filter(session__key=CLAUDE_KEY).update(running=True, last_stop_reason="")
    path = src / CLAUDE_FILE
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    ask = {**lines[3], "uuid": "u98", "message": {"role": "user", "content": "And the changelog"}}
    reply = {**lines[12], "uuid": "u99"}
    reply["message"] = {**reply["message"], "id": "msg_changelog"}
    with path.open("a") as fp:
        fp.write(json.dumps(ask) + "\n" + json.dumps(reply) + "\n")
    ended: list[str] = []

    def on_end(sender: Any, *, slot_name: str, **_: Any) -> None:
        ended.append(slot_name)

    real = agent_import.session_append_rows  # type: ignore[attr-defined]

    def append_then_fail(**kwargs: Any) -> Any:
        real(**kwargs)  # the rows are in the store and the mirror updated...
        raise DatabaseError("database is locked")  # ...and its transaction rolls back

    monkeypatch.setattr(agent_import, "session_append_rows", append_then_fail)
    out = StringIO()
    with pytest.raises(CommandError, match="skipped"):  # reported bad, exit 1
        call_command(
            "import_transcripts", "--format", "claude-code", str(src / "claude"), stdout=out
        )
    assert "not written: database is locked" in out.getvalue()
    monkeypatch.setattr(agent_import, "session_append_rows", real)
    signals.turn_ended.connect(on_end)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            run("--format", "claude-code", str(src / "claude"))
        run("--format", "claude-code", str(src / "claude"))
    finally:
        signals.turn_ended.disconnect(on_end)

    contents = [r["content"] for r in rows_of(CLAUDE_KEY)]
    assert contents.count("And the changelog") == 1
    assert Session.objects.get(key=CLAUDE_KEY).row_count == len(contents)
    slot = Slot.objects.get(session__key=CLAUDE_KEY)
    assert (slot.running, slot.last_stop_reason) == (False, "end_turn")
    assert ended == [CLAUDE_KEY]
