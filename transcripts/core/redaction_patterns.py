"""What counts as a secret, for :mod:`transcripts.core.redaction` (which finds and replaces it).

Every credential rule has a kind name, which is the key used in the value-free report.
It also has a priority: its index in :data:`RULES`. When two rules match at the same
position, the rule with the lower index wins, exactly as with the original's single
alternation.

Rules come in two groups. The engine relies on this split for speed and for its
worst-case bound:

* **windowed** rules. Every match lies inside one maximal run of :data:`WINDOW_CHARS`
  that is at least :data:`WINDOW_MIN_RUN` long, and every look-around class is a
  subset of :data:`WINDOW_CHARS`. The engine therefore scans only those runs, joined by
  a newline, instead of the whole text. Prose has almost none. A newline fails every
  look-around exactly as the real neighbour (a non-window character) would, so the
  matches are identical.
* **full-text** rules. These can contain spaces, quotes or short bodies (key=value,
  PEM, JWT, URI userinfo, Bearer headers), so they run on the whole text. Each one is
  gated by literal anchors that any match must contain.

Adding or widening a rule: keep its match inside the window class and at least
``WINDOW_MIN_RUN`` long, or make it full-text with anchors that are a strict necessary
condition. ``tests/transcripts/test_redaction.py`` checks both for every rule, and
checks that the engine's matches equal the original's single alternation.

Also here: the pass 2 and pass 3 run patterns with the original's thresholds and shape
predicates (bare AWS secret key), and the exfiltration-URL patterns (reference §4.4).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import string
from collections import Counter
from typing import Final, Literal, NamedTuple

CREDENTIAL_TAG: Final = "[REDACTED: credential]"
ENCODED_CREDENTIAL_TAG: Final = "[REDACTED: encoded credential]"
EXFIL_TAG_PREFIX: Final = "[REDACTED: suspicious URL to "

ENCODED_KIND: Final = "encoded_credential"
BARE_AWS_KIND: Final = "aws_secret_access_key_bare"
EXFIL_KIND: Final = "exfil_url"

# ── Windows ──────────────────────────────────────────────────────────────────
# The characters a windowed rule may match or look at. ':' and '/' are included so
# Telegram tokens and Slack webhook URLs stay local; the price is that URLs and paths
# become windows too, which only costs scan time on those spans.
WINDOW_CHARS: Final = string.ascii_letters + string.digits + "_.+/=:-"
# The shortest windowed match (a Slack ``xoxb-`` token with its 10-char floor) is 15.
WINDOW_MIN_RUN: Final = 15


class Rule(NamedTuple):
    """One credential rule of pass 1."""

    kind: str
    pattern: re.Pattern[str]
    # "regex": pattern.search; the others are linear-time finders in the engine that
    # reproduce the pattern's leftmost match without its quadratic re-scans.
    finder: Literal["regex", "pem", "jwt", "scheme"]
    windowed: bool
    # Literals of which every match contains at least one. The rule is skipped when
    # none of them occurs. A windowed rule without anchors runs whenever there are
    # windows. Windowed rules test them on the joined windows; full-text
    # rules test them on the text (with ``anchor_lower``: on its ASCII-lowercased
    # form). Tests check that each rule's positive examples contain an anchor.
    anchors: tuple[str, ...] = ()
    anchor_lower: bool = False
    # "scheme" finder only: every literal scheme the pattern's alternation accepts.
    schemes: tuple[str, ...] = ()


def _w(kind: str, pattern: str, *anchors: str) -> Rule:
    return Rule(kind, re.compile(pattern), "regex", True, anchors)


# The AWS key=value forms tolerate JSON quoting. The value stops at JSON delimiters
# so compact JSON ``{"aws_secret_access_key":"S","region":"x"}`` keeps its other fields.
_KV_VALUE = r"""["']?\s*[:=]\s*["']?[^\s"',}]+"""

PEM_HEADER_RE: Final = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")

# ``scheme://user:pass@``: the tail after "://" of both URI-credential rules.
USERINFO_TAIL: Final = r"[^\s:/@]*:[^\s/@]+@"

_DB_SCHEMES = (
    "postgres",
    "postgresql",
    "mysql",
    "mongodb",
    "mongodb+srv",
    "redis",
    "rediss",
    "amqp",
    "amqps",
)
_URL_SCHEMES = ("http", "https", "ftp", "ftps")

RULES: Final[tuple[Rule, ...]] = (
    # ── The original's table (reference §4.3), in its order ──
    # (?:AKIA|ASIA) spelled A[KS]IA: same language, and a literal first char lets the
    # regex engine skip ahead instead of trying a branch at every position.
    _w("aws_access_key_id", r"A[KS]IA[A-Z0-9]{16}", "AKIA", "ASIA"),
    Rule(
        "aws_secret_access_key",
        re.compile(r"(?:SecretAccessKey|aws_secret_access_key)" + _KV_VALUE),
        "regex",
        False,
        ("SecretAccessKey", "aws_secret_access_key"),
    ),
    Rule(
        "aws_session_token",
        re.compile(r"(?:SessionToken|aws_session_token)" + _KV_VALUE),
        "regex",
        False,
        ("SessionToken", "aws_session_token"),
    ),
    Rule(
        "aws_access_key_id_assignment",
        re.compile(r"(?:AccessKeyId|aws_access_key_id)" + _KV_VALUE),
        "regex",
        False,
        ("AccessKeyId", "aws_access_key_id"),
    ),
    # The whole PEM block, not just the header: header + lazy body to the first END
    # marker, or (no END anywhere after it) only the following lines that are base64,
    # Proc-Type: or DEK-Info:, crossing a single blank line before base64 (RFC 1421
    # encrypted keys). This is never end-of-string, so an inline header in prose keeps
    # the rest of the text. The engine's "pem" finder runs these three pieces with a
    # cached END search (PEM_HEADER_RE, PEM_END_RE, PEM_TRUNCATED_TAIL_RE).
    Rule(
        "private_key",
        PEM_HEADER_RE,
        "pem",
        False,
        ("-----BEGIN ",),
    ),
    _w("slack_token", r"xox[bpas]-[0-9a-zA-Z-]{10,}", "xox"),
    # The original is unanchored on the left. On a long digit run it retries from every
    # digit, which is quadratic (20 KB of digits takes 0.4 s; 1 MB takes minutes). Any
    # match that starts mid-run also matches from the run start, so a left boundary
    # finds the same tokens. If an earlier match ends inside the digit run, the
    # redaction fixpoint (second round) catches the token. The boundary is written
    # after the first digit, as ``(?<![0-9][0-9])``: the same language as a leading
    # ``(?<![0-9])``, but the pattern now starts with a character class, so the regex
    # engine skips non-digits in C. The same trick is used for every look-behind below.
    # No anchor: its only literal, ":", occurs in every timestamp and URL. The rule's
    # own search (digits first, skipped in C) is a cheap gate instead.
    _w("telegram_bot_token", r"[0-9](?<![0-9][0-9])[0-9]{5,}:[A-Za-z0-9_-]{30,}"),
    _w("github_token", r"gh[opsur]_[A-Za-z0-9]{30,255}", "gho_", "ghp_", "ghs_", "ghu_", "ghr_"),
    _w("github_fine_grained_pat", r"github_pat_[A-Za-z0-9_]{40,}", "github_pat_"),
    _w("gitlab_pat", r"glpat-[A-Za-z0-9_-]{16,}", "glpat-"),
    _w("stripe_secret_key", r"[rs]k_(?:live|test)_[A-Za-z0-9]{16,}", "k_live_", "k_test_"),
    _w("sendgrid_api_key", r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", "SG."),
    _w("openai_project_key", r"sk-proj-[A-Za-z0-9_-]{16,}", "sk-proj-"),
    # Before the generic sk-ant- rule so an admin key reports its own kind (same start,
    # lower index wins).
    _w("anthropic_admin_key", r"sk-ant-admin01-[A-Za-z0-9_-]{16,}", "sk-ant-admin01-"),
    _w("anthropic_api_key", r"sk-ant-[A-Za-z0-9_-]{16,}", "sk-ant-"),
    _w("npm_token", r"npm_[A-Za-z0-9]{24,}", "npm_"),
    _w("pypi_token", r"pypi-[A-Za-z0-9_-]{16,}", "pypi-"),
    _w("digitalocean_token", r"do[opr]_v1_[A-Za-z0-9]{40,}", "_v1_"),
    _w("google_oauth_client_secret", r"GOCSPX-[A-Za-z0-9_-]{20,}", "GOCSPX-"),
    # Redacts the ``scheme://user:pass@`` prefix, where the password lives. The user
    # part may be empty (MongoDB Atlas IAM ``mongodb+srv://:secret@``).
    Rule(
        "db_uri_credentials",
        re.compile(
            r"(?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis(?:s)?|amqp(?:s)?)://" + USERINFO_TAIL
        ),
        "scheme",
        False,
        ("://",),
        schemes=_DB_SCHEMES,
    ),
    # JWS (3 segments) / JWE (5 segments, empty key segment allowed). The engine's
    # "jwt" finder runs it as JWT_HEAD_RE + JWT_TAIL_RE: the literal pattern is
    # quadratic on one long run containing many "eyJ" (30 KB takes 3.6 s).
    Rule(
        "jwt",
        re.compile(r"eyJ[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*){2,4}"),
        "jwt",
        False,
        ("eyJ",),
    ),
    # The original's own 2-segment dashboard link token: payload.HMAC-SHA256 signature
    # (43 chars, unpadded base64url). It has boundaries on both sides, so identifiers
    # like ``eyJsonSerializer...`` do not match.
    _w(
        "link_token",
        r"eyJ(?<![A-Za-z0-9_.-]eyJ)[A-Za-z0-9_-]{96,}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])",
        "eyJ",
    ),
    # HTTP header names and the Bearer scheme are case-insensitive (RFC 9110, RFC 6750).
    # Case is folded for ASCII only, with explicit classes. A header name is an ASCII
    # token, and Unicode folding would let U+0131 (dotless i) match "i", which the
    # ASCII gate (lowercased bytes contain "authorization") would then miss.
    Rule(
        "bearer_header",
        re.compile(
            r"[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]"
            r"""["']?\s*[:=]\s*["']?"""
            r"[Bb][Ee][Aa][Rr][Ee][Rr]\s+[A-Za-z0-9._~+/-]+=*"
        ),
        "regex",
        False,
        ("authorization",),
        anchor_lower=True,
    ),
    # ── Extensions: current provider formats the original misses ──
    _w("openai_service_account_key", r"sk-svcacct-[A-Za-z0-9_-]{16,}", "sk-svcacct-"),
    _w("openai_admin_key", r"sk-admin-[A-Za-z0-9_-]{16,}", "sk-admin-"),
    # Legacy user keys: sk- + 48 alphanumerics with the "T3BlbkFJ" ("OpenAI" in base64)
    # marker in the middle. Without the marker, "sk-" + 48 chars is too generic.
    _w("openai_legacy_key", r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", "T3BlbkFJ"),
    _w("google_api_key", r"AIza[0-9A-Za-z_-]{35}", "AIza"),
    _w("google_oauth_access_token", r"ya29\.[0-9A-Za-z_-]{20,}", "ya29."),
    _w("gitlab_deploy_token", r"gldt-[A-Za-z0-9_-]{20,}", "gldt-"),
    _w("gitlab_runner_token", r"glrt-[A-Za-z0-9_-]{20,}", "glrt-"),
    _w("gitlab_pipeline_trigger_token", r"glptt-[A-Za-z0-9_-]{20,}", "glptt-"),
    _w("gitlab_oauth_app_secret", r"gloas-[A-Za-z0-9_-]{20,}", "gloas-"),
    # Hugging Face tokens are exactly 34 letters. The right boundary keeps a longer
    # identifier that happens to start with hf_ intact.
    _w("huggingface_token", r"hf_[A-Za-z]{34}(?![A-Za-z0-9])", "hf_"),
    _w("huggingface_org_token", r"api_org_[A-Za-z]{34}(?![A-Za-z0-9])", "api_org_"),
    _w("groq_api_key", r"gsk_[A-Za-z0-9]{48,}", "gsk_"),
    _w("xai_api_key", r"xai-[A-Za-z0-9]{70,}", "xai-"),
    # "r8_" is short, so require a left boundary ("var8_..." is not a token).
    _w("replicate_api_token", r"r8_(?<![A-Za-z0-9_]r8_)[A-Za-z0-9]{30,}", "r8_"),
    _w("perplexity_api_key", r"pplx-[A-Za-z0-9]{40,}", "pplx-"),
    _w("slack_app_token", r"xapp-[0-9]+-[A-Za-z0-9-]{20,}", "xapp-"),
    _w("slack_config_token", r"xoxe\.xox[a-z]-[0-9A-Za-z-]{20,}", "xoxe."),
    _w("slack_refresh_token", r"xoxe-[0-9]+-[0-9A-Za-z-]{20,}", "xoxe-"),
    _w(
        "slack_webhook_url",
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}",
        "://hooks.slack.com/",
    ),
    _w("stripe_webhook_secret", r"whsec_[A-Za-z0-9+/=]{24,}", "whsec_"),
    # Twilio API key SID: "SK" + exactly 32 hex. Without the boundaries, "TASK" + a
    # hex digest would match.
    _w("twilio_api_key", r"SK(?<![A-Za-z0-9]SK)[0-9a-fA-F]{32}(?![0-9a-fA-F])", "SK"),
    _w(
        "shopify_token",
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        "shpat_",
        "shpca_",
        "shppa_",
        "shpss_",
    ),
    _w("databricks_token", r"dapi[a-f0-9]{32}(?:-[0-9]+)?", "dapi"),
    _w("azure_storage_account_key", r"AccountKey=[A-Za-z0-9+/]{40,}={0,2}", "AccountKey="),
    _w("atlassian_api_token", r"ATATT3[A-Za-z0-9_=-]{150,}", "ATATT3"),
    _w("linear_api_key", r"lin_api_[A-Za-z0-9]{40}", "lin_api_"),
    _w("notion_token", r"ntn_[0-9]{11}[A-Za-z0-9]{32,}", "ntn_"),
    _w("hashicorp_vault_token", r"hv[sb]\.[A-Za-z0-9_-]{24,}", "hvs.", "hvb."),
    _w("tailscale_key", r"tskey-[A-Za-z0-9-]{20,}", "tskey-"),
    _w("supabase_token", r"sb(?:p_[a-f0-9]{40}|_secret_[A-Za-z0-9_-]{20,})", "sbp_", "sb_secret_"),
    _w("sentry_token", r"sntry[su]_[A-Za-z0-9+/=_-]{40,}", "sntrys_", "sntryu_"),
    _w(
        "grafana_token",
        r"gl(?:sa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|c_[A-Za-z0-9+/=]{32,})",
        "glsa_",
        "glc_",
    ),
    _w("postman_api_key", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", "PMAK-"),
    _w("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", "AGE-SECRET-KEY-1"),
    _w("onepassword_service_account_token", r"ops_eyJ[A-Za-z0-9+/=_-]{100,}", "ops_eyJ"),
    # URL userinfo is a credential wherever it appears. Same shape as the DB URI rule.
    # A port is never followed by "@" inside the authority, so this does not match
    # plain URLs.
    Rule(
        "url_credentials",
        re.compile(r"(?:https?|ftps?)://" + USERINFO_TAIL),
        "scheme",
        False,
        ("://",),
        schemes=_URL_SCHEMES,
    ),
    # .npmrc legacy tokens (UUID-shaped, no prefix). An env reference such as
    # ``${NPM_TOKEN}`` is not a secret.
    Rule(
        "npmrc_auth_token",
        re.compile(r"""_authToken\s*=\s*(?!\$)[^\s"',}]+"""),
        "regex",
        False,
        ("_authToken",),
    ),
)

