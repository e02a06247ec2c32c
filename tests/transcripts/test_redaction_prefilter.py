"""The one-scan prefilter (``redaction.prefilter``) and the store's row redaction built on it.

The prefilter decides that a text, or a whole row, needs no redaction at all, so a
wrong "nothing here" would write a secret to disk. These tests check that it agrees
exactly with the per-literal fast path it replaces, that a row's JSON carries every
trigger of every string in it (values, keys, nested), and that both the hyperscan and
the pure-Python answers are sound.
"""

from __future__ import annotations

import json
import string

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.transcripts.redaction_rule_samples import SAMPLES
from tests.transcripts.redaction_samples import COVERAGE_SAMPLES
from transcripts.core.redaction import patterns as P
from transcripts.core.redaction import prefilter, redact_value
from transcripts.core.redaction.views import View, might_contain_secret
from transcripts.core.store import redact_row, row_order

POSITIVES = [pos for pos, _ in SAMPLES.values()] + [pos for pos, _ in COVERAGE_SAMPLES.values()]
# Every trigger alone, in its several cases, and texts built around them.
TRIGGERS = [
    *P.FAST_PATH_ANCHORS,
    *P.FAST_PATH_LOWER_ANCHORS,
    *(a.upper() for a in P.FAST_PATH_LOWER_ANCHORS),
    *(a.title() for a in P.FAST_PATH_LOWER_ANCHORS),
    "a" * P.WINDOW_MIN_RUN,
    "/usr/local/lib/python3/",
]
PROSE = [
    "",
    "The rotation keeps the last archive and folds revisions into the row.",
    "héllo wörld, 中文字符 and an emoji \U0001f600 with a lone surrogate \ud800.",
    "a" * (P.WINDOW_MIN_RUN - 1) + " " + "b" * (P.WINDOW_MIN_RUN - 1),
    "5 tests ran in 0.3s; the parser handles ISO weeks now",
]
text_st = st.text(
    alphabet=st.one_of(
        st.sampled_from(string.ascii_letters + string.digits + " _.+/=:-~\"'\\\n"),
        st.characters(),
    ),
    max_size=60,
)


def fast_path(text: str) -> bool:
    """The per-literal answer the prefilter replaces (a view built without a scan)."""
    view = View(text)
    return might_contain_secret(view)


def slow_answer(text: str) -> bool:
    return prefilter._may_hold_secret_slow(text.encode("utf-8", "surrogatepass"))


def test_hyperscan_is_installed_here():
    """A pinned requirement: without it the import runs at the per-literal speed."""
    assert prefilter.available()


@pytest.mark.parametrize("text", POSITIVES + TRIGGERS + PROSE)
def test_scan_agrees_with_the_per_literal_fast_path(text):
    found = prefilter.scan_text(text)
    assert found is not None
    assert bool(found) == fast_path(text)
    if fast_path(text):
        assert slow_answer(text)  # the fallback is a superset: never misses


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(text_st, st.sampled_from(TRIGGERS)), max_size=4))
def test_scan_and_fallback_are_sound_on_any_text(parts):
    text = "".join(parts)
    found = prefilter.scan_text(text)
    assert found is not None
    assert bool(found) == fast_path(text)
    assert slow_answer(text) or not fast_path(text)


@pytest.mark.parametrize("text", POSITIVES + TRIGGERS + PROSE)
def test_a_view_filled_from_the_scan_answers_as_a_view_that_looks_itself(text):
    found = prefilter.scan_text(text)
    if not found:
        return  # no view is built for such a text
    filled, lazy = View(text, found), View(text)
    for anchor in prefilter.EXACT:
        assert filled.has(anchor) == lazy.has(anchor)
    for anchor in prefilter.CASELESS:
        assert filled.has_lower(anchor) == lazy.has_lower(anchor)
    assert (filled.windows is None) == (lazy.windows is None)
    if lazy.windows is not None:
        assert filled.windows is not None
        assert filled.windows.joined == lazy.windows.joined
    assert filled.candidates() == lazy.candidates()


def _rows_around(secret: str) -> list[dict[str, object]]:
    return [
        {"role": "tool_result", "content": f"output: {secret} done"},
        {"role": "tool_call", "content": "run", "meta": {"input": {"env": [secret]}}},
        {"role": "assistant", "content": "ok", "meta": {secret: 1}},  # a key
        {"role": "assistant", "content": "ok", "variants": [{"text": f'say "{secret}"'}]},
        {"role": "notice", "content": "x", "meta": {"nested": {"deep": ("t", secret)}}},
    ]


@pytest.mark.parametrize("secret", POSITIVES)
def test_a_secret_anywhere_in_a_row_reaches_the_redaction(secret):
    for row in _rows_around(secret):
        assert prefilter.value_may_hold_secret(row)
        assert prefilter._may_hold_secret_slow(orjson.dumps(row))
        clean, report = redact_row(row_order(row))
        assert report, row
        assert secret not in json.dumps(clean, ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(text_st, st.one_of(text_st, st.lists(text_st, max_size=3)), max_size=4))
def test_row_prefilter_never_hides_a_string_that_needs_a_look(meta):
    """If any string of the value (key or leaf) has a trigger, the value's scan says so."""
    strings = list(meta) + [s for v in meta.values() for s in (v if isinstance(v, list) else [v])]
    if any(fast_path(s) for s in strings):
        assert prefilter.value_may_hold_secret(meta)
    if not prefilter.value_may_hold_secret(meta):
        assert redact_value(meta) == (meta, {})


def test_a_clean_row_is_returned_as_it_is():
    row = row_order(
        {"role": "tool_result", "content": "5 tests ran", "meta": {"tool": "Bash", "code": 0}}
    )
    clean, report = redact_row(row)
    assert clean is row
    assert report == {}


def test_a_row_orjson_refuses_still_gets_the_string_by_string_redaction():
    secret = SAMPLES["github_token"][0]
    row = {"role": "tool_call", "content": "x", "meta": {"s": f"\ud800 {secret}", "n": 2**70}}
    assert prefilter.value_may_hold_secret(row["meta"])  # cannot encode: says "maybe"
    clean, report = redact_row(row_order(row))
    assert report == {"github_token": 1}
    assert secret not in clean["meta"]["s"]


def test_user_rows_are_never_redacted():
    secret = SAMPLES["github_token"][0]
    row = row_order({"role": "user", "content": secret})
    assert redact_row(row) == (row, {})


def test_the_scratch_space_is_per_thread():
    """Two threads scanning at once must not share one hyperscan scratch (it would raise)."""
    import threading

    text = ("the parser test fails on ISO weeks " * 2000) + SAMPLES["github_token"][0]
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(50):
                assert prefilter.scan_text(text)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
