"""The bulk import's cheaper write-boundary checks give the full checks' answers.

The redaction shortcut for key = value keywords without a separator (the most common
case in tool output: "passed", "keys", "tokens") gives exactly what the full redaction
gives and never lets an assignment through; the worker's unrolled content check never
accepts a row the content rule refuses.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcripts.core.agents.prepare import _plainly_valid
from transcripts.core.content import check_content
from transcripts.core.redaction import patterns as P
from transcripts.core.redaction import prefilter, redact_text
from transcripts.core.redaction.patterns import assignments as A
from transcripts.core.redaction.views import _FULL_TEXT_BY_FAST

KEYWORDS = ["pass", "Password", "passwd", "PASSPHRASE", "pwd", "secret", "api_key", "Token"]
SEPARATORS = ["=", ": ", " = ", '"="', '\\":', "=>", ":=", "\t:\t", "'='"]
VALUES = ["Tr0ub4dor&3xyz", '"hunter2hunter2"', "'s3cr3tV4lue!'", "getpass()", "x"]
FILLER = st.text(
    alphabet=st.sampled_from(string.ascii_letters + string.digits + " _.-:=\"'\\\n\t…é"),
    max_size=30,
)
PIECES = st.one_of(
    FILLER, st.sampled_from(KEYWORDS), st.sampled_from(SEPARATORS), st.sampled_from(VALUES)
)


def full_redaction(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, int]]:
    """The per-literal engine (what runs without hyperscan): no scan, no shortcut."""
    with monkeypatch.context() as patched:
        patched.setattr(prefilter, "scan_text", lambda _text: None)
        return redact_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "5 passed in 0.3s; the keys and tokens are fine",
        "password = Tr0ub4dor&3xyz",
        'DB_PASSWORD: "Tr0ub4dor&3xyz"',
        '{\\"client_secret\\":\\"Tr0ub4dor&3xyz\\"}',
        "api_key =Tr0ub4dor&3xyz and tests passed",
        "token := 'aaaaaaaaaaaaaaaaaaaa-b'",
        "pwd\t=\tTr0ub4dor&3xyz",
    ],
)
def test_the_shortcut_answers_as_the_full_redaction(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert redact_text(text) == full_redaction(text, monkeypatch)


def test_prose_with_keywords_only_is_left_alone_by_the_shortcut() -> None:
    text = "5 passed in 0.3s; the keys and tokens are fine"
    found = prefilter.scan_text(text)
    assert found
    assert found <= prefilter.ASSIGNMENT_ONLY
    assert redact_text(text) == (text, {})


def test_the_shortcuts_keywords_gate_only_the_assignment_rules() -> None:
    """What the shortcut relies on: with no window (no windowed rule, no pass 2 or 3) and
    no other anchor, these keywords can open only the key = value rules and the command
    line's ``--password VALUE`` (whose blank the separator trigger also covers)."""
    kinds = set(A.ASSIGN_KEY_PARTS) | {"cli_password"}
    opened = {
        P.RULES[i].kind
        for fast, lower, rules in _FULL_TEXT_BY_FAST
        if lower and fast in prefilter.ASSIGNMENT_KEYWORDS
        for i in rules
    }
    assert opened == kinds
    assert all(
        prefilter.CASELESS[i - len(prefilter.EXACT)] in prefilter.ASSIGNMENT_KEYWORDS
        for i in prefilter.ASSIGNMENT_ONLY
    )
    assert prefilter.WINDOW_ID not in prefilter.ASSIGNMENT_ONLY


def test_a_command_line_password_flag_opens_the_full_redaction() -> None:
    for flag in ("--password", "--passwd", "--PASSWORD"):
        found = prefilter.scan_text(f"run {flag} Xy9kL2qR7") or frozenset()
        assert prefilter.ASSIGNMENT_SEP_ID in found, flag
        assert redact_text(f"run {flag} Xy9kL2qR7")[0] == f"run {flag} [REDACTED: credential]"


def test_every_assignment_keyword_opens_the_full_redaction() -> None:
    for kind, parts in A.ASSIGN_KEY_PARTS.items():
        for part, _owners in parts:
            literal = part.split("(?<")[0].replace("(?:word|wd|phrase)", "word")
            for sep in SEPARATORS:
                found = prefilter.scan_text(f"x {literal}{sep}v") or frozenset()
                assert prefilter.ASSIGNMENT_SEP_ID in found, (kind, sep)


@settings(max_examples=600, deadline=None)
@given(st.lists(PIECES, max_size=8))
def test_any_text_redacts_as_without_the_shortcut(parts: list[str]) -> None:
    text = "".join(parts)
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert redact_text(text) == full_redaction(text, monkeypatch)


SCALARS = st.one_of(
    st.text(alphabet=st.sampled_from("ab\x00é"), max_size=5),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True),
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["role", "content", "x\x00"]),
        st.one_of(SCALARS, st.dictionaries(st.text(max_size=3), SCALARS, max_size=3)),
        max_size=4,
    )
)
def test_the_bulk_content_check_never_passes_what_the_rule_refuses(row: dict[str, object]) -> None:
    """The worker's unrolled check of a converted row: True only where the rule agrees."""
    if _plainly_valid(row):
        check_content(row)  # raises ContentRejected on a row the rule refuses
