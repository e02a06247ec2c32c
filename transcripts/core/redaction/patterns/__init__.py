"""What counts as a secret: pass 1's rule table, passes 2-3 shapes, exfiltration URLs.

A rule's kind names it in the value-free report; its index in :data:`RULES` is its
priority (on a tie at one position the lower index wins, as in the original's single
alternation). Order: the original's table (reference §4.3), current provider formats,
gitleaks' vendor formats, then the structured rules (:mod:`.assignments`).

* **windowed** rules: every match lies inside one maximal run of :data:`WINDOW_CHARS`
  at least :data:`WINDOW_MIN_RUN` long, and every look-around class is a subset of
  :data:`WINDOW_CHARS`. The engine scans only those runs joined by newlines (a newline
  fails every look-around as the real non-window neighbour would).
* **full-text** rules (spaces, quotes, short bodies: key=value, PEM, JWT, URI userinfo,
  headers) run on the whole text, gated by literal anchors every match contains.

A new or wider rule keeps one of these two contracts; ``tests/transcripts/
test_redaction_rules.py`` checks both for every rule, and ``test_redaction_finders.py``
that the engine's matches equal the original's single alternation.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import string
from collections import Counter
from collections.abc import Callable
from typing import Final, Literal, NamedTuple

from . import assignments as A

CREDENTIAL_TAG: Final = "[REDACTED: credential]"
ENCODED_CREDENTIAL_TAG: Final = "[REDACTED: encoded credential]"
EXFIL_TAG_PREFIX: Final = "[REDACTED: suspicious URL to "

ENCODED_KIND: Final = "encoded_credential"
BARE_AWS_KIND: Final = "aws_secret_access_key_bare"
EXFIL_KIND: Final = "exfil_url"

# ':' and '/' are window characters so Telegram tokens and Slack webhook URLs stay local;
# the price is that URLs and paths become windows too, which only costs scan time.
WINDOW_CHARS: Final = string.ascii_letters + string.digits + "_.+/=:-"
# The shortest windowed match (a Slack ``xoxb-`` token with its 10-char floor) is 15.
WINDOW_MIN_RUN: Final = 15


class Rule(NamedTuple):
    """One credential rule of pass 1."""

    kind: str
    pattern: re.Pattern[str]
    # "regex": pattern.search. The others are linear finders in the engine that give the
    # pattern's leftmost match without its quadratic re-scans ("pgp" is the PEM finder
    # with PGP armour lines; "assign", "cookie", "anyscheme", "cli" read structured values).
    finder: Literal[
        "regex", "pem", "pgp", "jwt", "scheme", "assign", "cookie", "anyscheme", "cli"
    ] = "regex"
    windowed: bool = False
    # Literals every match contains; the rule is skipped when none occurs (windowed:
    # in the joined windows; full-text: in the text, or with ``anchor_lower`` in its
    # ASCII-lowercased form). A windowed rule without anchors runs whenever there are
    # windows and its ``gate`` finds something.
    anchors: tuple[str, ...] = ()
    anchor_lower: bool = False
    # "scheme" finder only: every literal scheme the pattern's alternation accepts.
    schemes: tuple[str, ...] = ()
    # A match counts only if this accepts its text; a rejected match resumes the search
    # one character later (the pattern's language minus the rejected strings).
    validate: Callable[[str], bool] | None = None
    # Unanchored windowed rules: a pattern every match contains, literal first, for
    # when the only literal (":", ".", "-") is too common to rule anything out.
    gate: re.Pattern[str] | None = None


def windowed_rule(
    kind: str,
    pattern: str,
    anchors: str = "",
    *,
    capital: bool = True,
    validate: Callable[[str], bool] | None = None,
    gate: str | None = None,
) -> Rule:
    """A windowed regex rule; ``anchors`` are separated by blanks.

    ``capital``: a pattern starting with a lowercase ASCII letter also accepts it
    capitalised, and each such anchor gets its capitalised twin. Summarizers and
    editors capitalise a line's first letter (``Ghp_…``) and the token stays live; only
    that letter folds, so no new shape of ordinary text is admitted. Patterns whose
    look-behind repeats the prefix pass ``capital=False``.
    """
    words = tuple(anchors.split())
    first = pattern[:1]
    if capital and first.isascii() and first.islower():
        pattern = f"[{first}{first.upper()}]{pattern[1:]}"
        words += tuple(a[0].upper() + a[1:] for a in words if a[:1].islower())
    return Rule(
        kind,
        re.compile(pattern),
        "regex",
        True,
        words,
        validate=validate,
        gate=None if gate is None else re.compile(gate),
    )


# The AWS key=value forms tolerate JSON quoting; the value stops at JSON delimiters so
# compact JSON ``{"aws_secret_access_key":"S","region":"x"}`` keeps its other fields.
KV_VALUE = r"""["']?\s*[:=]\s*["']?[^\s"',}]+"""
# kind, CamelCase key, snake_case key.
_AWS_KV = (
    ("aws_secret_access_key", "SecretAccessKey", "aws_secret_access_key"),
    ("aws_session_token", "SessionToken", "aws_session_token"),
    ("aws_access_key_id_assignment", "AccessKeyId", "aws_access_key_id"),
)
_AKIA = r"(?:AKIA|ASIA)[A-Z0-9]{16}"

# ``scheme://user:pass@``: the tail after "://" of both URI-credential rules.
USERINFO_TAIL: Final = r"[^\s:/@]*:[^\s/@]+@"
_DB_SCHEMES = (
    *("postgres", "postgresql", "mysql", "mongodb", "mongodb+srv"),
    *("redis", "rediss", "amqp", "amqps"),
)
_URL_SCHEMES = ("http", "https", "ftp", "ftps")

PEM_HEADER_RE: Final = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
PEM_END_RE: Final = re.compile(r"-----END [A-Z ]*PRIVATE KEY-----")
PEM_TRUNCATED_TAIL_RE: Final = re.compile(
    r"(?:\r?\n(?:Proc-Type:[^\n]*|DEK-Info:[^\n]*|[A-Za-z0-9+/=]+(?=\r?\n|\Z)"
    r"|(?=\r?\n[A-Za-z0-9+/=])))*"
)
PGP_HEADER_RE: Final = re.compile(r"-----BEGIN PGP PRIVATE KEY BLOCK-----")
PGP_END_RE: Final = re.compile(r"-----END PGP PRIVATE KEY BLOCK-----")
# Without an END marker: the armour header lines, base64 lines and the "=" checksum
# line that follow, crossing one blank line (the armour's header separator).
PGP_TRUNCATED_TAIL_RE: Final = re.compile(
    r"(?:\r?\n(?:(?:Version|Comment|Hash|Charset|MessageID):[^\n]*"
    r"|[A-Za-z0-9+/=]+(?=\r?\n|\Z)|(?=\r?\n[A-Za-z0-9+/=])))*"
)
# The "jwt" finder's pieces. The body before the first dot holds no dot, so a possessive
# run loses nothing. "EyJ": a JWT whose first letter a summarizer capitalised.
JWT_HEAD_RE: Final = re.compile(r"[eE]yJ[A-Za-z0-9_-]*+")
JWT_TAIL_RE: Final = re.compile(r"(?:\.[A-Za-z0-9_-]*+){2,4}")

# HTTP header names and auth schemes are case-insensitive (RFC 9110, RFC 6750), folded
# for ASCII only: Unicode folding would let U+0131 (dotless i) match "i", which the
# ASCII gate (lowercased bytes contain "authorization") would then miss.
_AUTHORIZATION = r"""[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]["']?\s*[:=]\s*["']?"""


def _discord_user_id_segment(token: str) -> bool:
    """The first segment of a Discord bot token is base64 of the bot's numeric user id:
    a dotted identifier chain of the same lengths does not decode to 17-20 digits."""
    head = token.split(".", 1)[0]
    try:
        raw = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return 17 <= len(raw) <= 20 and raw.isdigit()


_ORIGINAL_RULES: Final[tuple[Rule, ...]] = (
    # (?:AKIA|ASIA) spelled A[KS]IA: a literal first char lets re skip ahead in C.
    windowed_rule("aws_access_key_id", r"A[KS]IA[A-Z0-9]{16}", "AKIA ASIA"),
    *(
        Rule(kind, re.compile(f"(?:{camel}|{snake})" + KV_VALUE), anchors=(camel, snake))
        for kind, camel, snake in _AWS_KV
    ),
    # The whole PEM block: header + lazy body to the first END marker, or (no END after
    # it) the following base64, Proc-Type: or DEK-Info: lines, crossing one blank line
    # (RFC 1421 encrypted keys). Never end-of-string, so an inline header in prose keeps
    # the rest of the text. The "pem" finder runs the three pieces above.
    Rule("private_key", PEM_HEADER_RE, "pem", anchors=("-----BEGIN ",)),
    windowed_rule("slack_token", r"xox[bpas]-[0-9a-zA-Z-]{10,}", "xox"),
    # The original is unanchored on the left, quadratic on a long digit run (1 MB takes
    # minutes). A match starting mid-run also matches from the run start, so a left
    # boundary finds the same tokens (one ending inside the run is caught by the second
    # round). Written after the first digit, ``[0-9](?<![0-9][0-9])``, the pattern
    # starts with a class that re skips in C; the same trick serves every look-behind
    # below. Gated, not anchored: its only literal, ":", is in every timestamp and URL.
    windowed_rule(
        "telegram_bot_token",
        r"[0-9](?<![0-9][0-9])[0-9]{5,}:[A-Za-z0-9_-]{30,}",
        gate=r":[A-Za-z0-9_-]{30}",
    ),
    windowed_rule("github_token", r"gh[opsur]_[A-Za-z0-9]{30,255}", "gho_ ghp_ ghs_ ghu_ ghr_"),
    windowed_rule("github_fine_grained_pat", r"github_pat_[A-Za-z0-9_]{40,}", "github_pat_"),
    windowed_rule("gitlab_pat", r"glpat-[A-Za-z0-9_-]{16,}", "glpat-"),
    windowed_rule("stripe_secret_key", r"[rs]k_(?:live|test)_[A-Za-z0-9]{16,}", "k_live_ k_test_"),
    windowed_rule("sendgrid_api_key", r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", "SG."),
    windowed_rule("openai_project_key", r"sk-proj-[A-Za-z0-9_-]{16,}", "sk-proj-"),
    # Before sk-ant-: an admin key reports its own kind (same start, lower index wins).
    windowed_rule("anthropic_admin_key", r"sk-ant-admin01-[A-Za-z0-9_-]{16,}", "sk-ant-admin01-"),
    windowed_rule("anthropic_api_key", r"sk-ant-[A-Za-z0-9_-]{16,}", "sk-ant-"),
    windowed_rule("npm_token", r"npm_[A-Za-z0-9]{24,}", "npm_"),
    windowed_rule("pypi_token", r"pypi-[A-Za-z0-9_-]{16,}", "pypi-"),
    windowed_rule("digitalocean_token", r"do[opr]_v1_[A-Za-z0-9]{40,}", "_v1_"),
    windowed_rule("google_oauth_client_secret", r"GOCSPX-[A-Za-z0-9_-]{20,}", "GOCSPX-"),
    # The ``scheme://user:pass@`` prefix; the user may be empty (``mongodb+srv://:pw@``).
    Rule(
        "db_uri_credentials",
        re.compile(
            r"(?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis(?:s)?|amqp(?:s)?)://" + USERINFO_TAIL
        ),
        "scheme",
        anchors=("://",),
        schemes=_DB_SCHEMES,
    ),
    # JWS (3 segments) / JWE (5, empty key segment allowed). The literal pattern is
    # quadratic on one run of many "eyJ" (30 KB: 3.6 s); the "jwt" finder is not.
    Rule(
        "jwt",
        re.compile(r"[eE]yJ[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*){2,4}"),
        "jwt",
        anchors=("eyJ", "EyJ"),
    ),
    # The original's 2-segment dashboard link token (payload.HMAC-SHA256, 43 chars
    # base64url), bounded on both sides so ``eyJsonSerializer...`` does not match.
    windowed_rule(
        "link_token",
        r"eyJ(?<![A-Za-z0-9_.-]eyJ)[A-Za-z0-9_-]{96,}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])",
        "eyJ",
        capital=False,
    ),
    Rule(
        "bearer_header",
        re.compile(_AUTHORIZATION + r"[Bb][Ee][Aa][Rr][Ee][Rr]\s+[A-Za-z0-9._~+/-]+=*"),
        anchors=("authorization",),
        anchor_lower=True,
    ),
)

# Current provider formats the original misses (an original rule wins a tie).
_EXTENDED_RULES: Final[tuple[Rule, ...]] = (
    windowed_rule("openai_service_account_key", r"sk-svcacct-[A-Za-z0-9_-]{16,}", "sk-svcacct-"),
    windowed_rule("openai_admin_key", r"sk-admin-[A-Za-z0-9_-]{16,}", "sk-admin-"),
    # Legacy user keys: "T3BlbkFJ" ("OpenAI" in base64) mid-key; without it, "sk-" + 48
    # chars is too generic.
    windowed_rule("openai_legacy_key", r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", "T3BlbkFJ"),
    windowed_rule("google_api_key", r"AIza[0-9A-Za-z_-]{35}", "AIza"),
    windowed_rule("google_oauth_access_token", r"ya29\.[0-9A-Za-z_-]{20,}", "ya29."),
    windowed_rule("gitlab_deploy_token", r"gldt-[A-Za-z0-9_-]{20,}", "gldt-"),
    windowed_rule("gitlab_runner_token", r"glrt-[A-Za-z0-9_-]{20,}", "glrt-"),
    windowed_rule("gitlab_pipeline_trigger_token", r"glptt-[A-Za-z0-9_-]{20,}", "glptt-"),
    windowed_rule("gitlab_oauth_app_secret", r"gloas-[A-Za-z0-9_-]{20,}", "gloas-"),
    # Exactly 34 letters; the right boundary keeps a longer identifier intact.
    windowed_rule("huggingface_token", r"hf_[A-Za-z]{34}(?![A-Za-z0-9])", "hf_"),
    windowed_rule("huggingface_org_token", r"api_org_[A-Za-z]{34}(?![A-Za-z0-9])", "api_org_"),
    windowed_rule("groq_api_key", r"gsk_[A-Za-z0-9]{48,}", "gsk_"),
    windowed_rule("xai_api_key", r"xai-[A-Za-z0-9]{70,}", "xai-"),
    # "r8_" is short: a left boundary ("var8_..." is not a token).
    windowed_rule(
        "replicate_api_token", r"r8_(?<![A-Za-z0-9_]r8_)[A-Za-z0-9]{30,}", "r8_", capital=False
    ),
    windowed_rule("perplexity_api_key", r"pplx-[A-Za-z0-9]{40,}", "pplx-"),
    windowed_rule("slack_app_token", r"xapp-[0-9]+-[A-Za-z0-9-]{20,}", "xapp-"),
    windowed_rule("slack_config_token", r"xoxe\.xox[a-z]-[0-9A-Za-z-]{20,}", "xoxe."),
    windowed_rule("slack_refresh_token", r"xoxe-[0-9]+-[0-9A-Za-z-]{20,}", "xoxe-"),
    windowed_rule(
        "slack_webhook_url",
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}",
        "://hooks.slack.com/",
    ),
    windowed_rule("stripe_webhook_secret", r"whsec_[A-Za-z0-9+/=]{24,}", "whsec_"),
    # "SK" + exactly 32 hex; without the boundaries "TASK" + a hex digest would match.
    windowed_rule("twilio_api_key", r"SK(?<![A-Za-z0-9]SK)[0-9a-fA-F]{32}(?![0-9a-fA-F])", "SK"),
    windowed_rule(
        "shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", "shpat_ shpca_ shppa_ shpss_"
    ),
    windowed_rule("databricks_token", r"dapi[a-f0-9]{32}(?:-[0-9]+)?", "dapi"),
    windowed_rule(
        "azure_storage_account_key", r"AccountKey=[A-Za-z0-9+/]{40,}={0,2}", "AccountKey="
    ),
    windowed_rule("atlassian_api_token", r"ATATT3[A-Za-z0-9_=-]{150,}", "ATATT3"),
    windowed_rule("linear_api_key", r"lin_api_[A-Za-z0-9]{40}", "lin_api_"),
    windowed_rule("notion_token", r"ntn_[0-9]{11}[A-Za-z0-9]{32,}", "ntn_"),
    windowed_rule("hashicorp_vault_token", r"hv[sb]\.[A-Za-z0-9_-]{24,}", "hvs. hvb."),
    windowed_rule("tailscale_key", r"tskey-[A-Za-z0-9-]{20,}", "tskey-"),
    windowed_rule(
        "supabase_token", r"sb(?:p_[a-f0-9]{40}|_secret_[A-Za-z0-9_-]{20,})", "sbp_ sb_secret_"
    ),
    windowed_rule("sentry_token", r"sntry[su]_[A-Za-z0-9+/=_-]{40,}", "sntrys_ sntryu_"),
    windowed_rule(
        "grafana_token",
        r"gl(?:sa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|c_[A-Za-z0-9+/=]{32,})",
        "glsa_ glc_",
    ),
    windowed_rule("postman_api_key", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", "PMAK-"),
    windowed_rule("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", "AGE-SECRET-KEY-1"),
    windowed_rule("onepassword_service_account_token", r"ops_eyJ[A-Za-z0-9+/=_-]{100,}", "ops_eyJ"),
    # URL userinfo is a credential wherever it appears. A port is never followed by "@"
    # inside the authority, so plain URLs do not match.
    Rule(
        "url_credentials",
        re.compile(r"(?:https?|ftps?)://" + USERINFO_TAIL),
        "scheme",
        anchors=("://",),
        schemes=_URL_SCHEMES,
    ),
    # .npmrc legacy tokens (UUID-shaped); an env reference ``${NPM_TOKEN}`` is not one.
    Rule(
        "npmrc_auth_token",
        re.compile(r"""_authToken\s*=\s*(?!\$)[^\s"',}]+"""),
        anchors=("_authToken",),
    ),
)

# gitleaks' vendor formats with a distinctive literal (or, for Discord, a checkable
# structure); its keyword-gated rules are the assignment rules' job (``COHERE_API_KEY=…``).
# Short or common prefixes, and bare uppercase prefixes before a long alphanumeric run
# (random base64 would hit them), get boundaries. Public identifiers (Stripe
# ``pk_live_``, Twilio ``AC…``, Mapbox ``pk.``, Mailgun ``pubkey-``) are kept.
_VENDOR_RULES: Final[tuple[Rule, ...]] = (
    windowed_rule(  # AWS ids beyond AKIA/ASIA, base32 body
        "aws_access_key_id_other",
        r"A(?<![A-Za-z0-9]A)(?:3T[A-Z0-9]|BIA|CCA)[A-Z2-7]{16}(?![A-Za-z0-9])",
        "A3T ABIA ACCA",
    ),
    windowed_rule(
        "gitlab_other_token",
        r"gl(?:cbt|ft|imt|agent|soat|ffct)-[A-Za-z0-9_-]{20,}",
        "glcbt- glft- glimt- glagent- glsoat- glffct-",
    ),
    windowed_rule("gitlab_runner_registration_token", r"GR1348941[A-Za-z0-9_-]{20,}", "GR1348941"),
    windowed_rule("slack_legacy_token", r"xox[or]-[0-9A-Za-z-]{10,}", "xoxo- xoxr-"),
    windowed_rule("stripe_prod_key", r"[rs]k_prod_[A-Za-z0-9]{16,}", "k_prod_"),
    windowed_rule(
        "doppler_token",
        r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
        "dp.pt. dp.st. dp.sa. dp.ct. dp.scim. dp.audit.",
    ),
    # User-id segment (base64 of digits: M, N or O first), 6-char timestamp, 27-38-char
    # HMAC; the validator decodes the first segment.
    windowed_rule(
        "discord_bot_token",
        r"[MNO](?<![A-Za-z0-9_-][MNO])[A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}"
        r"\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])",
        validate=_discord_user_id_segment,
        gate=r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}",
    ),
    windowed_rule(
        "discord_webhook_url",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api(?:/v[0-9]+)?/webhooks/"
        r"[0-9]{17,20}/[A-Za-z0-9_-]{60,68}",
        "discord.com/api discordapp.com/api",
    ),
    # "sk-live-"/"sk-test-"/"sk-prod-" + 24+ alphanumerics (billing providers), and a bare
    # "sk-" + 32+ hex (model providers). A bare "sk-" + mixed-case letters is too generic
    # (OpenAI's legacy keys need their marker); "task-<hex>" is not one (left boundary).
    windowed_rule(
        "sk_secret_key",
        r"[sS]k-(?<![A-Za-z0-9][sS]k-)(?:(?:live|test|prod)-[A-Za-z0-9]{24,}"
        r"|[a-fA-F0-9]{32,}(?![A-Za-z0-9]))",
        "sk- Sk-",
        capital=False,
    ),
    windowed_rule("heroku_api_key_v2", r"HRKU-AA[0-9A-Za-z_-]{58}", "HRKU-AA"),
    windowed_rule("pulumi_access_token", r"pul-[a-f0-9]{40}(?![A-Za-z0-9])", "pul-"),
    windowed_rule(
        "onepassword_secret_key",
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
        "A3-",
    ),
    # base64 of '{"k":"': Grafana's legacy API keys (no dots, so not a JWT).
    windowed_rule(
        "grafana_api_key", r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}", "eyJrIjoi", capital=False
    ),
    windowed_rule("new_relic_key", r"NR(?:AK|II|JS)-[A-Za-z0-9_-]{19,32}", "NRAK- NRII- NRJS-"),
    windowed_rule(
        "mapbox_secret_token", r"sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}", "sk.eyJ"
    ),
    # 32 hex, 8 hex, 8 hex, with hex-run boundaries so a longer hex string is not cut.
    windowed_rule(
        "mailgun_api_key",
        r"[a-f0-9](?<![a-f0-9][a-f0-9])[a-f0-9]{31}-[a-f0-9]{8}-[a-f0-9]{8}(?![A-Za-z0-9])",
        gate=r"-[a-f0-9]{8}-[a-f0-9]{8}",
    ),
    windowed_rule("rubygems_api_token", r"rubygems_[a-f0-9]{48}", "rubygems_"),
    windowed_rule("clojars_api_token", r"CLOJARS_[A-Za-z0-9]{60}", "CLOJARS_"),
    windowed_rule(
        "planetscale_token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9=._-]{32,64}", "pscale_"
    ),
    windowed_rule("prefect_api_token", r"pnu_[A-Za-z0-9]{36}", "pnu_"),
    windowed_rule("readme_api_token", r"rdme_[a-z0-9]{70}", "rdme_"),
    windowed_rule("sourcegraph_token", r"sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}", "sgp_"),
    windowed_rule("infracost_api_token", r"ico-[A-Za-z0-9]{32}(?![A-Za-z0-9])", "ico-"),
    windowed_rule("typeform_api_token", r"tfp_[A-Za-z0-9_.=-]{59}", "tfp_"),
    windowed_rule("easypost_api_token", r"E(?<![A-Za-z0-9+/]E)Z[AT]K[A-Za-z0-9]{54}", "EZAK EZTK"),
    windowed_rule("dynatrace_api_token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", "dt0c01."),
    windowed_rule("duffel_api_token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", "duffel_"),
    windowed_rule("flutterwave_secret_key", r"FLWSECK(?:_TEST)?-[a-h0-9]{32}-X", "FLWSECK"),
    windowed_rule("frameio_api_token", r"fio-u-[A-Za-z0-9_=-]{64}", "fio-u-"),
    windowed_rule("shippo_api_token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", "shippo_"),
    windowed_rule("square_token", r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}", "sq0atp- sq0csp-"),
    windowed_rule(
        "facebook_access_token", r"E(?<![A-Za-z0-9+/]E)AA[MC][A-Za-z0-9]{100,}", "EAAM EAAC"
    ),
    windowed_rule("brevo_api_key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", "xkeysib-"),
    windowed_rule("scalingo_api_token", r"tk-us-[A-Za-z0-9_-]{48}", "tk-us-"),
    windowed_rule(
        "settlemint_token", r"sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}", "sm_pat_ sm_aat_ sm_sat_"
    ),
    windowed_rule(
        "terraform_cloud_token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", ".atlasv1."
    ),
    windowed_rule(
        "harness_api_token", r"pat\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", "pat."
    ),
    windowed_rule("airtable_pat", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", "pat"),
    windowed_rule("alibaba_access_key_id", r"LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])", "LTAI"),
    windowed_rule("jfrog_api_key", r"A(?<![A-Za-z0-9+/]A)KCp[A-Za-z0-9]{69}", "AKCp"),
    windowed_rule(
        "flyio_token",
        r"f(?:o1_[A-Za-z0-9_-]{43}|m[12][ar]?_[A-Za-z0-9+/=_-]{100,})",
        "fo1_ fm1a_ fm1r_ fm2_ fm1_",
    ),
    windowed_rule("cloudflare_origin_ca_key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", "v1.0-"),
    windowed_rule("octopus_deploy_api_key", r"API-[A-Z0-9]{26}(?![A-Za-z0-9])", "API-"),
    windowed_rule(
        "azure_service_bus_key", r"SharedAccessKey=[A-Za-z0-9+/]{40,}={0,2}", "SharedAccessKey="
    ),
    # Azure AD (Entra) client secrets: 3 chars, a digit, "Q~", 31-34 chars. "~" is not a
    # window character, so this is full-text, anchored on "Q~".
    Rule(
        "azure_ad_client_secret",
        re.compile(
            r"[A-Za-z0-9_~.](?<![A-Za-z0-9_~.-][A-Za-z0-9_~.])[A-Za-z0-9_~.]{2}[0-9]Q~"
            r"[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"
        ),
        anchors=("Q~",),
    ),
    Rule(
        "teams_webhook_url",
        re.compile(
            r"https://[A-Za-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@-]{20,}"
            r"/IncomingWebhook/[A-Za-z0-9]{32}/[A-Za-z0-9-]{36}"
        ),
        anchors=(".webhook.office.com/webhookb2/",),
    ),
    Rule("pgp_private_key", PGP_HEADER_RE, "pgp", anchors=("-----BEGIN ",)),
)

# Last: an assignment's span starts at its value, so a vendor token assigned to a key
# ties with it there, and the vendor rule (lower index) wins and names the kind.
_STRUCTURED_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        "basic_auth_header",
        re.compile(_AUTHORIZATION + r"[Bb][Aa][Ss][Ii][Cc][ \t]+[A-Za-z0-9+/]+={0,2}"),
        anchors=("authorization",),
        anchor_lower=True,
        validate=A.is_basic_credentials,
    ),
    Rule("cookie_header", A.COOKIE_KEY_RE, "cookie", anchors=("cookie",), anchor_lower=True),
    Rule("uri_credentials", A.ANY_SCHEME_TAIL_RE, "anyscheme", anchors=("://",)),
    *(
        Rule(
            kind,
            re.compile(key + A.SEP, A.IGNORE_ASCII_CASE),
            "assign",
            anchors=A.ASSIGN_ANCHORS[kind],
            anchor_lower=True,
        )
        for kind, key in A.ASSIGN_KEYS.items()
    ),
    Rule(
        "cli_password",
        re.compile(r"(?:mysql|mariadb|sshpass|redis-cli|login|curl|--pass)", re.IGNORECASE),
        "cli",
        anchors=A.CLI_ANCHORS,
        anchor_lower=True,
    ),
)

