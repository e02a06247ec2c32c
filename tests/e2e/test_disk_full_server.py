"""A full and a read-only home under a real server: a write is acknowledged if and only if
it is on disk, storage errors are 507/503 JSON, the mirror catches up, reads go on.

The embedded profile (daphne, SQLite) with ``$KIROCREW_HOME`` on a real tmpfs of a few
MiB, mounted by the test (root only; skipped with the reason elsewhere). The session
files and the SQLite database share that disk, as they do in a default install, so
every kind of failure happens on its own: an append that does not fit, and an append
that fits but leaves no room for the database update after it.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.processes import daphne_start, embedded_env, health, manage, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

STORAGE = {507: "storage_full", 503: "storage_unavailable"}


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, check=False)


@pytest.fixture
def tmpfs_home(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs as the home; unmounted afterwards."""
    home = tmp_path / "home"
    home.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = _mount("-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs", str(home))
    if done.returncode != 0:
        pytest.skip(f"mount not permitted here: {done.stderr.strip()[:200]}")
    try:
        yield home
    finally:
        subprocess.run(["umount", "-l", str(home)], capture_output=True, check=False)


def _fill(home: Path, leave: int) -> Path:
    """A filler file taking all but ``leave`` bytes of the home's free space."""
    st = os.statvfs(home)
    filler = home / "filler"
    with filler.open("wb") as fp:
        fp.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))
    return filler


def _markers(path: Path) -> list[str]:
    """The test markers of the rows in a transcript file, in file order."""
    found = []
    for line in path.read_bytes().splitlines():
        record = json.loads(line)
        content = record.get("content")
        if isinstance(content, str) and content.startswith("m-"):
            found.append(content.split(" ", 1)[0])
    return found


def _storage_error(response: httpx.Response) -> None:
    assert response.status_code in STORAGE, (response.status_code, response.text)
    assert response.json()["code"] == STORAGE[response.status_code], response.text


