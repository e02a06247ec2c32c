"""Every secret family the redaction package knows, as the summary tests paste them.

The families come from the package's rule table (``patterns.RULES``), each with the
positive sample the redaction tests keep for it (``tests/transcripts/test_redaction_rules.py``
checks that every rule has one), so a family added to the table is covered here without
an edit. A leak is looked for as any 10-character piece of the secret, in any case: a
cut that keeps part of a token, or a shaper that changes a letter's case, still shows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.transcripts.redaction_rule_samples import SAMPLES
from transcripts.core.redaction import patterns, redact_credentials, redact_text

PIECE = 10  # long enough that no prose or tag around a secret holds one by chance


def _removed(token: str) -> str:
    """The part of ``token`` the redactor replaces (its key name or header can stay)."""
    out, _ = redact_credentials(token)
    head = 0
    while head < min(len(token), len(out)) and token[head] == out[head]:
        head += 1
    tail = 0
    while tail < min(len(token), len(out)) - head and token[-1 - tail] == out[-1 - tail]:
        tail += 1
    return token[head : len(token) - tail]


@dataclass(frozen=True)
class Secret:
    kind: str
    case: str  # "as issued" or "capitalized" (first letter upper-cased, as a shaper does)
    token: str
    pieces: frozenset[str]  # lowercased PIECE-character pieces of the secret value

    @property
    def id(self) -> str:
        return f"{self.kind}-{self.case.replace(' ', '-')}"

    def leaks_into(self, text: str) -> list[str]:
        """The pieces of this secret found in ``text``, case-insensitively."""
        low = text.lower()
        return sorted(p for p in self.pieces if p in low)


def _secret(kind: str, case: str, token: str, issued: str) -> Secret:
    # Pieces of the value as issued (which the package finds): the capitalized variant
    # has the same pieces, lowercased, whether or not the package finds it too.
    value = _removed(issued)
    pieces = {
        value[i : i + PIECE].lower()
        for i in range(len(value) - PIECE + 1)
        if not any(c.isspace() for c in value[i : i + PIECE])
    }
    return Secret(kind, case, token, frozenset(pieces))


def all_secrets() -> list[Secret]:
    """Each family of the rule table, as issued and with its first letter capitalized."""
    out: list[Secret] = []
    for rule in patterns.RULES:
        token = SAMPLES[rule.kind][0]
        out.append(_secret(rule.kind, "as issued", token, token))
        capital = token[:1].upper() + token[1:]
        if capital != token:
            out.append(_secret(rule.kind, "capitalized", capital, token))
    return out


def user_turns(token: str) -> list[str]:
    """Four user turns that put ``token`` in every field the heuristic fills.

    Turn 1 starts the work (the title and initial intent) with the secret first; turn 2
    is a decision (progress) with it mid-sentence; turn 3 states standing facts
    (constraints): "always use token X", "the password is X", and a fact that starts with
    X, which the constraint shaper capitalizes; turn 4 is the open request (next steps),
    the secret last.
    """
    return [
        f"{token} is the deploy key for staging. Please fix the login redirect on staging with it.",
        f"We decided to keep /home as the target, with {token} in the header.",
        f"FYI: always use token {token} for staging, and the password is {token}. "
        f"{token} is the staging deploy key",
        f"Then update the deploy script to use {token}",
    ]


def package_misses(secret: Secret) -> bool:
    """The package itself does not find this secret in the turns: nothing downstream can
    be expected to (a gap of the pattern table, reported, not a summary leak)."""
    return any(secret.leaks_into(redact_text(turn)[0]) for turn in user_turns(secret.token))


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a decoded JSON value, keys included."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def json_text(raw: bytes | str) -> str:
    """The raw JSON and its decoded strings: an escaped character cannot hide a piece."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    return text + "\n" + "\n".join(strings_in(json.loads(text)))
