"""Vendor token formats from gitleaks' rule list that the original and the extensions miss.

Prefixes and lengths are facts about each vendor's format; the patterns are written
here. Only formats with a distinctive literal (or, for Discord, a checkable structure)
are listed: gitleaks' keyword-gated rules (a vendor name near a bare hex or UUID) are
covered instead by the generic assignment rules of :mod:`.assignments`
(``COHERE_API_KEY=…``).

Short or common prefixes get boundaries, so a longer identifier that merely contains
them is left alone; so do bare uppercase prefixes followed by a long alphanumeric run,
which random base64 (an image, a key blob) would otherwise hit by chance. Public identifiers (Stripe ``pk_live_``, Twilio ``AC…`` account
SIDs, Mapbox ``pk.`` tokens, Mailgun ``pubkey-``) are not secrets and are kept.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

from .rule import Rule, windowed_rule


def _discord_user_id_segment(token: str) -> bool:
    """The first segment of a Discord bot token is base64 of the bot's numeric user id.

    This turns an otherwise generic ``x.y.z`` shape into a near-certain match: a dotted
    identifier chain of the same lengths does not decode to 17-20 ASCII digits.
    """
    head = token.split(".", 1)[0]
    try:
        raw = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return 17 <= len(raw) <= 20 and raw.isdigit()


# ── PGP armoured private keys (the "pgp" finder: the PEM finder with these pieces) ──
PGP_HEADER_RE: Final = re.compile(r"-----BEGIN PGP PRIVATE KEY BLOCK-----")
PGP_END_RE: Final = re.compile(r"-----END PGP PRIVATE KEY BLOCK-----")
# Without an END marker: the armour header lines, base64 lines and the "=" checksum
# line that follow, crossing one blank line (the armour's header separator).
PGP_TRUNCATED_TAIL_RE: Final = re.compile(
    r"(?:\r?\n(?:(?:Version|Comment|Hash|Charset|MessageID):[^\n]*"
    r"|[A-Za-z0-9+/=]+(?=\r?\n|\Z)|(?=\r?\n[A-Za-z0-9+/=])))*"
)

VENDOR_RULES: Final[tuple[Rule, ...]] = (
    # AWS ids beyond AKIA/ASIA (gitleaks: A3T…, ABIA, ACCA), base32 body.
    windowed_rule(
        "aws_access_key_id_other",
        r"A(?<![A-Za-z0-9]A)(?:3T[A-Z0-9]|BIA|CCA)[A-Z2-7]{16}(?![A-Za-z0-9])",
        "A3T",
        "ABIA",
        "ACCA",
    ),
    windowed_rule(
        "gitlab_other_token",
        r"gl(?:cbt|ft|imt|agent|soat|ffct)-[A-Za-z0-9_-]{20,}",
        "glcbt-",
        "glft-",
        "glimt-",
        "glagent-",
        "glsoat-",
        "glffct-",
    ),
    windowed_rule("gitlab_runner_registration_token", r"GR1348941[A-Za-z0-9_-]{20,}", "GR1348941"),
    windowed_rule("slack_legacy_token", r"xox[or]-[0-9A-Za-z-]{10,}", "xoxo-", "xoxr-"),
    windowed_rule("stripe_prod_key", r"[rs]k_prod_[A-Za-z0-9]{16,}", "k_prod_"),
    windowed_rule(
        "doppler_token",
        r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
        "dp.pt.",
        "dp.st.",
        "dp.sa.",
        "dp.ct.",
        "dp.scim.",
        "dp.audit.",
    ),
    # No literal anchor: user-id segment (base64 of digits: M, N or O first), 6-char
    # timestamp, 27-38-char HMAC. The validator decodes the first segment.
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
        "discord.com/api",
        "discordapp.com/api",
    ),
    # "sk-live-"/"sk-test-"/"sk-prod-" + 24 or more letters and digits (billing providers),
    # and a bare "sk-" + 32 or more hex digits (DeepSeek and other model providers). A bare
    # "sk-" + mixed-case letters stays too generic (OpenAI's legacy keys need their marker,
    # :mod:`.extended`); "task-<hex>" is not one (left boundary).
    windowed_rule(
        "sk_secret_key",
        r"[sS]k-(?<![A-Za-z0-9][sS]k-)(?:(?:live|test|prod)-[A-Za-z0-9]{24,}"
        r"|[a-fA-F0-9]{32,}(?![A-Za-z0-9]))",
        "sk-",
        "Sk-",
        capital=False,
    ),
    windowed_rule("heroku_api_key_v2", r"HRKU-AA[0-9A-Za-z_-]{58}", "HRKU-AA"),
    windowed_rule("pulumi_access_token", r"pul-[a-f0-9]{40}(?![A-Za-z0-9])", "pul-"),
    windowed_rule(
        "onepassword_secret_key",
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
        "A3-",
    ),
    # base64 of '{"k":"' : Grafana's legacy API keys (no dots, so not a JWT).
    windowed_rule(
        "grafana_api_key", r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}", "eyJrIjoi", capital=False
    ),
    windowed_rule(
        "new_relic_key", r"NR(?:AK|II|JS)-[A-Za-z0-9_-]{19,32}", "NRAK-", "NRII-", "NRJS-"
    ),
    windowed_rule(
        "mapbox_secret_token", r"sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}", "sk.eyJ"
    ),
    # Mailgun's current private keys: 32 hex, 8 hex, 8 hex. Hex-run boundaries on
    # both sides, so a longer hex string is not cut into one.
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
    windowed_rule(
        "sourcegraph_token",
        r"sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}",
        "sgp_",
    ),
    windowed_rule("infracost_api_token", r"ico-[A-Za-z0-9]{32}(?![A-Za-z0-9])", "ico-"),
    windowed_rule("typeform_api_token", r"tfp_[A-Za-z0-9_.=-]{59}", "tfp_"),
    windowed_rule(
        "easypost_api_token", r"E(?<![A-Za-z0-9+/]E)Z[AT]K[A-Za-z0-9]{54}", "EZAK", "EZTK"
    ),
    windowed_rule("dynatrace_api_token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", "dt0c01."),
    windowed_rule("duffel_api_token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", "duffel_"),
    windowed_rule("flutterwave_secret_key", r"FLWSECK(?:_TEST)?-[a-h0-9]{32}-X", "FLWSECK"),
    windowed_rule("frameio_api_token", r"fio-u-[A-Za-z0-9_=-]{64}", "fio-u-"),
    windowed_rule("shippo_api_token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", "shippo_"),
    windowed_rule("square_token", r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}", "sq0atp-", "sq0csp-"),
    windowed_rule(
        "facebook_access_token",
        r"E(?<![A-Za-z0-9+/]E)AA[MC][A-Za-z0-9]{100,}",
        "EAAM",
        "EAAC",
    ),
    windowed_rule("brevo_api_key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", "xkeysib-"),
    windowed_rule("scalingo_api_token", r"tk-us-[A-Za-z0-9_-]{48}", "tk-us-"),
    windowed_rule(
        "settlemint_token", r"sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}", "sm_pat_", "sm_aat_", "sm_sat_"
    ),
    windowed_rule(
        "terraform_cloud_token",
        r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}",
        ".atlasv1.",
    ),
    windowed_rule(
        "harness_api_token",
        r"pat\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}",
        "pat.",
    ),
    windowed_rule("airtable_pat", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", "pat"),
    windowed_rule("alibaba_access_key_id", r"LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])", "LTAI"),
    windowed_rule("jfrog_api_key", r"A(?<![A-Za-z0-9+/]A)KCp[A-Za-z0-9]{69}", "AKCp"),
    windowed_rule(
        "flyio_token",
        r"f(?:o1_[A-Za-z0-9_-]{43}|m[12][ar]?_[A-Za-z0-9+/=_-]{100,})",
        "fo1_",
        "fm1a_",
        "fm1r_",
        "fm2_",
        "fm1_",
    ),
    windowed_rule("cloudflare_origin_ca_key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", "v1.0-"),
    windowed_rule("octopus_deploy_api_key", r"API-[A-Z0-9]{26}(?![A-Za-z0-9])", "API-"),
    windowed_rule(
        "azure_service_bus_key",
        r"SharedAccessKey=[A-Za-z0-9+/]{40,}={0,2}",
        "SharedAccessKey=",
    ),
    # Azure AD (Entra) client secrets: 3 chars, a digit, "Q~", 31-34 chars. "~" is not a
    # window character, so this is a full-text rule anchored on "Q~".
    Rule(
        "azure_ad_client_secret",
        re.compile(
            r"[A-Za-z0-9_~.](?<![A-Za-z0-9_~.-][A-Za-z0-9_~.])[A-Za-z0-9_~.]{2}[0-9]Q~"
            r"[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"
        ),
        "regex",
        False,
        ("Q~",),
    ),
    Rule(
        "teams_webhook_url",
        re.compile(
            r"https://[A-Za-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@-]{20,}"
            r"/IncomingWebhook/[A-Za-z0-9]{32}/[A-Za-z0-9-]{36}"
        ),
        "regex",
        False,
        (".webhook.office.com/webhookb2/",),
    ),
    Rule("pgp_private_key", PGP_HEADER_RE, "pgp", False, ("-----BEGIN ",)),
)
