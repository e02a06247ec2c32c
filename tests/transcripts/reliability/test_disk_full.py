"""D4 / D5: the disk fills up under a real writer process.

D4 uses ``RLIMIT_FSIZE`` (a short write, then ``EFBIG``: E3; CPython ignores SIGXFSZ, so
the limit raises instead of killing). D5 uses a real 64 KiB tmpfs mounted inside an
unprivileged user+mount namespace (a short write, then ``ENOSPC``: E4) and is skipped
with the reason when the machine does not allow ``unshare``.
"""

from __future__ import annotations

import hashlib
import json
import resource
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from transcripts.core.store import TranscriptStore

from .procs import PROJECT, child_argv, child_env, run
from .writer_support import HUGE

KEY = "dashboard:disk-full"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _limit(max_bytes: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))

    return apply


def _seeded(root: Path) -> TranscriptStore:
    store = TranscriptStore(root, max_bytes=HUGE)
    store.create(KEY, {"title": "disk full", "custom": {"kept": True}})
    for n in range(12):
        store.append_row(KEY, "user" if n % 2 else "assistant", f"row {n} " + "é" * 300)
    return store


def _temps(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob(".*.tmp-*"))


@pytest.mark.slow
def test_append_under_rlimit_fsize_is_efbig_and_leaves_the_file_identical(tmp_path: Path):
    store = _seeded(tmp_path)
    path = store.path(KEY)
    before_sha, before_size = _sha(path), path.stat().st_size
    before_rows = store.read_session(KEY).rows

    result, out, _ = run(
        "append_once", tmp_path, KEY, 3_000, preexec_fn=_limit(before_size + 1_500)
    )
    print(f"D4 append under RLIMIT_FSIZE: {result}")
    assert "MARKER TranscriptWriteError EFBIG" in out
    assert result["outcome"] == "error"
    # Teeth: the writer really made a short write before the EFBIG, so there were partial
    # bytes to take back (a limit that failed the very first write would prove nothing).
    first, second = result["writes"][0], result["writes"][1]
    assert first[0] == "ok", result["writes"]
    assert 0 < first[2] < first[1], result["writes"]
    assert second[0:3:2] == ["error", "EFBIG"], result["writes"]
    # N: the writer truncated its own partial bytes: the file is byte-identical.
    assert path.stat().st_size == before_size
    assert _sha(path) == before_sha

    # A fresh process without the limit appends; the fold is the pre-state plus the row.
    result, _, _ = run("append_once", tmp_path, KEY, 3_000)
    assert result["outcome"] == "appended"
    view = store.read_session(KEY)
    assert view.rows[:-1] == before_rows
    assert view.rows[-1]["ts"] == result["ts"]
    assert view.rows[-1]["content"].startswith("disk-full")
    assert view.report.anomalies == []


@pytest.mark.slow
def test_control_without_truncate_the_disk_full_test_sees_the_partial_bytes(tmp_path: Path):
    """Teeth for the test above: a writer that skips its truncate-back is caught."""
    store = _seeded(tmp_path)
    path = store.path(KEY)
    before_sha, before_size = _sha(path), path.stat().st_size
    result, _, _ = run(
        "append_once", tmp_path, KEY, 3_000,
        env=child_env(KIROCREW_TEST_NO_TRUNCATE="1"),
        preexec_fn=_limit(before_size + 1_500),
    )  # fmt: skip
    assert result["outcome"] == "error"
    assert path.stat().st_size == before_size + 1_500
    assert _sha(path) != before_sha
    assert store.read_session(KEY).report.counts() == {"torn_tail": 1}


def _rewrite_case(root: Path, small: int) -> TranscriptStore:
    """``small`` short rows, then two 3 KB rows (what a keep-2 rotation keeps)."""
    store = TranscriptStore(root, max_bytes=HUGE)
    store.create(KEY, {"title": "disk full", "custom": {"kept": True}})
    for n in range(small):
        store.append_row(KEY, "user" if n % 2 else "assistant", f"row {n} " + "é" * 300)
    for n in range(2):
        store.append_row(KEY, "assistant", f"big {n} " + "x" * 3_000)
    return store


