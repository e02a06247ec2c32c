"""The redaction engine's cheap pre-checks: sound (they never hide a match) and effective.

The pre-checks decide which rules run on a text: the gates of the windowed rules that
have no literal anchor, the one-regex test for any windowed anchor, and memoised
keyword look-ups. Speed itself is measured by ``bench/bench_redaction.py``; these tests
check that a skipped rule could not have matched, and that realistic text skips them.
"""

from __future__ import annotations

import re
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.transcripts.redaction_rule_samples import SAMPLES
from tests.transcripts.redaction_samples import COVERAGE_SAMPLES
from transcripts.core.redaction import patterns as P
from transcripts.core.redaction import redact_text
from transcripts.core.redaction.views import (
    _ANY_WINDOWED_ANCHOR,
    _UNANCHORED_WINDOWED,
    _WINDOWED_ANCHOR_GROUPS,
    View,
    _trie_pattern,
)

GATED = [i for i in P.WINDOWED_RULES if P.RULES[i].gate is not None]
GROUP_KEYS = [low for low, _ in _WINDOWED_ANCHOR_GROUPS]

# A realistic log row: timestamps, a 40-hex commit hash, a path, a UUID. Windows, but no
# Telegram, Discord or Mailgun shape and no vendor prefix.
LOG_ROW = (
    "2025-03-01T12:00:00+00:00 INFO deploy finished commit="
    "3f2a9c0d4b1e8f7a6c5d4e3f2a1b0c9d8e7f6a5b in /srv/app/releases/2025-03-01T12-00-00 "
    "request_id=123e4567-e89b-12d3-a456-426614174000 elapsed=12.5ms\n"
)


def test_every_unanchored_windowed_rule_has_a_gate():
    """Otherwise it would run a full regex over the windows of every row again."""
    assert _UNANCHORED_WINDOWED
    assert all(P.RULES[i].gate is not None for i in _UNANCHORED_WINDOWED)


def test_gate_occurs_in_every_positive_sample_match():
    """A gate must be necessary: every match of the rule contains a gate match."""
    for i in GATED:
        rule = P.RULES[i]
        assert rule.gate is not None
        token = {**SAMPLES, **COVERAGE_SAMPLES}[rule.kind][0]
        m = rule.pattern.search(token)
        assert m is not None, rule.kind
        assert rule.gate.search(m.group()) is not None, rule.kind
        assert rule.kind in redact_text(f"see {token} here")[1]


def test_unanchored_rules_are_skipped_on_a_realistic_log_row():
    view = View(LOG_ROW)
    assert view.windows is not None  # the row does leave the fast path
    assert not set(view.candidates()) & set(_UNANCHORED_WINDOWED)
    assert redact_text(LOG_ROW) == (LOG_ROW, {})


def test_gated_rule_is_a_candidate_when_its_gate_matches():
    token = SAMPLES["telegram_bot_token"][0]
    index = next(i for i in GATED if P.RULES[i].kind == "telegram_bot_token")
    assert index in View(LOG_ROW + token).candidates()
    assert index in View(LOG_ROW + token).candidates(among=[index])
    assert index not in View(LOG_ROW).candidates(among=[index])


def test_windowed_anchor_regex_finds_each_anchor_group():
    for key in GROUP_KEYS:
        assert _ANY_WINDOWED_ANCHOR.search(f"zz{key}zz") is not None, key
    assert _ANY_WINDOWED_ANCHOR.search(LOG_ROW.lower()) is None


def test_trie_pattern_keeps_words_that_are_prefixes_of_others():
    trie = re.compile(_trie_pattern(["sk", "sk-ant-", "pat", "pat."]))
    for word in ("sk", "sk-ant-", "pat", "pat."):
        assert trie.fullmatch(word), word
    assert trie.search("a-sk-x") is not None
    assert trie.search("s-k p-a-t") is None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=string.ascii_lowercase + string.digits + "_.-:/=", max_size=12),
            st.sampled_from(GROUP_KEYS),
        ),
        max_size=8,
    )
)
def test_windowed_anchor_regex_agrees_with_substring_tests(parts: list[str]) -> None:
    low = "".join(parts)
    assert (_ANY_WINDOWED_ANCHOR.search(low) is not None) == any(k in low for k in GROUP_KEYS)


def test_keyword_lookups_are_memoised_and_exact():
    view = View("The Password is here; COOKIE jar")
    assert view.has_lower(b"pass")
    assert view.has_lower(b"cookie")
    assert not view.has_lower(b"token")
    assert view._present_lower == {b"pass": True, b"cookie": True, b"token": False}
