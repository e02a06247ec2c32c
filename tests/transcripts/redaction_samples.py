"""Samples for the redaction coverage rules (vendors, headers, assignments, URI userinfo).

Every secret is assembled at runtime from a prefix and seeded random characters, so the
repository holds no literal token for a secret scanner to flag. Random runs stay under
40 characters where a near miss must survive (a 40-char random base64 run is a bare AWS
secret to pass 3).
"""

from __future__ import annotations

import base64
import random
import string
import uuid

_rng = random.Random(20251201)
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
BASE32 = string.ascii_uppercase + "234567"


def rand(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def uid() -> str:
    return str(uuid.UUID(int=_rng.getrandbits(128)))


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def discord_bot_token() -> str:
    user_id = str(_rng.randrange(10**17, 10**18))
    head = base64.urlsafe_b64encode(user_id.encode()).decode().rstrip("=")
    return head + "." + rand(URLSAFE, 6) + "." + rand(URLSAFE, 27)


PGP_BODY = "\n".join(rand(B64, 64) for _ in range(3))
PGP_HEADER = "-----BEGIN PGP " + "PRIVATE KEY BLOCK-----"
PGP_FOOTER = "-----END PGP " + "PRIVATE KEY BLOCK-----"

# kind -> (positive, near miss that must stay untouched).
COVERAGE_SAMPLES: dict[str, tuple[str, str]] = {
    # ── vendor formats (patterns/__init__.py, _VENDOR_RULES) ──
    "aws_access_key_id_other": ("ABIA" + rand(BASE32, 16), "ABIA" + "short"),
    "gitlab_other_token": ("glcbt-" + rand(URLSAFE, 24), "glcbt-" + "x"),
    "gitlab_runner_registration_token": ("GR1348941" + rand(URLSAFE, 20), "GR1348941" + "x"),
    "slack_legacy_token": ("xoxr-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24), "xoxr-1"),
    "stripe_prod_key": ("sk_prod_" + rand(ALNUM, 24), "pk_prod_" + rand(ALNUM, 24)),
    "doppler_token": ("dp.pt." + rand(ALNUM, 43), "dp.pt." + "short"),
    "discord_bot_token": (
        discord_bot_token(),
        # Same shape, but the first segment is not base64 of a numeric user id.
        "MyVeryLongClassNameHereX.fields.get_default_field_names_for_model",
    ),
    "discord_webhook_url": (
        "https://discord.com/api/webhooks/" + rand(string.digits, 18) + "/" + rand(URLSAFE, 68),
        "https://discord.com/api/webhooks/",
    ),
    "heroku_api_key_v2": ("HRKU-AA" + rand(URLSAFE, 58), "HRKU-AA" + "x"),
    "pulumi_access_token": ("pul-" + rand(HEX, 40), "pul-" + rand(HEX, 20)),
    "onepassword_secret_key": (
        "A3-"
        + rand(UPPER_DIGITS, 6)
        + "-"
        + rand(UPPER_DIGITS, 11)
        + "-"
        + "-".join(rand(UPPER_DIGITS, 5) for _ in range(3)),
        "A3-" + "ABC",
    ),
    "grafana_api_key": ("eyJrIjoi" + rand(ALNUM, 80), "eyJrIjoi" + "short"),
    "new_relic_key": ("NRAK-" + rand(UPPER_DIGITS, 27), "NRAK-" + "x"),
    "mapbox_secret_token": (
        "sk.eyJ" + rand(URLSAFE, 60) + "." + rand(URLSAFE, 22),
        "sk.eyJ" + "short.x",
    ),
    "mailgun_api_key": (rand(HEX, 32) + "-" + rand(HEX, 8) + "-" + rand(HEX, 8), uid()),
    "rubygems_api_token": ("rubygems_" + rand(HEX, 48), "rubygems_" + "x"),
    "clojars_api_token": ("CLOJARS_" + rand(LOWER_DIGITS, 60), "CLOJARS_" + "x"),
    "planetscale_token": ("pscale_tkn_" + rand(URLSAFE, 43), "pscale_tkn_" + "x"),
    "prefect_api_token": ("pnu_" + rand(ALNUM, 36), "pnu_" + "x"),
    "readme_api_token": ("rdme_" + rand(LOWER_DIGITS, 70), "rdme_" + "x"),
    "sourcegraph_token": ("sgp_" + rand(HEX, 16) + "_" + rand(HEX, 40), "sgp_" + "x"),
    "infracost_api_token": ("ico-" + rand(ALNUM, 32), "ico-" + rand(ALNUM, 10)),
    "typeform_api_token": ("tfp_" + rand(URLSAFE, 59), "tfp_" + "x"),
    "easypost_api_token": ("EZAK" + rand(ALNUM, 54), "EZAK" + "x"),
    "dynatrace_api_token": (
        "dt0c01." + rand(UPPER_DIGITS, 24) + "." + rand(UPPER_DIGITS, 64),
        "dt0c01." + "x",
    ),
    "duffel_api_token": ("duffel_test_" + rand(URLSAFE, 43), "duffel_test_" + "x"),
    "flutterwave_secret_key": ("FLWSECK_TEST-" + rand(HEX, 32) + "-X", "FLWSECK_TEST-" + "x"),
    "frameio_api_token": ("fio-u-" + rand(URLSAFE, 64), "fio-u-" + "x"),
    "shippo_api_token": ("shippo_live_" + rand(HEX, 40), "shippo_live_" + "x"),
    "square_token": ("sq0atp-" + rand(URLSAFE, 22), "sq0atp-" + "x"),
    "facebook_access_token": ("EAAC" + rand(UPPER_DIGITS, 120), "EAA" + "short"),
    "brevo_api_key": ("xkeysib-" + rand(HEX, 64) + "-" + rand(ALNUM, 16), "xkeysib-" + "x"),
    "scalingo_api_token": ("tk-us-" + rand(URLSAFE, 48), "tk-us-" + "x"),
    "settlemint_token": ("sm_pat_" + rand(ALNUM, 16), "sm_pat_" + "x"),
    "terraform_cloud_token": (
        rand(ALNUM, 14) + ".atlasv1." + rand(URLSAFE, 67),
        "x.atlasv1.y",
    ),
    "harness_api_token": (
        "pat." + rand(URLSAFE, 22) + "." + rand(ALNUM, 24) + "." + rand(ALNUM, 20),
        "pat." + "x",
    ),
    "airtable_pat": ("pat" + rand(ALNUM, 14) + "." + rand(HEX, 64), "pattern.matches(x)"),
    "alibaba_access_key_id": ("LTAI" + rand(ALNUM, 20), "LTAI" + "x"),
    "jfrog_api_key": ("AKCp" + rand(UPPER_DIGITS, 69), "AKCp" + "x"),
    "flyio_token": ("fo1_" + rand(URLSAFE, 43), "fo1_" + "x"),
    "cloudflare_origin_ca_key": (
        "v1.0-" + rand(HEX, 24) + "-" + rand(HEX, 146),
        "v1.0-" + "beta",
    ),
    "octopus_deploy_api_key": ("API-" + rand(UPPER_DIGITS, 26), "API-" + "GATEWAY"),
    "azure_service_bus_key": ("SharedAccessKey=" + rand(B64, 43) + "=", "SharedAccessKey=x;"),
    "azure_ad_client_secret": (rand(ALNUM, 3) + "8Q~" + rand(URLSAFE, 34), "Q~" + "x"),
    "teams_webhook_url": (
        "https://contoso.webhook.office.com/webhookb2/"
        + uid()
        + "@"
        + uid()
        + "/IncomingWebhook/"
        + rand(ALNUM, 32)
        + "/"
        + uid(),
        "https://contoso.webhook.office.com/webhookb2/",
    ),
    "pgp_private_key": (
        PGP_HEADER
        + "\nVersion: GnuPG v2\n\n"
        + PGP_BODY
        + "\n="
        + rand(B64, 4)
        + "\n"
        + PGP_FOOTER,
        "-----BEGIN PGP PUBLIC KEY BLOCK-----",
    ),
    # ── structured rules (patterns/assignments.py) ──
    "basic_auth_header": (
        "Authorization: Basic " + b64("deploy:" + rand(ALNUM, 16)),
        "Authorization: Basic followed by the base64 of user:password",
    ),
    "cookie_header": (
        "Cookie: sessionid=" + rand(LOWER_DIGITS, 32) + "; theme=dark",
        "Cookie: theme=dark; lang=en",
    ),
    "uri_credentials": ("smtp://mailer:" + rand(ALNUM, 16) + "@", "smtp://mail.example.com:587/"),
    "password_assignment": ("DB_PASSWORD=Sup3r" + rand(ALNUM, 8) + "!", "password = getpass()"),
    "secret_assignment": ('client_secret: "' + rand(ALNUM, 24) + '"', 'api_key = os.environ["X"]'),
    "token_assignment": ("AUTH_TOKEN=" + rand(ALNUM, 32), "token = tokenizer.encode(text)"),
    # (last: new samples draw from the seeded stream after every older one, so the older
    # samples, and the tests built on them, keep their tokens)
    "cli_password": ("mysql -u root -pS3cr" + rand(ALNUM, 8), "ssh -p 2222 deploy@host"),
    "sk_secret_key": ("BILLING_KEY=sk-live-" + rand(HEX, 40), "task-" + rand(HEX, 40)),
}
