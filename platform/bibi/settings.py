"""bibi's one settings module: every deployment knob comes from the environment.

Each variable is listed, with a comment, in ``deploy/env.example``. With no environment
at all this gives the *embedded default*: a SQLite file under ``var/`` and Celery tasks
run in-process, so the demo needs neither PostgreSQL nor Redis.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import csp.constants
import dj_database_url
from django.core.exceptions import ImproperlyConfigured

# platform/bibi/settings.py -> the checkout root (an editable install keeps it there).
BASE_DIR = Path(__file__).resolve().parents[2]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a boolean: use one of 1/0, true/false, yes/no, on/off"
    )


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_path(name: str, default: Path) -> Path:
    raw = os.environ.get(name)
    return Path(raw).expanduser().resolve() if raw else default


DEBUG = env_bool("DEBUG", False)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is required when DEBUG is off: set SECRET_KEY (see deploy/env.example), "
            "or set DEBUG=1 for local work"
        )
    # A fixed key is acceptable only for local debugging: sessions signed with it are worthless.
    SECRET_KEY = "bibi-insecure-debug-only-key"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# HTTPS. A deployment (DEBUG off) is https-only unless told otherwise; local work (DEBUG on, the
# demo on http://127.0.0.1:8000) gets the relaxed values, since a browser would refuse secure
# cookies and follow the redirect to a port that speaks no TLS.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# Container and load-balancer health probes call the site over plain http from inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
# Trusted only when named: a proxy that terminates TLS must set this header on every request and
# drop the one a client sends, or any client could claim to be on https.
_proxy_ssl_header = env_str("SECURE_PROXY_SSL_HEADER").strip()
if _proxy_ssl_header and not re.fullmatch(r"[A-Za-z0-9-]+", _proxy_ssl_header):
    raise ImproperlyConfigured(
        f"SECURE_PROXY_SSL_HEADER={_proxy_ssl_header!r} is not a header name: give the name "
        "only (e.g. X-Forwarded-Proto); bibi trusts it when its value is 'https'"
    )
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_" + _proxy_ssl_header.upper().replace("-", "_"), "https") if _proxy_ssl_header else None
)

VAR_DIR = env_path("VAR_DIR", BASE_DIR / "var")
UPLOAD_ROOT = env_path("UPLOAD_ROOT", VAR_DIR / "uploads")
MODEL_STORE = env_path("MODEL_STORE", VAR_DIR / "models")
MEDIA_ROOT = UPLOAD_ROOT
STATIC_ROOT = env_path("STATIC_ROOT", VAR_DIR / "static")
STATIC_URL = "static/"
MEDIA_URL = "media/"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "bibi.sharedtasks",
    "bibi.systems",
    "bibi.pairs",
    "bibi.evaluation",
    "bibi.guidance",
    "bibi.baseline",
    "bibi.web",
    "bibi.demo",
    "bibi.bench",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django_permissions_policy.PermissionsPolicyMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "bibi.middleware.refuse_unstorable_query",
    "bibi.middleware.DatabaseBusyMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

# Pages load only this site's own scripts, styles and images: no inline script, no inline
# style attribute, nothing from elsewhere (a heat-map shade is a class, the API docs' set-up
# script a file). An injected <script> or style="" is refused by the browser.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [csp.constants.SELF],
        "script-src": [csp.constants.SELF],
        "style-src": [csp.constants.SELF],
        # The API docs (Swagger UI) draw their icons from data: URLs.
        "img-src": [csp.constants.SELF, "data:"],
        "connect-src": [csp.constants.SELF],
        "object-src": [csp.constants.NONE],
        "base-uri": [csp.constants.SELF],
        "form-action": [csp.constants.SELF],
        "frame-ancestors": [csp.constants.NONE],
    }
}
# No page uses a device or sensor: refuse them all, for this site and anything it frames.
PERMISSIONS_POLICY: dict[str, list[str]] = {
    feature: []
    for feature in (
        "accelerometer", "autoplay", "camera", "display-capture", "encrypted-media",
        "fullscreen", "geolocation", "gyroscope", "magnetometer", "microphone", "midi",
        "payment", "usb",
    )
}  # fmt: skip

ROOT_URLCONF = "bibi.urls"
WSGI_APPLICATION = "bibi.wsgi.application"
ASGI_APPLICATION = "bibi.asgi.application"

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

DATABASE_URL = env_str("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'bibi.sqlite3'}"
DATABASES = {
    "default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60))
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    if DATABASES["default"]["NAME"] not in ("", ":memory:"):
        Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    # SQLite holds one writer at a time. Every transaction takes the write lock as it begins
    # (IMMEDIATE): one that read first and wrote later (a deferred one) would be refused at once
    # when another writer came in between, whatever the timeout. A writer waits up to
    # SQLITE_TIMEOUT seconds for the lock; past that the request answers 503 with Retry-After
    # (bibi.middleware.DatabaseBusyMiddleware). WAL lets reads go on while one writes.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        transaction_mode="IMMEDIATE",
        timeout=env_int("SQLITE_TIMEOUT", 20),
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Pages sign people in with a session; the API also takes tokens (REST_FRAMEWORK below).
LOGIN_URL = "web:login"
LOGIN_REDIRECT_URL = "web:home"
LOGOUT_REDIRECT_URL = "web:home"
# Password-reset links stay valid this long (seconds).
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT", 3 * 24 * 3600)

# E-mail (password resets). Without EMAIL_HOST, messages are written to the log (the console
# backend), so a local site needs no mail server; with it, they go out by SMTP.
EMAIL_HOST = env_str("EMAIL_HOST")
EMAIL_BACKEND = env_str("EMAIL_BACKEND") or (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured(
        "EMAIL_USE_TLS and EMAIL_USE_SSL exclude each other: for implicit TLS (port 465) set "
        "EMAIL_USE_SSL=1 and EMAIL_USE_TLS=0"
    )
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 30)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL") or "bibi <noreply@localhost>"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# A request body without its files (a JSON body, form fields): the largest accepted. JSON is
# parsed whole, at several times its size in memory, so this stays small.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 10 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = env_int("FILE_UPLOAD_MAX_MEMORY_SIZE", 5 * 1024 * 1024)
FILE_UPLOAD_TEMP_DIR = env_str("FILE_UPLOAD_TEMP_DIR") or None
# The largest file of each kind of upload, refused while it streams in (bibi/uploads.py).
# Files that are read row by row are read whole, at several times their size in memory.
EXAMPLES_UPLOAD_MAX_BYTES = env_int("EXAMPLES_UPLOAD_MAX_BYTES", 50 * 1024 * 1024)
PAIR_SET_UPLOAD_MAX_BYTES = env_int("PAIR_SET_UPLOAD_MAX_BYTES", 20 * 1024 * 1024)
PREDICTIONS_UPLOAD_MAX_BYTES = env_int("PREDICTIONS_UPLOAD_MAX_BYTES", 20 * 1024 * 1024)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "bibi.api.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "bibi.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "bibi.api.Pagination",
    "PAGE_SIZE": env_int("API_PAGE_SIZE", 50),
    # DRF's rate throttles, letting requests through when the cache is unreachable.
    "DEFAULT_THROTTLE_CLASSES": [
        "bibi.throttling.AnonRateThrottle",
        "bibi.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_str("API_THROTTLE_ANON", "120/minute"),
        "user": env_str("API_THROTTLE_USER", "1200/minute"),
        # Each suggestion or draft check runs every hosted model on a gpu worker.
        "guidance_suggest": env_str("GUIDANCE_SUGGEST_THROTTLE", "30/minute"),
        # The gpu workers' model archive download, per address, credential or not: a worker
        # fetches an archive once per model its store lacks (bibi.systems.worker_apis).
        "worker_archive": env_str("WORKER_ARCHIVE_THROTTLE", "60/minute"),
    },
    # Anonymous callers are told apart by address. Unset, DRF would believe any
    # X-Forwarded-For a caller sends, and a new one per request escapes the throttle.
    "NUM_PROXIES": env_int("API_NUM_PROXIES", 0),
}

# ?page_size= on a list may ask for up to this many rows.
API_MAX_PAGE_SIZE = env_int("API_MAX_PAGE_SIZE", 500)

SPECTACULAR_SETTINGS = {
    "TITLE": "bibi API",
    "DESCRIPTION": "Build It, Break It shared tasks: tasks, phases, datasets, teams, systems and pairs.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI's files come from the sidecar package: the docs page needs no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "PhaseKindEnum": "bibi.sharedtasks.models.Phase.Kind",
        "TeamKindEnum": "bibi.sharedtasks.models.Team.Kind",
        "SystemKindEnum": "bibi.systems.models.System.Kind",
        "ScoringRunStatusEnum": "bibi.evaluation.models.ScoringRun.Status",
    },
}

# Celery. With no REDIS_URL, tasks run in-process (the embedded default) so the demo works
# without a broker; with one, Redis is broker and result store.
REDIS_URL = env_str("REDIS_URL")

# The cache holds the API's throttle counts, which every web process must share: Redis when
# there is one, under its own key prefix beside Celery's keys (so never cache.clear() it:
# that empties the whole Redis database, queues included), else this process's memory.
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "bibi-cache",
            # A Redis that is down or unreachable must fail a request's throttle count
            # quickly (the throttle then lets it through), never hang it.
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# The in-memory transport needs a host name, or kombu warns on every send.
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
# A worker lost mid-task must not lose the task: with late acks it goes back to the queue.
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker on several queues takes from the first non-empty one in its -Q order (not in turns):
# a gpu worker on "interactive,gpu" runs every waiting suggestion before its next scoring chunk.
CELERY_BROKER_TRANSPORT_OPTIONS = {"queue_order_strategy": "priority"}
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 15 * 60)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 20 * 60)
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env_int("CELERY_WORKER_MAX_MEMORY_PER_CHILD", 0) or None
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_EXPIRES = env_int("CELERY_RESULT_EXPIRES", 24 * 3600)
# Seconds between two runs of the housekeeping task that beat sends: it records that beat
# is alive (/healthz), sends again work the broker lost, takes back work whose worker vanished
# and removes half-unpacked models. Without beat none of that happens.
HOUSEKEEPING_INTERVAL = env_int("HOUSEKEEPING_INTERVAL", 60)
# Hours before the break deadline when housekeeping e-mails a breaker team whose draft holds
# pairs it has not submitted (once per draft and deadline).
DRAFT_REMINDER_HOURS = env_int("DRAFT_REMINDER_HOURS", 24)
CELERY_BEAT_SCHEDULE = {
    "housekeeping": {"task": "default.housekeeping", "schedule": float(HOUSEKEEPING_INTERVAL)},
}

# Hosted builder systems: what an upload may be, and what validating one may cost.
SYSTEM_UPLOAD_MAX_BYTES = env_int("SYSTEM_UPLOAD_MAX_BYTES", 2 * 1024**3)
SYSTEM_ARCHIVE_MAX_FILES = env_int("SYSTEM_ARCHIVE_MAX_FILES", 200)
SYSTEM_ARCHIVE_MAX_UNPACKED_BYTES = env_int("SYSTEM_ARCHIVE_MAX_UNPACKED_BYTES", 4 * 1024**3)
SYSTEM_ARCHIVE_MAX_RATIO = env_int("SYSTEM_ARCHIVE_MAX_RATIO", 50)
# Read by the worker that runs the validation (and by the web process on the embedded default).
SYSTEM_VALIDATION_SOFT_TIME_LIMIT = env_int("SYSTEM_VALIDATION_SOFT_TIME_LIMIT", 30 * 60)
SYSTEM_VALIDATION_TIME_LIMIT = env_int("SYSTEM_VALIDATION_TIME_LIMIT", 35 * 60)
# Validation runs a version gets before a model that keeps killing its worker is failed.
SYSTEM_VALIDATION_MAX_ATTEMPTS = env_int("SYSTEM_VALIDATION_MAX_ATTEMPTS", 3)
# On the embedded default (tasks in-process), validate in a thread of the web process after
# the upload commits, instead of inside the upload request (which could block for minutes).
SYSTEM_VALIDATION_IN_BACKGROUND = env_bool("SYSTEM_VALIDATION_IN_BACKGROUND", True)
# A running validation writes a heartbeat four times in this many seconds; with none for
# this long its worker is taken for gone and the version is queued again.
SYSTEM_WORKER_LOST_AFTER = env_int("SYSTEM_WORKER_LOST_AFTER", 120)
# A version still queued this many seconds after its work was sent is sent again.
SYSTEM_QUEUE_RESEND_AFTER = env_int("SYSTEM_QUEUE_RESEND_AFTER", 300)
SYSTEM_MAX_SEQUENCE_LENGTH = env_int("SYSTEM_MAX_SEQUENCE_LENGTH", 128)
SYSTEM_BATCH_SIZE = env_int("SYSTEM_BATCH_SIZE", 32)
# Hours after the break phase during which self-reported systems predict the pair texts;
# builder teams see variant labels only after it (never past the start of the results).
PAIR_PREDICTIONS_WINDOW_HOURS = env_int("PAIR_PREDICTIONS_WINDOW_HOURS", 48)
# Minutes a pair handed to a validator stays theirs; past that it goes back to the queue.
VALIDATION_ASSIGNMENT_MINUTES = env_int("VALIDATION_ASSIGNMENT_MINUTES", 120)
# Pairs one validator may hand back unanswered in a task: skipping without a limit lets a
# validator walk the queue to a pair they chose.
VALIDATION_SKIPS_MAX = env_int("VALIDATION_SKIPS_MAX", 10)
# Models a worker process keeps loaded (least recently used dropped first). 0: as many as fit
# in SYSTEM_MODEL_MEMORY_PERCENT of the worker's memory (the GPU's when it runs on one).
SYSTEM_MODEL_CACHE_SIZE = env_int("SYSTEM_MODEL_CACHE_SIZE", 0)
SYSTEM_MODEL_MEMORY_PERCENT = env_int("SYSTEM_MODEL_MEMORY_PERCENT", 40)
if not 1 <= SYSTEM_MODEL_MEMORY_PERCENT <= 100:
    raise ImproperlyConfigured(
        f"SYSTEM_MODEL_MEMORY_PERCENT={SYSTEM_MODEL_MEMORY_PERCENT} must be between 1 and 100."
    )
# Bytes of unpacked models a worker machine keeps in MODEL_STORE (least recently used out).
SYSTEM_MODEL_STORE_MAX_BYTES = env_int("SYSTEM_MODEL_STORE_MAX_BYTES", 50 * 1024**3)
# The numeric precision of the workers' model passes: fp32 (exact), tf32 or bf16 (faster on
# a GPU, approximate: see fim_engine/README.md). Each cell records the precision it was made in.
SYSTEM_PRECISION = env_str("SYSTEM_PRECISION", "fp32")
SYSTEM_PRECISIONS = ("fp32", "tf32", "bf16")  # fim_engine.PRECISIONS, without importing torch
if SYSTEM_PRECISION not in SYSTEM_PRECISIONS:
    raise ImproperlyConfigured(
        f"SYSTEM_PRECISION={SYSTEM_PRECISION!r}: use one of {', '.join(SYSTEM_PRECISIONS)}."
    )

# Workers on machines of their own (no volume shared with the web process) fetch model
# archives by digest: from the bucket when SYSTEM_ARCHIVE_BUCKET is set, else from the platform.
# The worker credential: the platform serves archives to it alone (unset: the endpoint is off).
# Anyone who guesses it gets every team's private models, so a short one is refused here, at
# startup of every process (web, workers, manage.py), rather than served.
WORKER_TOKEN = env_str("WORKER_TOKEN")
WORKER_TOKEN_MIN_LENGTH = 32
if WORKER_TOKEN and len(WORKER_TOKEN) < WORKER_TOKEN_MIN_LENGTH:
    raise ImproperlyConfigured(
        f"WORKER_TOKEN is {len(WORKER_TOKEN)} characters long: the worker credential must be at "
        f"least {WORKER_TOKEN_MIN_LENGTH} (`openssl rand -hex 32` gives 64), or unset to turn "
        "the archive endpoint off"
    )
# The platform's address as a worker reaches it (https://bibi.example.org); unset on the web side.
WORKER_PLATFORM_URL = env_str("WORKER_PLATFORM_URL")
WORKER_FETCH_TIMEOUT = env_int("WORKER_FETCH_TIMEOUT", 60)
# An S3-compatible bucket for archives (django-storages, `pip install bibi[s3]`): uploads are
# copied there by digest and workers read them from it. Credentials: AWS_ACCESS_KEY_ID and
# AWS_SECRET_ACCESS_KEY in the environment, as boto3 reads them.
SYSTEM_ARCHIVE_BUCKET = env_str("SYSTEM_ARCHIVE_BUCKET")
STORAGES = {  # Django's defaults, and the archives' bucket when one is set
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
if SYSTEM_ARCHIVE_BUCKET:
    STORAGES["archives"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": SYSTEM_ARCHIVE_BUCKET,
            "endpoint_url": env_str("SYSTEM_ARCHIVE_BUCKET_ENDPOINT") or None,
            "region_name": env_str("SYSTEM_ARCHIVE_BUCKET_REGION") or None,
            "file_overwrite": False,
        },
    }

# Evaluation: the prediction matrix of the pairs, filled in chunks on the gpu queue.
# Missing cells of one version per gpu task.
EVALUATION_CHUNK_SIZE = env_int("EVALUATION_CHUNK_SIZE", 256)
EVALUATION_CHUNK_SOFT_TIME_LIMIT = env_int("EVALUATION_CHUNK_SOFT_TIME_LIMIT", 20 * 60)
EVALUATION_CHUNK_TIME_LIMIT = env_int("EVALUATION_CHUNK_TIME_LIMIT", 25 * 60)
# A chunk or a run with no progress for this long is sent again (its message was lost).
EVALUATION_STALL_TIMEOUT = env_int("EVALUATION_STALL_TIMEOUT", 30 * 60)
EVALUATION_TASK_MAX_RETRIES = env_int("EVALUATION_TASK_MAX_RETRIES", 8)
# Guidance: suggestions and draft checks are jobs on the interactive queue (bibi/guidance).
# Seconds a request waits for its job before answering 202 with the job to poll.
GUIDANCE_SUGGEST_WAIT = env_int("GUIDANCE_SUGGEST_WAIT", 2)
# Seconds a job's message may wait for a worker (then it expires unrun) and may run.
GUIDANCE_SUGGEST_TIMEOUT = env_int("GUIDANCE_SUGGEST_TIMEOUT", 60)
# Seconds a job (and its answer) can be polled for.
GUIDANCE_JOB_TTL = env_int("GUIDANCE_JOB_TTL", 600)
# Jobs in flight at once: per user, per team, on the whole site (a 429 names the cap reached).
GUIDANCE_INFLIGHT_PER_USER = env_int("GUIDANCE_INFLIGHT_PER_USER", 2)
GUIDANCE_INFLIGHT_PER_TEAM = env_int("GUIDANCE_INFLIGHT_PER_TEAM", 4)
GUIDANCE_INFLIGHT_TOTAL = env_int("GUIDANCE_INFLIGHT_TOTAL", 16)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
