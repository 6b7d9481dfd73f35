"""gunicorn's settings for bibi's web service, read by the image's command and by compose.yaml
(``gunicorn bibi.wsgi --config /app/deploy/gunicorn.conf.py``).

Threaded workers (``gthread``): a request that waits, such as a suggestion request holding on
for its job up to ``GUIDANCE_SUGGEST_WAIT`` seconds or an upload read off a slow link, holds one
thread, not a whole process, so pages keep being served beside it. ``WEB_CONCURRENCY`` processes
of ``WEB_THREADS`` threads each; deploy/README.md ("Sizing the web service") gives the figures.
"""

import os


def _count(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip() or str(default)
    try:
        value = int(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a whole number, not {raw!r}") from None
    if not 1 <= value <= 256:
        raise SystemExit(f"{name} must be between 1 and 256, not {value}")
    return value


workers = _count("WEB_CONCURRENCY", 3)
worker_class = "gthread"
threads = _count("WEB_THREADS", 8)
# A worker still reading a large upload off a slow link must not be killed at 30 s.
timeout = 120
accesslog = "-"