WINDOWED_RULES: Final = tuple(i for i, r in enumerate(RULES) if r.windowed)
FULL_TEXT_RULES: Final = tuple(i for i, r in enumerate(RULES) if not r.windowed)

# The fast path's literals. Every full-text rule's match contains one of them, or
# contains a window run (≥ WINDOW_MIN_RUN window chars), which the fast path also
# checks. "SecretAccessKey" (15 chars) is such a run, for example; "AccessKeyId" (11)
# is not, so it is listed here. Tests check this for every full-text rule.
FAST_PATH_ANCHORS: Final = ("://", "eyJ", "-----BEGIN ", "Token", "AccessKeyId")
FAST_PATH_LOWER_ANCHORS: Final = ("authorization",)

# ── PEM pieces (the "pem" finder; the header is defined before RULES) ──
PEM_END_RE: Final = re.compile(r"-----END [A-Z ]*PRIVATE KEY-----")
PEM_TRUNCATED_TAIL_RE: Final = re.compile(
    r"(?:\r?\n(?:Proc-Type:[^\n]*|DEK-Info:[^\n]*|[A-Za-z0-9+/=]+(?=\r?\n|\Z)"
    r"|(?=\r?\n[A-Za-z0-9+/=])))*"
)

# ── JWT pieces (the "jwt" finder) ──
# The body before the first dot can contain no dot, so a possessive run loses nothing.
JWT_HEAD_RE: Final = re.compile(r"eyJ[A-Za-z0-9_-]*+")
JWT_TAIL_RE: Final = re.compile(r"(?:\.[A-Za-z0-9_-]*+){2,4}")

