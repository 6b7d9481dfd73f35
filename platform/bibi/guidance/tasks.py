"""Celery tasks of the guidance app: the model work of suggestions and draft checks.

The task's name stays ``gpu.guidance_suggest`` (queued messages and workers know it by name).
"""

from __future__ import annotations

from celery import shared_task


@shared_task(
    name="gpu.guidance_suggest",
    # Time limits come with each message (the request's wait, GUIDANCE_SUGGEST_TIMEOUT).
    # A request waits for this result: it is stored (on Redis, for the waiting request), and
    # never delivered again after a lost worker (the request has answered 503 by then).
    ignore_result=False,
    acks_late=False,
)
def guidance_suggest_task(
    version_ids: list[int], original: str, variant: str | None, top_k: int, words: int
) -> dict:
    # Imported here, on the worker: suggestions load models, and with them torch.
    from bibi.guidance.compute import guidance_compute

    return guidance_compute(
        version_ids=version_ids, original=original, variant=variant, top_k=top_k, words=words
    )
