"""A slot writer killed mid-write (SIGKILL, a real process) cannot leave the slot dirty
forever: its dirty mark is a lease that expires, and a POST summary succeeds once it has.
While a writer genuinely holds the slot, POST summary is refused with 409 ``summary_busy``
BEFORE the model is called: retries cost nothing.

The writer is ``dirty_writer_child``: the real turn service in its own process, on the
same PostgreSQL database and data root, stopped inside its ``write()``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import connection
from django.test import Client

from tests.fixtures.slots import add_exchanges
from tests.fixtures.summaries import CountingBackend
from tests.transcripts.reliability.procs import LineReader
from transcripts.models import Slot
from transcripts.runtime import get_store
from transcripts.services import app_create, session_create

pytestmark = [
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(240),
]

ROOT = Path(__file__).resolve().parents[2]
SHORT_TTL = 2  # seconds the killed writer's lease outlives it
LONG_TTL = 3600  # a live writer's lease: never expires during the test
EXPIRY_WAIT = 90  # upper bound on waiting for the short lease (a loaded machine is slow)


def _test_db_url() -> str:
    parts = urlsplit(os.environ["DATABASE_URL"])
    name = connection.settings_dict["NAME"]
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", "", ""))


@contextmanager
def writer_inside_its_write(slot: str, home: Path, ttl: int) -> Iterator[subprocess.Popen[bytes]]:
    """A child process appending to ``slot``, stopped half-way through its write()."""
    env = {
        **os.environ,
        "DATABASE_URL": _test_db_url(),
        "KIROCREW_HOME": str(home),
        "KIROCREW_SLOT_DIRTY_TTL": str(ttl),
        "KIROCREW_TRANSCRIPT_FSYNC": "never",
        "PYTHONPATH": str(ROOT),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.services.dirty_writer_child", slot],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        try:
            LineReader(proc.stdout.fileno()).wait_for("MID", timeout=60)
        except AssertionError:
            proc.kill()
            _, err = proc.communicate(timeout=30)
            raise AssertionError(f"the writer never reached its write:\n{err.decode()}") from None
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def kill9(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL


def summary(client: Client, slot: str) -> tuple[int, dict[str, Any]]:
    response = client.post(f"/api/chat/slots/{slot}/summary")
    return response.status_code, json.loads(response.content)


@pytest.fixture
def owner_client(services_home: Path, on_postgres: None) -> Client:
    app, token = app_create(name="writer-owner")
    for name in ("busy", "crashed"):
        slot = session_create(name=name, app=app)
        add_exchanges(slot, 2)
        Slot.objects.filter(pk=slot.pk).update(last_stop_reason="end_turn")
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}")


def test_retries_never_call_the_model_while_a_live_writer_holds_the_slot(
    owner_client: Client, services_home: Path, counting_backend: CountingBackend
) -> None:
    with writer_inside_its_write("busy", services_home, LONG_TTL) as writer:
        assert Slot.objects.get(name="busy").dirty
        for _ in range(3):
            assert summary(owner_client, "busy") == (
                409,
                {
                    "error": "a write to this session is in progress; try again",
                    "code": "summary_busy",
                },
            )
        assert counting_backend.calls == 0  # refused before the model, not after it
        assert writer.poll() is None  # it was busy all along, not dead
        kill9(writer)
    assert counting_backend.calls == 0


def test_a_writer_killed_mid_write_holds_the_slot_only_until_its_lease_expires(
    owner_client: Client, services_home: Path, counting_backend: CountingBackend
) -> None:
    path = get_store().path("dashboard:crashed")
    before = path.read_bytes()
    with writer_inside_its_write("crashed", services_home, SHORT_TTL) as writer:
        kill9(writer)
    after = path.read_bytes()
    assert len(after) > len(before)
    assert not after.endswith(b"\n")  # killed inside the write: a torn line
    assert Slot.objects.get(name="crashed").dirty_until is not None  # the dead writer's mark

    answers = []
    deadline = time.monotonic() + EXPIRY_WAIT
    while time.monotonic() < deadline:
        status, body = summary(owner_client, "crashed")
        answers.append((status, body.get("code")))
        if status != 409:
            break
        time.sleep(0.25)

    assert answers[-1] == (200, None), answers
    assert body["intents"], body
    # Every refusal was "busy" (retry later), none the "could not summarize" that used to
    # follow a paid model call, and the model was called exactly once: by the pass that stored.
    assert set(answers[:-1]) <= {(409, "summary_busy")}, answers
    assert counting_backend.calls == 1
    assert not Slot.objects.get(name="crashed").dirty
