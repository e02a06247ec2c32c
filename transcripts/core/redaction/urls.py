"""Exfiltration URLs (reference §4.4): the per-URL verdict and one round over a text."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote_plus

from . import patterns as P
from .credentials import contains_fixed_credential, decodes_to_credential
from .report import RedactionReport, Span, apply_spans
from .views import View


def _is_safe_presigned(domain: str, query: str) -> bool:
    """A valid S3 presigned URL with only the standard, structurally valid parameters."""
    if not domain.endswith(".amazonaws.com"):
        return False
    pos = 0
    for part in P.S3_PRESIGNED_PARTS:  # the original's ``A.*B.*C.*D``, chained
        m = part.search(query, pos)
        if m is None:
            return False
        pos = m.end()
    params = parse_qs(query, keep_blank_values=True)
    if not P.S3_PRESIGNED_PARAMS.issuperset(params):
        return False
    for key, values in params.items():
        validator = P.S3_STRUCTURAL_VALIDATORS.get(key)
        for value in values:
            if validator is not None:
                if not validator.match(value):
                    return False
            elif P.EXFIL_PATTERNS_RE.search(value):
                return False
    return True


def _url_is_suspicious(
    domain: str, port: str, path_and_query: str, text_rules: tuple[int, ...]
) -> bool:
    """The original's per-URL verdict (reference §4.4).

    Apart from the presigned exemption, the checks are a plain OR, so the cheap ones
    run first. ``text_rules`` (the candidate rules of the text the URL sits in) limits
    the credential scan of the raw payload, which is a substring of that text. Decoded
    forms are new text and get every rule.
    """
    qmark = path_and_query.find("?")
    query = path_and_query[qmark + 1 :] if qmark != -1 else ""
    if query and _is_safe_presigned(domain, query):
        return False
    if P.EXFIL_PERCENT_RE.search(path_and_query):  # 21+ consecutive %XX octets
        return True
    if qmark != -1:
        heuristic_query = "" if domain.lower() in P.EXEMPT_EXACT_HOSTS else query
        if heuristic_query and (
            len(heuristic_query) >= P.EXFIL_QUERY_MIN_LEN
            or P.EXFIL_PATTERNS_RE.search(heuristic_query)
            or P.EXFIL_PATTERNS_RE.search(unquote_plus(heuristic_query))
        ):
            return True
    if P.HARD_CREDENTIAL_RE.search(path_and_query):
        return True
    payload = domain + port + path_and_query
    # Decode until stable, up to 3 rounds: a double-encoded payload survives one
    # round. A payload still decodable after the budget was never seen in plaintext,
    # so it is flagged.
    decoded = payload
    for _ in range(P.MAX_URL_DECODE_PASSES):
        nxt = unquote_plus(decoded)
        if nxt == decoded:
            break
        decoded = nxt
        if P.HARD_CREDENTIAL_RE.search(decoded) or contains_fixed_credential(View(decoded)):
            return True
    else:
        if unquote_plus(decoded) != decoded:
            return True
    if not text_rules:  # pass 1 cannot fire in a substring of this text: only pass 2 can
        return any(decodes_to_credential(m.group()) for m in P.B64_CHUNK_RE.finditer(payload))
    return contains_fixed_credential(View(payload), among=text_rules)


# Clean verdicts, keyed on (domain, port, path+query, host exempt). Transcripts repeat
# their links, and a verdict costs a credential scan. Only clean, short URLs are kept,
# so the cache never holds a URL that carries a secret. A full cache is cleared
# rather than evicted entry by entry: simpler, at the cost of a burst of re-checks.
_CLEAN_URLS: dict[tuple[str, str, str, bool], None] = {}
_CLEAN_URLS_MAX = 4096
_CLEAN_URL_MAX_LEN = 512


def exfil_round(text: str, view: View | None = None) -> tuple[str, RedactionReport]:
    if "://" not in text:
        return text, {}
    spans: list[Span] = []
    text_rules: tuple[int, ...] | None = None
    for m in P.URL_RE.finditer(text):
        domain, port, path_and_query = m.group(1), m.group(2) or "", m.group(3) or ""
        key = (domain, port, path_and_query, domain.lower() in P.EXEMPT_EXACT_HOSTS)
        if key in _CLEAN_URLS:
            continue
        if text_rules is None:
            text_rules = (view or View(text)).candidates()
        if _url_is_suspicious(domain, port, path_and_query, text_rules):
            spans.append((m.start(), m.end(), P.EXFIL_KIND, f"{P.EXFIL_TAG_PREFIX}{domain}]"))
        elif len(path_and_query) <= _CLEAN_URL_MAX_LEN:
            if len(_CLEAN_URLS) >= _CLEAN_URLS_MAX:
                _CLEAN_URLS.clear()
            _CLEAN_URLS[key] = None
    if not spans:
        return text, {}
    return apply_spans(text, spans)
