"""The organizers' scoring page: scoring runs (requested, followed) and the publication of a
snapshot, an older one only after a page says what it holds. The results pages that read the
snapshots are ``results.py``."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from bibi.evaluation import selectors as results_selectors
from bibi.evaluation import services as results_services
from bibi.queue import periodic_tasks_run
from bibi.web.access import require_organizer, task_and_viewer
from bibi.web.organize_forms import SnapshotPublishOlderForm, SnapshotPublishPendingForm
from bibi.web.views.results import settings_used

RECENT_RUNS = 20


@login_required
def scoring(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    require_organizer(viewer)
    runs = list(
        results_selectors.scoring_run_list(shared_task=shared_task).select_related("snapshot")[
            :RECENT_RUNS
        ]
    )
    leaderboard = results_selectors.leaderboard_snapshot(shared_task=shared_task)
    return render(
        request,
        "web/organize/scoring.html",
        {
            "shared_task": shared_task,
            "viewer": viewer,
            "tab": "organize",
            "section": "scoring",
            "runs": runs,
            "leaderboard": leaderboard,
            "newest": results_selectors.snapshot_newest(shared_task=shared_task),
            "waiting": any(run.status in ("waiting_for_cells", "scoring") for run in runs),
            # What starts runs here: with beat, the close of the break phase does too.
            "periodic_tasks_run": periodic_tasks_run(),
            "embedded": settings.CELERY_TASK_ALWAYS_EAGER,
        },
    )


@login_required
@require_POST
def scoring_run_create(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    require_organizer(viewer)
    run = results_services.scoring_run_request_by_organizer(
        shared_task=shared_task, actor=request.user
    )
    messages.success(
        request,
        f"Scoring run {run.id} is under way: it computes the missing predictions, then "
        "scores. This page shows its progress.",
    )
    return redirect("web:organize-scoring", slug=slug)


@login_required
def snapshot_publish(request: HttpRequest, slug: str, snapshot_id: int) -> HttpResponse:
    """Publish a snapshot. The newest one is published by its button; an older one (fewer
    pairs or systems, other settings), or one scored while pairs were still waiting for
    validators' votes, only after a confirmation page says what it holds."""
    shared_task, viewer = task_and_viewer(request, slug)
    require_organizer(viewer)
    snapshot = results_selectors.results_snapshot(
        shared_task=shared_task, is_organizer=True, snapshot_id=snapshot_id
    )
    if snapshot is None:
        raise Http404("No such snapshot of this task.")
    newest = results_selectors.snapshot_newest(shared_task=shared_task)
    older = newest is not None and newest.id != snapshot.id
    warning = (
        results_selectors.publish_warning(snapshot=snapshot)
        if snapshot.published_at is None
        else None
    )
    data = request.POST if request.method == "POST" else None
    form = SnapshotPublishOlderForm(data) if older else None
    pending_form = SnapshotPublishPendingForm(data) if warning else None
    confirmed = all(each is None or each.is_valid() for each in (form, pending_form))
    if request.method == "POST" and confirmed:
        results_services.snapshot_publish(
            snapshot=snapshot, actor=request.user, confirm=warning is not None
        )
        messages.success(
            request,
            f"Snapshot {snapshot.id} is published: it is the leaderboard everyone who can see "
            "the task reads.",
        )
        return redirect("web:organize-scoring", slug=slug)
    if form is None and pending_form is None:
        # Nothing to confirm: the newest snapshot is published from the scoring page's button.
        return redirect("web:organize-scoring", slug=slug)
    return render(
        request,
        "web/organize/snapshot_publish.html",
        {
            "shared_task": shared_task,
            "viewer": viewer,
            "tab": "organize",
            "section": "scoring",
            "snapshot": snapshot,
            "newest": newest,
            "older": older,
            "warning": warning,
            "settings_used": settings_used(snapshot),
            "newest_settings": settings_used(newest) if newest else None,
            "form": form,
            "pending_form": pending_form,
        },
        status=400 if request.method == "POST" else 200,
    )
