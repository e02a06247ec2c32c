"""Tokens, contexts and checks shared by the redaction coverage tests.

Every secret is assembled at runtime (prefix + seeded random), so the repository holds
no literal token. The module-level values are drawn from one seeded generator, in a
fixed order, so every run sees the same tokens.
"""

from __future__ import annotations

import json
import random
import string

from tests.transcripts.redaction_samples import b64, discord_bot_token

CRED = "[REDACTED: credential]"
_rng = random.Random(4242)
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits


def rand(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def assert_value_free(report: dict[str, int], secret: str) -> None:
    shown = repr(report)
    for i in range(max(1, len(secret) - 7)):
        assert secret[i : i + 8] not in shown


# ── Vendor families ──────────────────────────────────────────────────────────
# family kind -> a realistic fake token (a single line, no spaces).
FAMILIES: dict[str, str] = {
    "github_token": "ghp_" + rand(ALNUM, 36),
    "github_fine_grained_pat": "github_pat_" + rand(ALNUM, 22) + "_" + rand(ALNUM, 59),
    "gitlab_pat": "glpat-" + rand(URLSAFE, 20),
    "gitlab_deploy_token": "gldt-" + rand(URLSAFE, 20),
    "gitlab_other_token": "glcbt-" + rand(URLSAFE, 24),
    "slack_token": "xoxb-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24),
    "slack_app_token": "xapp-1-" + rand(UPPER_DIGITS, 11) + "-" + rand(HEX, 64),
    "slack_legacy_token": "xoxr-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24),
    "stripe_secret_key": "sk_live_" + rand(ALNUM, 24),
    "aws_access_key_id": "AKIA" + rand(UPPER_DIGITS, 16),
    "google_api_key": "AIza" + rand(URLSAFE, 35),
    "openai_project_key": "sk-proj-" + rand(URLSAFE, 48),
    "anthropic_api_key": "sk-ant-api03-" + rand(URLSAFE, 93),
    "huggingface_token": "hf_" + rand(string.ascii_letters, 34),
    "npm_token": "npm_" + rand(ALNUM, 36),
    "pypi_token": "pypi-" + "AgEIcHlwaS5vcmc" + rand(URLSAFE, 50),
    "twilio_api_key": "SK" + rand(HEX, 32),
    "sendgrid_api_key": "SG." + rand(URLSAFE, 22) + "." + rand(URLSAFE, 43),
    "mailgun_api_key": rand(HEX, 32) + "-" + rand(HEX, 8) + "-" + rand(HEX, 8),
    "shopify_token": "shpat_" + rand(HEX, 32),
    "digitalocean_token": "dop_v1_" + rand(HEX, 64),
    "databricks_token": "dapi" + rand(HEX, 32),
    "doppler_token": "dp.pt." + rand(ALNUM, 43),
    "discord_bot_token": discord_bot_token(),
    "telegram_bot_token": rand(string.digits, 10) + ":" + rand(URLSAFE, 35),
    "atlassian_api_token": "ATATT3xFfGF0" + rand(URLSAFE, 180),
    "heroku_api_key_v2": "HRKU-AA" + rand(URLSAFE, 58),
    "linear_api_key": "lin_api_" + rand(ALNUM, 40),
    "postman_api_key": "PMAK-" + rand(HEX, 24) + "-" + rand(HEX, 34),
    "grafana_token": "glsa_" + rand(ALNUM, 32) + "_" + rand(HEX, 8),
    "sentry_token": "sntrys_" + "eyJ" + rand(ALNUM, 80) + "_" + rand(ALNUM, 43),
    "pulumi_access_token": "pul-" + rand(HEX, 40),
    "hashicorp_vault_token": "hvs." + rand(URLSAFE, 90),
    "onepassword_service_account_token": "ops_eyJ" + rand(ALNUM, 200),
    "age_secret_key": "AGE-SECRET-KEY-1" + rand(UPPER_DIGITS, 58),
    "azure_storage_account_key": "AccountKey=" + rand(ALNUM, 86) + "==",
    "azure_ad_client_secret": rand(ALNUM, 3) + "8Q~" + rand(URLSAFE, 34),
    "jwt": "eyJ" + rand(URLSAFE, 30) + "." + "eyJ" + rand(URLSAFE, 60) + "." + rand(URLSAFE, 43),
    "new_relic_key": "NRAK-" + rand(UPPER_DIGITS, 27),
}

# context name -> template with {t} for the token. The token is assigned to a key the
# assignment rules do not know (``SERVICE_CREDENTIAL``, ``value``), except in "code" and
# "shell", where it sits under a keyword and the vendor rule must still name the kind.
CONTEXTS: dict[str, str] = {
    "prose": "I pasted {t} into the chat by mistake, please rotate it.",
    "code": 'client = Client(api_token="{t}", timeout=30)\n',
    "env": "# .env\nSERVICE_CREDENTIAL={t}\nDEBUG=false\n",
    "yaml": "service:\n  credential: {t}\n  region: eu-west-1\n",
    "json": json.dumps({"name": "deploy", "value": "{t}", "n": 3}),
    "shell": "curl -s -H 'X-Api-Key: {t}' https://api.example.com/v1/items",
    "url": "https://api.example.com/v1/items?credential={t}&page=2",
}


BASIC = b64("deploy:" + rand(ALNUM, 18))
SID = rand(LOWER_DIGITS, 32)
PW = rand(ALNUM, 18)
PASSWORD = "Sup3r" + rand(ALNUM, 8) + "!"
SECRET = rand(ALNUM, 12) + "9"
TOKEN = rand(ALNUM, 30) + "7"
