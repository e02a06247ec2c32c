"""The original's credential table (reference §4.3), in its order, and its finder pieces.

These rules come first in :data:`RULES <transcripts.core.redaction.patterns.RULES>`, so
on a tie at the same position they win over the extensions (:mod:`.extended`).
"""

from __future__ import annotations

import re
from typing import Final

from .rule import KV_VALUE, USERINFO_TAIL, Rule, windowed_rule

PEM_HEADER_RE: Final = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")

# ── PEM pieces (the "pem" finder, after the header) ──
PEM_END_RE: Final = re.compile(r"-----END [A-Z ]*PRIVATE KEY-----")
PEM_TRUNCATED_TAIL_RE: Final = re.compile(
    r"(?:\r?\n(?:Proc-Type:[^\n]*|DEK-Info:[^\n]*|[A-Za-z0-9+/=]+(?=\r?\n|\Z)"
    r"|(?=\r?\n[A-Za-z0-9+/=])))*"
)

# ── JWT pieces (the "jwt" finder) ──
# The body before the first dot can contain no dot, so a possessive run loses nothing.
# "EyJ": a JWT whose first letter a summarizer capitalised is still the same token.
JWT_HEAD_RE: Final = re.compile(r"[eE]yJ[A-Za-z0-9_-]*+")
JWT_TAIL_RE: Final = re.compile(r"(?:\.[A-Za-z0-9_-]*+){2,4}")

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

ORIGINAL_RULES: Final[tuple[Rule, ...]] = (
    # ── The original's table (reference §4.3), in its order ──
    # (?:AKIA|ASIA) spelled A[KS]IA: same language, and a literal first char lets the
    # regex engine skip ahead instead of trying a branch at every position.
    windowed_rule("aws_access_key_id", r"A[KS]IA[A-Z0-9]{16}", "AKIA", "ASIA"),
    Rule(
        "aws_secret_access_key",
        re.compile(r"(?:SecretAccessKey|aws_secret_access_key)" + KV_VALUE),
        "regex",
        False,
        ("SecretAccessKey", "aws_secret_access_key"),
    ),
    Rule(
        "aws_session_token",
        re.compile(r"(?:SessionToken|aws_session_token)" + KV_VALUE),
        "regex",
        False,
        ("SessionToken", "aws_session_token"),
    ),
    Rule(
        "aws_access_key_id_assignment",
        re.compile(r"(?:AccessKeyId|aws_access_key_id)" + KV_VALUE),
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
    windowed_rule("slack_token", r"xox[bpas]-[0-9a-zA-Z-]{10,}", "xox"),
    # The original is unanchored on the left. On a long digit run it retries from every
    # digit, which is quadratic (20 KB of digits takes 0.4 s; 1 MB takes minutes). Any
    # match that starts mid-run also matches from the run start, so a left boundary
    # finds the same tokens. If an earlier match ends inside the digit run, the
    # redaction fixpoint (second round) catches the token. The boundary is written
    # after the first digit, as ``(?<![0-9][0-9])``: the same language as a leading
    # ``(?<![0-9])``, but the pattern now starts with a character class, so the regex
    # engine skips non-digits in C. The same trick is used for every look-behind below.
    # No anchor: its only literal, ":", occurs in every timestamp and URL. The rule's
    # own search (digits first, skipped in C) would run on every row with windows; the
    # gate (":" and the 30-char secret) rules out timestamps and URLs first.
    windowed_rule(
        "telegram_bot_token",
        r"[0-9](?<![0-9][0-9])[0-9]{5,}:[A-Za-z0-9_-]{30,}",
        gate=r":[A-Za-z0-9_-]{30}",
    ),
    windowed_rule(
        "github_token", r"gh[opsur]_[A-Za-z0-9]{30,255}", "gho_", "ghp_", "ghs_", "ghu_", "ghr_"
    ),
    windowed_rule("github_fine_grained_pat", r"github_pat_[A-Za-z0-9_]{40,}", "github_pat_"),
    windowed_rule("gitlab_pat", r"glpat-[A-Za-z0-9_-]{16,}", "glpat-"),
    windowed_rule(
        "stripe_secret_key", r"[rs]k_(?:live|test)_[A-Za-z0-9]{16,}", "k_live_", "k_test_"
    ),
    windowed_rule("sendgrid_api_key", r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", "SG."),
    windowed_rule("openai_project_key", r"sk-proj-[A-Za-z0-9_-]{16,}", "sk-proj-"),
    # Before the generic sk-ant- rule so an admin key reports its own kind (same start,
    # lower index wins).
    windowed_rule("anthropic_admin_key", r"sk-ant-admin01-[A-Za-z0-9_-]{16,}", "sk-ant-admin01-"),
    windowed_rule("anthropic_api_key", r"sk-ant-[A-Za-z0-9_-]{16,}", "sk-ant-"),
    windowed_rule("npm_token", r"npm_[A-Za-z0-9]{24,}", "npm_"),
    windowed_rule("pypi_token", r"pypi-[A-Za-z0-9_-]{16,}", "pypi-"),
    windowed_rule("digitalocean_token", r"do[opr]_v1_[A-Za-z0-9]{40,}", "_v1_"),
    windowed_rule("google_oauth_client_secret", r"GOCSPX-[A-Za-z0-9_-]{20,}", "GOCSPX-"),
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
        re.compile(r"[eE]yJ[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*){2,4}"),
        "jwt",
        False,
        ("eyJ", "EyJ"),
    ),
    # The original's own 2-segment dashboard link token: payload.HMAC-SHA256 signature
    # (43 chars, unpadded base64url). It has boundaries on both sides, so identifiers
    # like ``eyJsonSerializer...`` do not match.
    windowed_rule(
        "link_token",
        r"eyJ(?<![A-Za-z0-9_.-]eyJ)[A-Za-z0-9_-]{96,}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])",
        "eyJ",
        capital=False,
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
)
