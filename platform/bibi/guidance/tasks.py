"""Celery tasks of the guidance app: the model work of suggestions and draft checks.

The task's name stays ``gpu.guidance_suggest`` (queued messages and workers know it by name);
``bibi.celery`` routes it to the ``interactive`` queue, which scoring chunks cannot block. Its
id is the job's (``jobs.py``): once it has run, or expired unrun, the worker releases the job
from the in-flight counts.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import task_postrun, task_revoked

from bibi.guidance import jobs

NAME = "gpu.guidance_suggest"


@shared_task(
    name=NAME,
    # Time limits come with each message (GUIDANCE_SUGGEST_TIMEOUT). The result is stored (on
    # Redis, for the job's asker to poll), and never delivered again after a lost worker (its
    # job reads as failed past its deadline).
    ignore_result=False,
    acks_late=False,
)
def guidance_suggest_task(
    version_ids: list[int],
    original: str | list[str],
    variant: str | list[str] | None,
    top_k: int,
    words: int,
    span: dict | None = None,
    options: dict | None = None,
) -> dict:
    """``original`` and ``variant``: a text, or a sentence pair's two texts. ``span`` (span
    tasks): the question, the gold answers, the variant's answers if given, and how answers
    are judged (``compute.span_guidance_compute``). ``options``: the task type's model
    options (a sentence pair's ``editable`` segment, ``TaskType.model_options``)."""
    # Imported here, on the worker: suggestions load models, and with them torch.
    from bibi.guidance.compute import guidance_compute, span_guidance_compute

    if span is not None:
        assert isinstance(original, str) and not isinstance(variant, list)
        return span_guidance_compute(
            version_ids=version_ids, sentence=original, variant=variant, top_k=top_k, **span
        )
    return guidance_compute(
        version_ids=version_ids,
        original=original,
        variant=variant,
        top_k=top_k,
        words=words,
        **(options or {}),
    )


@task_postrun.connect
def _release_after_run(sender: Any = None, task_id: str | None = None, **_: Any) -> None:
    if getattr(sender, "name", None) == NAME and task_id:
        jobs.release_job(task_id)


@task_revoked.connect
def _release_when_expired(sender: Any = None, request: Any = None, **_: Any) -> None:
    if getattr(sender, "name", None) == NAME and request is not None and request.id:
        jobs.release_job(request.id)
