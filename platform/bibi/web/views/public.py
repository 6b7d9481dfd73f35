"""Pages everyone may read: the home page, a task, and its datasets."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from bibi.pairs import selectors as pair_selectors
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import Dataset, Example, Team
from bibi.systems import selectors as system_selectors
from bibi.web.access import task_and_viewer

EXAMPLES_PER_PAGE = 50


def home(request: HttpRequest) -> HttpResponse:
    tasks = task_selectors.shared_tasks_by_state(user=request.user)
    return render(request, "web/public/home.html", {"tasks": tasks})


def task_detail(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    context = {
        "shared_task": shared_task,
        "viewer": viewer,
        "tab": "overview",
        "timeline": task_selectors.phase_timeline(shared_task=shared_task),
        "next_moment": task_selectors.phase_next_moment(shared_task=shared_task),
        "team_counts": task_selectors.team_counts(shared_task=shared_task),
        "system_count": system_selectors.system_count_ready(shared_task=shared_task),
        "pair_count": pair_selectors.entry_pair_count(shared_task=shared_task),
        "datasets": task_selectors.dataset_list(shared_task=shared_task),
    }
    return render(request, "web/public/task_detail.html", context)


def examples(request: HttpRequest, slug: str, split: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    if split not in Dataset.Split.values:
        raise Http404("Datasets are train, blind_dev and starter.")
    # A split not imported yet is an empty page, not a dead link in the task's navigation.
    dataset = shared_task.datasets.filter(split=split).first() or Dataset(
        shared_task=shared_task, split=split
    )
    if not viewer.datasets.examples(split):
        raise PermissionDenied(
            "The blind dev texts are shown to the task's teams and organizers only."
        )
    queryset = (
        task_selectors.example_list(dataset=dataset) if dataset.pk else Example.objects.none()
    )
    search = request.GET.get("q", "").strip()
    if search:
        queryset = queryset.filter(text__icontains=search)
    page = Paginator(queryset, EXAMPLES_PER_PAGE).get_page(request.GET.get("page"))
    is_breaker = viewer.team is not None and viewer.team.kind == Team.Kind.BREAKER
    context = {
        "shared_task": shared_task,
        "viewer": viewer,
        "tab": "data",
        "dataset": dataset,
        "split_name": Dataset.Split(split).label,
        "labels_visible": viewer.datasets.labels(split),
        "page": page,
        "search": search,
        "can_start_pairs": is_breaker and split == Dataset.Split.STARTER,
    }
    return render(request, "web/public/examples.html", context)
