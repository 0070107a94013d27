"""Django settings, read from the environment (and `.env` when present).

Defaults run on one laptop: an embedded SQLite database in the user's data directory, loopback
only. Nothing is written inside the installed package or a checkout. Every variable is listed
with its meaning in README.md ("Configuration"); tests/test_docs.py keeps the two in step.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import dj_database_url
import platformdirs

from core import app_status, calls
from tomtom_mcp.env import env_bool, env_float, env_int, env_list, env_str, load_dotenv_file

BASE_DIR = Path(__file__).resolve().parent.parent
load_dotenv_file(BASE_DIR)

DATA_DIR = Path(env_str("TOMTOM_MCP_DATA_DIR") or platformdirs.user_data_dir("tomtom-maps-mcp", appauthor=False))
"""Where the server writes when nothing else is configured: the embedded SQLite database and the
collected static files (the user's data directory; never the installed package or a checkout)."""
EMBEDDED_DATABASE = DATA_DIR / "db.sqlite3"
"""The database used while `DATABASE_URL` is unset; the console script migrates it at start."""

# --- Django core -------------------------------------------------------------------------------
DEBUG = env_bool("DJANGO_DEBUG", False)
INSECURE_DEV_KEY = "django-insecure-development-key-set-DJANGO_SECRET_KEY-in-production"  # check --deploy flags it
SECRET_KEY = env_str("DJANGO_SECRET_KEY", INSECURE_DEV_KEY) or INSECURE_DEV_KEY
SECRET_KEY_FALLBACKS = env_list("DJANGO_SECRET_KEY_FALLBACKS", [])
"""Earlier DJANGO_SECRET_KEYs, newest first, still accepted while a rotation settles: Django's
signed values and the built-in authorization server's access tokens made with them stay valid."""

LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
ALLOWED_HOSTS = env_list("MCP_ALLOWED_HOSTS", LOOPBACK_HOSTS)
MCP_ALLOWED_ORIGINS = env_list("MCP_ALLOWED_ORIGINS", [])
"""Browser origins allowed to call /mcp (CORS and Origin validation). Loopback origins always are."""

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "tomtom_mcp",
    "governance",  # the app label stays `tools` (its tables, migrations and admin URLs)
    "protocol",
    "analytics",
    "tenants",
    "authserver",  # the built-in OAuth authorization server (OAUTH_BUILTIN, docs/oauth.md)
    "ninja",  # its Swagger UI template and static files for /api/analytics/docs
]

# Under ASGI, tomtom_mcp.asgi.ASGIHandler loads non-blocking subclasses of these (tomtom_mcp/middleware.py).
MIDDLEWARE = [
    "tomtom_mcp.middleware.McpHostMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

MCP_MIDDLEWARE = [
    "tomtom_mcp.middleware.McpHostMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.common.CommonMiddleware",
]
"""The part of `MIDDLEWARE` that serves `MCP_PATH` under ASGI (tomtom_mcp/asgi.py), in the same
order: Host, HTTPS and security headers, and the user-agent and slash rules. The rest serves
browsers (static files, sessions, CSRF, sign-in, messages, framing) and does nothing for a
JSON-RPC client but cost CPU on every call. `check` refuses a list that is not a subsequence
of `MIDDLEWARE` (`tomtom_mcp.E004`)."""

ROOT_URLCONF = "tomtom_mcp.urls"
ASGI_APPLICATION = "tomtom_mcp.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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

DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL is None:  # SQLite opens a file but never makes its directory
    # Unwritable: the first query fails and says so (stdio answers from the committed fixture).
    with contextlib.suppress(OSError):
        DATA_DIR.mkdir(parents=True, exist_ok=True)
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL or f"sqlite:///{EMBEDDED_DATABASE}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT") or DATA_DIR / "static")
"""Where `collectstatic` writes the admin's, the dashboard's and the API docs' files; WhiteNoise serves them."""
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Hash-named, gzip- and brotli-compressed copies written by `collectstatic`, served by WhiteNoise.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# --- Behind a TLS-terminating proxy (docs/deploy.md) ---------------------------------------------
# uvicorn (and gunicorn's uvicorn workers) take the client address and scheme from
# X-Forwarded-For/-Proto only from FORWARDED_ALLOW_IPS (default 127.0.0.1; gunicorn.conf.py).
_proxy_ssl_header = env_str("DJANGO_SECURE_PROXY_SSL_HEADER")
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_" + _proxy_ssl_header.upper().replace("-", "_"), "https") if _proxy_ssl_header else None
)
"""Trust this header's `https` from any peer: only when nothing but the proxy can reach the app."""
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", False)
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", False)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]  # the proxy's health checks come over plain HTTP
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)