# (op, extra child args, short rows, RLIMIT_FSIZE, what a correct store does)
REWRITES = {
    # The temp file of the new line 0 + body does not fit: typed error, nothing changed.
    "title": ("title", ["--size", "3000"], 12, "size+1500", "error"),
    # The archive of the dropped rows fits, the rewritten file (two 3 KB rows) does not:
    # rotation fails closed, and the archive just written must not stay (read_session
    # chains archives, so it would show those rows twice).
    "rotate-replace-fails": ("rotate", ["--keep", "2"], 3, 5_000, "done"),
    # The archive itself does not fit: rotation fails closed (documented: returns 0).
    "rotate-archive-fails": ("rotate", ["--keep", "2"], 12, 5_000, "done"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(REWRITES))
def test_rewrite_under_rlimit_fsize_leaves_original_and_no_temp(tmp_path: Path, case: str):
    op, extra, small, limit_spec, expected = REWRITES[case]
    store = _rewrite_case(tmp_path, small)
    path = store.path(KEY)
    before_sha, before_size = _sha(path), path.stat().st_size
    before = store.read_session(KEY)
    archive_dir = store.archive_dir
    limit = before_size + 1_500 if limit_spec == "size+1500" else int(str(limit_spec))

    result, out, _ = run("rewrite_once", tmp_path, KEY, op, *extra, preexec_fn=_limit(limit))
    print(f"D4 {case} under RLIMIT_FSIZE={limit}: {result}")
    # Teeth: the rewrite really hit the limit part-way through one of its files.
    errors = [call for call in result["writes"] if call[0] == "error"]
    assert errors, result["writes"]
    assert errors[0][2] == "EFBIG", result["writes"]
    assert result["writes"][0][0] == "ok", result["writes"]
    assert result["writes"][0][2] > 0, result["writes"]
    if expected == "error":
        assert result["outcome"] == "error", result
        assert (result["type"], result["errno"]) == ("TranscriptWriteError", "EFBIG")
        assert "MARKER TranscriptWriteError EFBIG" in out
    else:
        assert (result["outcome"], result["value"]) == ("done", 0), result
    assert _sha(path) == before_sha
    assert path.stat().st_size == before_size
    assert _temps(tmp_path) == []
    # Nothing half-done is visible, not even a second copy of rows through an archive.
    assert not archive_dir.exists() or sorted(archive_dir.iterdir()) == []
    after = store.read_session(KEY)
    assert after.rows == before.rows
    assert after.metadata == before.metadata

    # Without the limit the same rewrite succeeds.
    result, _, _ = run("rewrite_once", tmp_path, KEY, op, *extra)
    assert result["outcome"] == "done"
    assert _temps(tmp_path) == []
    assert store.read_session(KEY).rows == before.rows


def _unshare_works(tmp_path: Path) -> str | None:
    """None when an unprivileged user+mount namespace can mount a tmpfs here, else why not."""
    if shutil.which("unshare") is None:
        return "unshare(1) is not installed"
    probe = tmp_path / "probe"
    probe.mkdir()
    cmd = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
           f"mount -t tmpfs -o size=64k tmpfs '{probe}'"]  # fmt: skip
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare failed: {exc}"
    if done.returncode != 0:
        return f"unshare/mount not permitted here: {done.stderr.decode().strip()[:200]}"
    return None


@pytest.mark.slow
def test_real_enospc_on_a_64k_tmpfs(tmp_path: Path):
    reason = _unshare_works(tmp_path)
    if reason:
        pytest.skip(reason)
    mount = tmp_path / "mnt"
    mount.mkdir()
    script = f"mount -t tmpfs -o size=64k tmpfs '{mount}' && exec \"$@\""
    argv = child_argv("enospc", mount, KEY)
    cmd = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh", *argv]
    done = subprocess.run(
        cmd, cwd=PROJECT, env=child_env(), capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    result = json.loads(done.stdout.decode().strip().splitlines()[-1])
    print(f"D5 ENOSPC on a 64 KiB tmpfs: {result}")
    assert result["appended"] > 0
    assert result["append_error"] == "ENOSPC"
    writes = result["append_writes"]
    # Teeth: a real short write happened before ENOSPC, and the file still came out intact.
    assert writes[0][0] == "ok", writes
    assert 0 < writes[0][2] < writes[0][1], writes
    assert writes[-1][0:3:2] == ["error", "ENOSPC"], writes
    assert result["append_unchanged"] is True
    assert result["title_error"] == ["TranscriptWriteError", "ENOSPC"]
    assert result["sidecar_error"] is not None
    assert result["sidecar_error"][1] == "ENOSPC"
    assert result["rewrites_unchanged"] is True
    assert result["temps"] == []
    assert result["recovered"] is True
    assert result["anomalies"] == {}
    # An append that crosses max_bytes when the disk holds the row and the archive but
    # not the rewritten file: the append succeeded, so it must return (its row is on
    # disk); the failed rotation must leave no archive behind (no row shown twice).
    rotation = result["rotation"]
    writes = rotation["writes"]
    assert writes[-1][0:3:2] == ["error", "ENOSPC"], writes  # teeth
    assert len(writes) >= 3, writes  # the row, the archive, the failed temp file
    assert "append_error" not in rotation, rotation
    assert (rotation["missing"], rotation["duplicated"]) == (0, 0), rotation
    assert (rotation["archives"], rotation["temps"]) == (0, []), rotation
    assert rotation["anomalies"] == {}, rotation
    assert list(mount.iterdir()) == []  # the tmpfs lived only inside the namespace
