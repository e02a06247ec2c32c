"""Exfiltration-URL patterns (reference §4.4): URLs, query signals, S3 presigned URLs.

The companion-supplied :data:`EXEMPT_EXACT_HOSTS
<transcripts.core.redaction.patterns.EXEMPT_EXACT_HOSTS>` lives in the package itself,
where it can be set.
"""

from __future__ import annotations

import re
from typing import Final

from .rule import KV_VALUE

# ── Exfiltration URLs (reference §4.4) ──
# Host: a DNS name with a letter TLD, a dotted IPv4 or a bracketed IPv6. Path and query
# start with "/" or "?" (``https://host?leak=...`` is scanned too).
URL_RE: Final = re.compile(
    r"https?://"
    r"("
    r"[a-zA-Z0-9._-]+\.[a-zA-Z]{2,}"
    r"|\d{1,3}(?:\.\d{1,3}){3}"
    r"|\[[0-9A-Fa-f:.]+\]"
    r")(:\d+)?([/?][^\s)\"'>]*)?"
)
EXFIL_QUERY_MIN_LEN: Final = 200
MAX_URL_DECODE_PASSES: Final = 3

# Signals in a query string, case-insensitive as in the original. The base64-run
# alternative cannot backtrack past 40 characters per start, so it stays linear.
EXFIL_PATTERNS_RE: Final = re.compile(
    r"(?:"
    r"[A-Za-z0-9+/=]{40,}"
    r"|%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2}){20,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|(?:ssh-rsa|ssh-ed25519)[\s+%]"
    r"|BEGIN[\s+%](?:RSA|DSA|EC|OPENSSH)[\s+%]PRIVATE[\s+%]KEY"
    r"|xox[bpas]-[0-9a-zA-Z-]+"
    r")",
    re.IGNORECASE,
)
# 21+ consecutive %XX octets. This check runs unconditionally, before the query-only
# heuristics.
EXFIL_PERCENT_RE: Final = re.compile(r"%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2}){20,}", re.IGNORECASE)
# Unambiguous markers, scanned over the whole path+query (a secret in the path counts).
HARD_CREDENTIAL_RE: Final = re.compile(
    r"(?:"
    r"(?:AKIA|ASIA)[A-Z0-9]{16}"
    rf"|(?:SecretAccessKey|aws_secret_access_key){KV_VALUE}"
    rf"|(?:SessionToken|aws_session_token){KV_VALUE}"
    rf"|(?:AccessKeyId|aws_access_key_id){KV_VALUE}"
    r"|(?:ssh-rsa|ssh-ed25519)[\s+%]"
    r"|BEGIN[\s+%](?:RSA|DSA|EC|OPENSSH)[\s+%]PRIVATE[\s+%]KEY"
    r"|xox[bpas]-[0-9a-zA-Z-]+"
    r")",
    re.IGNORECASE,
)


# S3 presigned URLs (reference §4.4). The original is one regex with three ``.*`` gaps
# between these four parts, which is cubic on a crafted query. The engine chains four
# leftmost searches instead. Each part has a single or minimal end, so the chain
# finds a match exactly when the regex does.
S3_PRESIGNED_PARTS: Final = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"X-Amz-Algorithm=AWS4-HMAC-SHA256",
        r"X-Amz-Credential=(?:AKIA|ASIA)[A-Z0-9]{16}(?:%2F|/)",
        r"X-Amz-Expires=\d",
        r"X-Amz-Signature=[0-9a-f]{64}",
    )
)
S3_PRESIGNED_PARAMS: Final = frozenset(
    {
        "X-Amz-Algorithm",
        "X-Amz-Credential",
        "X-Amz-Date",
        "X-Amz-Expires",
        "X-Amz-SignedHeaders",
        "X-Amz-Signature",
        "X-Amz-Security-Token",
    }
)
# Values that would otherwise trip EXFIL_PATTERNS_RE are validated structurally, not
# exempted, so no attacker data rides along.
S3_STRUCTURAL_VALIDATORS: Final[dict[str, re.Pattern[str]]] = {
    "X-Amz-Credential": re.compile(
        r"^(?:AKIA|ASIA)[A-Z0-9]{16}(?:%2F|/)[0-9]{8}"
        r"(?:%2F|/)[a-z0-9-]+(?:%2F|/)s3(?:%2F|/)aws4_request$"
    ),
    "X-Amz-Signature": re.compile(r"^[0-9a-f]{64}$"),
    "X-Amz-Security-Token": re.compile(r"^(?:FwoGZX|IQoJb3JpZ2lu)[A-Za-z0-9+/=%]{1,2000}$"),
}
