from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

from bibi.web.views import (
    accounts,
    breakers,
    builders,
    guidance,
    organize_settings,
    organizers,
    public,
    results,
    scoring,
    teams,
    validation,
)

app_name = "web"

task = "tasks/<slug:slug>/"
organize = f"{task}organize/"
results_ = f"{task}results/"

account_urls = [
    path("accounts/signup/", accounts.signup, name="signup"),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(template_name="web/accounts/login.html"),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/password-reset/",
        auth_views.PasswordResetView.as_view(
            template_name="web/accounts/password_reset_form.html",
            email_template_name="web/accounts/password_reset_email.txt",
            subject_template_name="web/accounts/password_reset_subject.txt",
            success_url=reverse_lazy("web:password-reset-done"),
        ),
        name="password-reset",
    ),
    path(
        "accounts/password-reset/sent/",
        auth_views.PasswordResetDoneView.as_view(
            template_name="web/accounts/password_reset_done.html"
        ),
        name="password-reset-done",
    ),
    path(
        "accounts/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(
            template_name="web/accounts/password_reset_confirm.html",
            success_url=reverse_lazy("web:password-reset-complete"),
        ),
        name="password-reset-confirm",
    ),
    path(
        "accounts/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(
            template_name="web/accounts/password_reset_complete.html"
        ),
        name="password-reset-complete",
    ),
    path("accounts/token/", accounts.api_token, name="api-token"),
    path("accounts/token/rotate/", accounts.api_token_rotate, name="api-token-rotate"),
]

urlpatterns = [
    path("", public.home, name="home"),
    *account_urls,
    path("tasks/new/", organizers.task_create, name="task-create"),
    path(task, public.task_detail, name="task"),
    path(f"{task}data/<str:split>/", public.examples, name="examples"),
    # A participant's team
    path(f"{task}team/", teams.team, name="team"),
    path(f"{task}team/create/", teams.team_create, name="team-create"),
    path(f"{task}team/update/", teams.team_update, name="team-update"),
    path(f"{task}team/invitations/", teams.invitation_create, name="invitation-create"),
    path("invitations/<str:token>/", teams.invitation_accept, name="invitation"),
    path("invitations/<str:token>/revoke/", teams.invitation_revoke, name="invitation-revoke"),
    path("task-invitations/<str:token>/", teams.task_invitation_accept, name="task-invitation"),
    # Builders
    path(f"{task}systems/", builders.systems, name="systems"),
    path(f"{task}systems/create/", builders.system_create, name="system-create"),
    path(f"{task}systems/<int:system_id>/", builders.system_detail, name="system"),
    path(
        f"{task}systems/<int:system_id>/versions/",
        builders.version_upload,
        name="system-version-upload",
    ),
    path(
        f"{task}systems/<int:system_id>/predictions/",
        builders.predictions_upload,
        name="system-predictions-upload",
    ),
    path(
        f"{task}systems/<int:system_id>/versions/<int:number>/activate/",
        builders.version_activate,
        name="system-version-activate",
    ),
    # Breakers
    path(f"{task}guidance/", guidance.guidance_page, name="guidance"),
    path(f"{task}guidance/<str:original_id>/edit/", guidance.pair_editor, name="guidance-editor"),
    path(
        f"{task}guidance/<str:original_id>/suggestions/",
        guidance.span_suggestions_page,
        name="guidance-span-suggestions",
    ),
    path(f"{task}pairs/", breakers.pairs, name="pairs"),
    path(f"{task}pairs/upload/", breakers.pair_set_upload, name="pair-set-upload"),
    path(f"{task}pairs/draft/add/", breakers.pair_add, name="pair-add"),
    path(f"{task}pairs/draft/<int:pair_id>/remove/", breakers.pair_remove, name="pair-remove"),
    path(f"{task}pairs/draft/submit/", breakers.draft_submit, name="draft-submit"),
    path(f"{task}pair-sets/<int:pk>/", breakers.pair_set_detail, name="pair-set"),
    path(f"{task}pair-sets/<int:pk>/final/", breakers.pair_set_final, name="pair-set-final"),
    path(
        f"{task}pair-sets/<int:pk>/refused.csv",
        breakers.pair_set_refused,
        name="pair-set-refused",
    ),
    path(f"{task}contests/", breakers.contests, name="contests"),
    path(f"{task}contests/pairs/", breakers.contestable_pairs, name="contestable-pairs"),
    path(f"{task}contests/pairs/<int:pair_id>/", breakers.contest_create, name="contest-create"),
    # Label validation
    path(f"{task}validate/", validation.queue, name="validate"),
    path(f"{task}validate/next/", validation.queue_next, name="validate-next"),
    path(f"{task}validate/<int:validation_id>/", validation.vote, name="validate-vote"),
    path(f"{task}validate/<int:validation_id>/skip/", validation.skip, name="validate-skip"),
    # Results
    path(results_, results.leaderboards, name="results"),
    path(f"{results_}matrix/", results.matrix, name="results-matrix"),
    path(f"{results_}items/", results.items, name="results-items"),
    path(f"{results_}lambda/", results.lambda_plots, name="results-lambda"),
    path(
        f"{results_}download/<slug:table>.csv",
        results.download,
        {"fmt": "csv"},
        name="results-download-csv",
    ),
    path(
        f"{results_}download/<slug:table>.json",
        results.download,
        {"fmt": "json"},
        name="results-download-json",
    ),
    path(
        f"{results_}download/<slug:table>.zip",
        results.download,
        {"fmt": "zip"},
        name="results-download-zip",
    ),
    # Organizers
    path(organize, organizers.dashboard, name="organize"),
    path(f"{organize}settings/", organize_settings.settings, name="organize-settings"),
    path(f"{organize}schedule/", organize_settings.schedule, name="organize-schedule"),
    path(f"{organize}phases/", organizers.phases, name="organize-phases"),
    path(f"{organize}phases/create/", organizers.phase_create, name="phase-create"),
    path(f"{organize}phases/<str:kind>/", organizers.phase_update, name="phase-update"),
    path(f"{organize}phases/<str:kind>/extend/", organizers.phase_extend, name="phase-extend"),
    path(
        f"{organize}phases/<str:kind>/close-now/",
        organizers.phase_close_now,
        name="phase-close-now",
    ),
    path(f"{organize}datasets/", organizers.datasets, name="organize-datasets"),
    path(f"{organize}datasets/import/", organizers.examples_import, name="examples-import"),
    path(f"{organize}teams/", organizers.teams, name="organize-teams"),
    path(
        f"{organize}task-invitations/",
        organizers.task_invitation_create,
        name="task-invitation-create",
    ),
    path(
        f"{organize}task-invitations/<int:invitation_id>/revoke/",
        organizers.task_invitation_revoke,
        name="task-invitation-revoke",
    ),
    path(f"{organize}systems/", organizers.systems, name="organize-systems"),
    path(f"{organize}contests/", organizers.contests, name="organize-contests"),
    path(f"{organize}validation/", validation.overview, name="organize-validation"),
    path(
        f"{organize}validation/votes.csv",
        validation.votes_csv,
        name="organize-validation-votes",
    ),
    path(f"{organize}scoring/", scoring.scoring, name="organize-scoring"),
    path(f"{organize}scoring/run/", scoring.scoring_run_create, name="scoring-run-create"),
    path(
        f"{organize}snapshots/<int:snapshot_id>/publish/",
        scoring.snapshot_publish,
        name="snapshot-publish",
    ),
    path(
        f"{organize}contests/<int:contest_id>/decide/",
        organizers.contest_decide,
        name="contest-decide",
    ),
]