RULES: Final = _ORIGINAL_RULES + _EXTENDED_RULES + _VENDOR_RULES + _STRUCTURED_RULES
WINDOWED_RULES: Final = tuple(i for i, r in enumerate(RULES) if r.windowed)
FULL_TEXT_RULES: Final = tuple(i for i, r in enumerate(RULES) if not r.windowed)

# The fast path's literals. Every full-text rule's match contains one of them or a
# window run, which the fast path also checks ("SecretAccessKey", 15 chars, is a run;
# "AccessKeyId", 11, is not, so it is listed). Tests check this for every full-text
# rule. "EyJ": a capitalised JWT; "Q~": Azure AD client secrets. The lowercase anchors
# gate the header and assignment rules ("pass" covers password, passwd, passphrase).
FAST_PATH_ANCHORS: Final = ("://", "eyJ", "EyJ", "-----BEGIN ", "Token", "AccessKeyId", "Q~")
FAST_PATH_LOWER_ANCHORS: Final = (
    *("authorization", "cookie", "pass", "pwd", "secret", "key", "token"),
    # command-line passwords (``mysql -pS3cret``, ``redis-cli -a``, ``docker login -p``)
    *("mysql", "mariadb", "sshpass", "redis-cli", "login", "curl"),
)

# ── Exfiltration URLs (reference §4.4) ──
# Companion-supplied exact hosts (lowercase) that skip only the base64/length query
# heuristics; fixed credentials, decoding and percent-encoding still apply. None by
# default. The engine reads it from this module at call time.
EXEMPT_EXACT_HOSTS: Final[frozenset[str]] = frozenset()
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
# 21+ consecutive %XX octets: checked on its own over path and query, before the
# query-only heuristics.
_PERCENT_RUN = r"%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2}){20,}"
EXFIL_PERCENT_RE: Final = re.compile(_PERCENT_RUN, re.IGNORECASE)
_KEY_MARKERS = (
    r"|(?:ssh-rsa|ssh-ed25519)[\s+%]"
    r"|BEGIN[\s+%](?:RSA|DSA|EC|OPENSSH)[\s+%]PRIVATE[\s+%]KEY"
    r"|xox[bpas]-[0-9a-zA-Z-]+"
)
# Signals in a query string, case-insensitive as in the original. The base64-run
# alternative cannot backtrack past 40 characters per start, so it stays linear.
EXFIL_PATTERNS_RE: Final = re.compile(
    rf"(?:[A-Za-z0-9+/=]{{40,}}|{_PERCENT_RUN}|{_AKIA}{_KEY_MARKERS})", re.IGNORECASE
)
# Unambiguous markers, scanned over the whole path+query (a secret in the path counts).
HARD_CREDENTIAL_RE: Final = re.compile(
    f"(?:{_AKIA}"
    + "".join(f"|(?:{camel}|{snake}){KV_VALUE}" for _, camel, snake in _AWS_KV)
    + f"{_KEY_MARKERS})",
    re.IGNORECASE,
)
# S3 presigned URLs. The original is one regex with three ``.*`` gaps between these
# parts, cubic on a crafted query; the engine chains four leftmost searches, which
# match exactly when the regex does (each part has a single or minimal end).
S3_PRESIGNED_PARTS: Final = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"X-Amz-Algorithm=AWS4-HMAC-SHA256",
        rf"X-Amz-Credential={_AKIA}(?:%2F|/)",
        r"X-Amz-Expires=\d",
        r"X-Amz-Signature=[0-9a-f]{64}",
    )
)
S3_PRESIGNED_PARAMS: Final = frozenset(
    {"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires"}
    | {"X-Amz-SignedHeaders", "X-Amz-Signature", "X-Amz-Security-Token"}
)
# Values that would trip EXFIL_PATTERNS_RE are validated structurally, not exempted, so
# no attacker data rides along.
S3_STRUCTURAL_VALIDATORS: Final[dict[str, re.Pattern[str]]] = {
    "X-Amz-Credential": re.compile(
        rf"^{_AKIA}(?:%2F|/)[0-9]{{8}}(?:%2F|/)[a-z0-9-]+(?:%2F|/)s3(?:%2F|/)aws4_request$"
    ),
    "X-Amz-Signature": re.compile(r"^[0-9a-f]{64}$"),
    "X-Amz-Security-Token": re.compile(r"^(?:FwoGZX|IQoJb3JpZ2lu)[A-Za-z0-9+/=%]{1,2000}$"),
}

