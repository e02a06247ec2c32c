"""Every setting the code reads, each environment value through a strict reader (``env``);
the README's table says what each means, the comments here why. Two profiles, by
environment alone: embedded (SQLite under ``$KIROCREW_HOME``, in-memory layer, inline
Celery) and services (``DATABASE_URL`` PostgreSQL and/or ``REDIS_URL``).
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
import django_stubs_ext

from kirocrew_site.env import (
    env_bool,
    env_choice,
    env_duration,
    env_float,
    env_int,
    env_list,
    env_proxy_header,
    env_str,
    env_url,
    env_url_list,
)
from kirocrew_site.home.core.modes import private_umask
from kirocrew_site.secret_key import secret_key_load
from summaries.envconfig import summary_overrides_read

django_stubs_ext.monkeypatch()


BASE_DIR = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------- data root
# Every entry point loads this module before it writes a byte: from here on this process
# creates files 0600 and folders 0700 (kirocrew_site/home).
private_umask()
KIROCREW_HOME = Path(os.environ.get("KIROCREW_HOME") or BASE_DIR / "var").resolve()
KIROCREW_SESSIONS_DIR = KIROCREW_HOME / "sessions"
KIROCREW_CONFIG_PATH = KIROCREW_HOME / "config.json"
# The embedded profile must start on a fresh machine: SQLite needs its directory.
KIROCREW_SESSIONS_DIR.mkdir(parents=True, exist_ok=True)

# ---------------------------------------------------------------- core Django
DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = secret_key_load(KIROCREW_HOME, debug=DEBUG, env=os.environ)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list(
    "DJANGO_CSRF_TRUSTED_ORIGINS", "http://127.0.0.1:8000,http://localhost:8000"
)

INSTALLED_APPS = [
    "daphne",
    "kirocrew_site.accounts",  # before django.contrib.auth: see its AppConfig
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "ninja",
    "kirocrew_site.home",
    "transcripts",
    # Before summaries: receivers run in the order they were connected, and the turn's end
    # frame must go before an inline summary pass (summaries' turn_ended) announces one.
    "kirocrew_site.realtime",
    "summaries",
    "kirocrew_site.search",
    "kirocrew_site.dashboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "kirocrew_site.middleware.ContentSecurityPolicy",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # These two last, in this order: see their docstrings.
    "kirocrew_site.middleware.ApiHead",
    "kirocrew_site.middleware.ApiJsonErrors",
]

# ---------------------------------------------------------------- TLS and browser hardening
# KIROCREW_TLS=1: the site is reached over HTTPS (directly or through a TLS proxy). It
# turns on Secure cookies, the redirect to https and HSTS; each has a DJANGO_* override.
KIROCREW_TLS = env_bool("KIROCREW_TLS", False)
SESSION_COOKIE_SECURE = env_bool("DJANGO_SESSION_COOKIE_SECURE", KIROCREW_TLS)
CSRF_COOKIE_SECURE = env_bool("DJANGO_CSRF_COOKIE_SECURE", KIROCREW_TLS)
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", KIROCREW_TLS)
SECURE_HSTS_SECONDS = env_duration("DJANGO_SECURE_HSTS_SECONDS", 31_536_000 if KIROCREW_TLS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", KIROCREW_TLS)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", KIROCREW_TLS)
SECURE_PROXY_SSL_HEADER = env_proxy_header("DJANGO_SECURE_PROXY_SSL_HEADER")
# The dashboard and the admin run no inline script or style; the socket is same-origin
# ('self' covers ws:/wss: to this host). An empty value sends no policy.
KIROCREW_CSP = env_str(
    "KIROCREW_CSP",
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'",
)

ROOT_URLCONF = "kirocrew_site.urls"
WSGI_APPLICATION = "kirocrew_site.wsgi.application"
ASGI_APPLICATION = "kirocrew_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# ---------------------------------------------------------------- database
_sqlite_default = f"sqlite:///{KIROCREW_HOME / 'kirocrew.sqlite3'}"
# An empty DATABASE_URL would make dj_database_url ignore its default.
DATABASES = {
    "default": dj_database_url.parse(
        env_url("DATABASE_URL", _sqlite_default, schemes=dj_database_url.ENGINE_SCHEMES),
        conn_max_age=0,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool(
    "KIROCREW_DB_POOL", True
):
    # psycopg's pool (Django >= 5.1): daphne serves each request on its own thread, and a
    # new PostgreSQL connection costs ~6.4 ms wall and 4.4 ms of server CPU against
    # ~0.09 ms for a pooled one (bench/bench_db_pool.py). conn_max_age stays 0: the pool,
    # not the request, keeps the connection.
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": env_int("KIROCREW_DB_POOL_SIZE", 8, minimum=1),
        "timeout": 10,
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["ENGINE"] = "kirocrew_site.sqlite_home"
    # Daphne threads, Celery and commands may all write: wait instead of failing.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL;",
        "transaction_mode": "IMMEDIATE",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# A row may be up to the store's 8 MiB line limit; the body carries it JSON-encoded.
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# ---------------------------------------------------------------- auth, i18n, static
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
AUTHENTICATION_BACKENDS = ["kirocrew_site.dashboard.throttle.ThrottledModelBackend"]
KIROCREW_LOGIN_MAX_FAILURES = env_int("KIROCREW_LOGIN_MAX_FAILURES", 5)
KIROCREW_LOGIN_WINDOW_SECONDS = env_duration("KIROCREW_LOGIN_WINDOW_SECONDS", 900)
KIROCREW_SESSION_PAGE_TURNS = env_int("KIROCREW_SESSION_PAGE_TURNS", 20, minimum=1)
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"
LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TZ_NAME", "UTC")
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = KIROCREW_HOME / "staticfiles"

# ---------------------------------------------------------------- redis, channels, celery
_REDIS_SCHEMES = ("redis", "rediss", "unix")
REDIS_URL = env_url("REDIS_URL", "", schemes=_REDIS_SCHEMES)

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # redis-py 8 defaults socket_timeout to 5 s, the same as channels-redis's
            # 5 s BZPOPMIN: every socket idle for 5 s died with 1011. Read longer than
            # the blocking pop waits; connect fast.
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": 30, "socket_connect_timeout": 5}]
            },
        }
    }
else:
    # One process only: other processes' frames go through the relay (realtime/relay.py).
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# No CELERY_RESULT_BACKEND: the one task ignores its result and nothing waits on one.
_BROKER_SCHEMES = (*_REDIS_SCHEMES, "amqp", "amqps", "memory")
CELERY_BROKER_URL = env_url("CELERY_BROKER_URL", "", schemes=_BROKER_SCHEMES) or REDIS_URL
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
# Inline tasks still build a producer: name kombu's in-memory transport with a host, or
# the first turn end logs "No hostname was supplied" (an amqp://localhost default).
CELERY_BROKER_URL = CELERY_BROKER_URL or "memory://localhost/"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Redis broker: a task a killed worker never acked is redelivered after this long.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_duration("KIROCREW_CELERY_VISIBILITY_TIMEOUT", 3600, minimum=1)
}

# ---------------------------------------------------------------- transcripts
TRANSCRIPT_FSYNC = env_choice("KIROCREW_TRANSCRIPT_FSYNC", "rotate", ("never", "rotate", "always"))
TRANSCRIPT_MAX_BYTES = env_int("KIROCREW_TRANSCRIPT_MAX_BYTES", 10 * 1024 * 1024, minimum=1)
TRANSCRIPT_KEEP_LINES = env_int("KIROCREW_TRANSCRIPT_KEEP_LINES", 200, minimum=1)
KIROCREW_ARCHIVE_RETENTION_DAYS = env_int("KIROCREW_ARCHIVE_RETENTION_DAYS", 30)
KIROCREW_IMPORT_MAX_BYTES = env_int("KIROCREW_IMPORT_MAX_BYTES", 512 * 1024 * 1024)
KIROCREW_IMPORT_WORKERS = env_int("KIROCREW_IMPORT_WORKERS", 0, minimum=0)

# ---------------------------------------------------------------- summaries
KIROCREW_SUMMARY_MODEL = env_str("KIROCREW_SUMMARY_MODEL", "heuristic")
# config.json's environment overrides: read here only so that a bad value stops start-up.
summary_overrides_read()
KIROCREW_OPENAI_BASE_URL = env_url(
    "KIROCREW_OPENAI_BASE_URL", "http://127.0.0.1:11434/v1", schemes=("http", "https")
)
KIROCREW_OPENAI_API_KEY = env_str("KIROCREW_OPENAI_API_KEY", "")
# Ollama's and llama.cpp's usual addresses.
KIROCREW_LOCAL_MODEL_URLS = env_url_list(
    "KIROCREW_LOCAL_MODEL_URLS",
    "http://127.0.0.1:11434/v1,http://127.0.0.1:8080/v1",
    schemes=("http", "https"),
)
KIROCREW_OPENAI_TIMEOUT = env_float("KIROCREW_OPENAI_TIMEOUT", 60.0, minimum=0.001)
KIROCREW_OPENAI_MAX_TOKENS = env_int("KIROCREW_OPENAI_MAX_TOKENS", 2000, minimum=1)
# Seconds before the one retry of a failed model request: a setting so tests retry at
# once; not read from the environment (no operator asked).
KIROCREW_OPENAI_RETRY_BACKOFF = 0.5
KIROCREW_SUMMARY_FULL_PASS_EVERY = env_int("KIROCREW_SUMMARY_FULL_PASS_EVERY", 10, minimum=1)
# The key is read under Anthropic's own name.
KIROCREW_ANTHROPIC_BASE_URL = env_url(
    "KIROCREW_ANTHROPIC_BASE_URL", "https://api.anthropic.com", schemes=("http", "https")
)
ANTHROPIC_API_KEY = env_str("ANTHROPIC_API_KEY", "")
KIROCREW_ANTHROPIC_TIMEOUT = env_float("KIROCREW_ANTHROPIC_TIMEOUT", 60.0, minimum=0.001)
KIROCREW_ANTHROPIC_MAX_TOKENS = env_int("KIROCREW_ANTHROPIC_MAX_TOKENS", 2000, minimum=1)
KIROCREW_CLAUDE_CLI = env_str("KIROCREW_CLAUDE_CLI", "claude")
KIROCREW_CODEX_CLI = env_str("KIROCREW_CODEX_CLI", "codex")
KIROCREW_CLI_TIMEOUT = env_float("KIROCREW_CLI_TIMEOUT", 300.0, minimum=0.001)
KIROCREW_SUMMARY_CONTEXT_TOKENS = env_int("KIROCREW_SUMMARY_CONTEXT_TOKENS", 0, minimum=0)
KIROCREW_SUMMARY_BACKOFF = env_duration("KIROCREW_SUMMARY_BACKOFF", 600, minimum=0)
KIROCREW_SUMMARY_IN_FLIGHT_TTL = env_duration("KIROCREW_SUMMARY_IN_FLIGHT_TTL", 600, minimum=1)
# Longer than any write (lock wait + append + rotation).
KIROCREW_SLOT_DIRTY_TTL = env_duration("KIROCREW_SLOT_DIRTY_TTL", 60, minimum=1)
# "worker" is the former name of "process".
KIROCREW_SUMMARY_WORKERS = env_int("KIROCREW_SUMMARY_WORKERS", 1, minimum=1)
KIROCREW_SUMMARY_QUEUE = env_int("KIROCREW_SUMMARY_QUEUE", 256, minimum=1)
KIROCREW_SUMMARY_DISPATCH = env_choice(
    "KIROCREW_SUMMARY_DISPATCH",
    "process" if CELERY_TASK_ALWAYS_EAGER else "celery",
    ("celery", "process", "inline", "worker"),
)
if KIROCREW_SUMMARY_DISPATCH == "worker":
    KIROCREW_SUMMARY_DISPATCH = "process"
KIROCREW_SUMMARY_SETTLE = env_float("KIROCREW_SUMMARY_SETTLE", 2.0, minimum=0.0)

# ---------------------------------------------------------------- logging
_LOG_LEVEL = env_choice(
    "KIROCREW_LOG_LEVEL", "info", ("debug", "info", "warning", "error", "critical")
).upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "filters": {
        "trim_recursion": {"()": "kirocrew_site.logfilter.TrimRecursionTracebacks"},
        "refusals_in_one_line": {"()": "kirocrew_site.logfilter.RefusalsInOneLine"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["trim_recursion", "refusals_in_one_line"],
        }
    },
    "root": {"handlers": ["console"], "level": _LOG_LEVEL},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
