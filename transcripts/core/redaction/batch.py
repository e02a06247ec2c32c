"""Many short texts judged at once: would redaction leave every one of them unchanged?

An imported Claude Code row's ``meta`` holds the record's timestamp and the tool-use id
(``2026-03-27T11:11:15.533Z``, ``toolu_01QwqlIntmpxf0rfWCfPKPv8``). Both are runs of
window characters, so each trips the window trigger and runs the engine's pass 1 on its
own (~15-30 µs per string, several per row: more than the rest of a row's import).
:func:`all_unchanged` asks once for all of a file's such strings: one prefilter scan and
at most one pass 1 over them joined by newlines.

Why a clean answer for the joined text is a clean answer for each text (a "no" only
sends the caller back to text-by-text redaction, so only "yes" has to be sound):

* Triggers: every trigger of a text (a literal, a window run) occurs in the joined text,
  because a newline is neither a window character nor part of any literal. Nothing
  beyond the window and the key = value keywords (without the separator pattern) may
  occur: so no "://" (no exfiltration round, no URL rule), no other anchor.
* The key = value keywords open only the assignment rules, which need a separator
  (``prefilter.ASSIGNMENT_SEP_ID``): absent, they match nowhere (``rounds._redact``).
* Windowed rules match inside one window run, with look-arounds of window characters
  only (the engine's own invariant, :class:`.views.Windows`): a text's runs are runs of
  the joined text, with a newline or a string end beside them, which every such class
  fails alike. So their matches in the joined text are the union of each text's.
* Full-text rules opened by a window-only anchor (the AWS ``aws_secret_access_key``
  family) have no start/end anchors and no look-behind: a match in one text is a match
  at the same place of the joined text.
* Passes 2 and 3 need a 40+ character run and look at its neighbourhood
  (``is_base64_file``): any such run answers "no".
* Nothing found means no replacement, so the round is a fixpoint for every text.
"""

from __future__ import annotations

from . import prefilter
from .finders import credential_spans
from .views import View, might_contain_secret

_QUIET = prefilter.ASSIGNMENT_ONLY | {prefilter.WINDOW_ID}


def all_unchanged(texts: list[str]) -> bool:
    """True only if ``redact_text(t) == (t, {})`` for every ``t`` in ``texts``.

    False means "not known": redact them one by one. Without hyperscan it is always
    False (the per-text path is exact there too).
    """
    if not texts:
        return True
    joined = "\n".join(texts)
    triggers = prefilter.scan_text(joined)
    if triggers is None or not triggers <= _QUIET:
        return False
    if prefilter.WINDOW_ID not in triggers:
        return True  # keywords without a separator: no rule can match (rounds._redact)
    view = View(joined, triggers)
    if not might_contain_secret(view):
        return True
    win = view.windows
    if win is not None and win.long:
        return False  # passes 2 and 3 judge a long run by its neighbours: text by text
    return not credential_spans(view, first_only=True)
