"""Secrets never reach a summarizer (issue 11, item 1), at the pure core.

Extraction redacts every kept row, user rows included, and before it caps or excerpts: a cut must not leave
half a secret that no pattern matches. The stored one-liner is redacted around its cut,
and whatever the pass adds to the payload is sealed too.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from summaries.core.extract import extract_turns
from summaries.core.intents import Intent, StoredSummary, SummaryPayload
from summaries.core.payload import clip_sealed, normalize_payload, seal_model, seal_payload
from summaries.core.transcript_turn import TranscriptTurn
from summaries.services import one_line_gist
from tests.summaries.secret_samples import Secret, all_secrets, package_misses

SECRETS = [s for s in all_secrets() if not package_misses(s)]
GITHUB = next(s for s in SECRETS if s.kind == "github_token" and s.case == "as issued")


def rows_with(token: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"{token} is the key. Use token {token} for it", "ts": "t1"},
        {"role": "assistant", "content": f"I will use {token}, as you said.", "ts": "t2"},
        {"role": "user", "content": f"[system] the key is {token}", "ts": "t3"},  # injected
        {"role": "merged_summary", "content": f"The fork stored {token}", "ts": "t4"},
    ]


def leaks(secret: Secret, turns: list[TranscriptTurn]) -> list[str]:
    return secret.leaks_into("\n".join(t.text for t in turns))


@pytest.mark.parametrize("secret", SECRETS, ids=lambda s: s.id)
def test_every_kept_row_is_redacted(secret: Secret) -> None:
    turns = extract_turns(rows_with(secret.token))
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"]
    assert leaks(secret, turns) == []
    assert all("[REDACTED" in t.text for t in turns)


def test_a_secret_across_the_user_cap_leaves_no_piece() -> None:
    # The cap falls 12 characters into the token: cut first, "ghp_" + 8 characters would
    # be left, which no pattern matches.
    content = "x " * 1994 + GITHUB.token + " and more"
    (turn,) = extract_turns([{"role": "user", "content": content}], max_user_chars=4000)
    assert turn.truncated
    assert leaks(GITHUB, [turn]) == []
    assert len(turn.text) <= 4000


def test_a_secret_across_the_assistant_excerpt_leaves_no_piece() -> None:
    # A row written before the store redacted, or imported: the excerpt's head ends
    # inside the token.
    content = "y " * 194 + GITHUB.token + " " + "z " * 600
    (turn,) = extract_turns(
        [{"role": "assistant", "content": content}], assistant_excerpt_chars=400
    )
    assert turn.truncated
    assert leaks(GITHUB, [turn]) == []


def test_two_different_pasted_tokens_are_not_a_resend() -> None:
    """Both redact to the same tag; the resend check still compares what was typed."""
    other = next(s for s in SECRETS if s.kind == "github_token" and s.case == "capitalized")
    turns = extract_turns(
        [
            {"role": "user", "content": f"use token {GITHUB.token}"},
            {"role": "user", "content": f"use token {other.token}"},
            {"role": "user", "content": f"use token {other.token}"},
        ]
    )
    assert turns[0].text == turns[1].text  # the same tag
    assert [t.repeat_of for t in turns] == [None, None, 2]


def test_the_gist_never_keeps_half_a_secret() -> None:
    # 390 characters, then the token: a plain [:400] keeps "ghp_" + 6 of it, which no
    # pattern knows; the gist is redacted before its cut.
    payload = SummaryPayload(intents=[Intent(title="word " * 78 + GITHUB.token, state="done")])
    gist = one_line_gist(payload)
    assert GITHUB.leaks_into(gist) == []
    assert GITHUB.token[:8] not in gist
    assert len(gist) <= 400


def test_clip_sealed_cuts_between_tokens_and_redacts_both_sides() -> None:
    text = "alpha beta " + GITHUB.token + " gamma"
    assert clip_sealed(text, 12) == "alpha beta"  # never half a word
    assert clip_sealed(text, 200) == "alpha beta [REDACTED: credential] gamma"
    assert clip_sealed("x" * 50, 10) == "x" * 10  # one giant token: cut hard
    assert clip_sealed(text, 0) == ""
    cut = clip_sealed("note " + GITHUB.token, 30)
    assert GITHUB.leaks_into(cut) == []
    assert GITHUB.token[:8] not in cut


def test_seal_payload_redacts_what_the_pass_adds() -> None:
    shaped = normalize_payload({"intents": [{"title": "Ship it"}]})
    assert shaped is not None
    payload = StoredSummary(
        intents=shaped.intents, last_activity=GITHUB.token, model="heuristic", user_turns=2
    )
    sealed = seal_model(payload)
    assert isinstance(sealed, StoredSummary)
    assert GITHUB.leaks_into(sealed.model_dump_json()) == []
    assert sealed.intents == payload.intents
    assert sealed.user_turns == 2
    raw = seal_payload(payload.model_dump(mode="json"))  # the dict form seals alike
    assert GITHUB.leaks_into(orjson.dumps(raw).decode()) == []