def test_a_full_home_acknowledges_exactly_the_writes_on_disk_and_recovers(
    tmpfs_home: Path, tmp_path: Path
) -> None:
    home = tmpfs_home
    logs = tmp_path / "logs"
    logs.mkdir()
    env = embedded_env(home, KIROCREW_SUMMARY_ENABLED="0")
    manage(env, "migrate", "--noinput")
    token = manage(env, "create_app", "disk-full").strip().splitlines()[-1]
    daphne, port = daphne_start(env, logs)
    sessions = home / "sessions"
    slots = [f"full-{n}" for n in range(4)]
    acked: dict[str, list[str]] = {slot: [] for slot in slots}
    refused_rows: list[str] = []
    refused_creates: list[str] = []
    statuses: list[int] = []
    try:
        bearer = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=bearer, timeout=60) as api:
            wait_for("daphne to answer", lambda: health(api), within=30, procs=[daphne])
            for slot in slots:
                assert api.post("/api/chat/slots", json={"name": slot}).status_code == 201
            filler = _fill(home, leave=256 * 1024)
            end_turn = {"stop_reason": "end_turn"}

            # Row sizes halve as the disk fills, so every gap gets a write that just fits
            # (the case where the append lands and the database update after it has no
            # room), until even a small row is refused a few times in a row.
            # Each slot cycles turn start, row, turn end: a turn start writes the person's
            # row and holds the turn, so it too must be acknowledged iff on disk.
            size, n, refused_in_a_row = 48 * 1024, 0, 0
            while refused_in_a_row < 6 and n < 400:
                slot = slots[n % len(slots)]
                step = (n // len(slots)) % 3
                marker = f"m-{n}"
                if step == 2:
                    ended = api.post(f"/api/chat/slots/{slot}/turns/end", json=end_turn)
                    statuses.append(ended.status_code)
                    if ended.status_code != 200:
                        _storage_error(ended)
                    n += 1
                    continue
                text = f"{marker} " + "x" * size
                response = (
                    api.post(f"/api/chat/slots/{slot}/turns", json={"content": text})
                    if step == 0
                    else api.post(
                        f"/api/chat/slots/{slot}/rows", json={"role": "assistant", "content": text}
                    )
                )
                statuses.append(response.status_code)
                if response.status_code == 201:
                    acked[slot].append(marker)
                    refused_in_a_row = 0
                elif response.status_code == 409:  # a turn whose end was refused still runs
                    assert response.json()["code"] == "turn_running", response.text
                    refused_rows.append(marker)
                else:
                    _storage_error(response)
                    refused_rows.append(marker)
                    refused_in_a_row += size <= 256
                    size = max(64, size // 2)
                if n % 5 == 0:  # a create; every other one a fork of this slot
                    name = f"new-{n}"
                    created = (
                        api.post("/api/chat/slots", json={"name": name})
                        if n % 10
                        else api.post(f"/api/chat/slots/{slot}/fork", json={"name": name})
                    )
                    statuses.append(created.status_code)
                    if created.status_code != 201:
                        _storage_error(created)
                        refused_creates.append(name)
                n += 1
            print(f"writes: {len(statuses)}, statuses {sorted(set(statuses))}, refused rows "
                  f"{len(refused_rows)}, refused creates {len(refused_creates)}")  # fmt: skip
            assert 500 not in statuses
            # Teeth: rows landed, rows and creates were refused.
            assert any(acked.values())
            assert refused_rows
            assert refused_creates

            # Acknowledged if and only if on disk: every 201 row once, no refused row.
            for slot in slots:
                assert _markers(sessions / f"dashboard_{slot}.jsonl") == acked[slot], slot
            # A refused create or fork leaves no file behind (its name is free again).
            for name in refused_creates:
                assert not (sessions / f"dashboard_{name}.jsonl").exists(), name

            filler.unlink()  # the operator frees space
            for name in refused_creates:
                assert api.post("/api/chat/slots", json={"name": name}).status_code == 201
            for slot in slots:  # the next write to a session settles its mirror
                response = api.post(
                    f"/api/chat/slots/{slot}/rows", json={"role": "assistant", "content": "m-x"}
                )
                assert response.status_code == 201, response.text
            listed = {s["name"]: s for s in api.get("/api/chat/slots?limit=100").json()["slots"]}
            assert set(slots) | set(refused_creates) <= set(listed)
    finally:
        daphne.stop()
    # The mirror equals the disk (verify_transcripts exits 1 on any drift).
    out = manage(env, "verify_transcripts")
    assert "PROBLEM" not in out, out


def test_a_read_only_home_serves_reads_and_refuses_writes_with_503(
    tmpfs_home: Path, tmp_path: Path
) -> None:
    home = tmpfs_home
    logs = tmp_path / "logs"
    logs.mkdir()
    env = embedded_env(home, KIROCREW_SUMMARY_ENABLED="0")
    manage(env, "migrate", "--noinput")
    token = manage(env, "create_app", "read-only").strip().splitlines()[-1]
    manage(env, "create_app", "other")
    bearer = {"Authorization": f"Bearer {token}"}

    daphne, port = daphne_start(env, logs)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=bearer, timeout=60) as api:
            wait_for("daphne to answer", lambda: health(api), within=30, procs=[daphne])
            assert api.post("/api/chat/slots", json={"name": "ro"}).status_code == 201
            assert (
                api.post("/api/chat/slots/ro/turns", json={"content": "hello"}).status_code == 201
            )
            reply = {"role": "assistant", "content": "hi there"}
            assert api.post("/api/chat/slots/ro/rows", json=reply).status_code == 201
    finally:
        daphne.stop()

    # The home is remounted read-only (a snapshot, or the kernel after I/O errors); the
    # database's -wal/-shm files went with the clean shutdown.
    done = _mount("-o", "remount,ro", str(home))
    assert done.returncode == 0, done.stderr
    daphne, port = daphne_start(env, logs)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=bearer, timeout=60) as api:
            wait_for("daphne to answer", lambda: health(api), within=30, procs=[daphne])
            assert api.get("/api/health").json() == {"ok": True}
            listed = api.get("/api/chat/slots")
            assert listed.status_code == 200, listed.text
            assert [s["name"] for s in listed.json()["slots"]] == ["ro"]
            assert api.get("/api/chat/slots/ro").status_code == 200
            transcript = api.get("/api/chat/slots/ro/transcript")
            assert transcript.status_code == 200, transcript.text
            contents = [row["content"] for row in transcript.json()["rows"]]
            assert contents == ["hello", "hi there"]
            assert api.get("/api/chat/slots/ro/summary").status_code == 200
            missing = api.get("/api/chat/slots/nobody-here")
            assert (missing.status_code, missing.json()["code"]) == (404, "slot_not_found")

            writes = [
                api.post("/api/chat/slots/ro/rows", json=reply),
                api.post("/api/chat/slots/ro/turns/end", json={"stop_reason": "end_turn"}),
                api.post("/api/chat/slots", json={"name": "another"}),
                api.patch("/api/chat/slots/ro", json={"title": "renamed"}),
            ]
            for response in writes:
                assert response.status_code == 503, response.text
                assert response.json()["code"] == "storage_unavailable"
            assert (
                api.get("/api/chat/slots/ro/transcript").json()["rows"] == transcript.json()["rows"]
            )
    finally:
        daphne.stop()
        _mount("-o", "remount,rw", str(home))


