"""Guidance pages for breakers: the starter originals by boundary rank with their words shaded
by edit leverage and the strategy advice, and a pair editor that starts from an original,
shows the word diff, runs the minimal-pair checks and the hosted systems on the draft variant,
and adds it to the team's draft. The diff is ``bibi.web.diff``'s, as on the results pages.

Who sees guidance is ``bibi.guidance.visibility.sight_of``'s rule; the models run on a gpu
worker through ``bibi.guidance.suggest.guidance_suggest``, as for the API.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode

from bibi.guidance.apis import GuidanceSuggestThrottle
from bibi.guidance.jobs import CapReached
from bibi.guidance.ranking import (
    LAMBDA_NOTE,
    NEAR_BOUNDARY,
    STRATEGY_ADVICE,
    TRANSFER_NOTE,
    RankedOriginal,
    boundary_ranking,
    ranking_systems,
    ranking_words,
)
from bibi.guidance.suggest import (
    JobNotFound,
    JobOutcome,
    JobStoreUnreachable,
    SuggestRequest,
    suggest_job,
    suggest_start,
)
from bibi.guidance.visibility import (
    GuidanceSight,
    guidance_sight_require,
    sight_of,
    system_name,
    team_name,
)
from bibi.pairs import services as pair_services
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import Dataset, Example, SharedTask, Team
from bibi.sharedtasks.selectors import Viewer
from bibi.web.access import require_team, task_and_viewer
from bibi.web.diff import TextDiff, text_diffs
from bibi.web.forms import (
    PairEditorForm,
    add_service_error,
    add_upload_error,
    several_editable,
)
from bibi.web.kinds import PageKind, page_kind, variant_initial
from bibi.web.shading import shaded_texts, top_words
from bibi.web.views.breakers import say_warnings

ORIGINALS_PER_PAGE = 25


class GuidanceFilterForm(forms.Form):
    order = forms.ChoiceField(
        choices=[
            ("boundary", "Nearest the boundary first"),
            ("confidence", "Least confident first"),
        ],
        required=False,
    )
    label = forms.ChoiceField(required=False, label="Gold label")
    system = forms.TypedChoiceField(coerce=int, required=False, empty_value=None)

    def __init__(self, *args: Any, shared_task: SharedTask, systems: list, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["label"].choices = [
            ("", "Any"),
            *((label, label) for label in shared_task.labels),
        ]
        if systems:
            self.fields["system"].choices = [("", "Every ready system"), *systems]
        else:
            del self.fields["system"]
        if not shared_task.kind.labelled:  # items with answers, not labels
            del self.fields["label"]


def editor_diffs(shared_task: SharedTask, example: Example, form: forms.Form) -> list[TextDiff]:
    """The word diff of each text the pair editor's form edits, against the original's: the
    form's variant texts as posted (or as it starts); on an item of several texts one left
    empty is the original's."""
    kind = shared_task.kind
    original = kind.item(example)
    values = form.data if form.is_bound else form.initial
    several = several_editable(kind)
    variant = tuple(
        text
        if (given := values.get(f"variant_{field}")) is None or (several and not given)
        else str(given)
        for field, text in zip(kind.segment_fields, original, strict=True)
    )
    return text_diffs(kind, original, variant, kind.editable_fields(shared_task.editable_text))


def _sight_or_refuse(
    request: HttpRequest, shared_task: SharedTask, viewer: Viewer
) -> GuidanceSight | None:
    """What the viewer sees of the guidance; None for an anonymous visitor to send to log in,
    ``PermissionDenied`` (saying who sees it) for anyone else it is closed to."""
    sight = sight_of(viewer, shared_task)
    if not sight.allowed and not request.user.is_authenticated:
        return None
    if not sight.allowed:
        guidance_sight_require(user=request.user, shared_task=shared_task, viewer=viewer)
    return sight