# --- The MCP server ------------------------------------------------------------------------------
MCP_PATH = "/" + (env_str("MCP_PATH", "/mcp") or "/mcp").strip("/")
"""Where the URLconf serves MCP over Streamable HTTP, e.g. `/maps/mcp` behind a shared host."""
MCP_MAX_BODY_BYTES = env_int("MCP_MAX_BODY_BYTES", 1024 * 1024)
MCP_SESSION_SECRETS = env_list("MCP_SESSION_SECRETS", []) or [SECRET_KEY]
"""Secrets that sign `Mcp-Session-Id`s, newest first; every replica needs the same list."""
MCP_HOSTED = env_bool("MCP_HOSTED", False)
"""Hosted mode: over HTTP a caller must send its own TomTom key; the server's key is never used."""

# --- Sign-in for hosted connectors (docs/oauth.md) ------------------------------------------------
MCP_AUTH = env_list("MCP_AUTH", ["api-key"])
"""How HTTP callers authenticate: `api-key` (a TomTom key in a header), `oauth` (an access token
from OAUTH_ISSUER, mapped to a tenant), or both."""
OAUTH_ISSUER = env_str("OAUTH_ISSUER")
"""The authorization server whose access tokens are accepted: their `iss`, exactly."""
OAUTH_JWKS_URL = env_str("OAUTH_JWKS_URL")
"""Where the issuer publishes its signing keys (the `jwks_uri` of its metadata)."""
OAUTH_RESOURCE = env_str("OAUTH_RESOURCE")
"""This server's canonical URL, e.g. `https://mcp.example.com/mcp`: the `aud` every token must carry."""
OAUTH_AUTHORIZATION_SERVERS = env_list("OAUTH_AUTHORIZATION_SERVERS", []) or ([OAUTH_ISSUER] if OAUTH_ISSUER else [])
OAUTH_REQUIRED_SCOPES = env_list("OAUTH_REQUIRED_SCOPES", [])
OAUTH_TENANT_CLAIM = env_str("OAUTH_TENANT_CLAIM", "sub") or "sub"
OAUTH_ALGORITHMS = env_list("OAUTH_ALGORITHMS", ["RS256", "ES256", "PS256", "EdDSA"])
OAUTH_LEEWAY_SECONDS = env_int("OAUTH_LEEWAY_SECONDS", 30)
OAUTH_JWKS_CACHE_SECONDS = env_int("OAUTH_JWKS_CACHE_SECONDS", 300)
"""How long the issuer's signing keys are fresh; past it the next request fetches them again."""
OAUTH_JWKS_MAX_STALE_SECONDS = env_int("OAUTH_JWKS_MAX_STALE_SECONDS", 3600)
"""How long past OAUTH_JWKS_CACHE_SECONDS the keys stay in use while a new set cannot be fetched or is refused."""
OAUTH_BUILTIN = env_bool("OAUTH_BUILTIN", False)
"""Be this server's own OAuth authorization server (authserver/, docs/oauth.md): people sign in with
their Django account and consent; its issuer is the origin of OAUTH_RESOURCE."""
OAUTH_BUILTIN_ACCESS_TOKEN_SECONDS = env_int("OAUTH_BUILTIN_ACCESS_TOKEN_SECONDS", 600)
"""Lifetime of a built-in access token (a JWT signed with a key derived from DJANGO_SECRET_KEY)."""
OAUTH_BUILTIN_REFRESH_TOKEN_SECONDS = env_int("OAUTH_BUILTIN_REFRESH_TOKEN_SECONDS", 30 * 86400)
"""Lifetime of a built-in refresh token; each use replaces it (rotation), and reusing one revokes the grant."""
OAUTH_BUILTIN_CODE_SECONDS = env_int("OAUTH_BUILTIN_CODE_SECONDS", 60)
"""Lifetime of an authorization code (one use)."""
OAUTH_BUILTIN_REVOCATION_SECONDS = env_int("OAUTH_BUILTIN_REVOCATION_SECONDS", 30)
"""How soon a revoked grant's access tokens are refused by every replica (the revoked-grant set's refresh)."""
OAUTH_BUILTIN_REGISTRATIONS_PER_HOUR = env_int("OAUTH_BUILTIN_REGISTRATIONS_PER_HOUR", 20)
"""Dynamic client registrations (RFC 7591) accepted per client address per hour."""
OAUTH_CLIENT_METADATA_MAX_BYTES = env_int("OAUTH_CLIENT_METADATA_MAX_BYTES", 5 * 1024)
"""Largest Client ID Metadata Document fetched (bytes); a larger one is refused `invalid_client`."""
TENANT_KEY_ENCRYPTION_KEYS = env_list("TENANT_KEY_ENCRYPTION_KEYS", [])
"""Fernet keys that encrypt tenants' TomTom keys at rest, newest first; unset: derived from DJANGO_SECRET_KEY."""