# ── Pass 2 (base64-encoded credentials) and pass 3 (bare AWS secret access key) ──
# The original is unanchored, but the run is greedy, so every match starts at a run
# start anyway; the look-behind only stops re from re-trying mid-run.
B64_CHUNK_RE: Final = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40,}={0,2}")
BARE_SECRET_RUN_RE: Final = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40,}(?![A-Za-z0-9+/])")
# The original's exact thresholds (reference §4.3, pass 3).
SECRET_KEY_LEN: Final = 40
SECRET_ENTROPY_MIN: Final = 4.3
SECRET_MAX_LOWER_RUN: Final = 5
SECRET_MAX_VOWEL_RATIO: Final = 0.30
SECRET_PRINTABLE_DECODE_RATIO: Final = 0.85
HEX_CHARS: Final = "0123456789abcdefABCDEF"
VOWELS: Final = frozenset("aeiouAEIOU")
_PRINTABLE_BYTES = bytes([*range(0x20, 0x7F), 0x09, 0x0A, 0x0D])

# Not in the original: base64 of a binary file is random-looking, so a window of an
# inline image passes every gate of a bare key. A run that starts with the base64 of a
# file signature, or follows a data URI's ";base64,", is a file.
BINARY_FILE_B64_PREFIXES: Final = (
    *("iVBORw0KGg", "/9j/", "R0lGOD", "UklGR"),  # PNG, JPEG, GIF, RIFF (WebP, WAV)
    *("JVBERi0", "UEsDB", "H4sI"),  # PDF, ZIP (docx, xlsx, jar), gzip
    *("PD94bWwg", "PHN2Zy"),  # "<?xml " (SVG), "<svg"
)
DATA_URI_BASE64_MARK: Final = ";base64,"


def is_base64_file(text: str, start: int, run: str) -> bool:
    """The base64 run at ``start`` encodes a file (inline image, archive), not a key."""
    if run.startswith(BINARY_FILE_B64_PREFIXES):
        return True
    mark = DATA_URI_BASE64_MARK
    return start >= len(mark) and text.startswith(mark, start - len(mark))


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

    Every gate must pass (the bias is toward not redacting): lower, upper and digit
    characters; not all hex (a git SHA); entropy ≥ 4.3 bits/char; not encoded text; no
    lowercase run over 5 and at most 30 % vowels (camelCase identifiers, paths).
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