def guidance_page(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    sight = _sight_or_refuse(request, shared_task, viewer)
    if sight is None:
        return redirect_to_login(request.get_full_path())
    systems = ranking_systems(shared_task=shared_task) if sight.per_system else []
    choices = [
        (
            system.id,
            f"{team_name(system.team, sight)} / {system_name(system, sight)}",
        )
        for system in systems
    ]
    form = GuidanceFilterForm(request.GET or None, shared_task=shared_task, systems=choices)
    # As on the results pages: a value that is not one of its field's choices is refused
    # beside the field, and that filter left out.
    cleaned: dict[str, Any] = {}
    if form.is_bound:
        form.is_valid()  # cleaned_data then holds the fields that are valid
        cleaned = form.cleaned_data
    system = cleaned.get("system")
    filters: dict[str, Any] = {
        "order": cleaned.get("order") or "boundary",
        "label": cleaned.get("label") or None,
        "system_ids": [system] if system else None,
    }
    ranking = boundary_ranking(shared_task, sight=sight, with_words=False, **filters)
    page = Paginator(ranking, ORIGINALS_PER_PAGE).get_page(request.GET.get("page"))
    originals = ranking_words(list(page.object_list), shared_task=shared_task)
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "shared_task": shared_task,
        "viewer": viewer,
        "tab": "guidance",
        "sight": sight,
        "form": form,
        "page": page,
        "query": query.urlencode(),
        "has_systems": bool(ranking and any(original.systems for original in ranking)),
        "rows": [
            {
                "original": o,
                "texts": shaded_texts(shared_task.kind, o.example, o.words),
                "top_words": top_words(o),
            }
            for o in originals
        ],
        "can_edit": viewer.team is not None and viewer.team.kind == Team.Kind.BREAKER,
        # Suggested edits on a page of their own, linked from each original.
        "suggestions_page": page_kind(shared_task).suggestions_page,
        "advice": STRATEGY_ADVICE,
        "near": NEAR_BOUNDARY,
        "lambda_note": LAMBDA_NOTE,
        "transfer_note": TRANSFER_NOTE,
    }
    return render(request, "web/guidance/ranking.html", context)


def _starter_original(shared_task: SharedTask, original_id: str) -> Example:
    example = task_selectors.example_get(
        shared_task=shared_task, split=Dataset.Split.STARTER, external_id=original_id
    )
    if example is None:
        raise Http404("No starter original has this id.")
    return example


def _ranked(
    shared_task: SharedTask, sight: GuidanceSight, example: Example
) -> RankedOriginal | None:
    ranking = boundary_ranking(shared_task, sight=sight, with_words=False)
    found = [original for original in ranking if original.example.id == example.id]
    return ranking_words(found, shared_task=shared_task)[0] if found else None


