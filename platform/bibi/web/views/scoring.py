"""The organizers' scoring page: scoring runs (requested, followed) and the publication of a
snapshot, an older one only after a page says what it holds. The results pages that read the
snapshots are ``results.py``."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from bibi.evaluation import selectors as results_selectors
from bibi.evaluation import services as results_services
from bibi.web.access import require_organizer, task_and_viewer
from bibi.web.organize_forms import SnapshotPublishOlderForm
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
    pairs or systems, other settings) only after a confirmation page says what it holds."""
    shared_task, viewer = task_and_viewer(request, slug)
    require_organizer(viewer)
    snapshot = results_selectors.results_snapshot(
        shared_task=shared_task, is_organizer=True, snapshot_id=snapshot_id
    )
    if snapshot is None:
        raise Http404("No such snapshot of this task.")
    newest = results_selectors.snapshot_newest(shared_task=shared_task)
    older = newest is not None and newest.id != snapshot.id
    form = SnapshotPublishOlderForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and (not older or form.is_valid()):
        results_services.snapshot_publish(snapshot=snapshot, actor=request.user)
        messages.success(
            request,
            f"Snapshot {snapshot.id} is published: it is the leaderboard everyone who can see "
            "the task reads.",
        )
        return redirect("web:organize-scoring", slug=slug)
    if not older:
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
            "settings_used": settings_used(snapshot),
            "newest_settings": settings_used(newest) if newest else None,
            "form": form,
        },
        status=400 if request.method == "POST" else 200,
    )
