"""Extensions: current provider token formats the original's table misses.

They follow the original's rules in :data:`RULES <transcripts.core.redaction.patterns.RULES>`,
so on a tie at the same position an original rule wins.
"""

from __future__ import annotations

import re
from typing import Final

from .rule import USERINFO_TAIL, Rule, windowed_rule

_URL_SCHEMES = ("http", "https", "ftp", "ftps")

EXTENDED_RULES: Final[tuple[Rule, ...]] = (
    windowed_rule("openai_service_account_key", r"sk-svcacct-[A-Za-z0-9_-]{16,}", "sk-svcacct-"),
    windowed_rule("openai_admin_key", r"sk-admin-[A-Za-z0-9_-]{16,}", "sk-admin-"),
    # Legacy user keys: sk- + 48 alphanumerics with the "T3BlbkFJ" ("OpenAI" in base64)
    # marker in the middle. Without the marker, "sk-" + 48 chars is too generic.
    windowed_rule("openai_legacy_key", r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", "T3BlbkFJ"),
    windowed_rule("google_api_key", r"AIza[0-9A-Za-z_-]{35}", "AIza"),
    windowed_rule("google_oauth_access_token", r"ya29\.[0-9A-Za-z_-]{20,}", "ya29."),
    windowed_rule("gitlab_deploy_token", r"gldt-[A-Za-z0-9_-]{20,}", "gldt-"),
    windowed_rule("gitlab_runner_token", r"glrt-[A-Za-z0-9_-]{20,}", "glrt-"),
    windowed_rule("gitlab_pipeline_trigger_token", r"glptt-[A-Za-z0-9_-]{20,}", "glptt-"),
    windowed_rule("gitlab_oauth_app_secret", r"gloas-[A-Za-z0-9_-]{20,}", "gloas-"),
    # Hugging Face tokens are exactly 34 letters. The right boundary keeps a longer
    # identifier that happens to start with hf_ intact.
    windowed_rule("huggingface_token", r"hf_[A-Za-z]{34}(?![A-Za-z0-9])", "hf_"),
    windowed_rule("huggingface_org_token", r"api_org_[A-Za-z]{34}(?![A-Za-z0-9])", "api_org_"),
    windowed_rule("groq_api_key", r"gsk_[A-Za-z0-9]{48,}", "gsk_"),
    windowed_rule("xai_api_key", r"xai-[A-Za-z0-9]{70,}", "xai-"),
    # "r8_" is short, so require a left boundary ("var8_..." is not a token).
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
    # Twilio API key SID: "SK" + exactly 32 hex. Without the boundaries, "TASK" + a
    # hex digest would match.
    windowed_rule("twilio_api_key", r"SK(?<![A-Za-z0-9]SK)[0-9a-fA-F]{32}(?![0-9a-fA-F])", "SK"),
    windowed_rule(
        "shopify_token",
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        "shpat_",
        "shpca_",
        "shppa_",
        "shpss_",
    ),
    windowed_rule("databricks_token", r"dapi[a-f0-9]{32}(?:-[0-9]+)?", "dapi"),
    windowed_rule(
        "azure_storage_account_key", r"AccountKey=[A-Za-z0-9+/]{40,}={0,2}", "AccountKey="
    ),
    windowed_rule("atlassian_api_token", r"ATATT3[A-Za-z0-9_=-]{150,}", "ATATT3"),
    windowed_rule("linear_api_key", r"lin_api_[A-Za-z0-9]{40}", "lin_api_"),
    windowed_rule("notion_token", r"ntn_[0-9]{11}[A-Za-z0-9]{32,}", "ntn_"),
    windowed_rule("hashicorp_vault_token", r"hv[sb]\.[A-Za-z0-9_-]{24,}", "hvs.", "hvb."),
    windowed_rule("tailscale_key", r"tskey-[A-Za-z0-9-]{20,}", "tskey-"),
    windowed_rule(
        "supabase_token", r"sb(?:p_[a-f0-9]{40}|_secret_[A-Za-z0-9_-]{20,})", "sbp_", "sb_secret_"
    ),
    windowed_rule("sentry_token", r"sntry[su]_[A-Za-z0-9+/=_-]{40,}", "sntrys_", "sntryu_"),
    windowed_rule(
        "grafana_token",
        r"gl(?:sa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|c_[A-Za-z0-9+/=]{32,})",
        "glsa_",
        "glc_",
    ),
    windowed_rule("postman_api_key", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", "PMAK-"),
    windowed_rule("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", "AGE-SECRET-KEY-1"),
    windowed_rule("onepassword_service_account_token", r"ops_eyJ[A-Za-z0-9+/=_-]{100,}", "ops_eyJ"),
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