def test_a_summary_post_on_a_full_home_answers_json_never_500(
    tmpfs_home: Path, tmp_path: Path
) -> None:
    """The pass swallows its own failures; what the POST itself writes (the "generating"
    flag, a database write) must fail as the storage answer, not a 500. A POST that could
    queue its pass answers 202."""
    home = tmpfs_home
    logs = tmp_path / "logs"
    logs.mkdir()
    env = embedded_env(
        home,
        KIROCREW_SUMMARY_ENABLED="1",
        KIROCREW_SUMMARY_MODEL="heuristic",
        KIROCREW_SUMMARY_MIN_USER_TURNS="1",
    )
    manage(env, "migrate", "--noinput")
    token = manage(env, "create_app", "summaries").strip().splitlines()[-1]
    daphne, port = daphne_start(env, logs)
    seen: list[tuple[int, str]] = []
    try:
        bearer = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=bearer, timeout=60) as api:
            wait_for("daphne to answer", lambda: health(api), within=30, procs=[daphne])
            assert api.post("/api/chat/slots", json={"name": "sum"}).status_code == 201
            turn = {"content": "Please fix the login bug in the session cookie handling."}
            assert api.post("/api/chat/slots/sum/turns", json=turn).status_code == 201
            reply = {"role": "assistant", "content": "Fixed: the cookie was read too early."}
            assert api.post("/api/chat/slots/sum/rows", json=reply).status_code == 201
            end = {"stop_reason": "end_turn"}
            assert api.post("/api/chat/slots/sum/turns/end", json=end).status_code == 200
            wait_for(  # the turn end's own pass, before the disk fills
                "the turn end's summary",
                lambda: api.get("/api/chat/slots/sum/summary").json().get("intents"),
                within=60,
                procs=[daphne],
            )
            filler = _fill(home, leave=96 * 1024)
            size = 16 * 1024
            for n in range(40):
                row = {"role": "assistant", "content": f"m-{n} " + "y" * size}
                if api.post("/api/chat/slots/sum/rows", json=row).status_code != 201:
                    size = max(64, size // 2)
                response = api.post("/api/chat/slots/sum/summary")
                seen.append((response.status_code, response.json().get("code", "")))
            filler.unlink()
    finally:
        daphne.stop()
    print(f"summary POSTs on a full home: {sorted(set(seen))}")
    assert all(status != 500 for status, _ in seen), seen
    for status, code in seen:
        if status in STORAGE:
            assert code == STORAGE[status]
        else:
            assert status in (200, 202, 409), (status, code)