# --- Tool-surface governance (docs/governance.md) ------------------------------------------------
GOVERNANCE_REFRESH_SECONDS = env_int("GOVERNANCE_REFRESH_SECONDS", 5)
"""How old a replica's copy of the tool-surface tables may get before it rereads them."""
GOVERNANCE_CLOCK = env_str("GOVERNANCE_CLOCK", "") or ""
"""Import path of a function returning the current (aware) time that retire-on dates are judged
by; empty: the system clock (governance/clock.py). For rehearsing a retirement on staging."""
TENANT_TOOL_NAMES = "governance.selectors.tool_names_for_tenants"
"""What a tenant's allow-list may name (the project wiring tells the tenants' admin where the tool
names live: the apps do not import each other)."""
TOOL_STATUSES = "governance.selectors.tool_statuses"
"""Where the analytics' evidence pages read each tool name's state on the tool surface (`live`,
`deprecated`, `alias`, `retired`, `dropped`, `app-only`): which names may be aliased, which
tools deprecated, which suggested as the closest to an unknown name."""

# --- Widgets (docs/widgets.md) -------------------------------------------------------------------
WIDGET_MAPLIBRE_URL = env_str("WIDGET_MAPLIBRE_URL")
"""Folder URL the map widget loads MapLibre GL JS from; unset: the pinned jsDelivr copy."""
DATA_VIZ_ALLOWED_NETWORKS = env_list("DATA_VIZ_ALLOWED_NETWORKS", [])
"""Address ranges tomtom-data-viz may download from although they are not public (an intranet host)."""

# --- App-status analytics (docs/analytics.md) ----------------------------------------------------
ANALYTICS_LIVE_INGEST = env_bool("ANALYTICS_LIVE_INGEST", False)
"""Also write app-status events to the database as they are logged, batched off the request path."""
ANALYTICS_API_TOKENS = env_list("ANALYTICS_API_TOKENS", [])
"""Bearer tokens /api/analytics/ accepts besides a staff session; none by default."""
ANALYTICS_METRICS_TOKEN = env_str("ANALYTICS_METRICS_TOKEN", "") or ""
"""Bearer token of the Prometheus endpoint /analytics/metrics; empty: no metrics, the endpoint is off."""
ANALYTICS_MIN_EVENTS = env_int("ANALYTICS_MIN_EVENTS", 20)
"""Dashboard points from fewer events than this are drawn hollow: a rate from a small sample."""
ANALYTICS_INGEST_LAG_SECONDS = env_int("ANALYTICS_INGEST_LAG_SECONDS", 7200)
"""The overview warns when the newest stored event is older than this (the hourly ingestion timer
ships the last 65 minutes: two hours is late); the ingestion-lag alert uses the same figure."""
ANALYTICS_WIDGET_GRACE_SECONDS = env_int("ANALYTICS_WIDGET_GRACE_SECONDS", 600)
"""The widget funnel's window: a widget report joins the delivery it names when logged within this
many seconds of it, and a delivery with no such report is `never reported` once the newest stored
event is this much later (docs/analytics.md, "Widget funnel")."""
ANALYTICS_SESSION_MAX_REPORTS = env_int("ANALYTICS_SESSION_MAX_REPORTS", 1000)
"""Widget reports counted per client session and UTC day; the ones after it are stored but only
counted as `dropped` (a session sends one per widget result: 1,000 is far above a day's use)."""
ANALYTICS_SESSION_MAX_TOOLS = env_int("ANALYTICS_SESSION_MAX_TOOLS", 32)
"""Distinct tool names counted in the widget reports of one client session (or, without one, one
client name) and UTC day: twice the tools a widget draws; reports naming another are `dropped`."""
ANALYTICS_CORRECTION_WINDOW_SECONDS = env_int("ANALYTICS_CORRECTION_WINDOW_SECONDS", 300)
"""The self-correction window: a failing tool call (`invalid_arguments`, `unknown_tool`, `retired`)
counts as corrected when the same client session calls the same tool, or one its error pointed to,
successfully within this many seconds after it (docs/analytics.md, "Evidence figures")."""
ANALYTICS_RETENTION_DAYS = env_int("ANALYTICS_RETENTION_DAYS", 0)
"""`manage.py analytics_retention` drops raw events older than this many days (rollups stay); 0 keeps them."""

