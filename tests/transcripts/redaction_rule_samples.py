"""Per-rule redaction samples and the tokens the redaction tests share.

Every secret is assembled at runtime (prefix + seeded random or filler), so the
repository holds no literal token for a secret scanner to flag.
"""

from __future__ import annotations

import random
import string

from tests.transcripts.redaction_samples import COVERAGE_SAMPLES
from transcripts.core.redaction import patterns as P

CRED = "[REDACTED: credential]"
ENCODED = "[REDACTED: encoded credential]"

_rng = random.Random(20250301)
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"


def rand(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


# The AWS documentation's example secret key, split so it is not one literal.
AWS_EXAMPLE_SECRET = "wJalrXUtnFEMI/" + "K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
AWS_KEY_ID = "AKIA" + rand(UPPER_DIGITS, 16)
PEM_BODY = "\n".join(rand(B64, 64) for _ in range(4))
HEADER = "-----BEGIN RSA " + "PRIVATE KEY-----"
FOOTER = "-----END RSA " + "PRIVATE KEY-----"

# kind -> (positive token, near miss that must stay untouched). Positives are realistic
# shapes; near misses share the prefix but fail the format.
SAMPLES: dict[str, tuple[str, str]] = {
    "aws_access_key_id": (AWS_KEY_ID, "AKIA" + "abcdefghijklmnop"),
    "aws_secret_access_key": (
        "aws_secret_access_key" + ' = "' + AWS_EXAMPLE_SECRET,
        "aws_secret_access_key" + " is documented below",
    ),
    "aws_session_token": ("SessionToken" + ": " + rand(B64, 120), "SessionToken" + "Expiry"),
    "aws_access_key_id_assignment": (
        "AccessKeyId" + "=" + AWS_KEY_ID,
        "AccessKeyId" + "s are public identifiers",
    ),
    "private_key": (HEADER + "\n" + PEM_BODY + "\n" + FOOTER, "-----BEGIN PUBLIC KEY-----"),
    "slack_token": ("xoxb-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24), "xoxb-" + "123"),
    "telegram_bot_token": (
        rand(string.digits, 10) + ":" + rand(URLSAFE, 35),
        "12345" + ":" + "a" * 35,
    ),
    "github_token": ("ghp_" + rand(ALNUM, 36), "ghp_" + rand(ALNUM, 20)),
    "github_fine_grained_pat": (
        "github_pat_" + rand(ALNUM, 22) + "_" + rand(ALNUM, 59),
        "github_pat_" + "short",
    ),
    "gitlab_pat": ("glpat-" + rand(URLSAFE, 20), "glpat-" + "short"),
    "stripe_secret_key": ("sk_live_" + rand(ALNUM, 24), "pk_live_" + rand(ALNUM, 24)),
    "sendgrid_api_key": ("SG." + rand(URLSAFE, 22) + "." + rand(URLSAFE, 43), "SG." + "a.b"),
    "openai_project_key": ("sk-proj-" + rand(URLSAFE, 48), "sk-proj-" + "abc"),
    "anthropic_admin_key": ("sk-ant-admin01-" + rand(URLSAFE, 40), "sk-ant-admin01-" + "x"),
    "anthropic_api_key": ("sk-ant-api03-" + rand(URLSAFE, 93), "sk-ant-" + "short"),
    "npm_token": ("npm_" + rand(ALNUM, 36), "npm_" + "install"),
    "pypi_token": ("pypi-" + "AgEIcHlwaS5vcmc" + rand(URLSAFE, 50), "pypi-" + "short"),
    "digitalocean_token": ("dop_v1_" + rand(HEX, 64), "dop_v1_" + "abc"),
    "google_oauth_client_secret": ("GOCSPX-" + rand(URLSAFE, 28), "GOCSPX-" + "short"),
    "db_uri_credentials": (
        "postgres://app:" + rand(ALNUM, 16) + "@",
        "postgres://db.example.com:5432/app",
    ),
    "jwt": (
        "eyJ" + rand(URLSAFE, 30) + "." + "eyJ" + rand(URLSAFE, 60) + "." + rand(URLSAFE, 43),
        "keyJson.get(raw)",
    ),
    "link_token": (
        "eyJ" + rand(URLSAFE, 150) + "." + rand(URLSAFE, 43),
        "eyJsonSerializerConfigurationFactoryBuilder.deserializeFromStringValue",
    ),
    "bearer_header": ("Authorization: Bearer " + rand(ALNUM, 40), "Authorization: Basic x"),
    "openai_service_account_key": ("sk-svcacct-" + rand(URLSAFE, 60), "sk-svcacct-" + "abc"),
    "openai_admin_key": ("sk-admin-" + rand(URLSAFE, 60), "sk-admin-" + "panel"),
    "openai_legacy_key": (
        "sk-" + rand(ALNUM, 20) + "T3Blbk" + "FJ" + rand(ALNUM, 20),
        "sk-" + "a" * 20 + "T3BlbkFX" + "a" * 20,
    ),
    "google_api_key": ("AIza" + rand(URLSAFE, 35), "AIza" + rand(URLSAFE, 20)),
    "google_oauth_access_token": ("ya29." + rand(URLSAFE, 100), "ya29." + "short"),
    "gitlab_deploy_token": ("gldt-" + rand(URLSAFE, 20), "gldt-" + "x"),
    "gitlab_runner_token": ("glrt-" + rand(URLSAFE, 24), "glrt-" + "x"),
    "gitlab_pipeline_trigger_token": ("glptt-" + rand(HEX, 40), "glptt-" + "x"),
    "gitlab_oauth_app_secret": ("gloas-" + rand(HEX, 64), "gloas-" + "x"),
    "huggingface_token": (
        "hf_" + rand(string.ascii_letters, 34),
        "hf_" + rand(string.ascii_letters, 35),
    ),
    "huggingface_org_token": ("api_org_" + rand(string.ascii_letters, 34), "api_org_" + "x"),
    "groq_api_key": ("gsk_" + rand(ALNUM, 52), "gsk_" + rand(ALNUM, 10)),
    "xai_api_key": ("xai-" + rand(ALNUM, 80), "xai-" + rand(ALNUM, 10)),
    "replicate_api_token": ("r8_" + rand(ALNUM, 37), "var8_" + rand(ALNUM, 37)),
    "perplexity_api_key": ("pplx-" + rand(ALNUM, 48), "pplx-" + rand(ALNUM, 10)),
    "slack_app_token": (
        "xapp-1-" + rand(UPPER_DIGITS, 11) + "-" + rand(string.digits, 13) + "-" + rand(HEX, 64),
        "xapp-1-" + "short",
    ),
    "slack_config_token": ("xoxe.xoxp-1-" + rand(ALNUM, 100), "xoxe.xoxp-1-" + "short"),
    "slack_refresh_token": ("xoxe-1-" + rand(ALNUM, 100), "xoxe-1-" + "short"),
    "slack_webhook_url": (
        "https://hooks.slack.com/services/T"
        + rand(UPPER_DIGITS, 8)
        + "/B"
        + rand(UPPER_DIGITS, 8)
        + "/"
        + rand(ALNUM, 24),
        "https://hooks.slack.com/services/",
    ),
    "stripe_webhook_secret": ("whsec_" + rand(ALNUM, 32), "whsec_" + "short"),
    "twilio_api_key": ("SK" + rand(HEX, 32), "TASK" + rand(HEX, 32)),
    "shopify_token": ("shpat_" + rand(HEX, 32), "shpat_" + "xyz"),
    "databricks_token": ("dapi" + rand(HEX, 32), "dapi" + "ghijklmnopqrstuvwxyzghijklmnopqr"),
    "azure_storage_account_key": (
        "AccountKey=" + rand(B64, 86) + "==",
        "AccountKey=" + "short;",
    ),
    "atlassian_api_token": ("ATATT3xFfGF0" + rand(URLSAFE, 180), "ATATT3" + "short"),
    "linear_api_key": ("lin_api_" + rand(ALNUM, 40), "lin_api_" + rand(ALNUM, 10)),
    "notion_token": ("ntn_" + rand(string.digits, 11) + rand(ALNUM, 35), "ntn_" + "abc"),
    "hashicorp_vault_token": ("hvs." + rand(URLSAFE, 90), "hvs." + "short"),
    "tailscale_key": ("tskey-auth-" + rand(ALNUM, 12) + "-" + rand(ALNUM, 30), "tskey-" + "x"),
    "supabase_token": ("sbp_" + rand(HEX, 40), "sbp_" + "xyz"),
    "sentry_token": ("sntrys_" + "eyJ" + rand(B64, 80) + "_" + rand(B64, 43), "sntrys_" + "x"),
    "grafana_token": ("glsa_" + rand(ALNUM, 32) + "_" + rand(HEX, 8), "glsa_" + "short"),
    "postman_api_key": ("PMAK-" + rand(HEX, 24) + "-" + rand(HEX, 34), "PMAK-" + "short"),
    "age_secret_key": ("AGE-SECRET-KEY-1" + rand(UPPER_DIGITS, 58), "AGE-SECRET-KEY-1" + "QQ"),
    "onepassword_service_account_token": ("ops_eyJ" + rand(B64, 200), "ops_eyJ" + "short"),
    "url_credentials": (
        "https://deploy:" + rand(ALNUM, 16) + "@",
        "https://example.com:8443/path@v2",
    ),
    "npmrc_auth_token": (
        "//registry.npmjs.org/:_authToken=" + rand(HEX, 8) + "-" + rand(HEX, 4),
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
    ),
    **COVERAGE_SAMPLES,
}

ALL_KINDS = {r.kind for r in P.RULES} | {P.ENCODED_KIND, P.BARE_AWS_KIND, P.EXFIL_KIND}