# ── Pass 2: base64-encoded credentials ──
# The original is unanchored. Because the run is greedy, every original match starts at
# a run start anyway. The look-behind only stops the engine from re-trying mid-run.
B64_CHUNK_RE: Final = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40,}={0,2}")

# ── Pass 3: bare 40-char AWS secret access key (entropy heuristic) ──
# Exact thresholds of the original (reference §4.3, pass 3).
BARE_SECRET_RUN_RE: Final = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40,}(?![A-Za-z0-9+/])")
SECRET_KEY_LEN: Final = 40
SECRET_ENTROPY_MIN: Final = 4.3
SECRET_MAX_LOWER_RUN: Final = 5
SECRET_MAX_VOWEL_RATIO: Final = 0.30
SECRET_PRINTABLE_DECODE_RATIO: Final = 0.85

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
    rf"|(?:SecretAccessKey|aws_secret_access_key){_KV_VALUE}"
    rf"|(?:SessionToken|aws_session_token){_KV_VALUE}"
    rf"|(?:AccessKeyId|aws_access_key_id){_KV_VALUE}"
    r"|(?:ssh-rsa|ssh-ed25519)[\s+%]"
    r"|BEGIN[\s+%](?:RSA|DSA|EC|OPENSSH)[\s+%]PRIVATE[\s+%]KEY"
    r"|xox[bpas]-[0-9a-zA-Z-]+"
    r")",
    re.IGNORECASE,
)

