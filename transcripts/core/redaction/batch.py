"""Many short texts judged at once: would redaction leave every one of them unchanged?

An imported row's ``meta`` holds a timestamp and a tool-use id, each a window run that
runs pass 1 on its own (~15-30 µs per string, more than the rest of a row's import).
:func:`all_unchanged` asks once for all of them: one prefilter scan and at most one
pass 1 over them joined by newlines. Only "yes" must be sound ("no" sends the caller
back to text by text), and a clean joined text is clean for each text because:

* every trigger of a text occurs in the joined text (a newline is in no literal and no
  window); only the window and the key = value keywords without a separator (which
  open nothing, ``redaction._redact``) are allowed, so no URL and no other anchor;
* windowed rules match inside one run, with look-arounds of window characters only
  (:class:`.views.Windows`), which a newline or a string end fails alike; full-text
  rules opened by a window-only anchor (``aws_secret_access_key``) have no line
  anchors or look-behind: a match in one text is a match in the joined text;
* passes 2 and 3 look at a 40+ run's neighbourhood (``is_base64_file``): any such run
  answers "no";
* nothing found means no replacement, so the round is a fixpoint for every text.
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
        return True  # keywords without a separator: no rule can match (redaction._redact)
    view = View(joined, triggers)
    if not might_contain_secret(view):
        return True
    win = view.windows
    if win is not None and win.long:
        return False  # passes 2 and 3 judge a long run by its neighbours: text by text
    return not credential_spans(view, first_only=True)