def pair_editor(request: HttpRequest, slug: str, original_id: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    team = require_team(viewer, Team.Kind.BREAKER)
    example = _starter_original(shared_task, original_id)
    sight = sight_of(viewer, shared_task)
    pages = page_kind(shared_task)
    initial = {
        "original_id": example.external_id,
        **variant_initial(shared_task, example),
        **pages.editor_initial(example),
    }
    action = request.POST.get("action", "")
    # Suggestions are asked for the original alone: the variant form stays as it was.
    bound = request.POST if request.method == "POST" and action != "suggest" else None
    form = pages.editor_form(bound, shared_task=shared_task, initial=initial)
    context: dict[str, Any] = {
        "check": None,
        "suggestions": None,
        "try_error": None,
        "rejected": None,
        "passed": None,
        "job": None,
    }
    status = 200
    editor = _Editor(request, shared_task, pages, viewer, team, example, sight, form, context)
    if request.method == "POST":
        answer = editor.act(action)
        if isinstance(answer, HttpResponse):
            return answer
        status = answer
    elif request.GET.get("job"):
        status = editor.follow(request.GET["job"])
    context.update(
        {
            "shared_task": shared_task,
            "viewer": viewer,
            "tab": "guidance",
            "team": team,
            "original": example,
            "ranked": _ranked(shared_task, sight, example) if sight.allowed else None,
            "sight": sight,
            "form": form,
            # The word diff of each text the form edits; where it edits several texts, one
            # left empty is the original's (as in a pair).
            "diffs": editor_diffs(shared_task, example, form),
            "blank_is_original": several_editable(shared_task.kind),
        }
    )
    if context["check"]:
        context.update(pages.check_context(context["check"]))
    ranked = context["ranked"]
    context["texts"] = shaded_texts(shared_task.kind, example, ranked.words if ranked else ())
    if ranked is not None:
        context["top_words"] = top_words(ranked)
    return render(request, "web/guidance/editor.html", context, status=status)


@dataclass
class _Editor:
    """One POST of the pair editor: the action asked for, into ``context``."""

    request: HttpRequest
    shared_task: SharedTask
    pages: PageKind
    viewer: Viewer
    team: Team
    example: Example
    sight: GuidanceSight
    form: PairEditorForm
    context: dict[str, Any]

    def act(self, action: str) -> int | HttpResponse:
        """The status the page answers with, or a redirect once a pair is added."""
        if action == "suggest":
            return self.ask("suggestions", SuggestRequest(original_id=self.example.external_id))
        if not self.form.is_valid():
            return 400
        if action == "try":
            return self.ask("check", self.draft_request())
        if action in ("check", "add"):
            return self.check_or_add(action)
        self.form.add_error(
            None, "Choose what to do: suggest edits, try the variant, check it, or add it."
        )
        return 400

    def draft_request(self) -> SuggestRequest:
        """The draft check of the variant in the form, with the label or answer it means."""
        return self.pages.draft_request(self.example, self.form.cleaned_data)

    def ask(self, key: str, ask: SuggestRequest) -> int:
        return _ask_systems(
            self.request, self.shared_task, self.viewer, self.sight, self.form, self.context, ask
        )

    def follow(self, job_id: str) -> int:
        """The page of a job asked from this editor (``?job=``): its answer, or still waiting."""
        try:
            outcome = _job_of(self.request, self.shared_task, self.viewer, self.example, job_id)
        except JobStoreUnreachable as away:
            self.context["try_error"] = str(away)
            return 503
        record = outcome.record
        if record.variant is not None:
            # The draft the job checked, in the form again.
            texts = record.variant_texts or (record.variant,)
            for field, text in zip(self.shared_task.kind.segment_fields, texts, strict=False):
                self.form.initial[f"variant_{field}"] = text
        status = job_into_context(self.request, self.shared_task, outcome, self.context)
        self.form.initial.update(self.pages.editor_refill(outcome.record, self.context["check"]))
        return status

    def check_or_add(self, action: str) -> int | HttpResponse:
        request, team = self.request, self.team
        cleaned = self.form.cleaned_data
        pair = self.shared_task.kind.pair_input(
            1, {**cleaned, "original_id": self.example.external_id}
        )
        # A pair whose variant is still a machine's suggestion: what it claims is the kind's
        # to say (a label nobody checked; a span task asks for the moved answer instead).
        problems = self.pages.machine_problems(cleaned)
        for field, problem in problems.items():
            self.form.add_error(field, problem)
        if problems:
            return 400
        pair = self.pages.machine_pair(pair, cleaned)
        try:
            if action == "add":
                added = pair_services.pair_add(team=team, user=request.user, pair=pair)
            else:
                submission = pair_services.pair_set_submit(
                    team=team, user=request.user, pairs=[pair], dry_run=True
                )
        except ValidationError as error:
            self.context["rejected"] = add_upload_error(self.form, error)
            return 400
        if action == "add":
            messages.success(request, "The pair is checked and added to the draft.")
            say_warnings(request, added.warnings)
            return redirect("web:pairs", slug=self.shared_task.slug)
        self.context["passed"] = [warning.reason for warning in submission.warnings]
        return 200


def _ask_systems(
    request: HttpRequest,
    shared_task: SharedTask,
    viewer: Viewer,
    sight: GuidanceSight,
    form: forms.Form,
    context: dict[str, Any],
    ask: SuggestRequest,
    *,
    page: str | None = None,
) -> int:
    """Suggestions for the original, or the draft variant through every hosted system
    (``suggest_start``), into the context; the status the page answers with (202: a job the
    page follows, ``guidance_job.js``)."""
    if not sight.allowed:
        _refuse(form, context, "This task does not show the systems' predictions to breakers.")
        return 403
    # The API's rate, counted together with the API's requests: each runs every hosted model.
    throttle = GuidanceSuggestThrottle()
    if not throttle.allow_request(request, None):
        wait = math.ceil(throttle.wait() or 1)
        context["try_error"] = (
            f"You have asked the systems too often in a short while; try again in {wait} seconds."
        )
        return 429
    try:
        outcome = suggest_start(
            shared_task=shared_task, user=request.user, viewer=viewer, request=ask
        )
    except ValidationError as error:
        if form.is_bound:
            add_service_error(form, error)
            return 400
        # Suggestions for the original, asked with no form filled in (say, before any hosted
        # system is ready): nothing of the caller's was wrong, the page says why there are none.
        _refuse(form, context, " ".join(error.messages))
        return 200
    except PermissionDenied as denied:
        _refuse(form, context, str(denied))
        return 403
    except CapReached as cap:
        context["try_error"] = cap.message
        return 429
    return job_into_context(request, shared_task, outcome, context, page=page)


def _refuse(form: forms.Form, context: dict[str, Any], message: str) -> None:
    """Why the systems were not asked: on the form where the caller filled one in, else (an
    unbound form has no errors to show) where the page shows the systems' answer."""
    if form.is_bound:
        form.add_error(None, message)
    else:
        context["try_error"] = message


def span_suggestions_page(request: HttpRequest, slug: str, original_id: str) -> HttpResponse:
    """Verified suggestions for one starter item of a span task (QA-SRL): POST asks for them
    (a job, as the API's), GET ``?job=`` shows a job's answer; the pair editor is another
    page. Anyone who sees the guidance may ask, signed in."""
    shared_task, viewer = task_and_viewer(request, slug)
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not page_kind(shared_task).suggestions_page:
        raise Http404(
            "This task's suggested edits are in its pair editor, not on a page of their own."
        )
    sight = _sight_or_refuse(request, shared_task, viewer)
    assert sight is not None  # signed in
    example = _starter_original(shared_task, original_id)
    form = forms.Form(request.POST or None)
    context: dict[str, Any] = {"suggestions": None, "try_error": None, "job": None}
    page = reverse(
        "web:guidance-span-suggestions", kwargs={"slug": slug, "original_id": original_id}
    )
    status = 200
    if request.method == "POST":
        ask = SuggestRequest(original_id=example.external_id)
        status = _ask_systems(request, shared_task, viewer, sight, form, context, ask, page=page)
    elif request.GET.get("job"):
        try:
            outcome = _job_of(request, shared_task, viewer, example, request.GET["job"])
        except JobStoreUnreachable as away:
            context["try_error"] = str(away)
            status = 503
        else:
            status = job_into_context(request, shared_task, outcome, context, page=page)
    context.update(
        {
            "shared_task": shared_task,
            "viewer": viewer,
            "tab": "guidance",
            "original": example,
            "form": form,
            "can_edit": viewer.team is not None and viewer.team.kind == Team.Kind.BREAKER,
        }
    )
    return render(request, "web/guidance/span_suggestions.html", context, status=status)


def _job_of(
    request: HttpRequest, shared_task: SharedTask, viewer: Viewer, example: Example, job_id: str
) -> JobOutcome:
    """The caller's job asked from ``example``'s page (404 otherwise)."""
    try:
        outcome = suggest_job(
            shared_task=shared_task, user=request.user, job_id=job_id, viewer=viewer
        )
    except JobNotFound as missing:
        raise Http404(str(missing)) from None
    if outcome.record.original_id != example.external_id:
        raise Http404("This job was asked from another original's page.")
    return outcome


def job_into_context(
    request: HttpRequest,
    shared_task: SharedTask,
    outcome: JobOutcome,
    context: dict[str, Any],
    *,
    page: str | None = None,
) -> int:
    """A job's answer (``suggestions`` or ``check``), its failure (``try_error``) or, while it
    waits, the addresses the page polls (``job``: ``page``, default the pair editor, shows the
    job's answer); the status the page answers with."""
    record = outcome.record
    if outcome.status == "done":
        context[record.kind] = outcome.answer
        return 200
    if outcome.status == "failed":
        context["try_error"] = outcome.detail
        return 503
    slug = shared_task.slug
    page = page or reverse(
        "web:guidance-editor", kwargs={"slug": slug, "original_id": record.original_id}
    )
    context["job"] = {
        "id": record.id,
        "kind": record.kind,
        "poll": reverse("guidance-job", kwargs={"slug": slug, "job_id": record.id}),
        "result": f"{page}?{urlencode({'job': record.id})}",
    }
    return 202
