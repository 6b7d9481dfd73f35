"""A participant's team: create one, see and change it, invite people, accept an invitation."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from bibi.pairs.validation import validator_role
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Invitation, SharedTask, TaskInvitation
from bibi.sharedtasks.selectors import Viewer
from bibi.web.access import task_and_viewer
from bibi.web.confirm import Confirmation, confirm_first
from bibi.web.forms import TeamCreateForm, TeamUpdateForm, add_service_error


def _team_page(
    request: HttpRequest,
    shared_task: SharedTask,
    viewer: Viewer,
    *,
    create_form: TeamCreateForm | None = None,
    update_form: TeamUpdateForm | None = None,
    status: int = 200,
) -> HttpResponse:
    team = viewer.team
    context = {"shared_task": shared_task, "viewer": viewer, "tab": "team", "team": team}
    if team is None:
        context["create_form"] = create_form or TeamCreateForm()
        if not shared_task.allow_anonymous_teams:
            del context["create_form"].fields["is_anonymous"]
    else:
        is_owner = task_selectors.is_team_owner(user=request.user, team=team)
        context.update(
            members=task_selectors.team_members(team=team),
            is_owner=is_owner,
            invitations=task_selectors.invitation_open_list(team=team) if is_owner else [],
            update_form=update_form
            or TeamUpdateForm(initial={"name": team.name, "is_anonymous": team.is_anonymous}),
        )
        if not shared_task.allow_anonymous_teams:
            del context["update_form"].fields["is_anonymous"]
    return render(request, "web/teams/team.html", context, status=status)


@login_required
def team(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    if viewer.is_organizer:
        raise PermissionDenied("Organizers of a shared task join none of its teams.")
    return _team_page(request, shared_task, viewer)


@login_required
@require_POST
def team_create(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    form = TeamCreateForm(request.POST)
    if form.is_valid():
        try:
            created = task_services.team_create(
                shared_task=shared_task, owner=request.user, **form.cleaned_data
            )
        except ValidationError as error:
            add_service_error(form, error)
        else:
            messages.success(request, f"The team {created.name} is created, with you as its owner.")
            return redirect("web:team", slug=slug)
    return _team_page(request, shared_task, viewer, create_form=form, status=400)


@login_required
@require_POST
def team_update(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    if viewer.team is None:
        raise PermissionDenied("You are in no team of this shared task.")
    form = TeamUpdateForm(request.POST)
    if form.is_valid():
        try:
            task_services.team_update(team=viewer.team, actor=request.user, **form.cleaned_data)
        except ValidationError as error:
            add_service_error(form, error)
        else:
            messages.success(request, "The team is saved.")
            return redirect("web:team", slug=slug)
    return _team_page(request, shared_task, viewer, update_form=form, status=400)


@login_required
@require_POST
def invitation_create(request: HttpRequest, slug: str) -> HttpResponse:
    _, viewer = task_and_viewer(request, slug)
    if viewer.team is None:
        raise PermissionDenied("You are in no team of this shared task.")
    task_services.invitation_create(team=viewer.team, actor=request.user)
    messages.success(
        request, "A new invitation link is below: send it to the person you invite. It works once."
    )
    return redirect("web:team", slug=slug)


def _invitation_of_viewer(request: HttpRequest, token: str) -> Invitation:
    invitation = get_object_or_404(Invitation.objects.select_related("team"), token=token)
    if not task_selectors.can_view_team_private(user=request.user, team=invitation.team):
        raise Http404("No invitation matches this link.")
    return invitation


@login_required
@require_POST
def invitation_revoke(request: HttpRequest, token: str) -> HttpResponse:
    invitation = _invitation_of_viewer(request, token)
    slug = invitation.team.shared_task.slug
    asked = confirm_first(
        request,
        Confirmation(
            title="Revoke this invitation?",
            consequence="Its link stops working at once, for whoever has it; nobody has "
            "used it yet. You can make a new one afterwards.",
            button="Revoke the invitation",
            back_url=reverse("web:team", kwargs={"slug": slug}),
        ),
    )
    if asked is not None:
        return asked
    task_services.invitation_revoke(invitation=invitation, actor=request.user)
    messages.success(request, "The invitation is revoked: its link no longer works.")
    return redirect("web:team", slug=slug)


def invitation_accept(request: HttpRequest, token: str) -> HttpResponse:
    """Anyone with the link sees which team invites them; accepting needs an account."""
    invitation = Invitation.objects.select_related("team__shared_task").filter(token=token).first()
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        try:
            membership = task_services.invitation_accept(token=token, user=request.user)
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
        else:
            messages.success(request, f"You have joined the team {membership.team.name}.")
            return redirect("web:team", slug=membership.team.shared_task.slug)
    return render(
        request,
        "web/teams/invitation.html",
        {"invitation": invitation, "token": token},
        status=200 if invitation else 404,
    )


def task_invitation_accept(request: HttpRequest, token: str) -> HttpResponse:
    """A link into a private task: whoever has it sees which task, and enters it signed in."""
    invitation = TaskInvitation.objects.select_related("shared_task").filter(token=token).first()
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        try:
            access, _ = task_services.task_invitation_accept(token=token, user=request.user)
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
        else:
            if access.is_validator:
                if validator_role(user=request.user, shared_task=access.shared_task) is None:
                    messages.success(
                        request,
                        "You are a validator of this task: its Validate page opens when the "
                        "organizers turn label validation on.",
                    )
                    return redirect("web:task", slug=access.shared_task.slug)
                messages.success(
                    request, "You are a validator of this task: label the pairs it hands you."
                )
                return redirect("web:validate", slug=access.shared_task.slug)
            messages.success(
                request, "You may now see this task: create a team, or join one by its link."
            )
            return redirect("web:task", slug=access.shared_task.slug)
    return render(
        request,
        "web/teams/task_invitation.html",
        {"invitation": invitation},
        status=200 if invitation else 404,
    )
