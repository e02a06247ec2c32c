"""Credential and exfiltration-URL redaction (pure: standard library only, no Django).

A port of the original's ``redact_credentials`` and ``redact_exfiltration_urls``
(reference §4.3 and §4.4), with current provider token formats added. It runs at the
transcript write boundary on every non-user row and revision patch
(:func:`redact_text`, :func:`redact_value`), and in the summaries app on model-written
payloads (:func:`redact_payload`). What counts as a secret lives in
:mod:`.patterns`; the other modules find and replace it fast, with a bounded worst
case.

Design, in the order a call meets it:

* **Prefilter** (:mod:`.prefilter`). One hyperscan scan of the text's UTF-8 bytes reports
  which fast-path triggers (below) occur; none means nothing to redact, with no view
  built. The store scans a row's ``meta`` as one JSON document the same way. The
  answers fill the view's memo, so the fast path below costs nothing more. Without
  hyperscan (another platform) the fast path runs as described.
* **Fast path** (:mod:`.views`). :func:`might_contain_secret` makes a handful of
  C-speed checks on a latin-1 view of the text (one byte per code point, so offsets
  match). It looks for the literals of ``FAST_PATH_ANCHORS`` (among them "://"),
  case-folded "authorization", and a run of 15+ token characters (a "window"). Plain
  prose fails every check and comes back unchanged, with no regex run.
* **Pass 1** (:mod:`.finders`, the pattern table) emulates the original's single
  alternation: the leftmost match wins, and on a tie the lower rule index wins. Only
  rules whose literal anchors occur are run, each separately, and
  :func:`credential_spans` merges their matches in the order the alternation would.
  Windowed rules scan only the windows (:class:`Windows`), which prose barely has.
  Some rules are validated (a match counts only if a predicate accepts it: Basic
  credentials decode to ``user:pass``, a Discord token's first segment to a user id),
  and the structured rules (key = value assignments, cookie headers, URI userinfo for
  any scheme) have their own finders (:mod:`.structured`). An assignment's span is its
  value, so the key stays readable.
* **Passes 2 and 3** (:mod:`.credentials`, :mod:`.bare_secret`: base64-encoded
  credentials; bare AWS secret keys) scan the original text's 40+ character runs. They
  skip anything an earlier pass already covers, as the original's ``result.replace``
  did.
* **Exfiltration URLs** (:mod:`.urls`). Each URL gets the original's verdict. Its
  credential checks run only the rules whose anchors occur in the whole text; a URL is
  a substring, so no other rule can match in it. Clean verdicts are cached.
* **Fixpoint** (:mod:`.rounds`). A replacement can change a neighbour's boundary: a tag
  ends in "]", which satisfies a look-behind the original character did not. So one
  round is not always idempotent, and every public entry point repeats its round until
  nothing matches. That is at most ``_MAX_ROUNDS`` rounds; in practice two when
  something was found, one otherwise.
* **Nested values** (:mod:`.recursive`): every string inside dicts, lists and tuples.

Worst case: no pattern backtracks catastrophically. The four places where the original
re-scans quadratically or worse (JWT, Telegram, PEM without END, the S3 presigned
regex) use linear finders that return the same matches. The pass-3 window slide is
incremental, so 1 MB inputs take well under a second (``bench/bench_redaction.py``).
"""

from __future__ import annotations

from .recursive import redact_payload, redact_value
from .report import RedactionReport, merge_reports
from .rounds import redact_credentials, redact_exfiltration_urls, redact_text

__all__ = [
    "RedactionReport",
    "merge_reports",
    "redact_credentials",
    "redact_exfiltration_urls",
    "redact_payload",
    "redact_text",
    "redact_value",
]