# Companion-supplied exact hosts (lowercase) that skip only the base64/length query
# heuristics. None by default. Fixed credentials, decoding and percent-encoding still
# apply to them.
EXEMPT_EXACT_HOSTS: Final[frozenset[str]] = frozenset()

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


# ── Pass 3 shape predicates (the original's exact gates) ────────────────────

HEX_CHARS: Final = "0123456789abcdefABCDEF"
VOWELS: Final = frozenset("aeiouAEIOU")
_PRINTABLE_BYTES = bytes([*range(0x20, 0x7F), 0x09, 0x0A, 0x0D])


def shannon_entropy(token: str) -> float:
    """Shannon entropy of ``token`` in bits per character (the original's formula)."""
    counts = Counter(token)
    length = len(token)
    return -sum((c / length) * math.log2(c / length) for c in counts.values())


def decodes_to_printable_text(token: str) -> bool:
    """Base64-decodes (lenient padding) to ≥ 85 % printable bytes: encoded text, not a key."""
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=False)
    except (binascii.Error, ValueError):
        return False
    if not raw:
        return False
    printable = len(raw) - len(raw.translate(None, _PRINTABLE_BYTES))
    return printable / len(raw) >= SECRET_PRINTABLE_DECODE_RATIO


def longest_lowercase_run(token: str) -> int:
    best = current = 0
    for ch in token:
        current = current + 1 if ch.islower() else 0
        best = max(best, current)
    return best


def vowel_ratio(token: str) -> float:
    """Fraction of the letters that are vowels (0.0 without letters)."""
    letters = [ch for ch in token if ch.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for ch in letters if ch in VOWELS) / len(letters)


def looks_like_secret_key(token: str) -> bool:
    """One 40-char window has the shape of a bare AWS secret access key.

    Every gate must pass, and the bias is toward not redacting. A key has lower, upper
    and digit characters; it is not all hex (a git SHA or digest); its entropy is at
    least 4.3 bits/char; it does not decode to printable text; it has no lowercase run
    longer than 5 and a vowel ratio of at most 0.30. The last two reject camelCase
    identifiers and mixed-case paths.
    """
    if len(token) != SECRET_KEY_LEN:
        return False
    if not (
        any(c.islower() for c in token)
        and any(c.isupper() for c in token)
        and any(c.isdigit() for c in token)
    ):
        return False
    if not token.strip(HEX_CHARS):
        return False
    if shannon_entropy(token) < SECRET_ENTROPY_MIN:
        return False
    if decodes_to_printable_text(token):
        return False
    return (
        longest_lowercase_run(token) <= SECRET_MAX_LOWER_RUN
        and vowel_ratio(token) <= SECRET_MAX_VOWEL_RATIO
    )
