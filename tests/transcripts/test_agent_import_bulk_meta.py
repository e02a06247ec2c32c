"""Row meta judged a file at a time (``redaction.batch.all_unchanged``) redacts as row by row.

Real Claude Code rows carry the record's timestamp and the tool-use id in ``meta``; both
trip the window trigger, so the bulk import judges all of a file's meta strings at once.
A "yes, all unchanged" must be true of every string; a secret in meta (even one that
only the window trigger announces, an AWS key id inside a tool-use id) is still redacted.
"""

from __future__ import annotations

import re
import string
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.transcripts.agents.helpers import CLAUDE_FILE
from tests.transcripts.redaction_rule_samples import AWS_KEY_ID
from tests.transcripts.redaction_samples import COVERAGE_SAMPLES
from tests.transcripts.test_agent_import_bulk import files_of, fix_clock, make_tree, outcomes
from transcripts.core.agents.prepare import _stamps
from transcripts.core.redaction import _redact_tree, redact_text, redact_value
from transcripts.core.redaction.batch import all_unchanged
from transcripts.core.store import TranscriptStore
from transcripts.models import Session
from transcripts.runtime import get_store
from transcripts.services import agent_import

STAMP = "2026-03-27T11:11:15.533Z"
CALL_ID = "toolu_01QwqlIntmpxf0rfWCfPKPv8"
BASE62 = string.ascii_letters + string.digits
WINDOW = BASE62 + "_.+/=:-"

SECRETS = [positive for positive, _ in COVERAGE_SAMPLES.values()] + [AWS_KEY_ID]
NEAR_MISSES = [negative for _, negative in COVERAGE_SAMPLES.values()]
STAMPS = st.builds(
    "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:03d}Z".format,
    *(st.integers(0, top) for top in (9999, 12, 31, 23, 59, 59, 999)),
)
CALL_IDS = st.text(alphabet=BASE62, min_size=22, max_size=22).map("toolu_01".__add__)
TEXTS = st.one_of(
    STAMPS,
    CALL_IDS,
    st.text(alphabet=WINDOW, max_size=45),
    st.sampled_from(SECRETS + NEAR_MISSES + ["tool", "call_id", "source_ts", "Bash", "key"]),
    st.builds(
        "{}{}".format, st.sampled_from(["toolu_01", "toolu_", "x", ""]), st.sampled_from(SECRETS)
    ),
)


def test_real_meta_is_judged_clean_at_once() -> None:
    """What makes the bulk path cheap: timestamps and tool-use ids of the real shapes."""
    assert redact_text(STAMP) == (STAMP, {})
    assert redact_text(CALL_ID) == (CALL_ID, {})
    assert all_unchanged(["source_ts", STAMP, "call_id", CALL_ID, "tool", "Bash"] * 50)


@pytest.mark.parametrize("secret", SECRETS)
def test_any_secret_among_them_says_not_clean(secret: str) -> None:
    assert redact_text(secret)[0] != secret
    for text in (secret, f"toolu_01{secret}", f"toolu_{secret}", f"{STAMP} {secret}"):
        if redact_text(text)[0] != text:  # a look-behind may refuse it after a prefix
            assert not all_unchanged([STAMP, CALL_ID, text, CALL_ID])


@settings(max_examples=500, deadline=None)
@given(st.lists(TEXTS, max_size=12))
def test_all_unchanged_only_when_each_text_is(texts: list[str]) -> None:
    if all_unchanged(texts):
        assert [redact_text(t) for t in texts] == [(t, {}) for t in texts]


def _with_real_meta(src: Path, secret_in: str | None) -> Path:
    """Give the tree's Claude sessions tool-use ids of the API's shape (their records
    already carry timestamps); ``secret_in`` ("timestamp" or "call_id") puts an AWS key
    id in that field of one record of one file."""
    folder = (src / CLAUDE_FILE).parent
    for n, path in enumerate(sorted(folder.glob("*.jsonl"))):
        text = re.sub(
            r'"(toolu_\d+)"', lambda m: f'"toolu_01{m.group(1)[6:]:Q>22}"', path.read_text()
        )
        if n == 1 and secret_in == "timestamp":
            text = re.sub(r'"timestamp": "[^"]*"', f'"timestamp": "{AWS_KEY_ID}"', text, count=1)
        if n == 1 and secret_in == "call_id":
            text = re.sub(r'"toolu_01Q*02"', f'"toolu_01{AWS_KEY_ID}"', text)
        path.write_text(text)
    return src


@pytest.mark.django_db
@pytest.mark.parametrize("secret_in", [None, "timestamp", "call_id"])
def test_bulk_import_with_real_meta_writes_what_the_ordinary_path_writes(
    secret_in: str | None,
    tmp_path: Path,
    settings: Any,
    store: TranscriptStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    src = _with_real_meta(make_tree(tmp_path / "src"), secret_in)
    fix_clock(store)
    bulk = outcomes(src)
    bulk_files = files_of(store)
    written = b"".join(bulk_files.values())
    assert b'"call_id":"toolu_01QQQ' in written
    assert b'"source_ts":"2026-11-30T1' in written
    assert AWS_KEY_ID.encode() not in written
    if secret_in is not None:
        assert b"[REDACTED: credential]" in written

    settings.KIROCREW_SESSIONS_DIR = tmp_path / "ordinary"
    Session.objects.all().delete()
    ordinary = get_store()
    fix_clock(ordinary)
    monkeypatch.setattr(agent_import, "PARALLEL_MIN_FILES", 10**9)
    assert outcomes(src) == bulk
    assert files_of(ordinary) == bulk_files  # byte for byte, redaction included


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(
        TEXTS,
        st.one_of(TEXTS, st.integers(), st.none(), st.lists(TEXTS, max_size=3)),
        max_size=6,
    )
)
def test_redact_value_judging_a_container_at_once_redacts_as_string_by_string(
    value: dict[str, Any],
) -> None:
    """The store's per-row path (``redact_row`` -> ``redact_value``) uses the same judge."""
    assert redact_value(value) == _redact_tree(value, redact_text)


@pytest.mark.parametrize("micro", [0, 1, 500_000, 999_990])
@pytest.mark.parametrize("zone", [UTC, timezone(timedelta(hours=5, minutes=30))])
def test_row_stamps_are_what_the_store_gives(micro: int, zone: tzinfo) -> None:
    """One clock reading, ``now + n µs`` each (the store's ``monotonic_ts``), also where
    the fraction is 0 (isoformat leaves it out) and across the turn of a second."""
    local = datetime(2026, 11, 30, 12, 0, 59, micro, tzinfo=zone)
    assert _stamps(local, 20) == [
        (local + n * timedelta(microseconds=1)).isoformat() for n in range(20)
    ]