# --- TomTom --------------------------------------------------------------------------------------
TOMTOM_API_KEY = env_str("TOMTOM_API_KEY")
TOMTOM_API_BASE_URL = (env_str("TOMTOM_API_BASE_URL", "https://api.tomtom.com") or "").rstrip("/")
TOMTOM_MAPS_BACKEND = env_str("TOMTOM_MAPS_BACKEND", "tomtom-orbis-maps")
TOMTOM_CONNECT_TIMEOUT = env_float("TOMTOM_CONNECT_TIMEOUT", 5.0)
TOMTOM_TIMEOUT = env_float("TOMTOM_TIMEOUT", 20.0)
"""Total deadline in seconds for all of one tool call's TomTom requests, retries, backoff and bodies included."""
TOMTOM_MAX_RETRIES = env_int("TOMTOM_MAX_RETRIES", 2)
TOMTOM_MAX_RETRY_AFTER = env_float("TOMTOM_MAX_RETRY_AFTER", 60.0)
"""Longest `Retry-After` (seconds) honoured, and the most a `retry_later` error's `retry_after` says."""
TOMTOM_MAX_BODY_BYTES = env_int("TOMTOM_MAX_BODY_BYTES", 16 * 1024 * 1024)
"""Largest TomTom answer as sent (compressed or not); a larger one is `malformed` and not read."""
TOMTOM_MAX_DECODED_BYTES = env_int("TOMTOM_MAX_DECODED_BYTES", 64 * 1024 * 1024)
"""Largest TomTom answer once decompressed; checked while inflating, so a bomb never fills memory."""
TOMTOM_MAX_HEADER_BYTES = env_int("TOMTOM_MAX_HEADER_BYTES", 64 * 1024)
"""Largest head of a TomTom answer (status line and headers); reading stops past it, `malformed`."""
TOMTOM_MAX_CONNECTIONS = env_int("TOMTOM_MAX_CONNECTIONS", 64)
"""Connections to TomTom in use at once per worker (event loop); more requests wait, within their deadline."""
MCP_MAX_FULL_CHARS = env_int("MCP_MAX_FULL_CHARS", 5_000_000)
"""Largest `response_detail: full` result (characters of JSON); a larger one asks for compact or geometry."""

# --- OpenTelemetry traces (docs/adr/0035-traces.md) ------------------------------------------------
TRACES_ENABLED = env_bool("TRACES_ENABLED", False)
"""Make spans for MCP requests, tool calls and TomTom requests, exported over OTLP/HTTP (the
`traces` extra); off: none is made and no exporter starts."""
OTEL_SERVICE_NAME = env_str("OTEL_SERVICE_NAME", "tomtom-maps-mcp") or "tomtom-maps-mcp"
OTEL_EXPORTER_OTLP_ENDPOINT = env_str("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318") or ""
"""The collector's OTLP/HTTP base URL; spans go to `<it>/v1/traces`."""
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = env_str("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
"""The full URL spans are sent to, when it is not `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`."""
OTEL_BSP_MAX_QUEUE_SIZE = env_int("OTEL_BSP_MAX_QUEUE_SIZE", 2048)
"""Ended spans a worker keeps for export at most; more are dropped, never waited for."""
OTEL_BSP_MAX_EXPORT_BATCH_SIZE = env_int("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)
"""Spans sent in one export request at most."""

# --- Logging -------------------------------------------------------------------------------------
LOG_LEVEL = (env_str("LOG_LEVEL", "INFO") or "INFO").upper()
LOGGING_CONFIG = "core.logging.configure"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "core.logging.JsonLinesFormatter"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}},
    "root": {"handlers": ["stderr"], "level": LOG_LEVEL},
    "loggers": {
        # The SDK logs every stateless request at INFO, and httpx logs full URLs (with the key).
        "mcp": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        "uvicorn.access": {"level": "WARNING"},
        "django.request": {"level": "ERROR"},
    },
}
if ANALYTICS_METRICS_TOKEN:  # Prometheus metrics from the tool-call and app-status events (analytics/metrics.py)
    LOGGING["handlers"]["metrics"] = {"()": "analytics.metrics.MetricsHandler"}  # type: ignore[index]
    for _name in (calls.LOGGER, app_status.LOGGER):
        LOGGING["loggers"][_name] = {"handlers": ["metrics"]}  # type: ignore[index]
