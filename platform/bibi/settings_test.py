"""Settings for the test suite.

``BIBI_TEST_BACKEND`` picks what the tests run against:

- ``services`` (default): the real PostgreSQL and Redis, from ``DATABASE_URL`` and ``REDIS_URL``
  or, when unset, the ones this project's machines run on localhost;
- ``embedded``: the demo's embedded default, SQLite and in-process Celery tasks.
"""

from __future__ import annotations

import os

BACKEND = os.environ.get("BIBI_TEST_BACKEND", "services")
if BACKEND == "services":
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")
elif BACKEND == "embedded":
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("REDIS_URL", None)
else:
    raise RuntimeError(f"BIBI_TEST_BACKEND={BACKEND!r}: use 'services' or 'embedded'")

os.environ.setdefault("SECRET_KEY", "bibi-test-suite-key")
os.environ.setdefault("DEBUG", "0")
# The suite calls the API far faster than any person: throttling is tested on its own.
os.environ.setdefault("API_THROTTLE_ANON", "100000/minute")
os.environ.setdefault("API_THROTTLE_USER", "100000/minute")
os.environ.setdefault("GUIDANCE_SUGGEST_THROTTLE", "100000/minute")
os.environ.setdefault("WORKER_ARCHIVE_THROTTLE", "100000/minute")

from bibi.settings import *  # noqa: E402,F403
from bibi.settings import BASE_DIR, DATABASES, env_path  # noqa: E402

# The suite's fixtures build ready systems by uploading them and reading the outcome at once:
# on the embedded backend they validate inside the upload, as with the setting off. The
# background path is tested on its own (tests/bibi/systems/test_validation.py).
SYSTEM_VALIDATION_IN_BACKGROUND = False

VAR_DIR = env_path("VAR_DIR", BASE_DIR / "var" / "test")
UPLOAD_ROOT = MEDIA_ROOT = VAR_DIR / "uploads"
MODEL_STORE = VAR_DIR / "models"
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
# The suite runs with DEBUG off, so https-only by default, but the test client speaks plain http;
# the redirect itself is tested with the setting turned back on.
SECURE_SSL_REDIRECT = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Two suites running at once on one server (two checkouts, a developer and a helper) must not
# drop each other's database: name it per run with BIBI_TEST_DATABASE.
if BACKEND == "services":
    DATABASES["default"]["TEST"] = {"NAME": os.environ.get("BIBI_TEST_DATABASE", "test_bibi")}
